"""Declaration/implementation pairs in the task ranking (core/relevance/pairs.py): pairing by
path, the implementation first, and a hub header that does not top an unrelated task."""

from __future__ import annotations

from collections import defaultdict

import pytest

from repomapper import RepoMap
from repomapper.model import Reason
from repomapper.relevance.pairs import declaration_pairs, declaration_suffix, unite_pairs


def test_pairs_are_found_in_the_same_folder_and_in_sibling_source_folders():
    paths = [
        "src/foo.h",
        "src/foo.c",
        "include/bar.h",
        "src/bar.c",
        "include/lib/baz.hpp",
        "src/lib/baz.cpp",
        "src/lone.h",
        "other/lone.c",  # same stem, unrelated folder: not a pair
        "src/jsx.d.ts",
        "src/index.d.ts",
        "src/index.js",
        "types/util.d.ts",
        "src/util.ts",
        "pkg/mod.pyi",
        "pkg/mod.py",
        "src/both.h",
        "src/both.c",
        "src/both.cpp",
        "web/page.h",
        "web/page.ts",  # a header is not implemented by TypeScript
        "inc/doc.h",
        "inc/doc-inl.h",  # a header's inline definitions implement it
        "inc/tmpl.hpp",
        "inc/tmpl.tcc",
        "lib/parser.mli",
        "lib/parser.ml",
    ]
    assert declaration_pairs(paths) == {
        "src/foo.h": ("src/foo.c",),
        "include/bar.h": ("src/bar.c",),
        "include/lib/baz.hpp": ("src/lib/baz.cpp",),
        "src/index.d.ts": ("src/index.js",),
        "types/util.d.ts": ("src/util.ts",),
        "pkg/mod.pyi": ("pkg/mod.py",),
        "src/both.h": ("src/both.c", "src/both.cpp"),
        "inc/doc.h": ("inc/doc-inl.h",),
        "inc/tmpl.hpp": ("inc/tmpl.tcc",),
        "lib/parser.mli": ("lib/parser.ml",),
    }
    assert declaration_suffix("inc/doc-inl.h") is None
    assert declaration_suffix("a/b.d.ts") == ".d.ts" and declaration_suffix("a/b.ts") is None


def test_unite_pairs_carries_own_evidence_and_halves_a_headers_graph_evidence():
    why: defaultdict[str, list[Reason]] = defaultdict(list)
    scores = {"src/foo.h": 1.5, "src/foo.c": 0.6, "src/hub.h": 0.5, "src/x.c": 0.3}
    graph = {"src/foo.h": 0.5, "src/foo.c": 0.1, "src/hub.h": 0.5}
    evidence = {"src/foo.h": 1.0, "src/foo.c": 0.5, "src/x.c": 0.3}
    out = unite_pairs(scores, graph, evidence, why)
    assert out["src/foo.c"] == pytest.approx(1.0)  # the header's own evidence
    assert out["src/foo.c"] > out["src/foo.h"] > out["src/x.c"]  # the header right after
    assert out["src/hub.h"] == pytest.approx(0.25)  # graph evidence only: half of it
    assert out["src/x.c"] == 0.3
    assert any(r.signal == "pair" for r in why["src/foo.c"])
    assert any(r.signal == "demoted" for r in why["src/hub.h"])


HUB = "#ifndef SERVER_H\n#define SERVER_H\n" + "".join(
    f"int shared_{i}(int x);\n" for i in range(12)
)
C_REPO = {
    "src/server.h": HUB
    + "int parse_request_line(const char *line);\nvoid flush_reply_buffer(int fd);\n#endif\n",
    "src/server.c": '#include "server.h"\nint shared_0(int x) { return x; }\n'
    + "".join(f"int shared_{i}(int x) {{ return shared_0(x); }}\n" for i in range(1, 12)),
    "src/request.c": '#include "server.h"\n'
    "int parse_request_line(const char *line) {\n    return shared_1(line[0]);\n}\n",
    "src/reply.c": '#include "server.h"\nvoid flush_reply_buffer(int fd) {\n    shared_2(fd);\n}\n',
    **{
        f"src/mod{i}.c": f'#include "server.h"\nint mod{i}(int x) {{ return shared_{i}(x); }}\n'
        for i in range(8)
    },
    "src/tokenize.c": "int tokenize_words(const char *text) {\n"
    "    /* split the tokenizer input on whitespace */\n    return text[0];\n}\n",
    "src/tokenize.h": "/* tokenize_words: split the text into words; empty input gives 0 words.\n"
    " * The tokenizer keeps no state between calls. */\n"
    "int tokenize_words(const char *text);\n",
    **{
        f"src/use{i}.c": f'#include "tokenize.h"\nint use{i}(void) {{ return tokenize_words("a"); }}\n'
        for i in range(4)
    },
}


@pytest.fixture
def c_repo(make_tree):
    pytest.importorskip("tree_sitter_c")
    return make_tree(C_REPO, "c_repo")


def test_a_function_declared_in_a_header_ranks_its_definition_first(c_repo):
    ranked = RepoMap(c_repo, use_cache=False).rank(task="tokenize_words crashes on empty input")
    order = [f.path for f in ranked.files]
    assert order[:2] == ["src/tokenize.c", "src/tokenize.h"]


def test_a_hub_header_does_not_top_an_unrelated_task(c_repo):
    ranked = RepoMap(c_repo, use_cache=False).rank(
        task="parse_request_line returns the wrong length"
    )
    order = [f.path for f in ranked.files]
    assert order[0] == "src/request.c"
    assert order.index("src/server.h") > 1
