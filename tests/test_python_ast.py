from hypothesis import given
from hypothesis import strategies as st

from repomapper.isolation.validate import validate_tags
from repomapper.model import DEF, REF, SourceFile
from repomapper.plugins.python import ast_backend as python_ast

SAMPLE = '''\
import os, sys as system
from .x import y as z
from .. import q
from pkg.mod import *
X_MAX = 3
class Foo(Base):
    """Doc line.

    More."""
    attr: int = 1

    @decorator
    def bar(self, a: int = 2) -> str:
        def inner():
            return helper(a).strip()
        return inner()

    class Nested:
        pass

async def qux(*args, **kw):
    return len(args) + str(kw)
'''


def tags_of(text, path="a/b.py"):
    return python_ast.extract_tags(SourceFile.from_text(path, text))


def defs(text):
    return {
        (t.name, t.symbol_kind, t.start_line, t.end_line, t.scope)
        for t in tags_of(text)
        if t.kind == DEF
    }


def test_definitions_with_kinds_lines_and_scopes():
    assert defs(SAMPLE) == {
        ("X_MAX", "constant", 5, 5, ""),
        ("Foo", "class", 6, 19, ""),
        ("attr", "field", 10, 10, "Foo"),
        ("bar", "method", 13, 16, "Foo"),
        ("inner", "function", 14, 15, "Foo.bar"),
        ("Nested", "class", 18, 19, "Foo"),
        ("qux", "function", 21, 22, ""),
    }


def test_signatures_and_docstrings():
    source = SourceFile.from_text("a/b.py", SAMPLE)
    kept, _ = validate_tags(python_ast.extract_tags(source), source, 10**6)  # as the core keeps
    by_name = {t.name: t for t in kept if t.kind == DEF}
    assert by_name["bar"].signature == "def bar(self, a: int=2) -> str:"
    assert by_name["Foo"].signature == "class Foo(Base):"
    assert by_name["qux"].signature == "async def qux(*args, **kw):"
    assert by_name["Foo"].docstring == "Doc line."
    assert by_name["X_MAX"].signature == "X_MAX = 3"


def test_references_calls_names_attributes():
    refs = {(t.name, t.symbol_kind, t.start_line) for t in tags_of(SAMPLE) if t.kind == REF}
    assert ("helper", "call", 15) in refs
    assert ("strip", "call", 15) in refs
    assert ("Base", "name", 6) in refs
    assert ("decorator", "name", 12) in refs
    assert ("inner", "call", 16) in refs
    # builtins the file does not bind are not references; self is never one
    assert not any(name in {"len", "str", "int", "self"} for name, _, _ in refs)


def test_builtin_names_bound_by_import_are_references():
    text = "from .exceptions import ConnectionError\nraise ConnectionError()\n"
    refs = {t.name for t in tags_of(text) if t.kind == REF}
    assert "ConnectionError" in refs


def test_imports_every_form():
    imps = python_ast.extract_imports(SourceFile.from_text("a/b.py", SAMPLE))
    got = [
        (i.source, i.names, i.is_relative, i.level, i.line_number, i.aliases, i.alias) for i in imps
    ]
    assert got == [
        ("os", (), False, 0, 1, (), None),
        ("sys", (), False, 0, 1, (), "system"),
        ("x", ("y",), True, 1, 2, ("z",), None),
        ("", ("q",), True, 2, 3, (None,), None),
        ("pkg.mod", ("*",), False, 0, 4, (None,), None),
    ]


def test_not_python_is_not_handled():
    assert python_ast.extract_tags(SourceFile.from_text("a.js", "x")) is None
    assert python_ast.extract_imports(SourceFile.from_text("a.go", "x")) is None


def test_bad_input_warns_and_returns_empty(caplog):
    cases = {
        "syntax.py": b"def broken(:\n",
        "utf8.py": b"x = '\xff\xfe'\n",
        "nul.py": b"x = 1\0\n",
        "deep.py": b"x = " + b"(" * 200_000 + b")" * 200_000 + b"\n",
        "deep2.py": b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n",
    }
    for name, data in cases.items():
        caplog.clear()
        assert python_ast.extract_tags(SourceFile(".", name, data)) == [], name
        assert python_ast.extract_imports(SourceFile(".", name, data)) == [], name
        assert caplog.records, f"{name}: no warning logged"
        assert all(hasattr(r, "code") for r in caplog.records)


def test_deeply_nested_blocks_do_not_overflow():
    # 90 nested ifs parse fine in CPython; our walker must not recurse per level either
    lines = [" " * i + "if x:" for i in range(90)] + [" " * 90 + "foo()"]
    tags = tags_of("\n".join(lines) + "\n")
    assert any(t.name == "foo" for t in tags)


def test_output_is_sorted_and_lines_hold_the_name():
    lines = SAMPLE.splitlines()
    tags = tags_of(SAMPLE)
    assert tags == sorted(tags, key=lambda t: (t.start_line, t.kind, t.name, t.end_line, t.scope))
    for t in tags:
        assert 1 <= t.start_line <= t.end_line <= len(lines)
        if t.kind == DEF:
            assert t.name in lines[t.start_line - 1]


@given(st.text(max_size=300))
def test_never_raises_on_arbitrary_text(text):
    src = SourceFile.from_text("f.py", text)
    tags = python_ast.extract_tags(src)
    imports = python_ast.extract_imports(src)
    assert isinstance(tags, list) and isinstance(imports, list)
    n_lines = text.count("\n") + text.count("\r") + 1  # an upper bound on lines
    assert all(1 <= t.start_line <= t.end_line <= n_lines for t in tags)


@given(st.binary(max_size=300))
def test_never_raises_on_arbitrary_bytes(data):
    assert isinstance(python_ast.extract_tags(SourceFile(".", "f.py", data)), list)


def test_a_parse_failed_by_cpythons_shared_recursion_counter_is_tried_again(monkeypatch):
    """Python 3.11 before 3.11.8 can fail a valid parse with a SystemError when another thread
    parses at the same moment; the file must not be lost to it, and other SystemErrors stay."""
    import ast

    from repomapper.plugins.python import common

    real = ast.parse
    calls: list[str] = []

    def flaky(data, filename="<unknown>", **kw):
        calls.append(filename)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=243, after=261)")
        return real(data, filename=filename, **kw)

    monkeypatch.setattr(common.ast, "parse", flaky)
    tree = common.parse_python(b"def f():\n    pass\n", "a.py")
    assert calls == ["a.py", "a.py"] and isinstance(tree.body[0], ast.FunctionDef)

    def broken(data, filename="<unknown>", **kw):
        raise SystemError("something else")

    monkeypatch.setattr(common.ast, "parse", broken)
    import pytest

    with pytest.raises(SystemError, match="something else"):
        common.parse_python(b"x = 1\n", "b.py")
