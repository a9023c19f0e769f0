"""Persisted results are keyed by the code that made them (repomapper.codedigest): an installed
copy whose renderer is edited prints the new map through a warm cache, an unchanged copy
replays it, and each key's list of modules covers what those modules import."""

from __future__ import annotations

import ast
import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repomapper import codedigest
from repomapper.registry import PluginSet

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
REPLAYED = "the map was replayed from the cache"


def _install(site: Path) -> Path:
    """A copy of the package laid out as a wheel installs it (plugins inside the package)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "core", site / "repomapper", ignore=ignore)
    shutil.copytree(ROOT / "plugins", site / "repomapper" / "plugins", ignore=ignore)
    return site / "repomapper"


def _map(site: Path, repo: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """``repomapper map`` run by the copy in ``site``, in a new process."""
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "REPOMAPPER_NO_ENTRY_POINTS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",  # each run reads the files it is given
    }
    code = "import sys; from repomapper.cli import run; sys.argv[0] = 'repomapper'; run()"
    args = ["map", str(repo), "--tokens", "512", "--cache-dir", str(cache), "--timings"]
    r = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return r


def _extracted(r: subprocess.CompletedProcess[str]) -> int:
    line = next(x for x in r.stderr.splitlines() if " from the tag cache, " in x)
    return int(line.split(" from the tag cache, ")[1].split()[0])


@pytest.fixture
def installed(tmp_path):
    site = tmp_path / "site"
    package = _install(site)
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "pyrepo", repo)
    return site, package, repo, tmp_path / "cache"


def test_the_copy_runs_from_its_own_files(installed):
    site, package, repo, cache = installed
    code = "import repomapper.render as r, repomapper.plugins as p; print(r.__file__, p.__file__)"
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [str(package / "render.py"), str(package / "plugins" / "__init__.py")]


def test_an_edited_renderer_is_not_replayed_through_a_warm_cache(installed):
    site, package, repo, cache = installed
    first = _map(site, repo, cache)
    assert "⋮" in first.stdout and REPLAYED not in first.stderr
    again = _map(site, repo, cache)
    assert REPLAYED in again.stderr and again.stdout == first.stdout

    render = package / "render.py"
    text = render.read_text(encoding="utf-8")
    assert text.count('ELISION = "⋮"') == 1
    render.write_text(text.replace('ELISION = "⋮"', 'ELISION = "<elided>"'), encoding="utf-8")
    edited = _map(site, repo, cache)
    assert REPLAYED not in edited.stderr
    assert "⋮" not in edited.stdout
    assert edited.stdout == first.stdout.replace("⋮", "<elided>")
    # the renderer does not make the tag cache's rows: they are all read, none extracted
    assert _extracted(edited) == 0
    replayed = _map(site, repo, cache)
    assert REPLAYED in replayed.stderr and replayed.stdout == edited.stdout


def test_an_unchanged_copy_elsewhere_replays_the_map(installed, tmp_path):
    site, package, repo, cache = installed
    first = _map(site, repo, cache)
    elsewhere = tmp_path / "elsewhere"
    _install(elsewhere)
    again = _map(elsewhere, repo, cache)
    assert REPLAYED in again.stderr and again.stdout == first.stdout


def test_an_edited_backend_extracts_again(installed):
    site, package, repo, cache = installed
    first = _map(site, repo, cache)
    assert _extracted(first) > 0
    backend = package / "plugins" / "python" / "ast_backend.py"
    backend.write_text(backend.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    edited = _map(site, repo, cache)
    assert REPLAYED not in edited.stderr
    assert _extracted(edited) == _extracted(first)
    assert edited.stdout == first.stdout


@pytest.fixture
def files(monkeypatch):
    """The package's file digests, editable: each key is computed again from them."""
    found = dict(codedigest.file_digests())
    monkeypatch.setattr(codedigest, "file_digests", lambda: found)
    codedigest.code_digest.cache_clear()
    yield found
    codedigest.code_digest.cache_clear()


def _keys() -> dict[str, str]:
    codedigest.code_digest.cache_clear()
    plugins = PluginSet()
    return {
        **{what: codedigest.made_by(what) for what in codedigest.MADE_BY},
        "extraction of a.py": codedigest.extraction_code(plugins, "a.py"),
        "extraction of a.go": codedigest.extraction_code(plugins, "a.go"),
    }


@pytest.mark.parametrize(
    "edited, changed",
    [
        ("render.py", {"map"}),
        ("cli.py", {"map"}),
        ("graph.py", {"map", "state"}),
        ("relevance/terms.py", {"map", "lexical"}),
        ("extract.py", {"map", "state", "extraction", "extraction of a.py", "extraction of a.go"}),
        ("plugins/python/ast_backend.py", {"map", "extraction of a.py", "extraction of a.go"}),
        ("plugins/treesitter/queries/go-tags.scm", {"map", "extraction of a.go"}),
    ],
)
def test_each_key_changes_with_the_code_that_makes_it(files, edited, changed):
    assert edited in files
    before = _keys()
    files[edited] = "edited"
    after = _keys()
    assert {k for k in before if before[k] != after[k]} == changed


def test_unknown_module_names_are_refused():
    with pytest.raises(ValueError):
        codedigest.code_digest(("repomapper.no_such_module",))
    with pytest.raises(ValueError):
        codedigest.code_digest(("json",))


def test_the_conformance_suite_and_bytecode_are_left_out():
    names = codedigest.file_digests()
    assert "render.py" in names and "plugins/ctags/backend.py" in names
    assert not [n for n in names if n.startswith("conformance/") or "__pycache__" in n]


# -- each key's modules are closed under import -------------------------------------------------


def _sources() -> dict[str, Path]:
    """module name -> its file, for every module of the package."""
    out = {}
    for rel in codedigest.file_digests():
        if not rel.endswith(".py"):
            continue
        sub = "plugins" if rel.startswith("plugins/") else None
        base = codedigest._directory(f"repomapper.{sub}" if sub else "repomapper")
        path = base / (rel.removeprefix("plugins/") if sub else rel)
        parts = ["repomapper", *rel.removesuffix(".py").split("/")]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``module`` imports (not under ``TYPE_CHECKING``, nor the
    lazy re-exports of a module ``__getattr__``)."""
    tree = ast.parse(path.read_bytes())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        guarded = isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        lazy = isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
        if guarded or lazy:
            skipped.update(id(n) for n in ast.walk(node))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "repomapper":
                target = node.module or ""
            else:
                continue
            for alias in node.names:
                found.add(
                    f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target
                )
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "repomapper")
    return {m for m in found if m in modules}


def _module_of(rel: str) -> str:
    parts = ["repomapper", *rel.removesuffix(".py").split("/")]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports, for every module of the package."""
    modules = _sources()
    return {m: _imports(m, path, modules) for m, path in modules.items()}


def _closed(names: tuple[str, ...]) -> list[str]:
    """(module, what it imports) for each import that ``names`` do not cover."""
    graph = _import_graph()
    covered = {_module_of(f) for f in codedigest._selected(names) if f.endswith(".py")}
    return sorted(f"{m} imports {d}" for m in covered for d in graph[m] if d not in covered)


@pytest.mark.parametrize("what", sorted(codedigest.MADE_BY))
def test_each_key_covers_what_its_modules_import(what):
    assert _closed(codedigest.MADE_BY[what]) == []


@pytest.mark.parametrize("package", sorted(codedigest.BUNDLED_BACKENDS))
def test_each_bundled_backend_is_keyed_with_what_it_imports(package):
    names = codedigest.MADE_BY["extraction"] + codedigest.BUNDLED_BACKENDS[package]
    assert _closed(names) == []


def test_every_bundled_backend_has_its_code_listed():
    plugins = PluginSet()
    for name in plugins.infos:
        plugin = plugins.pm.get_plugin(name)
        module = getattr(plugin, "__name__", type(plugin).__module__)
        if module.startswith("repomapper.plugins."):
            assert any(module.startswith(p) for p in codedigest.BUNDLED_BACKENDS), module


def test_a_state_made_by_other_code_is_not_read():
    import numpy as np

    from repomapper.snapshot.stored import Stored, state_version

    assert 0 <= state_version() < 2**63  # stored as one int64
    with pytest.raises(ValueError, match="another version"):
        Stored({"version": np.array([state_version() ^ 1], dtype=np.int64)})


def test_a_lexical_index_made_by_other_code_is_dropped(monkeypatch):
    import sqlite3

    from repomapper.relevance import lexical

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    lexical._SqliteStore(conn)
    conn.execute("INSERT INTO lexdocs VALUES ('a.py', 'k', 1, 1, 1, 1, '')")
    assert lexical._SqliteStore(conn).known()  # the same code keeps it
    monkeypatch.setattr(lexical, "lexical_version", lambda: "other code")
    assert not lexical._SqliteStore(conn).known()
