from pathlib import Path

from repomapper_graphql.plugin import extract_imports, extract_tags, resolve_import

from repomapper.index import RepoIndex
from repomapper.model import Import, SourceFile

FILES = [
    "web/queries/feed.graphql",
    "web/queries/fragments.gql",
    "web/shared/index.graphql",
    "web/queries/types.graphql",
    "schema/user.graphqls",
]
INDEX = RepoIndex(Path("."), FILES)


def resolve(source, importer="web/queries/feed.graphql"):
    return resolve_import(Import(importer, source), INDEX)


def test_relative_imports_resolve_with_or_without_an_extension():
    assert resolve("./fragments.gql") == ["web/queries/fragments.gql"]
    assert resolve("./fragments") == ["web/queries/fragments.gql"]
    assert resolve("../shared") == ["web/shared/index.graphql"]


def test_bare_paths_are_tried_next_to_the_importer_then_left_to_packages():
    assert resolve("types.graphql") == ["web/queries/types.graphql"]
    assert resolve("@acme/schema/types.graphql") == []
    assert resolve("/abs/types.graphql") == []
    assert resolve("../../../outside.graphql") == []
    assert resolve("./feed.graphql") == []  # itself


def test_other_languages_are_declined():
    assert resolve_import(Import("app.py", "./x"), INDEX) is None
    assert extract_tags(SourceFile.from_text("app.py", "type A { b: B }")) is None
    assert extract_imports(SourceFile.from_text("app.py", '#import "./x"')) is None


def test_imports_say_whether_they_are_relative():
    source = SourceFile.from_text(
        "q.gql", '#import "./a.graphql"\n# import B from "../b.graphql"\n#import "pkg/c.graphql"\n'
    )
    assert [(i.source, i.names, i.is_relative, i.line_number) for i in extract_imports(source)] == [
        ("./a.graphql", ("*",), True, 1),
        ("../b.graphql", ("B",), True, 2),
        ("pkg/c.graphql", ("*",), False, 3),
    ]


def test_tags_are_sorted_and_unique():
    source = SourceFile.from_text("s.graphqls", "type A { b(x: B, y: B): B }\ntype B\n")
    tags = extract_tags(source)
    assert [(t.kind, t.name, t.start_line, t.scope) for t in tags] == [
        ("def", "A", 1, ""),
        ("def", "b", 1, "A"),
        ("ref", "B", 1, ""),
        ("def", "B", 2, ""),
    ]
