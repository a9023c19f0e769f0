"""What the map without a task spends its tokens on (issue 25): code before tests, examples,
generated and vendored copies unless the user asked for them; a repeated line priced down each
time it repeats; the map's files in the order ``ranked_files`` reports."""

from __future__ import annotations

from pathlib import Path

from repomapper import RepoMap
from repomapper.extract import content_problem
from repomapper.model import Tag
from repomapper.rank import ROLE_WEIGHTS, asked_by_include, role_weights
from repomapper.relevance.roles import CODE, GENERATED, ROLES, TEST, VENDORED, file_role, file_roles
from repomapper.render import Item, line_shape, repriced


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def map_files(text: str, known: set[str]) -> list[str]:
    out = []
    for line in text.splitlines():
        name = line.removesuffix(":")
        if name in known and name not in out:
            out.append(name)
    return out


# -- roles ---------------------------------------------------------------------------------------


def test_compiled_copies_of_src_are_generated_and_their_sources_code():
    roles = file_roles(
        [
            "src/v3/errors.ts",
            "v3/errors.d.ts",
            "v3/errors.d.cts",
            "v3/errors.js",
            "dist/esm/v3/errors.mjs",
            "pkg/src/a.ts",
            "pkg/dist/a.js",
            "lib/router/index.js",  # no source under src/: code
            "types/index.d.ts",  # a declaration of nothing under src/: code
        ]
    )
    assert roles["src/v3/errors.ts"] == CODE
    assert roles["pkg/src/a.ts"] == CODE
    for copy in ("v3/errors.d.ts", "v3/errors.d.cts", "v3/errors.js", "dist/esm/v3/errors.mjs"):
        assert roles[copy] == GENERATED, copy
    assert roles["pkg/dist/a.js"] == GENERATED
    assert roles["lib/router/index.js"] == CODE
    assert roles["types/index.d.ts"] == CODE


def test_generated_names_and_more_vendor_folders():
    assert file_role("static/js/jquery.min.js") == GENERATED
    assert file_role("api/service_pb2.py") == GENERATED
    assert file_role("api/service.pb.go") == GENERATED
    assert file_role("web/bower_components/x/index.js") == VENDORED
    assert file_role("deps/third-party/zlib/inflate.c") == VENDORED
    assert file_role("src/minimal.js") == CODE
    # the task ranking's roles are unchanged for the paths it knew
    assert file_role("tests/test_mod.py") == TEST
    assert set(ROLE_WEIGHTS) == set(ROLES) - {CODE}


def test_a_small_one_line_minified_file_is_skipped():
    bundle = (
        b"/*! Select2 4.0.13 | https://github.com/select2/select2/blob/master/LICENSE.md */\n\n"
        + b'!function(){if(jQuery&&jQuery.fn&&jQuery.fn.select2)var e=jQuery.fn.select2.amd;e.define("select2/i18n/af",[],function(){return{errorLoading:function(){return"x"},'
        * 4
        + b"}}()"
    )
    assert len(bundle) < 4096
    found = content_problem("static/i18n/af.js", bundle)
    assert found is not None and found.code == "minified"
    ordinary = b"export function add(a, b) {\n  return a + b;\n}\n" * 20
    assert content_problem("src/add.js", ordinary) is None
    one_long_line = (
        b"// a file with one long comment\n" + b"const x = 1;\n" * 60 + b"// " + b"x" * 450
    )
    assert content_problem("src/x.js", one_long_line) is None


# -- the task-free ranking -----------------------------------------------------------------------

APP = {
    "src/shop/cart.py": "class Cart:\n    def add(self, item):\n        return item\n\n"
    "    def total(self):\n        return 0\n",
    "src/shop/prices.py": "from shop.cart import Cart\n\ndef price_of(item):\n    return Cart()\n",
}
TESTS = {
    "tests/conftest.py": "import pytest\n\n@pytest.fixture\ndef shop_client():\n    return 1\n\n"
    "@pytest.fixture\ndef shop_db():\n    return 2\n",
    **{
        f"tests/test_case{i}.py": f"def test_case{i}(shop_client, shop_db):\n"
        "    assert shop_client and shop_db\n    shop_client\n    shop_db\n"
        for i in range(8)
    },
}


def test_code_comes_before_the_tests_that_reference_each_other(tmp_path):
    root = write(tmp_path, {**APP, **TESTS})
    with RepoMap(root, map_tokens=4096, use_cache=False) as rm:
        ranked = [f.path for f in rm.rank().files]
        result = rm.map()
    code = {p for p in ranked if file_role(p) == CODE}
    assert set(ranked[: len(code)]) == code, ranked
    shown = map_files(result.map, set(ranked))
    assert shown[: len(code)] == [p for p in ranked if p in code]


def test_files_the_user_asked_for_are_not_demoted(tmp_path):
    files = sorted({**APP, **TESTS})
    assert role_weights(files)["tests/conftest.py"] == ROLE_WEIGHTS[TEST]
    assert "tests/conftest.py" not in role_weights(
        files, chat_files=frozenset({"tests/conftest.py"})
    )
    assert "tests/conftest.py" not in role_weights(
        files, mentioned_fnames=frozenset({"tests/conftest.py"})
    )
    assert "tests/conftest.py" not in role_weights(files, mentioned_idents=frozenset({"conftest"}))
    # a map of the tests alone: nothing is code, nothing is demoted
    assert role_weights([f for f in files if f.startswith("tests/")]) == {}
    # an include glob that selects tests and no code asks for them; one that selects code too
    # asks for nothing in particular
    asked = asked_by_include(["src/**", "tests/**"], files)
    assert asked == {f for f in files if f.startswith("tests/")}
    assert asked_by_include(["**/*.py"], files) == frozenset()
    assert role_weights(files, asked=asked) == {}


def test_an_include_glob_for_the_tests_ranks_them_as_without_roles(tmp_path):
    root = write(tmp_path, {**APP, **TESTS})
    with RepoMap(root, use_cache=False) as rm:
        demoted = [f.path for f in rm.rank().files]
    with RepoMap(root, use_cache=False, include=["src/**", "tests/**"]) as rm:
        asked = [f.path for f in rm.rank().files]
    assert file_role(demoted[0]) == CODE
    assert demoted != asked
    assert asked[0] == "tests/conftest.py"  # referenced by every test: Aider's first file


def test_compiled_copies_come_after_their_sources(tmp_path):
    source = "export class ZodError extends Error {\n  issues: string[] = [];\n}\n"
    root = write(
        tmp_path,
        {
            "src/errors.ts": source,
            "src/types.ts": "import { ZodError } from './errors';\nexport function parse(): ZodError {\n"
            "  return new ZodError();\n}\n",
            "errors.d.ts": "export declare class ZodError extends Error {\n  issues: string[];\n}\n",
            "errors.js": "export class ZodError extends Error {\n  constructor() { super(); this.issues = []; }\n}\n",
            "types.d.ts": "import { ZodError } from './errors';\nexport declare function parse(): ZodError;\n",
            "types.js": "import { ZodError } from './errors';\nexport function parse() {\n"
            "  return new ZodError();\n}\n",
        },
    )
    with RepoMap(root, use_cache=False) as rm:
        ranked = [f.path for f in rm.rank().files]
    assert ranked[:2] == ["src/errors.ts", "src/types.ts"], ranked


# -- repeated entries ----------------------------------------------------------------------------


def tag(name: str, signature: str, kind: str = "method", line: int = 1) -> Tag:
    return Tag("a.py", line, line, name, "def", kind, "", signature)


def test_a_repeated_line_is_wanted_less_each_time():
    shape = {
        ("a.py", "decode"): ["def decode(self, data: bytes) -> bytes:"],
        ("b.py", "decode"): ["def decode(self, data: bytes) -> bytes:"],
        ("c.py", "decode"): ["def decode(self, data: bytes) -> bytes:"],
        ("d.py", "run"): ["def run(self):"],
        ("e.py", "stop"): ["def stop(self):"],
    }
    items = [
        Item("a.py", "decode", 1.0),
        Item("b.py", "decode", 0.9),
        Item("c.py", "decode", 0.8),
        Item("d.py", "run", 0.6),
        Item("e.py", "stop", 0.3),
    ]
    out = list(repriced(items, lambda i: shape[(i.path, i.ident)]))
    assert [(i.path, i.score) for i in out] == [
        ("a.py", 1.0),
        ("d.py", 0.6),
        ("b.py", 0.45),
        ("e.py", 0.3),
        ("c.py", 0.2),
    ]


def test_one_entry_whose_definitions_repeat_is_split():
    items = [Item("a.py", "decode", 1.0), Item("b.py", "other", 0.7)]
    shapes = {
        "decode": ["def decode(self, d):", "def decode(self, d):", "def decode(self, t: str):"],
        "other": ["def other():"],
    }
    out = list(repriced(items, lambda i: shapes[i.ident][i.skip : i.limit]))
    assert [(i.ident, i.skip, i.limit, i.score) for i in out] == [
        ("decode", 0, 1, 1.0),
        ("decode", 2, 3, 1.0),
        ("other", 0, None, 0.7),
        ("decode", 1, 2, 0.5),
    ]


def test_data_lines_repeat_whatever_they_name():
    one = tag("debug", "var debug = require('debug')('express:app')", "variable")
    two = tag("Route", "var Route = require('./route')", "variable")
    three = tag("View", "var View = require('./view');", "variable")
    assert line_shape(one) != line_shape(two)
    assert line_shape(two) == line_shape(three)
    assert line_shape(tag("get", "def get(self):")) != line_shape(tag("put", "def put(self):"))


def test_the_map_prices_repeated_lines_down(tmp_path):
    decoders = "".join(
        f"class Decoder{i}:\n    def decode(self, data: bytes) -> bytes:\n        return data\n\n"
        for i in range(10)
    )
    users = "".join(
        f"def use{i}(d):\n    return d.decode(b'x') + helper{i}()\n\n" for i in range(10)
    )
    helpers = "".join(f"def helper{i}():\n    return b''\n\n" for i in range(10))
    root = write(tmp_path, {"codecs.py": decoders, "users.py": users, "helpers.py": helpers})
    with RepoMap(root, map_tokens=300, use_cache=False) as rm:
        text = rm.map().map
    # the ten lines would fit; each repeat is wanted half as much as the one before
    assert 1 <= text.count("def decode(self, data: bytes) -> bytes:") <= 5, text
    assert text.count("def helper") == 10


# -- the map's order -----------------------------------------------------------------------------


def test_the_maps_files_come_in_ranked_files_order(tmp_path):
    # hub.py defines the single most wanted name; many.py many names each wanted less, and gets
    # more rank in all: the map's first entry is hub.py's, its first file many.py
    root = write(
        tmp_path,
        {
            "hub.py": "def star_of_the_show():\n    return 1\n",
            "many.py": "".join(f"def f{i}():\n    return {i}\n\n" for i in range(14)),
            **{
                f"user{j}.py": "".join(f"f{i}()\n" for i in range(14)) + "star_of_the_show()\n"
                for j in range(6)
            },
        },
    )
    with RepoMap(root, map_tokens=4096, use_cache=False) as rm:
        result = rm.map()
    ranked = [f.path for f in result.ranked_files]
    shown = map_files(result.map, set(ranked))
    assert result.ranked_symbols[0].path == "hub.py"
    assert ranked[:2] == ["many.py", "hub.py"]
    assert shown == [p for p in ranked if p in shown]


def test_a_stored_state_is_ranked_again_for_the_files_an_include_glob_asks_for(tmp_path):
    root = write(tmp_path / "repo", {**APP, **TESTS})
    cache = tmp_path / "cache"
    with RepoMap(root, cache_dir=cache) as rm:  # stores the ranking state of every file
        stored = [f.path for f in rm.rank().files]
    # the same files through globs that ask for the tests: the stored state is read, and ranked
    # again for them, as a state built without any cache is
    with RepoMap(root, cache_dir=cache, include=["src/**", "tests/**"]) as rm:
        asked = [f.path for f in rm.rank().files]
    with RepoMap(root, use_cache=False, include=["src/**", "tests/**"]) as rm:
        fresh = [f.path for f in rm.rank().files]
    assert asked == fresh != stored
