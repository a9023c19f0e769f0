"""The libcst Python backend: ast-equal definitions and imports, scope-resolved references."""

from __future__ import annotations

import logging
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repomapper.index import RepoIndex
from repomapper.isolation.validate import validate_tags
from repomapper.model import Import, SourceFile, Tag
from repomapper.plugins.python import ast_backend as python_ast
from repomapper.plugins.python import libcst_backend as python_libcst
from repomapper.plugins.python.libcst_lines import line_spans, position_spans
from repomapper.plugins.python.libcst_scopes import module_name
from repomapper.registry import PluginConfig, PluginSet

FIXTURES = Path(__file__).parent / "fixtures" / "libcst"
FIXTURE_FILES = sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.py"))


def load(rel: str) -> SourceFile:
    return SourceFile(FIXTURES, rel, (FIXTURES / rel).read_bytes())


def refs(source: SourceFile) -> set[tuple[int, str, str, str | None]]:
    tags = python_libcst.extract_tags(source)
    assert tags is not None
    return {(t.start_line, t.name, str(t.symbol_kind), t.target) for t in tags if not t.is_def}


def ref_names(source: SourceFile) -> set[str]:
    return {name for _, name, _, _ in refs(source)}


def text(path: str, code: str) -> SourceFile:
    return SourceFile.from_text(path, code)


def defs(tags: list[Tag] | None) -> list[tuple]:
    assert tags is not None
    return [
        (
            t.name,
            t.kind,
            str(t.symbol_kind),
            t.start_line,
            t.end_line,
            t.scope,
            t.signature,
            t.docstring,
        )
        for t in tags
        if t.is_def
    ]


# -- registry and declaration ----------------------------------------------------------------
def test_libcst_backend_routes_python_and_blocks_ast():
    plugins = PluginSet(PluginConfig(python_backend="libcst", load_entry_points=False))
    assert plugins.candidates("a.py")[0] == "python_libcst"
    assert plugins.candidates("pkg/b.pyi")[0] == "python_libcst"
    assert "python_ast" not in plugins.candidates("a.py")
    assert plugins.pm.get_plugin("python_ast") is None
    assert plugins.pm.is_blocked("python_ast")
    source = load("pkg/user.py")
    name, tags = plugins.call_first("extract_tags", plugins.candidates(source.path), source=source)
    assert name == "python_libcst"
    assert any(t.target == "pkg.mod.f" for t in tags)


def test_default_configuration_keeps_ast():
    plugins = PluginSet(PluginConfig(load_entry_points=False))
    assert plugins.candidates("a.py")[0] == "python_ast"
    assert plugins.pm.get_plugin("python_libcst") is None


def test_backend_info():
    info = python_libcst.backend_info()
    assert info.name == "python_libcst" == python_libcst.NAME
    assert info.available, info.detail
    assert info.claims("x.py") and info.claims("x.pyi") and not info.claims("x.js")
    assert set(info.capabilities) == set(python_ast.backend_info().capabilities)
    assert "libcst" in info.version


def test_declines_other_files():
    source = text("a.js", "function f() {}")
    assert python_libcst.extract_tags(source) is None
    assert python_libcst.extract_imports(source) is None
    imp = Import("a.js", "./b")
    assert python_libcst.resolve_import(imp, RepoIndex(Path("."), ["a.js", "b.js"])) is None


# -- references and targets ------------------------------------------------------------------
def test_user_module_references_resolve_through_imports():
    assert refs(load("pkg/user.py")) == {
        (7, "f", "call", "pkg.mod.f"),  # from pkg.mod import f as g; g(...): the original name
        (8, "C", "call", "pkg.mod.C"),  # from .mod import C
        (9, "m", "call", None),  # obj.m(): obj is a local of unknown type
        (10, "f", "call", "pkg.mod.f"),  # import pkg.mod as m; m.f()
        (10, "mod", "name", "pkg.mod"),  # len(values) on line 10: a builtin, not a reference
        (13, "C", "name", "pkg.mod.C"),  # base class
        (15, "m", "call", None),  # self.m(): inherited from a class in another module
        (15, "C", "name", "pkg.mod.C"),
        (15, "m", "call", "pkg.mod.C.m"),  # C.m(self, 1)
    }


def test_defining_module_references():
    found = refs(load("pkg/mod.py"))
    assert (9, "LIMIT", "name", "pkg.mod.LIMIT") in found
    assert (25, "f", "call", "pkg.mod.f") in found  # same-module function
    assert (24, "size", "attribute", "pkg.mod.C.size") in found  # self.size, a class field
    assert (25, "helper", "call", "pkg.mod.Base.helper") in found  # through an in-module base
    assert (28, "m", "call", "pkg.mod.C.m") in found  # self.m()
    assert (28, "missing", "call", None) in found  # self.missing(): no such member
    assert (32, "m", "call", None) in found  # staticmethod: the first parameter is not self
    assert (43, "inner", "call", "pkg.mod.outer.inner") in found  # nested function
    assert not {r for r in found if r[1] in {"len", "int", "staticmethod", "classmethod"}}


def test_builtins_are_references_only_where_the_file_rebinds_them():
    code = (
        "from compat import str\n"
        "try:\n"
        "    input = raw_input\n"
        "except NameError:\n"
        "    pass\n"
        "len(input()) + str(2)\n"
    )
    assert refs(text("pkg/b.py", code)) == {
        (3, "raw_input", "name", None),  # not bound anywhere (a Python 2 builtin)
        (6, "input", "call", "pkg.b.input"),  # rebound at module level
        (6, "str", "call", "compat.str"),  # rebound by an import
    }


def test_locals_and_parameters_are_not_references():
    names = ref_names(load("pkg/mod.py"))
    for local in ("a", "b", "total", "x", "y", "self", "cls", "other", "item", "items", "i"):
        assert local not in names
    ast_names = {t.name for t in python_ast.extract_tags(load("pkg/mod.py")) if not t.is_def}
    assert {"a", "b", "total", "x", "y", "item", "items"} <= ast_names  # what ast emits


def test_relative_imports_become_absolute():
    assert refs(load("src/lib/core.py")) == {
        (7, "tool", "call", "lib.helpers.tool"),  # from .helpers import tool as t
        (7, "helpers", "name", "lib.helpers"),  # from ..lib import helpers (src/ stripped)
        (7, "VERSION", "attribute", "lib.helpers.VERSION"),
        (7, "beyond", "name", None),  # from ... import beyond: above the top package
        (7, "x", "attribute", None),
    }
    init = text("pkg/__init__.py", "from .mod import f\nf()\n")
    assert (2, "f", "call", "pkg.mod.f") in refs(init)


def test_edge_module_targets():
    found = refs(load("pkg/edge.py"))
    assert (40, "sep", "attribute", "os.path.sep") in found  # import os.path
    assert (67, "join", "call", "os.path.join") in found
    assert (67, "f", "call", "pkg.mod.f") in found  # from . import mod as sibling; sibling.f
    assert (32, "Base", "attribute", "pkg.mod.Base") in found
    assert (53, "Any", "name", "typing.Any") in found  # annotation, enclosing scope
    assert (66, "dumps", "call", None) in found  # json is simplejson or json: ambiguous
    assert (77, "C", "call", None) in found  # only a star import binds C
    assert not {n for n in ref_names(load("pkg/edge.py")) if n in {"None", "True", "False"}}


def test_identifiers_are_nfkc_normalised_like_python():
    found = python_libcst.extract_tags(load("pkg/edge.py"))
    assert [(t.name, t.start_line) for t in found if t.is_def and t.start_line == 85] == [
        ("\u03bc", 85)
    ]
    assert (89, "\u03bc", "name", "pkg.edge.\u03bc") in refs(load("pkg/edge.py"))


def test_class_body_and_chained_class_attributes():
    code = (
        "class A:\n"
        "    X = 1\n"
        "    Y = X + 1\n"
        "    class B:\n"
        "        def run(self):\n"
        "            return 1\n"
        "    def go(self):\n"
        "        return self.B.run(self) + A.B.run(None) + X\n"
    )
    found = refs(text("pkg/a.py", code))
    assert (3, "X", "name", "pkg.a.A.X") in found
    assert (8, "B", "attribute", "pkg.a.A.B") in found
    assert (8, "run", "call", "pkg.a.A.B.run") in found
    assert (8, "A", "name", "pkg.a.A") in found
    assert (8, "X", "name", None) in found  # class scope is not visible from a method


def test_root_init_module_has_no_prefix():
    assert refs(text("__init__.py", "def f():\n    pass\nf()\n")) == {(3, "f", "call", "f")}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pkg/mod.py", "pkg.mod"),
        ("pkg/__init__.py", "pkg"),
        ("src/pkg/mod.py", "pkg.mod"),
        ("src/pkg/__init__.pyi", "pkg"),
        ("setup.py", "setup"),
        ("src.py", "src"),
        ("__init__.py", ""),
    ],
)
def test_module_name(path, expected):
    assert module_name(path) == expected


# -- parity with the ast backend -------------------------------------------------------------
@pytest.mark.parametrize("rel", FIXTURE_FILES)
def test_definitions_equal_ast_backend(rel):
    source = load(rel)
    assert defs(python_libcst.extract_tags(source)) == defs(python_ast.extract_tags(source))


@pytest.mark.parametrize("rel", FIXTURE_FILES)
def test_imports_equal_ast_backend(rel):
    source = load(rel)
    assert python_libcst.extract_imports(source) == python_ast.extract_imports(source)


def test_edge_definitions_in_detail():
    source = load("pkg/edge.py")
    found, _ = validate_tags(python_libcst.extract_tags(source), source, 10**6)  # as the core keeps
    tags = {(t.scope, t.name, t.start_line): t for t in found if t.is_def}
    fetch = tags[("Outer.Inner", "fetch", 50)]
    assert fetch.symbol_kind == "method" and fetch.end_line == 58
    assert fetch.signature == (
        "async def fetch(self, url: str, *args: Any, timeout: float=1.0, **kwargs: Any)"
        " -> bytes | None:"
    )
    assert fetch.docstring == "Fetch."
    outer = tags[("", "Outer", 31)]
    assert outer.signature == "class Outer(sibling.Base, metaclass=type):"
    assert outer.docstring == "Outer docstring."
    assert tags[("", "REST", 20)].symbol_kind == "constant"
    assert tags[("", "retries", 26)].symbol_kind == "variable"
    assert tags[("", "name_map", 22)].end_line == 25
    assert tags[("Outer", "handler", 60)].symbol_kind == "field"
    assert {t.start_line for t in tags.values() if t.name == "posix_only"} == {41, 44}


def test_syntax_newer_than_ast_keeps_a_collapsed_signature():
    source = text("t.py", "def first[T](\n    x: T,\n) -> T:\n    return x\n")
    (tag,) = [t for t in python_libcst.extract_tags(source) if t.is_def]
    assert (tag.name, tag.start_line, tag.end_line) == ("first", 1, 4)
    assert tag.signature.startswith("def first[")
    assert "\n" not in tag.signature and tag.signature.endswith(":")


def test_output_is_deterministic_and_sorted():
    source = load("pkg/edge.py")
    first = python_libcst.extract_tags(source)
    assert python_libcst.extract_tags(load("pkg/edge.py")) == first  # a fresh file: parsed again
    assert [t.start_line for t in first] == sorted(t.start_line for t in first)
    assert all(t.file_path == "pkg/edge.py" for t in first)
    lines = [
        unicodedata.normalize("NFKC", line)
        for line in (FIXTURES / "pkg/edge.py").read_text().splitlines()
    ]
    for t in first:
        assert 1 <= t.start_line <= t.end_line <= len(lines)
        if t.is_def:  # a reference through an alias carries the original name
            assert t.name in lines[t.start_line - 1]


def test_resolve_import_reuses_python_rules():
    index = RepoIndex(FIXTURES, FIXTURE_FILES)
    imports = python_libcst.extract_imports(load("pkg/user.py"))
    resolved = {i.source: python_libcst.resolve_import(i, index) for i in imports}
    assert resolved == {"pkg.mod": ["pkg/mod.py"], "mod": ["pkg/mod.py"]}


@pytest.mark.parametrize("rel", [*FIXTURE_FILES, "crlf"])
def test_line_spans_equal_libcst_position_provider(rel):
    if rel == "crlf":  # \r\n and lone \r line breaks, also inside a string
        code = 'x = 1\r\ny = (\r\n  2)\rdef f():\r    """a\r\nb"""\r\n    return 3\r\n'
    else:
        code = (FIXTURES / rel).read_bytes().decode("utf-8")
    module = python_libcst.parse(code)
    spans = line_spans(module)
    assert module in spans
    assert dict(spans) == position_spans(module)


# -- one parse per file ----------------------------------------------------------------------
def test_tags_and_imports_share_one_parse(monkeypatch):
    calls: list[str] = []
    real = python_libcst.extract_uncached

    def counting(source):
        calls.append(source.path)
        return real(source)

    monkeypatch.setattr(python_libcst, "extract_uncached", counting)
    source = load("pkg/user.py")
    python_libcst.extract_tags(source)
    python_libcst.extract_imports(source)
    python_libcst.extract_tags(source)
    assert calls == ["pkg/user.py"]
    changed = SourceFile(source.root, source.path, source.data + b"\nz = 1\n")
    assert any(t.name == "z" for t in python_libcst.extract_tags(changed))
    assert calls == ["pkg/user.py", "pkg/user.py"]
    # the same file as another object is parsed again: nothing is shared between objects
    python_libcst.extract_tags(load("pkg/user.py"))
    assert calls == ["pkg/user.py"] * 3


def test_the_parse_lives_in_the_file_and_goes_with_it():
    source = load("pkg/user.py")
    python_libcst.extract_tags(source)
    assert source._scratch  # held by the file, not by the module
    source.drop_memo()
    assert not source._scratch


# -- bad input -------------------------------------------------------------------------------
BAD_INPUT = [
    ("syntax.py", b"def broken(:\n    pass\n", "parse_error"),
    ("invalid_utf8.py", b"x = '\xff\xfe'\n", "decode_error"),
    ("bad_cookie.py", b"# -*- coding: no-such-codec -*-\nx = 1\n", "decode_error"),
    ("nul.py", b"x = 1\x00\n", "parse_error"),
    ("python2.py", b"print 'hello'\n", "parse_error"),
    ("parens.py", b"x = " + b"[" * 300 + b"]" * 300 + b"\n", "too_deep"),
    # so deep that ast gives up too: rejected before libcst's parser would spend minutes on it
    ("deeper.py", b"x = " + b" + ".join([b"f()"] * 5000) + b"\n", "too_deep"),
]


@pytest.mark.parametrize(("path", "data", "code"), BAD_INPUT, ids=[b[0] for b in BAD_INPUT])
def test_bad_input_warns_and_returns_nothing(caplog, path, data, code):
    # what counts as too deep follows the recursion limit, which other tests may have raised
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        _check_bad_input(caplog, path, data, code)
    finally:
        sys.setrecursionlimit(limit)


def _check_bad_input(caplog, path, data, code):
    source = SourceFile(Path("."), path, data)
    with caplog.at_level(logging.WARNING, logger="repomapper.plugins.python.libcst_backend"):
        assert python_libcst.extract_tags(source) == []
        assert python_libcst.extract_imports(source) == []
    assert warning_codes(caplog) == [code]  # logged once: the failure is memoised too
    assert all(getattr(r, "path", None) == path for r in caplog.records)


def warning_codes(caplog) -> list[str | None]:
    return [getattr(r, "code", None) for r in caplog.records]


@pytest.mark.parametrize(
    "code",
    [
        # a very deep expression: caught before libcst's parser (whose time grows faster than
        # linearly with depth) is run at all
        "def f():\n    pass\nx = " + " + ".join(["f()"] * 1500) + "\n",
        # a shallow ast but deep libcst tree (implicit concatenation nests): RecursionError
        # inside libcst's analysis
        "def f():\n    pass\nx = (\n" + "\n".join(["    'part'"] * 1200) + "\n)\nf()\n",
    ],
    ids=["deep-binary-operators", "long-string-concatenation"],
)
def test_too_deep_for_libcst_falls_back_to_ast(caplog, code):
    source = text("deep.py", code)
    with caplog.at_level(logging.WARNING, logger="repomapper.plugins.python.libcst_backend"):
        tags = python_libcst.extract_tags(source)
        imports = python_libcst.extract_imports(source)
    assert warning_codes(caplog) == ["too_deep"]
    assert tags == python_ast.extract_tags(source)
    assert {(t.name, t.kind) for t in tags} >= {("f", "def"), ("x", "def"), ("f", "ref")}
    assert imports == python_ast.extract_imports(source)


def test_unexpected_libcst_failure_falls_back_to_ast(caplog, monkeypatch):
    def broken(source, module):
        raise KeyError("metadata bug")

    monkeypatch.setattr(python_libcst, "analyse", broken)
    source = load("pkg/user.py")
    with caplog.at_level(logging.WARNING, logger="repomapper.plugins.python.libcst_backend"):
        tags = python_libcst.extract_tags(source)
    assert warning_codes(caplog) == ["backend_error"]
    assert tags == python_ast.extract_tags(source)
    assert all(t.target is None for t in tags)


def test_broken_libcst_install_falls_back_to_ast(caplog, monkeypatch):
    def broken():
        raise ImportError("libcst/native.so: cannot open shared object file")

    monkeypatch.setattr(python_libcst, "_libcst", broken)
    source = load("pkg/mod.py")
    with caplog.at_level(logging.WARNING, logger="repomapper.plugins.python.libcst_backend"):
        tags = python_libcst.extract_tags(source)
    assert warning_codes(caplog) == ["backend_error"]
    assert tags == python_ast.extract_tags(source)


def test_libcst_is_imported_on_first_use_only():
    code = (
        "import sys\n"
        "from repomapper.plugins.python import libcst_backend as p\n"
        "assert p.backend_info().available\n"
        "assert 'libcst' not in sys.modules, 'imported too early'\n"
        "from repomapper.model import SourceFile\n"
        "assert p.extract_tags(SourceFile.from_text('a.py', 'x = 1\\n'))\n"
        "assert 'libcst' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_latin1_cookie_is_honoured():
    data = "# -*- coding: latin-1 -*-\ndef caf\u00e9():\n    pass\n".encode("latin-1")
    tags = python_libcst.extract_tags(SourceFile(Path("."), "l.py", data))
    assert [(t.name, t.start_line) for t in tags] == [("caf\u00e9", 2)]


PYTHONISH = st.lists(
    st.sampled_from(
        [
            "def f(a, b=1):",
            "class C(B):",
            "    return a",
            "    pass",
            "import os",
            "from . import x",
            "x = (",
            ")",
            "self.m()",
            "lambda: 0",
            "@dec",
            "async def g():",
            "    await h()",
            "\t",
            "'''",
            "#",
            "\\",
            "[",
            "]",
            "if x:",
            "else:",
            "f(*a, **k)",
            "global q",
            "y: int = 2",
        ]
    ),
    max_size=12,
).map("\n".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=200), PYTHONISH))
def test_arbitrary_text_never_raises(code):
    source = text("fuzz.py", code)
    tags = python_libcst.extract_tags(source)
    imports = python_libcst.extract_imports(source)
    assert isinstance(tags, list) and isinstance(imports, list)
    line_count = max(1, len(code.splitlines()) + 1)
    for t in tags:
        assert t.file_path == "fuzz.py"
        assert 1 <= t.start_line <= t.end_line <= line_count


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=120))
def test_arbitrary_bytes_never_raise(data):
    source = SourceFile(Path("."), "fuzz.py", data)
    assert isinstance(python_libcst.extract_tags(source), list)
    assert isinstance(python_libcst.extract_imports(source), list)
