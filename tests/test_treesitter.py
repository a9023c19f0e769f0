"""The tree-sitter backend: what it claims, and the tags and imports it extracts."""

from __future__ import annotations

import functools
import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repomapper.isolation.validate import validate_tags
from repomapper.model import Capability, Import, SourceFile
from repomapper.plugins import treesitter as backend
from repomapper.plugins.treesitter import captures, languages, parsing
from repomapper.registry import PluginConfig, PluginSet

FIXTURES = Path(__file__).parent / "fixtures" / "treesitter"


def load(rel: str) -> SourceFile:
    return SourceFile(FIXTURES, rel, (FIXTURES / rel).read_bytes())


def text(path: str, source: str) -> SourceFile:
    return SourceFile.from_text(path, source)


def defs(source: SourceFile) -> list[tuple[str, str, int, int, str]]:
    """(name, symbol_kind, start_line, end_line, scope) of every definition, in output order."""
    return [
        (t.name, t.symbol_kind, t.start_line, t.end_line, t.scope)
        for t in backend.extract_tags(source)
        if t.is_def
    ]


def def_named(source: SourceFile, qualified: str):
    """The definition named ``qualified`` as the core keeps it (normalised)."""
    kept, _ = validate_tags(backend.extract_tags(source), source, 10**6)
    found = [t for t in kept if t.is_def and t.qualified_name == qualified]
    assert len(found) == 1, (qualified, found)
    return found[0]


def refs(source: SourceFile) -> set[tuple[str, str]]:
    return {(t.name, t.symbol_kind) for t in backend.extract_tags(source) if not t.is_def}


def ref_lines(source: SourceFile, name: str) -> set[int]:
    return {t.start_line for t in backend.extract_tags(source) if not t.is_def and t.name == name}


def imports(source: SourceFile) -> list[tuple]:
    return [
        (i.line_number, i.source, i.names, i.aliases, i.alias, i.is_relative)
        for i in backend.extract_imports(source)
    ]


# -- declaration --------------------------------------------------------------------------------


def test_backend_info_lists_installed_languages_and_never_python():
    info = backend.backend_info()
    assert info.name == "treesitter"
    assert info.available
    for language in ("typescript", "tsx", "javascript", "go"):
        assert language in info.languages
    for ext in (".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx", ".go"):
        assert ext in info.extensions
    assert ".py" not in info.extensions and not info.claims("pkg/mod.py")
    assert info.language_for("src/a.tsx") == "tsx"
    assert info.language_for("src/a.mts") == "typescript"
    assert info.language_for("src/a.jsx") == "javascript"
    assert info.language_for("main.go") == "go"
    # every extension belongs to exactly one language
    listed = [e for _, exts in info.language_extensions for e in exts]
    assert sorted(listed) == sorted(info.extensions) and len(set(listed)) == len(listed)
    for name, _ in languages.grammar_versions():
        assert name in info.detail
    assert set(info.capabilities) == {c.value for c in Capability}


def test_version_tracks_queries_and_grammars():
    info = backend.backend_info()
    assert info.version.startswith(backend.VERSION)
    assert languages.queries_digest() in backend.VERSION
    assert languages.tree_sitter_version() in backend.VERSION


def test_distribution_versions_agree_with_importlib_metadata():
    from importlib import metadata

    names = [s.distribution for s in languages.SPECS if s.distribution]
    names += ["tree-sitter", "pluggy", "no-such-distribution-here"]
    for name in names:
        try:
            expected = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected = None
        assert languages.distribution_version(name) == expected, name


def test_distribution_version_reads_the_dist_info_name(tmp_path, monkeypatch):
    (tmp_path / "tree_sitter_fake-1.2.3.dist-info").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    languages._dist_info_versions.cache_clear()
    languages.distribution_version.cache_clear()
    try:
        assert languages.distribution_version("tree-sitter.fake") == "1.2.3"
    finally:
        languages._dist_info_versions.cache_clear()
        languages.distribution_version.cache_clear()


def test_query_digest_changes_when_a_query_changes(tmp_path, monkeypatch):
    for path in languages.query_files():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(languages, "QUERY_DIR", tmp_path)
    before = languages.queries_digest()
    assert before == languages.queries_digest()
    with open(tmp_path / "go-tags.scm", "a") as fh:
        fh.write("\n(identifier) @reference.name\n")
    assert languages.queries_digest() != before


def test_registry_routes_typescript_and_go_here_and_python_elsewhere():
    plugins = PluginSet(PluginConfig(load_entry_points=False))
    assert "treesitter" in plugins.candidates("src/app.ts")
    assert "treesitter" in plugins.candidates("cmd/main.go")
    assert "treesitter" not in plugins.candidates("pkg/mod.py")


def test_files_that_are_not_ours_are_declined():
    src = text("pkg/mod.py", "def f():\n    pass\n")
    assert backend.extract_tags(src) is None
    assert backend.extract_imports(src) is None
    assert backend.extract_tags(text("README.md", "# hi\n")) is None


@pytest.fixture
def fresh_discovery():
    """Discovery results are cached per process; clear them around a test that changes them."""

    def clear():
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

    clear()
    yield
    clear()


def test_languages_without_grammar_are_not_claimed(monkeypatch, fresh_discovery):
    ghost = languages.LanguageSpec(
        "ghostlang",
        "tree_sitter_ghostlang_not_installed",
        "language",
        (".ghost",),
        ("go",),
        "go",
        "tree-sitter-ghostlang",
    )
    monkeypatch.setattr(languages, "SPECS", (*languages.SPECS, ghost))
    info = backend.backend_info()
    assert "ghostlang" not in info.languages
    assert ".ghost" not in info.extensions
    assert "missing " in info.detail and "ghostlang" in info.detail
    assert backend.extract_tags(text("x.ghost", "func f() {}")) is None
    assert backend.extract_imports(text("x.ghost", "")) is None


def test_incompatible_grammar_is_skipped_with_a_warning(monkeypatch, caplog):
    import tree_sitter

    go = next(s for s in languages.SPECS if s.name == "go")
    spec = languages.LanguageSpec(
        "go-abi-probe", go.module, go.function, (), go.tags, go.imports, go.distribution
    )
    monkeypatch.setattr(tree_sitter, "LANGUAGE_VERSION", 1)
    monkeypatch.setattr(tree_sitter, "MIN_COMPATIBLE_LANGUAGE_VERSION", 1)
    monkeypatch.delitem(languages._grammars, spec.name, raising=False)
    with caplog.at_level(logging.WARNING):
        assert languages.load_grammar(spec) is None
    assert any(getattr(r, "code", None) == "grammar_incompatible" for r in caplog.records)
    languages._grammars.pop(spec.name, None)


def test_grammar_that_fails_to_import_is_skipped(caplog):
    spec = languages.LanguageSpec("broken", "json", "no_such_function", (), ("go",), "go", "x")
    with caplog.at_level(logging.WARNING):
        assert languages.load_grammar(spec) is None
    assert any(getattr(r, "code", None) == "grammar_unavailable" for r in caplog.records)
    languages._grammars.pop(spec.name, None)


def test_every_shipped_query_compiles_for_installed_grammars(caplog):
    with caplog.at_level(logging.WARNING):
        for spec in languages.available_specs():
            languages._grammars.pop(spec.name, None)
            grammar = languages.load_grammar(spec)
            assert grammar is not None, spec.name
            has_imports = (languages.QUERY_DIR / f"{spec.imports}-imports.scm").is_file()
            assert (grammar.has_imports) == has_imports, spec.name
    assert not [r for r in caplog.records if getattr(r, "code", None) == "query_error"]


def test_queries_are_compiled_once_per_language():
    spec = languages.spec_for_path("a.ts")
    first = languages.load_grammar(spec)
    backend.extract_tags(text("a.ts", "export const a = 1;\n"))
    backend.extract_tags(text("b.ts", "export const b = 2;\n"))
    assert languages.load_grammar(spec) is first
    assert languages.load_grammar(spec).query is first.query


def test_pattern_splitting_keeps_captures_and_predicates_with_their_pattern():
    query = '; comment (not a pattern)\n(a) @x\n((b) @y (#eq? @y "(")) (c (d)) @z\n[(e) (f)] @w\n'
    assert languages.split_patterns(query) == [
        "(a) @x",
        '((b) @y (#eq? @y "("))',
        "(c (d)) @z",
        "[(e) (f)] @w",
    ]


def test_patterns_a_grammar_rejects_are_dropped_and_the_rest_kept(caplog):
    import tree_sitter

    grammar = languages.load_grammar(languages.spec_for_path("a.go"))
    query_text = (
        "(function_declaration name: (identifier) @name) @definition.function\n"
        "(no_such_node) @reference.name\n"
        "(type_identifier) @reference.type\n"
    )
    with caplog.at_level(logging.WARNING):
        kept = languages.kept_patterns(tree_sitter, grammar.language, query_text, "probe")
    assert kept is not None and "no_such_node" not in kept
    assert tree_sitter.Query(grammar.language, kept).pattern_count == 2
    assert any(getattr(r, "code", None) == "query_error" for r in caplog.records)


def test_file_is_parsed_once_for_tags_and_imports(monkeypatch):
    calls = []
    real = parsing._parser

    def counting(grammar):
        calls.append(grammar.spec.name)
        return real(grammar)

    monkeypatch.setattr(parsing, "_parser", counting)
    src = load("ts_project/src/index.ts")
    tags = backend.extract_tags(src)
    imps = backend.extract_imports(src)
    assert backend.extract_tags(src) == tags
    assert calls == ["typescript"]
    assert tags and imps
    # a changed file is parsed again, and so is the same file as another object
    backend.extract_tags(SourceFile(src.root, src.path, src.data + b"\nexport const z = 1;\n"))
    assert calls == ["typescript", "typescript"]
    backend.extract_tags(load("ts_project/src/index.ts"))
    assert calls == ["typescript"] * 3
    src.drop_memo()
    assert backend.extract_imports(src) == imps
    assert calls == ["typescript"] * 4


def test_one_walk_of_the_tree_finds_both_tags_and_imports(monkeypatch):
    calls = []
    real = captures._capture

    def counting(parsed):
        calls.append(parsed.path)
        return real(parsed)

    monkeypatch.setattr(captures, "_capture", counting)
    src = load("ts_project/src/index.ts")
    assert backend.extract_tags(src) and backend.extract_imports(src)
    assert calls == [src.path]


def test_imports_patterns_a_grammar_rejects_leave_its_tags(monkeypatch, caplog):
    spec = languages.spec_for_path("a.go")
    real = languages._read_query

    def reading(name):
        return "(no_such_node) @import.go\n" if name.endswith("-imports.scm") else real(name)

    monkeypatch.setattr(languages, "_read_query", reading)
    languages._grammars.pop(spec.name, None)
    try:
        with caplog.at_level(logging.WARNING):
            grammar = languages.load_grammar(spec)
            src = text("a.go", 'package a\n\nimport "fmt"\n\nfunc F() { fmt.Println() }\n')
            assert grammar is not None and not grammar.has_imports
            assert "F" in [name for name, *_ in defs(src)]
            assert backend.extract_imports(src) == []
        assert any(getattr(r, "code", None) == "query_error" for r in caplog.records)
    finally:
        languages._grammars.pop(spec.name, None)


# -- TypeScript ------------------------------------------------------------------------------


def test_typescript_definitions_with_kinds_lines_and_scopes():
    assert defs(load("ts_project/src/models/user.ts")) == [
        ("Named", "interface", 4, 7, ""),
        ("name", "field", 5, 5, "Named"),
        ("display", "method", 6, 6, "Named"),
        ("UserId", "type", 9, 9, ""),
        ("Role", "enum", 11, 14, ""),
        ("Admin", "constant", 12, 12, "Role"),
        ("Guest", "constant", 13, 13, "Role"),
        ("User", "class", 21, 36, ""),
        ("shapes", "field", 22, 22, "User"),
        ("count", "field", 23, 23, "User"),
        ("constructor", "method", 25, 27, "User"),
        ("display", "method", 29, 31, "User"),
        ("onSave", "method", 33, 35, "User"),
    ]


def test_typescript_abstract_classes_and_methods():
    assert defs(load("ts_project/src/models/shape.ts")) == [
        ("Shape", "class", 1, 7, ""),
        ("area", "method", 2, 2, "Shape"),
        ("describe", "method", 4, 6, "Shape"),
        ("Circle", "class", 9, 17, ""),
        ("constructor", "method", 10, 12, "Circle"),
        ("area", "method", 14, 16, "Circle"),
    ]


def test_typescript_signatures_are_one_line_headers():
    user = load("ts_project/src/models/user.ts")
    assert def_named(user, "User").signature == "export class User implements Named"
    assert def_named(user, "User.display").signature == "display(prefix: string): string"
    assert def_named(user, "Named").signature == "export interface Named"
    assert def_named(user, "UserId").signature == "export type UserId = string"
    assert def_named(user, "Role").signature == "export enum Role"
    assert (
        def_named(user, "User.constructor").signature
        == "constructor(public name: string, readonly id: UserId)"
    )
    shape = load("ts_project/src/models/shape.ts")
    assert def_named(shape, "Shape").signature == "export abstract class Shape"
    assert def_named(shape, "Shape.area").signature == "abstract area(): number"
    services = load("ts_project/src/services/index.ts")
    assert (
        def_named(services, "createService").signature
        == "export const createService = (prefix: string) =>"
    )
    assert (
        def_named(services, "findUser").signature
        == "export function findUser(users: User[], name: string): User | undefined"
    )


def test_typescript_docstrings_from_jsdoc_and_line_comments():
    user = load("ts_project/src/models/user.ts")
    assert def_named(user, "Named").docstring == "Something with a display name."
    assert def_named(user, "User").docstring == "A registered user."
    assert def_named(user, "User.display").docstring is None
    services = load("ts_project/src/services/index.ts")
    assert def_named(services, "createService").docstring == "Creates the user service."


def test_arrow_functions_and_consts_at_module_level_but_not_locals():
    services = load("ts_project/src/services/index.ts")
    assert defs(services) == [
        ("DEFAULT_ROLE", "constant", 4, 4, ""),
        ("createService", "function", 7, 14, ""),
        ("add", "method", 10, 12, "createService"),
        ("findUser", "function", 16, 18, ""),
    ]
    assert "cache" not in {d[0] for d in defs(services)}  # a local inside the arrow function
    assert defs(load("ts_project/src/lib/format.ts")) == [("formatName", "function", 1, 3, "")]


def test_typescript_references():
    user = load("ts_project/src/models/user.ts")
    found = refs(user)
    assert ("Shape", "call") in found  # new Shape()
    assert ("Shape", "type") in found  # Shape[]
    assert ("UserId", "type") in found
    assert ("Named", "type") in found  # implements Named
    assert ("push", "call") in found  # member call: the property name
    assert ref_lines(user, "Shape") == {22, 34}
    index = load("ts_project/src/index.ts")
    found = refs(index)
    assert {
        ("Person", "call"),
        ("formatName", "call"),
        ("slugify", "call"),
        ("createService", "call"),
        ("add", "call"),
        ("Named", "type"),
    } <= found
    # a definition's own name is not a reference to it
    assert not any(t.name == "main" for t in backend.extract_tags(index) if not t.is_def)
    assert ref_lines(user, "Named") == {21}  # implements Named, not the interface's own name


def test_namespaces_scope_their_members():
    src = text(
        "ns.ts", "namespace Geo {\n  export function dist() {}\n  export const R = 6371;\n}\n"
    )
    assert defs(src) == [
        ("Geo", "module", 1, 4, ""),
        ("dist", "function", 2, 2, "Geo"),
        ("R", "constant", 3, 3, "Geo"),
    ]


def test_typescript_imports():
    assert imports(load("ts_project/src/index.ts")) == [
        (1, "./models/user", ("User", "Named"), ("Person", None), None, True),
        (2, "./services", (), (), "services", True),
        (3, "./util.js", ("slugify",), (None,), None, True),
        (4, "@lib/format", ("formatName",), (None,), None, False),
        (5, "react", ("default",), ("React",), None, False),
        (6, "./polyfills", (), (), None, True),
        (7, "./models/shape", ("Circle",), (None,), None, True),
        (8, "./models/shape", ("*",), (None,), None, True),
        (10, "./util", (), (), None, True),
    ]


def test_typescript_import_equals_require_and_export_star_as():
    src = text(
        "a.ts",
        'import fs = require("fs");\nexport * as geo from "./geo";\n'
        "import type { T } from './types';\n",
    )
    assert imports(src) == [
        (1, "fs", (), (), "fs", False),
        (2, "./geo", ("*",), (None,), "geo", True),
        (3, "./types", ("T",), (None,), None, True),
    ]
    assert all(
        isinstance(i, Import) and i.file_path == "a.ts" for i in backend.extract_imports(src)
    )


# -- TSX and JavaScript -----------------------------------------------------------------------


def test_tsx_components_and_jsx_references():
    button = load("ts_project/src/components/Button.tsx")
    assert defs(button) == [
        ("ButtonProps", "type", 4, 4, ""),
        ("label", "field", 4, 4, "ButtonProps"),
        ("onClick", "field", 4, 4, "ButtonProps"),
        ("Button", "function", 6, 13, ""),
        ("IconButton", "function", 15, 15, ""),
    ]
    found = refs(button)
    assert ("Icon", "call") in found and ("Button", "call") in found
    assert not any(name in ("div", "span") for name, _ in found)  # intrinsic elements
    assert imports(button) == [
        (1, "react", ("default",), ("React",), None, False),
        (2, "./Icon", ("Icon",), (None,), None, True),
    ]


def test_javascript_definitions_requires_and_exports():
    legacy = load("ts_project/src/legacy.js")
    assert defs(legacy) == [
        ("path", "constant", 1, 1, ""),
        ("joinAll", "function", 8, 10, ""),
        ("Registry", "class", 12, 21, ""),
        ("#secret", "field", 13, 13, "Registry"),
        ("size", "field", 14, 14, "Registry"),
        ("register", "method", 15, 17, "Registry"),
        ("lookup", "method", 18, 20, "Registry"),
        ("makeRegistry", "function", 24, 26, ""),
    ]
    assert def_named(legacy, "joinAll").docstring == "Joins parts."
    assert def_named(legacy, "joinAll").signature == "function joinAll(parts)"
    assert imports(legacy) == [
        (1, "path", (), (), "path", False),
        (2, "./util", ("slugify", "other"), (None, "renamed"), None, True),
    ]
    found = refs(legacy)
    assert {("Registry", "call"), ("renamed", "call"), ("Map", "type"), ("get", "call")} <= found


def test_jsx_in_js_files():
    src = text(
        "App.jsx", "export default function App() {\n  return <Layout><Card /></Layout>;\n}\n"
    )
    assert defs(src) == [("App", "function", 1, 3, "")]
    assert {("Layout", "call"), ("Card", "call")} <= refs(src)


def test_dynamic_import_and_side_effect_import_in_js():
    src = text(
        "a.mjs",
        'import "./setup.mjs";\nconst m = await import("./mod.mjs");\n'
        "const t = require(`./tpl`);\nconst n = require(name);\n",
    )
    assert imports(src) == [
        (1, "./setup.mjs", (), (), None, True),
        (2, "./mod.mjs", (), (), None, True),
        (3, "./tpl", (), (), "t", True),
    ]


# -- Go ---------------------------------------------------------------------------------------


def test_go_definitions_methods_and_grouped_consts():
    store = load("go_project/internal/store/store.go")
    assert defs(store) == [
        ("Kind", "type", 7, 7, ""),
        ("Food", "constant", 10, 10, ""),
        ("Drink", "constant", 11, 11, ""),
        ("defaultCapacity", "variable", 14, 14, ""),
        ("Store", "class", 17, 20, ""),
        ("items", "field", 18, 18, "Store"),
        ("capacity", "field", 19, 19, "Store"),
        ("New", "function", 23, 25, ""),
        ("Add", "method", 28, 30, "Store"),
        ("Total", "method", 32, 38, "Store"),
    ]
    assert "total" not in {d[0] for d in defs(store)}  # a local var inside a method


def test_go_signatures_and_doc_comments():
    store = load("go_project/internal/store/store.go")
    assert def_named(store, "Store.Add").signature == "func (s *Store) Add(item Item)"
    assert def_named(store, "Store.Total").signature == "func (s Store) Total() money.Amount"
    assert def_named(store, "New").signature == "func New() *Store"
    assert def_named(store, "Store").signature == "type Store struct"
    assert def_named(store, "Food").signature == "Food Kind = iota"
    assert def_named(store, "Store").docstring == "Store holds items in memory."
    assert def_named(store, "Store.Add").docstring == "Add appends an item."
    assert def_named(store, "Kind").docstring == "Kind classifies an item."
    assert def_named(store, "Store.Total").docstring is None


def test_go_structs_interfaces_and_multi_name_fields():
    item = load("go_project/internal/store/item.go")
    assert defs(item) == [
        ("Item", "class", 5, 8, ""),
        ("Name", "field", 6, 6, "Item"),
        ("Sku", "field", 6, 6, "Item"),
        ("Price", "field", 7, 7, "Item"),
        ("Pricer", "interface", 10, 12, ""),
        ("PriceOf", "method", 11, 11, "Pricer"),
    ]
    assert def_named(item, "Pricer").signature == "type Pricer interface"
    assert ("Amount", "type") in refs(item)


def test_go_references_selector_calls_and_types():
    main = load("go_project/cmd/shop/main.go")
    found = refs(main)
    assert {
        ("New", "call"),
        ("Add", "call"),
        ("Println", "call"),
        ("ToUpper", "call"),
        ("Amount", "call"),
        ("Item", "type"),
        ("Total", "call"),
    } <= found
    assert ref_lines(main, "Add") == {15}


def test_go_grouped_imports_with_aliases_dot_and_blank():
    assert imports(load("go_project/cmd/shop/main.go")) == [
        (4, "fmt", (), (), None, False),
        (5, "example.com/shop/internal/store", (), (), "st", False),
        (6, "strings", (), (), ".", False),
        (7, "embed", (), (), "_", False),
        (9, "example.com/shop/pkg/money", (), (), None, False),
        (10, "github.com/google/uuid", (), (), None, False),
    ]
    assert imports(load("go_project/pkg/money/money.go")) == [(3, "strconv", (), (), None, False)]


def test_go_generic_receivers_and_single_line_groups():
    src = text(
        "g.go",
        "package g\n\ntype List[T any] struct{ items []T }\n\n"
        "func (l *List[T]) Push(v T) { l.items = append(l.items, v) }\n"
        "var (\n\tA = 1\n\tB = 2\n)\n",
    )
    assert defs(src) == [
        ("List", "class", 3, 3, ""),
        ("items", "field", 3, 3, "List"),
        ("Push", "method", 5, 5, "List"),
        ("A", "variable", 7, 7, ""),
        ("B", "variable", 8, 8, ""),
    ]


# -- further languages (optional grammar wheels) -------------------------------------------------


def test_rust_items_impl_scopes_and_uses():
    pytest.importorskip("tree_sitter_rust")
    lib = load("rust_crate/src/lib.rs")
    assert defs(lib) == [
        ("Registry", "class", 9, 11, ""),
        ("shapes", "field", 10, 10, "Registry"),
        ("add", "method", 14, 16, "Registry"),
        ("VERSION", "constant", 19, 19, ""),
    ]
    assert def_named(lib, "Registry").docstring == "A registry of shapes."
    assert def_named(lib, "Registry.add").signature == "pub fn add(&mut self, name: &str)"
    assert imports(lib) == [
        (1, "shapes", (), (), None, True),
        (2, "util", (), (), None, True),
        (4, "crate::shapes", ("Circle", "Shape"), (None, "ShapeTrait"), None, True),
        (5, "std::collections", ("HashMap",), (None,), None, False),
    ]
    assert {("normalize", "call"), ("new", "call"), ("insert", "call")} <= refs(lib)
    shapes = load("rust_crate/src/shapes/mod.rs")
    assert defs(shapes) == [
        ("Shape", "interface", 1, 3, ""),
        ("area", "method", 2, 2, "Shape"),
        ("Circle", "class", 5, 7, ""),
        ("radius", "field", 6, 6, "Circle"),
        ("new", "method", 10, 12, "Circle"),
        ("area", "method", 16, 18, "Circle"),
        ("Kind", "enum", 21, 24, ""),
        ("Round", "constant", 22, 22, "Kind"),
        ("Square", "constant", 23, 23, "Kind"),
    ]


def test_java_classes_members_and_imports():
    pytest.importorskip("tree_sitter_java")
    app = load("java/src/main/java/com/example/app/App.java")
    assert defs(app) == [
        ("App", "class", 9, 30, ""),
        ("names", "field", 10, 10, "App"),
        ("LIMIT", "field", 11, 11, "App"),
        ("App", "method", 13, 15, "App"),
        ("run", "method", 18, 23, "App"),
        ("FAST", "constant", 25, 25, "App.Mode"),
        ("Mode", "enum", 25, 25, "App"),
        ("SLOW", "constant", 25, 25, "App.Mode"),
        ("Listener", "interface", 27, 29, "App"),
        ("onEvent", "method", 28, 28, "App.Listener"),
    ]
    assert def_named(app, "App.run").docstring == "Prints every name."
    assert def_named(app, "App.run").signature == "public void run()"
    assert imports(app) == [
        (3, "java.util.List", (), (), None, False),
        (4, "com.example.util.Strings", (), (), None, False),
        (5, "com.example.util", ("*",), (), None, False),
        (6, "com.example.util.Strings.shout", (), (), None, False),
    ]
    assert {("shout", "call"), ("Helper", "call"), ("help", "call"), ("List", "type")} <= refs(app)


def test_c_and_cpp():
    pytest.importorskip("tree_sitter_c")
    pytest.importorskip("tree_sitter_cpp")
    c = load("misc/src/geometry.c")
    assert defs(c) == [("area", "function", 6, 8, ""), ("counter", "variable", 10, 10, "")]
    assert def_named(c, "area").docstring == "Area of a rectangle."
    assert def_named(c, "area").signature == "int area(const struct rect *r)"
    assert imports(c) == [
        (1, "stdio.h", (), (), None, False),
        (2, "geometry.h", (), (), None, True),
        (3, "include/config.h", (), (), None, True),
    ]
    header = load("misc/src/geometry.h")  # .h is parsed as C++ when that grammar is installed
    assert defs(header) == [
        ("MAX_SIDE", "constant", 1, 1, ""),
        ("rect", "class", 3, 6, ""),
        ("w", "field", 4, 4, "rect"),
        ("h", "field", 5, 5, "rect"),
        ("x", "field", 9, 9, "point_t"),
        ("y", "field", 9, 9, "point_t"),
        ("point_t", "class", 10, 10, ""),  # a typedef's name comes last
        ("area", "function", 12, 12, ""),
    ]
    widget = load("misc/src/widget.cpp")
    assert defs(widget) == [
        ("Widget", "class", 5, 11, "ui"),
        ("Widget", "method", 7, 7, "ui.Widget"),
        ("draw", "method", 8, 8, "ui.Widget"),
        ("width_", "field", 10, 10, "ui.Widget"),
        ("resize", "method", 15, 15, "ui.Widget"),
    ]
    assert {("render", "call"), ("apply", "call"), ("Base", "type")} <= refs(widget)


def test_csharp_ruby_and_php():
    pytest.importorskip("tree_sitter_c_sharp")
    pytest.importorskip("tree_sitter_ruby")
    pytest.importorskip("tree_sitter_php")
    cs = load("misc/src/Service.cs")
    assert defs(cs) == [
        ("Service", "class", 6, 10, "App.Services"),
        ("_count", "field", 7, 7, "App.Services.Service"),
        ("Name", "field", 8, 8, "App.Services.Service"),
        ("Run", "method", 9, 9, "App.Services.Service"),
        ("IService", "interface", 12, 12, "App.Services"),
        ("Run", "method", 12, 12, "App.Services.IService"),
    ]
    assert def_named(cs, "App.Services.Service").docstring == "Does the work."
    assert imports(cs) == [
        (1, "System", (), (), None, False),
        (2, "App.Models", (), (), "Models", False),
    ]
    rb = load("misc/lib/tools/format.rb")
    assert defs(rb) == [
        ("Tools", "module", 4, 18, ""),
        ("Formatter", "class", 6, 17, "Tools"),
        ("WIDTH", "constant", 7, 7, "Tools.Formatter"),
        ("style", "field", 8, 8, "Tools.Formatter"),
        ("initialize", "method", 10, 12, "Tools.Formatter"),
        ("default", "method", 14, 16, "Tools.Formatter"),
    ]
    assert def_named(rb, "Tools.Formatter").docstring == "Formats things."
    assert def_named(rb, "Tools.Formatter").signature == "class Formatter < Base"
    assert imports(rb) == [(1, "json", (), (), None, False), (2, "../helpers", (), (), None, True)]
    php = load("misc/php/User.php")
    assert defs(php) == [
        ("User", "class", 10, 17, ""),
        ("TABLE", "constant", 11, 11, "User"),
        ("name", "field", 12, 12, "User"),
        ("save", "method", 14, 16, "User"),
    ]
    assert def_named(php, "User").docstring == "A user record."
    assert imports(php) == [
        (4, "App\\Contracts\\Repository", (), (), None, False),
        (5, "App\\Support", ("Str", "Arr"), (None, "A"), None, False),
        (7, "./helpers.php", (), (), None, True),
    ]
    assert {("slug", "call"), ("Model", "type"), ("Repository", "type")} <= refs(php)


# -- bad input ----------------------------------------------------------------------------------


def test_syntax_errors_still_yield_what_parsed(caplog):
    src = text(
        "broken.ts",
        "export function ok(a: number) { return a; }\n"
        "class Broken {\n  method( {\n}\n"
        "export const after = 1;\n",
    )
    with caplog.at_level(logging.WARNING):
        found = defs(src)
    assert ("ok", "function", 1, 1, "") in found
    assert any(
        getattr(r, "code", None) == "parse_error" and getattr(r, "path", None) == "broken.ts"
        for r in caplog.records
    )


def test_invalid_utf8_and_null_bytes(caplog):
    data = b'package p\n\n// caf\xe9 \xff\xfe\nfunc F\x00x() {}\n\nfunc G() string { return "\xc3\x28" }\n'
    with caplog.at_level(logging.WARNING):
        tags = backend.extract_tags(SourceFile(Path("."), "bad.go", data))
        backend.extract_imports(SourceFile(Path("."), "bad.go", data))
    assert ("G", "function", 6, 6, "") in [
        (t.name, t.symbol_kind, t.start_line, t.end_line, t.scope) for t in tags if t.is_def
    ]
    assert any(getattr(r, "code", None) == "decode_error" for r in caplog.records)
    name_with_replacement = text("u.ts", "")  # decoding never raises: names carry U+FFFD instead
    assert backend.extract_tags(name_with_replacement) == []
    tags = backend.extract_tags(SourceFile(Path("."), "u.ts", b"export function f\xff() {}\n"))
    assert all(isinstance(t.name, str) for t in tags)


def test_empty_and_whitespace_files():
    for path in ("e.ts", "e.tsx", "e.js", "e.go"):
        assert backend.extract_tags(text(path, "")) == []
        assert backend.extract_imports(text(path, "")) == []
        assert backend.extract_tags(text(path, "\n\n   \n")) == []


@pytest.mark.parametrize(
    "path,data",
    [
        ("deep.js", b"x = " + b"[" * 3000 + b"]" * 3000 + b";\n"),
        ("deep.ts", b"function f() {" * 2000),
        ("deep.go", b"package p\nfunc f() {" + b"{" * 3000 + b"}" * 3000 + b"}\n"),
        ("deep2.js", b"const v = " + b"a + " * 3000 + b"1;\nfunction after() {}\n"),
    ],
)
def test_deeply_nested_code_does_not_raise(path, data):
    tags = backend.extract_tags(SourceFile(Path("."), path, data))
    backend.extract_imports(SourceFile(Path("."), path, data))
    assert isinstance(tags, list)
    if path == "deep2.js":
        assert ("after", "function", 2, 2, "") in [
            (t.name, t.symbol_kind, t.start_line, t.end_line, t.scope) for t in tags if t.is_def
        ]


def test_output_is_deterministic_and_sorted():
    for rel in (
        "ts_project/src/models/user.ts",
        "go_project/internal/store/store.go",
        "ts_project/src/legacy.js",
    ):
        src = load(rel)
        first = backend.extract_tags(src)
        second = backend.extract_tags(SourceFile(src.root, src.path, bytes(src.data)))
        assert first == second
        assert first == sorted(
            first,
            key=lambda t: (
                t.start_line,
                t.kind,
                t.name,
                t.end_line,
                t.scope,
                t.symbol_kind,
                t.signature or "",
                t.docstring or "",
            ),
        )
        assert len(set(first)) == len(first)


def test_signatures_are_single_lines_capped_at_240():
    long_params = ", ".join(f"p{i}: number" for i in range(80))
    src = text("long.ts", f"export function huge(\n  {long_params}\n) {{\n  return 1;\n}}\n")
    kept, _ = validate_tags(backend.extract_tags(src), src, 10**6)  # the core caps signatures
    (tag,) = [t for t in kept if t.is_def]
    assert tag.signature is not None and len(tag.signature) <= 240
    assert "\n" not in tag.signature and tag.signature.startswith(
        "export function huge( p0: number"
    )
    assert (tag.start_line, tag.end_line) == (1, 5)


SAMPLES = {
    "s.ts": "export class A<T> { m(x: T): void { f(x); } }\ninterface I { a: string }\n",
    "s.tsx": "export const C = () => <div><B x={1} /></div>;\n",
    "s.js": "const x = require('./x');\nfunction f(a) { return new X(a); }\n",
    "s.go": 'package p\nimport "fmt"\ntype S struct{ A int }\nfunc (s *S) M() { fmt.Println(s.A) }\n',
    "s.rs": "use a::b;\nstruct S { a: i32 }\nimpl S { fn m(&self) {} }\n",
    "s.java": "import a.B;\nclass A { void m() { new B().c(); } }\n",
    "s.rb": "require 'x'\nclass A < B\n  def m; end\nend\n",
    "s.c": '#include "a.h"\nstruct s { int a; };\nint f(void) { return g(); }\n',
    "s.cpp": "namespace n { class A { void m(); }; }\nvoid n::A::m() {}\n",
    "s.cs": "using A;\nnamespace N { class C { void M() { F(); } } }\n",
    "s.php": "<?php\nuse A\\B;\nclass C { function m() { f(); } }\n",
}


def _installed_sample_paths() -> list[str]:
    return [p for p in SAMPLES if languages.spec_for_path(p) is not None]


def _check_contract(source: SourceFile) -> None:
    raw = backend.extract_tags(source)
    imps = backend.extract_imports(source)
    assert raw is not None and imps is not None
    tags, problem = validate_tags(raw, source, 10**6)  # as the core keeps them (normalised)
    assert problem is None and tags is not None and len(tags) == len(raw)
    lines = source.data.decode("utf-8", errors="replace").split("\n")
    for t in tags:
        assert t.file_path == source.path
        assert 1 <= t.start_line <= t.end_line <= max(len(lines), 1)
        assert t.kind in ("def", "ref") and t.name
        if t.is_def:
            assert t.name in lines[t.start_line - 1], (t, lines[t.start_line - 1])
            assert t.signature is None or ("\n" not in t.signature and len(t.signature) <= 240)
    for i in imps:
        assert i.file_path == source.path and 1 <= i.line_number <= max(len(lines), 1)


@pytest.mark.parametrize("path", _installed_sample_paths())
def test_samples_meet_the_contract(path):
    source = text(path, SAMPLES[path])
    assert any(t.is_def for t in backend.extract_tags(source))
    _check_contract(source)


@pytest.mark.parametrize("path", _installed_sample_paths())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(path, data):
    _check_contract(SourceFile(Path("."), path, data))


@pytest.mark.parametrize("path", _installed_sample_paths())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.text(max_size=300))
def test_arbitrary_text_never_raises(path, source):
    _check_contract(text(path, source))


@pytest.mark.parametrize("path", _installed_sample_paths())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_source_never_raises(path, data):
    base = SAMPLES[path]
    cut = data.draw(st.integers(0, len(base)))
    insert = data.draw(
        st.text(alphabet=st.sampled_from(list("{}()[]<>;:\"'`/*\n \t.=,#$@\\")), max_size=8)
    )
    _check_contract(text(path, base[:cut] + insert + base[cut:]))


def test_language_pack_1x_is_refused(monkeypatch, fresh_discovery):
    real_version = languages.distribution_version

    @functools.cache  # the fixture clears the module's caches, this one's too
    def version(dist):
        return "1.2.0" if dist == languages.PACK_DISTRIBUTION else real_version(dist)

    monkeypatch.setattr(languages, "_installed", lambda module: bool(module))
    monkeypatch.setattr(languages, "distribution_version", version)
    found, why = languages.pack_status()
    assert found is None and "downloads grammars at run time" in why
    assert languages._pack_bindings() == frozenset()
    pack_only = [s for s in languages.SPECS if s.extra == "langpack"]
    assert pack_only and all(languages.grammar_source(s) is None for s in pack_only)


def test_plugins_detail_names_found_and_missing_grammars_per_extra(monkeypatch, fresh_discovery):
    monkeypatch.setattr(
        languages, "grammar_source", lambda spec: "wheel" if spec.extra == "core" else None
    )
    detail = backend.backend_info().detail
    assert "extra core: found typescript, tsx, javascript, go" in detail
    assert "extra languages: found none; missing rust, java" in detail
    assert "(pip install 'repomapper[languages]')" in detail
    assert "extra langpack: found none; missing chatito" in detail


@pytest.mark.parametrize(
    ("path", "content", "served"),
    [
        (
            "Widget.m",
            "#import <Foundation/Foundation.h>\n@interface Widget : NSObject\n@end\n",
            False,
        ),
        ("widget.m", "function w = widget(x)\nw = x;\nend\n", True),
        ("vec.cl", "__kernel void add(__global float* a) {}\n", False),
        ("shapes.cl", "(defun area (r) (* pi r r))\n", True),
        ("main.d", "main.o: main.c util.h \\\n  defs.h\n", False),
        ("app.d", "module app;\nvoid main() {}\n", True),
    ],
)
def test_files_of_another_language_sharing_the_extension_are_declined(path, content, served):
    spec = languages.spec_for_path(path)
    if spec is None:
        pytest.skip(f"no installed grammar claims {path}")
    tags = backend.extract_tags(text(path, content))
    assert (tags is not None) == served, path


def test_queries_fit_every_pack_grammar_a_spec_may_fall_back_to():
    pytest.importorskip(languages.PACK_MODULE)
    if languages.pack_status()[0] is None:
        pytest.skip(languages.pack_status()[1])
    import importlib

    import tree_sitter

    pack = importlib.import_module(languages.PACK_MODULE)
    for spec in languages.SPECS:
        if not spec.pack:
            continue
        language = tree_sitter.Language(pack.get_binding(spec.pack))
        for kind, fragments in (("tags", spec.tags), ("imports", (spec.imports,))):
            text = "\n".join(languages._read_query(f"{f}-{kind}.scm") for f in fragments)
            if text.strip():
                tree_sitter.Query(language, text)  # raises on a pattern the grammar rejects


def test_a_grammar_that_crashes_on_non_ascii_input_gets_it_masked():
    """The D grammar of tree-sitter-language-pack 0.13.0 dies with SIGSEGV on this input; the
    backend masks non-ASCII bytes for it. Run in a child process: a regression must fail this
    test, not kill the test run."""
    import subprocess
    import sys

    d = next(s for s in languages.SPECS if s.name == "d")
    if languages.load_grammar(d) is None:
        pytest.skip("the D grammar (langpack extra) is not installed")
    assert d.ascii_only
    crashing = b"\xf0\xac\xbd\xaf\xc2\x8c\xf3\xb2\xa4\x90\xc3\x9a\xf0\xae\xbc\xa2\xc2\xb0\xf1\x92\xb7\x9eN\xc3\x9d"
    code = (
        "from repomapper.model import SourceFile\n"
        "from repomapper.plugins.treesitter import parsing\n"
        f"print(parsing.parse(SourceFile.from_text('x.d', '')) is not None)\n"
        f"s = SourceFile(SourceFile.from_text('a.d', '').root, 'a.d', {crashing!r})\n"
        "print(parsing.parse(s) is not None)\n"
        "t = SourceFile.from_text('b.d', 'int caf\\u00e9 = 1;\\nint totalArea() { return 0; }\\n')\n"
        "p = parsing.parse(t)\n"
        "print(p.data.isascii() and p.data != t.data)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True", "True", "True"]
    tags = backend.extract_tags(
        SourceFile.from_text("b.d", "int totalArea() { return 0; }\n// \u00e9\n")
    )
    assert "totalArea" in {t.name for t in tags if t.is_def}
