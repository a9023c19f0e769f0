"""Import resolution in the tree-sitter backend: TypeScript/JavaScript paths and tsconfig, Go
modules and packages, and the path-based rules of the further languages."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from repomapper.index import RepoIndex
from repomapper.model import Import, SourceFile
from repomapper.plugins import treesitter as backend
from repomapper.plugins.treesitter import resolve as resolver

FIXTURES = Path(__file__).parent / "fixtures" / "treesitter"


def project_index(name: str) -> RepoIndex:
    root = FIXTURES / name
    files = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    return RepoIndex(root, files)


def resolve(index: RepoIndex, importer: str, source: str, **kw) -> list[str] | None:
    relative = kw.pop("is_relative", source.startswith("."))
    return backend.resolve_import(Import(importer, source, is_relative=relative, **kw), index)


def resolved_imports(index: RepoIndex, rel: str) -> dict[str, list[str]]:
    """Every import of ``rel`` (extracted by the backend) -> what it resolves to."""
    source = SourceFile(index.root, rel, (index.root / rel).read_bytes())
    return {
        f"{imp.line_number}:{imp.source}": backend.resolve_import(imp, index)
        for imp in backend.extract_imports(source)
    }


# -- TypeScript / JavaScript ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def ts_index() -> RepoIndex:
    return project_index("ts_project")


def test_typescript_imports_of_index_resolve_end_to_end(ts_index):
    assert resolved_imports(ts_index, "src/index.ts") == {
        "1:./models/user": ["src/models/user.ts"],  # extension added
        "2:./services": ["src/services/index.ts"],  # directory index
        "3:./util.js": ["src/util.ts"],  # ESM-style .js specifier naming the .ts source
        "4:@lib/format": ["src/lib/format.ts"],  # tsconfig paths
        "5:react": [],  # a package
        "6:./polyfills": [],  # not in the repository
        "7:./models/shape": ["src/models/shape.ts"],  # re-exports are imports
        "8:./models/shape": ["src/models/shape.ts"],
        "10:./util": ["src/util.ts"],  # dynamic import()
    }


def test_parent_directory_specifiers_and_require(ts_index):
    assert resolved_imports(ts_index, "src/services/index.ts") == {
        "1:../models/user": ["src/models/user.ts"],
        "2:../util.js": ["src/util.ts"],
    }
    assert resolved_imports(ts_index, "src/legacy.js") == {
        "1:path": [],
        "2:./util": ["src/util.ts"],
    }
    assert resolved_imports(ts_index, "src/components/Button.tsx") == {
        "1:react": [],
        "2:./Icon": ["src/components/Icon.tsx"],
    }


def test_specifiers_never_leave_the_repository(ts_index):
    assert resolve(ts_index, "src/index.ts", "../../../etc/passwd") == []
    assert resolve(ts_index, "src/index.ts", "/abs/path") == []
    assert resolve(ts_index, "src/index.ts", "node:fs") == []


def test_exact_file_wins_over_probing(tmp_path):
    index = RepoIndex(tmp_path, ["a.ts", "b.js", "b.ts", "lib/index.js", "lib.d.ts", "m.mts"])
    assert resolve(index, "a.ts", "./b.js") == ["b.js"]  # as written first
    assert resolve(index, "a.ts", "./b") == ["b.ts"]  # .ts before .js
    assert resolve(index, "a.ts", "./lib") == ["lib.d.ts"]  # a file before a directory index
    assert resolve(index, "a.ts", "./m.mjs") == ["m.mts"]


def test_baseurl_without_paths(tmp_path):
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "jsconfig.json").write_text(
        json.dumps({"compilerOptions": {"baseUrl": "src"}})
    )
    index = RepoIndex(tmp_path, ["web/src/app/main.js", "web/src/lib/api.js", "web/jsconfig.json"])
    assert resolve(index, "web/src/app/main.js", "lib/api") == ["web/src/lib/api.js"]
    assert resolve(index, "web/src/app/main.js", "lodash") == []


def test_tsconfig_extends_and_path_priority(tmp_path):
    (tmp_path / "tsconfig.base.json").write_text(
        '{"compilerOptions": {"baseUrl": "./", "paths": {"@/*": ["src/*"], "@/x/*": ["other/*"]}}}'
    )
    (tmp_path / "tsconfig.json").write_text('{"extends": "./tsconfig.base", "include": ["src"]}')
    index = RepoIndex(tmp_path, ["src/a.ts", "src/x/b.ts", "other/b.ts"])
    assert resolve(index, "src/a.ts", "@/x/b") == ["other/b.ts"]  # the longest prefix wins
    assert resolve(index, "src/a.ts", "@/a") == []  # importer itself is not a dependency
    assert resolve(index, "src/x/b.ts", "@/a") == ["src/a.ts"]


def test_broken_tsconfig_is_ignored_with_a_warning(tmp_path, caplog):
    (tmp_path / "tsconfig.json").write_text("{ this is not json")
    index = RepoIndex(tmp_path, ["src/a.ts", "src/b.ts"])
    with caplog.at_level(logging.WARNING):
        assert resolve(index, "src/a.ts", "src/b") == []
        assert resolve(index, "src/a.ts", "./b") == ["src/b.ts"]
    assert any(getattr(r, "code", None) == "config_unreadable" for r in caplog.records)


def test_jsonc_comments_and_trailing_commas_are_stripped():
    text = '{\n  // line\n  "a": "http://x/*y*/", /* block */\n  "b": [1, 2,],\n}\n'
    assert json.loads(resolver.strip_jsonc(text)) == {"a": "http://x/*y*/", "b": [1, 2]}
    config = resolver.load_tsconfig(FIXTURES / "ts_project", "tsconfig.json")
    assert config == resolver.TsPaths("", "", (("@lib/*", ("src/lib/*",)),))


# -- Go ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def go_index() -> RepoIndex:
    return project_index("go_project")


def test_go_imports_resolve_to_package_files_without_tests(go_index):
    assert resolved_imports(go_index, "cmd/shop/main.go") == {
        "4:fmt": [],
        "5:example.com/shop/internal/store": ["internal/store/item.go", "internal/store/store.go"],
        "6:strings": [],
        "7:embed": [],
        "9:example.com/shop/pkg/money": ["pkg/money/money.go"],
        "10:github.com/google/uuid": [],
    }
    assert resolved_imports(go_index, "internal/store/store.go") == {
        "4:example.com/shop/pkg/money": ["pkg/money/money.go"],
    }


def test_go_module_root_package_and_nested_modules(tmp_path):
    (tmp_path / "go.mod").write_text('module "example.org/root" // quoted\n')
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "go.mod").write_text("module example.org/tools\n")
    files = [
        "go.mod",
        "root.go",
        "root_test.go",
        "tools/go.mod",
        "tools/gen/gen.go",
        "tools/main.go",
    ]
    index = RepoIndex(tmp_path, files)
    assert resolve(index, "tools/main.go", "example.org/root") == ["root.go"]
    assert resolve(index, "root.go", "example.org/tools/gen") == ["tools/gen/gen.go"]
    assert resolve(index, "tools/main.go", "example.org/tools/gen") == ["tools/gen/gen.go"]
    assert resolve(index, "tools/main.go", "example.org/tools/missing") == []


def test_go_vendor_directory(tmp_path):
    (tmp_path / "go.mod").write_text("module example.org/app\n")
    index = RepoIndex(tmp_path, ["go.mod", "main.go", "vendor/github.com/x/y/y.go"])
    assert resolve(index, "main.go", "github.com/x/y") == ["vendor/github.com/x/y/y.go"]


def test_go_without_or_with_unreadable_go_mod(tmp_path, caplog):
    index = RepoIndex(tmp_path, ["a/main.go", "a/lib/lib.go"])
    assert resolve(index, "a/main.go", "example.org/a/lib") == []
    # listed but not on disk: unreadable
    index = RepoIndex(tmp_path, ["go.mod", "main.go", "lib/lib.go"])
    with caplog.at_level(logging.WARNING):
        assert resolve(index, "main.go", "example.org/lib") == []
    assert any(getattr(r, "code", None) == "config_unreadable" for r in caplog.records)


def test_go_mod_is_read_once_per_index(go_index, monkeypatch):
    calls = []
    real = resolver.read_go_module

    def counting(path, rel):
        calls.append(rel)
        return real(path, rel)

    monkeypatch.setattr(resolver, "read_go_module", counting)
    index = project_index("go_project")
    for _ in range(3):
        resolved_imports(index, "cmd/shop/main.go")
        resolved_imports(index, "internal/store/store.go")
    assert calls == ["go.mod"]


# -- not ours ---------------------------------------------------------------------------------------


def test_files_of_other_languages_are_not_resolved_here(ts_index):
    assert resolve(ts_index, "pkg/mod.py", "os") is None
    assert resolve(ts_index, "README.md", "./x") is None


# -- further languages --------------------------------------------------------------------------------


def test_rust_mod_and_crate_paths():
    pytest.importorskip("tree_sitter_rust")
    index = project_index("rust_crate")
    assert resolved_imports(index, "src/lib.rs") == {
        "1:shapes": ["src/shapes/mod.rs"],
        "2:util": ["src/util.rs"],
        "4:crate::shapes": ["src/shapes/mod.rs"],
        "5:std::collections": [],
    }
    assert resolved_imports(index, "src/util.rs") == {"1:super": ["src/lib.rs"]}


def test_rust_super_self_and_nested_modules(tmp_path):
    pytest.importorskip("tree_sitter_rust")
    files = [
        "src/main.rs",
        "src/net/mod.rs",
        "src/net/http/client.rs",
        "src/net/http.rs",
        "src/net/tls.rs",
        "src/config.rs",
    ]
    index = RepoIndex(tmp_path, files)
    client = "src/net/http/client.rs"
    assert resolve(index, client, "super::super", names=("tls",), is_relative=True) == [
        "src/net/tls.rs"
    ]
    assert resolve(index, client, "super::super::super", names=("config",), is_relative=True) == [
        "src/config.rs"
    ]
    assert resolve(index, "src/net/mod.rs", "self", names=("http",), is_relative=True) == [
        "src/net/http.rs"
    ]
    assert resolve(
        index, "src/net/http.rs", "self::client", names=("Client",), is_relative=True
    ) == [client]
    assert resolve(
        index, "src/main.rs", "crate::net::http", names=("Client",), is_relative=True
    ) == ["src/net/http.rs"]
    assert resolve(index, "src/main.rs", "serde", names=("Deserialize",)) == []


def test_java_package_imports():
    pytest.importorskip("tree_sitter_java")
    index = project_index("java")
    app = "src/main/java/com/example/app/App.java"
    util = "src/main/java/com/example/util"
    assert resolved_imports(index, app) == {
        "3:java.util.List": [],
        "4:com.example.util.Strings": [f"{util}/Strings.java"],
        "5:com.example.util": [f"{util}/Helper.java", f"{util}/Strings.java"],
        "6:com.example.util.Strings.shout": [f"{util}/Strings.java"],
    }


def test_c_includes_ruby_requires_and_php():
    pytest.importorskip("tree_sitter_c")
    pytest.importorskip("tree_sitter_ruby")
    pytest.importorskip("tree_sitter_php")
    index = project_index("misc")
    assert resolved_imports(index, "src/geometry.c") == {
        "1:stdio.h": [],
        "2:geometry.h": ["src/geometry.h"],
        "3:include/config.h": ["include/config.h"],
    }
    assert resolved_imports(index, "lib/tools/format.rb") == {
        "1:json": [],
        "2:../helpers": ["lib/helpers.rb"],
    }
    assert resolved_imports(index, "php/User.php") == {
        "4:App\\Contracts\\Repository": [],
        "5:App\\Support": [],
        "7:./helpers.php": ["php/helpers.php"],
    }
    assert resolve(index, "src/Service.cs", "App.Models") == []
