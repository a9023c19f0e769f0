from pathlib import Path

from repomapper.index import RepoIndex
from repomapper.model import Import
from repomapper.plugins.python.common import resolve_python_import
from repomapper.plugins.python.modules import resolve_module, resolve_relative

FILES = [
    "src/pkg/__init__.py",
    "src/pkg/mod.py",
    "src/pkg/sub/__init__.py",
    "src/pkg/sub/deep.py",
    "tools/mod.py",
    "web/lib/util.ts",
    "web/lib/index.ts",
    "web/app.ts",
]
INDEX = RepoIndex(Path("."), FILES)


def test_python_modules_by_their_names_from_the_import_roots():
    assert resolve_module(INDEX, "pkg.sub.deep") == ("src/pkg/sub/deep.py",)
    assert resolve_module(INDEX, "src.pkg") == ("src/pkg/__init__.py",)
    # tools/ is not a root (it holds no package): its module is tools.mod, or mod for its own
    assert resolve_module(INDEX, "mod") == ()
    assert resolve_module(INDEX, "tools.mod") == ("tools/mod.py",)
    assert resolve_module(INDEX, "mod", "tools/other.py") == ("tools/mod.py",)
    assert resolve_module(INDEX, "numpy") == ()


def test_relative_python_imports():
    assert resolve_relative(INDEX, "src/pkg/sub/deep.py", "mod", 2) == "src/pkg/mod.py"
    assert resolve_relative(INDEX, "src/pkg/sub/deep.py", "", 1) == "src/pkg/sub/__init__.py"
    imp = Import("src/pkg/sub/deep.py", "", ("mod",), True, 1, 2, (None,))
    assert resolve_python_import(imp, INDEX) == ["src/pkg/__init__.py", "src/pkg/mod.py"]
    assert resolve_python_import(Import("web/app.ts", "x"), INDEX) is None


def test_relative_paths_with_extensions_and_index_never_leave_the_root():
    exts = (".ts", ".js")
    assert INDEX.resolve_relative_path("web/app.ts", "./lib/util", exts) == "web/lib/util.ts"
    assert INDEX.resolve_relative_path("web/app.ts", "./lib", exts) == "web/lib/index.ts"
    assert INDEX.resolve_relative_path("web/app.ts", "../../etc/passwd", exts) is None
    assert INDEX.resolve_relative_path("web/app.ts", "./missing", exts) is None
    assert INDEX.files_in_dir("web/lib", (".ts",)) == ("web/lib/index.ts", "web/lib/util.ts")


def test_derived_tables_are_built_once_per_index():
    calls = []

    def build(index):
        calls.append(index)
        return {"n": len(index.files)}

    first = INDEX.derived(("test", "count"), build)
    assert INDEX.derived(("test", "count"), build) is first == {"n": len(FILES)}
    other = RepoIndex(Path("."), FILES[:2])
    assert other.derived(("test", "count"), build) == {"n": 2}
    assert calls == [INDEX, other]


def test_the_core_index_knows_no_python_module_rules():
    # Python's dotted names are the Python backend's: the module table lives in a derived slot
    assert not any("python" in name for name in dir(RepoIndex))
    index = RepoIndex(Path("."), FILES)
    assert resolve_module(index, "pkg.mod") == ("src/pkg/mod.py",)
    table = index.derived(("python", "modules"), lambda _: None)
    assert table.names["pkg.mod"] == ("src/pkg/mod.py",)
