"""Modern JavaScript and TypeScript through the tree-sitter backend: the import-order crash seen on
babel's minified fixtures, what the pinned grammars accept, and how syntax errors are reported
(``parse_partial`` when the rest parsed, ``parse_error`` when nothing useful came out)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from repomapper.extract import extract_source
from repomapper.model import Import, SourceFile, import_sort_key
from repomapper.plugins import treesitter as backend
from repomapper.plugins.treesitter.parsing import parse, syntax_errors
from repomapper.registry import PluginConfig, PluginSet


@pytest.fixture(scope="module")
def plugins() -> PluginSet:
    return PluginSet(PluginConfig(load_entry_points=False))


def codes(extraction) -> list[tuple[str, str]]:
    return [(d.code, d.severity) for d in extraction.diagnostics]


# -- the crash: one line importing the same name renamed and not --------------------------------

#: The shape of babel's ``babel-generator/test/fixtures/minified/modules/output.js`` (a reduction
#: written here): every statement on line 1, ``export{a as b}`` beside ``export{a}`` from one module,
#: so two imports tie on line, source and names and differ in an alias that is ``None``.
ONE_LINE_MODULE = (
    'import*as ns from"m";import{a as b,c as d}from"m";import{c}from"m";'
    'export*from"m";export{a as b}from"m";export{a}from"m";'
)


def test_one_line_module_with_renamed_and_plain_names_is_extracted(plugins):
    ex = extract_source(plugins, SourceFile.from_text("output.js", ONE_LINE_MODULE))
    assert ex.plugin == "treesitter", codes(ex)
    assert codes(ex) == []
    found = [(i.line_number, i.source, i.names, i.aliases, i.alias) for i in ex.imports]
    assert found == sorted(found, key=lambda r: (r[0], r[1], r[2], tuple(a or "" for a in r[3])))
    assert (1, "m", ("a",), ("b",), None) in found
    assert (1, "m", ("a",), (None,), None) in found
    assert (1, "m", (), (), "ns") in found


_names = st.sampled_from(["a", "b", ""])
_imports = st.builds(
    Import,
    file_path=st.just("f.js"),
    source=st.sampled_from(["m", "n"]),
    names=st.lists(_names, max_size=2).map(tuple),
    is_relative=st.booleans(),
    line_number=st.integers(1, 2),
    level=st.integers(0, 1),
    aliases=st.lists(st.one_of(st.none(), _names), max_size=2).map(tuple),
    alias=st.one_of(st.none(), _names),
)


@given(st.lists(_imports, max_size=12), st.randoms())
def test_import_sort_key_orders_any_imports_the_same_way(imports, rnd):
    """A total order: no TypeError on ``None`` aliases, and two different imports never tie (so
    the order does not depend on the order of a set)."""
    unique = list(set(imports))
    ordered = sorted(unique, key=import_sort_key)
    rnd.shuffle(unique)
    assert sorted(unique, key=import_sort_key) == ordered
    keys = [import_sort_key(i) for i in ordered]
    assert len(set(keys)) == len(keys)


# -- what the pinned grammars accept ------------------------------------------------------------

MODERN_JS = {
    "private fields": "class A { #x = 1; static #n = 0; has(o) { return #x in o; } }\n",
    "static block": "class A { static { A.ready = true; } }\n",
    "decorators": "@sealed class A { @bound method() {} }\n",
    "import attributes": 'import data from "./data.json" with { type: "json" };\n',
    "optional chaining": "const v = a?.b?.(c)?.[d] ?? e;\n",
    "regex v flag": "const re = /[\\p{L}--[a-z]]/v;\n",
    "top-level await": "const config = await load();\n",
    "jsx in .js": 'export const C = () => <div className="x">{a?.b}</div>;\n',
    "using": "{ using handle = open(); }\n",
    "await using": "async function f() { await using handle = open(); }\n",
    "logical assignment": "a ||= b; c &&= d; e ??= f;\n",
}


@pytest.mark.parametrize("construct", sorted(MODERN_JS))
def test_modern_javascript_parses_cleanly(construct):
    parsed = parse(SourceFile.from_text("modern.js", MODERN_JS[construct]))
    assert parsed is not None
    assert syntax_errors(parsed) is None


# -- syntax errors: what they cost --------------------------------------------------------------

#: Valid TypeScript that tree-sitter-typescript 0.23.2 (the newest on PyPI) rejects: variance
#: annotations, an ``import()`` type with type arguments, ``export type *``.
LAGGING_TS = (
    "export interface Box<in out T> {\n"
    "  value: T;\n"
    "}\n"
    'export type Visitor<S> = import("./traverse").Visitor<S>;\n'
    'export type * from "./types";\n'
    "export declare function parse(input: string): Box<string>;\n"
    "export class Parser {\n"
    "  run(): void {}\n"
    "}\n"
)


def test_grammar_gaps_keep_the_definitions_and_are_an_info(plugins):
    ex = extract_source(plugins, SourceFile.from_text("types.ts", LAGGING_TS))
    assert ex.plugin == "treesitter"
    defs = {t.qualified_name for t in ex.tags if t.is_def}
    assert {"Box", "Visitor", "parse", "Parser", "Parser.run"} <= defs
    assert codes(ex) == [("parse_partial", "info")]
    (diag,) = ex.diagnostics
    # line 1's variance annotation is read (plugins/treesitter/lag.py); the import() type is not
    assert "the first at line 4" in diag.message and "definition(s) extracted" in diag.message


def test_a_file_that_is_mostly_errors_is_a_parse_error(plugins):
    garbage = "export const ok = 1;\n" + ") } ] ( { [ %%% @@@ ### !!! " * 20 + "\n"
    ex = extract_source(plugins, SourceFile.from_text("broken.js", garbage))
    assert codes(ex) == [("parse_error", "warning")]
    assert "1 definition(s) extracted from what parsed" in ex.diagnostics[0].message


def test_a_file_where_nothing_came_out_is_a_parse_error(plugins):
    ex = extract_source(plugins, SourceFile.from_text("nothing.ts", "<<<<>>>> ;;; ))"))
    assert ("parse_error", "warning") in codes(ex)


def test_clean_files_have_no_syntax_diagnostic(plugins):
    ex = extract_source(plugins, SourceFile.from_text("ok.ts", "export function f(): void {}\n"))
    assert codes(ex) == []
    assert syntax_errors(parse(SourceFile.from_text("ok.ts", "let x = 1;\n"))) is None


def test_syntax_error_places_are_counted_from_the_outermost_error_node():
    parsed = parse(SourceFile.from_text("two.js", "let a = ;\nfunction ok() {}\nlet b = ;\n"))
    errors = syntax_errors(parsed)
    assert errors is not None
    assert errors.places == 2 and errors.first_line == 1
    assert 0 < errors.share(len(parsed.data)) < 0.5
    assert backend.extract_tags(SourceFile.from_text("two.js", "function ok() {}\nlet b = ;\n"))


#: The shape of a zod declaration file (written here): a ``declare class`` whose methods have no
#: bodies, and a variance annotation the grammar does not know.
DECLARATIONS = (
    "export declare class ZodType<Output = any, in out Input = Output> {\n"
    "    readonly _type: Output;\n"
    "    parse(data: unknown): Output;\n"
    "    safeParse(data: unknown): SafeParseReturnType<Input, Output>;\n"
    "    static create(): ZodType;\n"
    "    #check(): void;\n"
    "}\n"
    "export declare class Impl {\n"
    "    run(a: string): void;\n"
    "    run(a: number): void;\n"
    "}\n"
)


@pytest.mark.parametrize("path", ["types.d.ts", "types.d.cts", "types.ts", "view.tsx"])
def test_bodyless_class_methods_are_definitions(plugins, path):
    ex = extract_source(plugins, SourceFile.from_text(path, DECLARATIONS))
    defs = [(t.qualified_name, t.symbol_kind, t.start_line) for t in ex.tags if t.is_def]
    for name, line in [("parse", 3), ("safeParse", 4), ("create", 5), ("#check", 6)]:
        assert (f"ZodType.{name}", "method", line) in defs
    assert [d for d in defs if d[0] == "Impl.run"] == [
        ("Impl.run", "method", 9),
        ("Impl.run", "method", 10),
    ]
    # the variance annotation the grammar does not know is read as blank (plugins/treesitter/lag.py)
    assert codes(ex) == []


VARIANCE = (
    "export interface Box<in out T> {\n"
    "  value: T;\n"
    "}\n"
    "export type Fn<in A, out R extends string = string> = (a: A) => R;\n"
    "const less = a < b, more = c > d;\n"
    "for (const k in obj) {}\n"
)


def test_variance_annotations_parse_with_every_position_kept(plugins):
    parsed = parse(SourceFile.from_text("variance.ts", VARIANCE))
    assert parsed is not None and syntax_errors(parsed) is None
    assert len(parsed.data) == len(VARIANCE.encode())
    assert b"Box<" + b" " * len("in out ") + b"T>" in parsed.data
    assert b"const less = a < b, more = c > d;" in parsed.data
    ex = extract_source(plugins, SourceFile.from_text("variance.ts", VARIANCE))
    assert codes(ex) == []
    defs = {(t.qualified_name, t.start_line) for t in ex.tags if t.is_def}
    assert {("Box", 1), ("Box.value", 2), ("Fn", 4), ("less", 5), ("more", 5)} <= defs


def test_a_rewrite_that_does_not_help_is_not_kept():
    broken = "export interface Box<in out T> { value: T; }\nlet x = ;\n"
    parsed = parse(SourceFile.from_text("still.ts", broken))
    errors = syntax_errors(parsed)
    assert errors is not None and errors.first_line == 2  # the variance fixed, the real error kept
    source = "let y = <in T>(x: T) => x; let z = ;\n"  # a .js file: not a lagging grammar
    assert parse(SourceFile.from_text("f.js", source)).data == source.encode()
