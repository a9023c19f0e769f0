from pathlib import Path

from repomapper_graphql.parser import (
    block_string_value,
    import_comment,
    parse_document,
    string_value,
)

FIXTURES = (
    Path(__file__).resolve().parents[1] / "src/repomapper_graphql/conformance/fixtures/graphql"
)


def spans(text):
    return {(d.scope, d.name): (d.start_line, d.end_line) for d in parse_document(text).definitions}


def test_comments_and_strings_never_define_or_reference():
    text = (
        "# type Ghost { id: ID }\n"
        '"""\n'
        "type InBlock { f: Hidden }\n"
        '"""\n'
        'type Real @doc(text: "type InString { ...Spread }") {\n'
        '  f(a: String = "# not a comment }"): Target # on Other\n'
        "}\n"
    )
    doc = parse_document(text)
    assert [(d.name, d.start_line) for d in doc.definitions if not d.scope] == [("Real", 5)]
    assert {r.name for r in doc.references} == {"doc", "Target"}
    assert spans(text)[("", "Real")] == (5, 7)


def test_fields_are_scoped_to_their_type_and_span_their_arguments():
    text = "type Query {\n  posts(\n    first: Int\n  ): [Post!]!\n  me: User\n}\n"
    assert spans(text) == {
        ("", "Query"): (1, 6),
        ("Query", "posts"): (2, 4),
        ("Query", "me"): (5, 5),
    }


def test_extend_type_defines_the_type_again():
    doc = parse_document('extend type User @key(fields: "id") {\n  posts: [Post]\n}\n')
    user = next(d for d in doc.definitions if d.name == "User")
    assert (user.symbol_kind, user.start_line, user.end_line) == ("class", 1, 3)
    assert user.signature == 'extend type User @key(fields: "id")'
    assert [(d.scope, d.name) for d in doc.definitions if d.scope] == [("User", "posts")]
    assert "User" not in {r.name for r in doc.references}


def test_operations_fragments_and_their_references():
    text = (
        "query Feed($after: Cursor, $n: Int) {\n"
        "  feed(after: $after, where: {kind: POST}) {\n"
        "    ...PostFields\n"
        "    ... on Ad @include(if: true) { id }\n"
        "  }\n"
        "}\n"
        "fragment PostFields on Post @client { id }\n"
    )
    doc = parse_document(text)
    assert [(d.name, d.symbol_kind, d.start_line, d.end_line) for d in doc.definitions] == [
        ("Feed", "function", 1, 6),
        ("PostFields", "function", 7, 7),
    ]
    assert [(r.name, r.line, r.kind) for r in doc.references] == [
        ("Cursor", 1, "type"),  # Int is built in
        ("PostFields", 3, "call"),
        ("Ad", 4, "type"),  # @include is built in
        ("Post", 7, "type"),
        ("client", 7, "call"),
    ]


def test_unclosed_block_ends_at_the_next_definition():
    text = "type A {\n  id: ID\n\ntype B {\n  type: String\n}\n"
    doc = parse_document(text)
    assert spans(text) == {
        ("", "A"): (1, 2),
        ("A", "id"): (2, 2),
        ("", "B"): (4, 6),
        ("B", "type"): (5, 5),
    }
    assert doc.problems == ("'{' of type A at line 1 is never closed",)


def test_every_line_terminator_counts():
    for newline in ("\n", "\r\n", "\r"):
        text = newline.join(['"""', "Doc", '"""', "enum E {", "  A", "  B", "}", ""])
        assert spans(text) == {("", "E"): (4, 7), ("E", "A"): (5, 5), ("E", "B"): (6, 6)}


def test_import_comments():
    doc = parse_document(
        '#import "./fragments.graphql"\n'
        "  # import A, B from '../types.graphql'\n"
        '# import * from "common.gql"\n'
        'type T { f: Int } # import "trailing.graphql"\n'
        '"""\n# import "in-a-string.graphql"\n"""\n'
        "# important: not an import\n"
    )
    assert [(i.path, i.names, i.line) for i in doc.imports] == [
        ("./fragments.graphql", ("*",), 1),
        ("../types.graphql", ("A", "B"), 2),
        ("common.gql", ("*",), 3),
    ]


def test_descriptions_become_docstrings():
    text = '"""\n    The first paragraph\n    goes on.\n\n    Details.\n"""\nscalar Date\n'
    [date] = parse_document(text).definitions
    assert date.doc == "The first paragraph\ngoes on."
    assert block_string_value('"""  a \\""" b"""') == '  a """ b'
    assert (
        string_value(r'"tab\tsnow\u2603 \uD83D\uDE00 \uD800 \u{1F600}"')
        == "tab\tsnow☃ 😀 \ufffd 😀"
    )


def test_odd_input_never_raises_and_stays_in_the_file():
    samples = [
        "",
        "{" * 50_000,
        '"""',
        '"\\',
        "type",
        "extend",
        "directive @",
        "query (",
        "\x00\ufeff",
    ]
    text = (FIXTURES / "schema.graphql").read_text()
    samples += [text[:i] for i in range(0, len(text), 7)]
    for sample in samples:
        doc = parse_document(sample)
        lines = sample.count("\n") + 1
        for d in doc.definitions:
            assert 1 <= d.start_line <= d.end_line <= lines, (sample, d)
        for r in doc.references:
            assert 1 <= r.line <= lines


def test_import_comment_forms():
    def read(text):
        imp = import_comment(text, 1)
        return None if imp is None else (imp.path, imp.names)

    assert read(' import "a.graphql"') == ("a.graphql", ("*",))
    assert read("import\t* from 'a.gql' ; trailing") == ("a.gql", ("*",))
    assert read('import A,B  from "a"') == ("a", ("A", "B"))
    assert read('import from "a"') == ("a", ("*",))
    assert read('import A "a"') is None  # no 'from'
    assert read('importer "a"') is None
    assert read('import ""') is None
    assert read('import "unterminated') is None
    assert read("import " + " " * 100_000 + "x") is None  # and quickly
