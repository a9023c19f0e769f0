"""Without the optional extras (no extra grammar, no ctags), the core languages still map and
the files left unmapped are named exactly."""

import pytest

from repomapper import RepoMap
from repomapper.plugins import treesitter as backend
from repomapper.plugins.ctags.detect import ENV_CTAGS, reset_detection
from repomapper.plugins.treesitter import languages

CORE = {
    "app/main.py": "class Invoice:\n    def total(self):\n        return 1\n",
    "web/client.ts": "export class HttpClient {\n  get(url: string) { return url; }\n}\n",
    "web/Button.tsx": "export function Button() {\n  return <b>hi</b>;\n}\n",
    "web/legacy.js": "function legacyHelper() {\n  return 1;\n}\n",
    "store/store.go": "package store\n\ntype OrderStore struct{}\n",
}
EXTRA = {
    "native/lib.rs": "pub fn render() {}\n",
    "android/App.kt": "fun main() {}\n",
    "mobile/app.dart": "void main() {}\n",
    "scripts/deploy.gleam": "pub fn deploy() { 1 }\n",
}


def _clear():
    for fn in (
        languages.available_specs,
        languages.missing_specs,
        languages.grammar_versions,
        languages.extension_map,
        languages.pack_status,
        languages.tree_sitter_version,
        languages.distribution_version,
        languages._dist_info_versions,
        languages._pack_bindings,
        backend._backend_info,
    ):
        fn.cache_clear()


@pytest.fixture
def bare_install(monkeypatch):
    """Only the grammars every install has, and no ctags."""
    real = languages.grammar_source
    monkeypatch.setattr(
        languages, "grammar_source", lambda spec: real(spec) if spec.extra == "core" else None
    )
    monkeypatch.setenv(ENV_CTAGS, "/nonexistent/ctags")
    reset_detection()
    _clear()
    yield
    monkeypatch.undo()
    reset_detection()
    _clear()


def test_core_languages_map_and_the_rest_is_named(tmp_path, bare_install):
    for rel, text in {**CORE, **EXTRA}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    info = backend.backend_info()
    assert set(info.languages) == {"typescript", "tsx", "javascript", "go"}
    assert "extra languages: found none; missing" in info.detail
    result = RepoMap(tmp_path, 4000, use_cache=False, jobs=1).map()  # patches are per process
    for expected in (
        "class Invoice:",
        "export class HttpClient {",
        "export function Button()",
        "function legacyHelper()",
        "type OrderStore struct{}",
    ):
        assert expected in result.map, expected
    unmapped = {
        p
        for d in result.diagnostics
        if d.code in ("no_backend", "backend_unavailable")
        for p in d.paths
    }
    assert unmapped == set(EXTRA)
