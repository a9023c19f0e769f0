"""Import resolution as the language resolves it, on small fixture trees: C/C++ ``#include``
through the includer's folder and the repository's include roots, and JavaScript/TypeScript
workspace packages imported by their ``package.json`` name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repomapper.index import RepoIndex
from repomapper.model import SourceFile
from repomapper.plugins import treesitter as backend
from repomapper.plugins.treesitter import includes
from repomapper.plugins.treesitter.workspaces import split_specifier
from tests.conftest import write_tree


def index_of(root: Path, files: dict[str, str]) -> RepoIndex:
    write_tree(root, files)
    return RepoIndex(root, list(files))


def resolved(index: RepoIndex, rel: str) -> dict[str, list[str]]:
    """Every import of ``rel`` as the backend extracts it -> what it resolves to."""
    source = SourceFile(index.root, rel, (index.root / rel).read_bytes())
    return {
        imp.source: backend.resolve_import(imp, index) for imp in backend.extract_imports(source)
    }


# -- C and C++ ------------------------------------------------------------------------------------

C_TREE = {
    # redis/valkey: everything in src/, tests elsewhere include "server.h"
    "src/server.h": "int serve(void);\n",
    "src/server.c": '#include "server.h"\n#include <string.h>\n#include <stdio.h>\n',
    "src/sds.h": "typedef char *sds;\n",
    "src/modules/hello.c": '#include "server.h"\n#include "../sds.h"\n',
    "src/compat/string.h": "/* a compat shim that shares a system header's name */\n",
    "src/compat/shim.c": '#include "string.h"\n',
    "src/util.c": '#include "string.h"\n#include "stdint.h"\n',
    "tests/unit/test_sds.c": '#include "sds.h"\n#include "server.h"\n#include <string.h>\n',
    # a public include folder, reached with <lib/header.h> and "lib/header.h"
    "include/mylib/api.h": "int api(void);\n",
    "lib/impl.c": (
        '#include <mylib/api.h>\n#include "mylib/api.h"\n#include <stdint.h>\n'
        "#include <hiredis.h>\n#include <vector>\n"
    ),
    # a vendored dependency with its own src/: its headers are found from the project too
    "deps/lua/src/lua.h": "int lua_call(void);\n",
    "deps/lua/src/lapi.c": '#include "lua.h"\n',
    "deps/jemalloc/include/msvc_compat/C99/stdint.h": "/* for old compilers */\n",
    "deps/hiredis/hiredis.h": "int redisConnect(void);\n",
    "deps/cxx/vector": "",
    "src/script.c": '#include "lua.h"\n#include "generated/version.h"\n',
    # C++: a header beside its implementation, and a module path from the root
    "engine/render/mesh.hpp": "class Mesh {};\n",
    "engine/render/mesh.cpp": '#include "mesh.hpp"\n#include "engine/render/mesh.hpp"\n',
}


@pytest.fixture
def c_index(tmp_path) -> RepoIndex:
    pytest.importorskip("tree_sitter_c")
    pytest.importorskip("tree_sitter_cpp")
    return index_of(tmp_path, C_TREE)


def test_quoted_includes_search_the_includers_folder_then_the_include_roots(c_index):
    assert resolved(c_index, "src/server.c") == {
        "server.h": ["src/server.h"],
        "string.h": [],  # <string.h> is the system's, not src/compat/string.h
        "stdio.h": [],
    }
    assert resolved(c_index, "src/modules/hello.c") == {
        "server.h": ["src/server.h"],  # through the includer's ancestors
        "../sds.h": ["src/sds.h"],
    }
    assert resolved(c_index, "tests/unit/test_sds.c") == {
        "sds.h": ["src/sds.h"],  # src/ holds headers: an include root
        "server.h": ["src/server.h"],
        "string.h": [],
    }
    # a quoted include finds the shim beside the includer, as the compiler does; elsewhere a
    # standard name falls through to the system's headers, not to a namesake in another folder
    assert resolved(c_index, "src/compat/shim.c") == {"string.h": ["src/compat/string.h"]}
    assert resolved(c_index, "src/util.c") == {"string.h": [], "stdint.h": []}


def test_angle_includes_never_name_a_standard_headers_namesake(c_index):
    assert resolved(c_index, "lib/impl.c") == {
        "mylib/api.h": ["include/mylib/api.h"],  # both spellings, through include/
        "stdint.h": [],  # not jemalloc's shim for old compilers
        "hiredis.h": ["deps/hiredis/hiredis.h"],  # a folder the build adds with -I
        "vector": [],
    }


def test_an_include_folder_of_folders_is_an_include_root(tmp_path):
    # the kernel's layout: include/ and arch/x86/include/ hold folders of headers, and tools/
    # has copies of some of them for its own programs
    pytest.importorskip("tree_sitter_c")
    index = index_of(
        tmp_path,
        {
            "include/linux/kernel.h": "int printk(void);\n",
            "include/uapi/linux/kernel.h": "/* the user-space part */\n",
            "tools/include/linux/kernel.h": "int printf_like(void);\n",
            "arch/x86/include/asm/io.h": "void outb(void);\n",
            "arch/arm/include/asm/io.h": "void writeb(void);\n",
            "drivers/net/dummy.c": "#include <linux/kernel.h>\n",
            "arch/x86/kernel/setup.c": "#include <linux/kernel.h>\n#include <asm/io.h>\n",
            "tools/perf/builtin.c": "#include <linux/kernel.h>\n",
        },
    )
    assert resolved(index, "drivers/net/dummy.c") == {"linux/kernel.h": ["include/linux/kernel.h"]}
    assert resolved(index, "arch/x86/kernel/setup.c") == {
        "linux/kernel.h": ["include/linux/kernel.h"],
        "asm/io.h": ["arch/x86/include/asm/io.h"],  # the nearest root: the includer's arch
    }
    assert resolved(index, "tools/perf/builtin.c") == {
        "linux/kernel.h": ["tools/include/linux/kernel.h"]
    }


def test_a_dependencys_source_folder_is_an_include_root(c_index):
    assert resolved(c_index, "deps/lua/src/lapi.c") == {"lua.h": ["deps/lua/src/lua.h"]}
    assert resolved(c_index, "src/script.c") == {
        "lua.h": ["deps/lua/src/lua.h"],
        "generated/version.h": [],  # made by the build: not in the repository
    }


def test_cpp_headers_beside_and_from_the_root(c_index):
    assert resolved(c_index, "engine/render/mesh.cpp") == {
        "mesh.hpp": ["engine/render/mesh.hpp"],
        "engine/render/mesh.hpp": ["engine/render/mesh.hpp"],
    }


def test_a_quoted_include_found_nowhere_on_the_path_takes_the_nearest_file_ending_so(tmp_path):
    pytest.importorskip("tree_sitter_c")
    index = index_of(
        tmp_path,
        {
            "third/zlib/contrib/zconf.h": "",
            "app/main.c": '#include "zconf.h"\n',
        },
    )
    assert resolved(index, "app/main.c") == {"zconf.h": ["third/zlib/contrib/zconf.h"]}


# -- JavaScript / TypeScript workspace packages ---------------------------------------------------


def manifest(**fields) -> str:
    return json.dumps(fields)


WORKSPACE = {
    "package.json": manifest(name="monorepo", private=True, workspaces=["packages/*"]),
    # babel's shape: exports "." with conditions pointing at build output (lib/), sources in src/
    "packages/core/package.json": manifest(
        name="@acme/core",
        main="./lib/index.js",
        exports={
            ".": {"types": "./lib/index.d.ts", "default": "./lib/index.js"},
            "./package.json": "./package.json",
            "./utils/*": "./lib/utils/*.js",
        },
    ),
    "packages/core/src/index.ts": "export const core = 1;\n",
    "packages/core/src/utils/strings.ts": "export function pad() {}\n",
    # a string "exports" naming a committed file
    "packages/plain/package.json": manifest(name="plain", exports="./main.js"),
    "packages/plain/main.js": "module.exports = {};\n",
    # only "main", sources beside it; a subpath import
    "packages/legacy/package.json": manifest(name="legacy", main="index.js"),
    "packages/legacy/index.js": "exports.a = 1;\n",
    "packages/legacy/helpers/fmt.js": "exports.fmt = 1;\n",
    # no entry fields at all: src/index
    "packages/bare/package.json": manifest(name="@acme/bare"),
    "packages/bare/src/index.tsx": "export const Bare = () => null;\n",
    # a broken manifest in a fixture, and a copy of a name deeper down
    "packages/core/test/fixtures/bad/package.json": "{ not json",
    "packages/core/test/fixtures/dup/package.json": manifest(name="@acme/core", main="x.js"),
    "packages/core/test/fixtures/dup/x.js": "",
    # the importer
    "packages/app/src/main.ts": (
        'import { core } from "@acme/core";\n'
        'import { pad } from "@acme/core/utils/strings";\n'
        'import plain from "plain";\n'
        'import legacy from "legacy";\n'
        'import { fmt } from "legacy/helpers/fmt";\n'
        'import { Bare } from "@acme/bare";\n'
        'import React from "react";\n'
        'import missing from "@acme/missing";\n'
    ),
}


@pytest.fixture
def ws_index(tmp_path) -> RepoIndex:
    return index_of(tmp_path, WORKSPACE)


def test_workspace_packages_resolve_by_name_to_their_sources(ws_index):
    assert resolved(ws_index, "packages/app/src/main.ts") == {
        "@acme/core": ["packages/core/src/index.ts"],  # exports "." -> lib/index.js -> src
        "@acme/core/utils/strings": ["packages/core/src/utils/strings.ts"],  # "./utils/*"
        "plain": ["packages/plain/main.js"],  # exports as a string
        "legacy": ["packages/legacy/index.js"],  # main
        "legacy/helpers/fmt": ["packages/legacy/helpers/fmt.js"],  # a subpath, no exports
        "@acme/bare": ["packages/bare/src/index.tsx"],  # no entry fields: src/index
        "react": [],  # not in the repository
        "@acme/missing": [],
    }


def test_tsconfig_paths_come_before_workspace_packages(tmp_path):
    files = dict(WORKSPACE)
    files["tsconfig.json"] = json.dumps(
        {"compilerOptions": {"baseUrl": ".", "paths": {"@acme/core": ["packages/core/src/alt"]}}}
    )
    files["packages/core/src/alt.ts"] = "export const alt = 1;\n"
    index = index_of(tmp_path, files)
    found = resolved(index, "packages/app/src/main.ts")
    assert found["@acme/core"] == ["packages/core/src/alt.ts"]
    assert found["plain"] == ["packages/plain/main.js"]


@pytest.mark.parametrize(
    ("spec", "parts"),
    [
        ("@scope/pkg", ("@scope/pkg", "")),
        ("@scope/pkg/a/b", ("@scope/pkg", "a/b")),
        ("pkg", ("pkg", "")),
        ("pkg/sub", ("pkg", "sub")),
    ],
)
def test_split_specifier(spec, parts):
    assert split_specifier(spec) == parts


def test_export_conditions_prefer_source_and_fall_back_in_order(tmp_path):
    files = {
        "pkgs/x/package.json": manifest(
            name="x",
            exports={
                ".": [
                    {"node": "./dist/node.js", "source": "./src/entry.ts"},
                    "./dist/fallback.js",
                ]
            },
        ),
        "pkgs/x/src/entry.ts": "export {};\n",
        "pkgs/x/src/node.ts": "export {};\n",
        "app/a.js": 'import x from "x";\n',
    }
    index = index_of(tmp_path, files)
    assert resolved(index, "app/a.js") == {"x": ["pkgs/x/src/entry.ts"]}


def test_subpath_imports_use_the_nearest_package_json(tmp_path):
    files = {
        "package.json": manifest(name="root", imports={"#config": "./wrong.js"}),
        "pkgs/app/package.json": manifest(
            name="app",
            imports={
                "#config": {"node": "./src/config.node.js", "default": "./src/config.js"},
                "#internal/*": "./src/internal/*.js",
                "#dep": "lodash",  # a package, not a file
            },
        ),
        "pkgs/app/src/config.js": "",
        "pkgs/app/src/config.node.js": "",
        "pkgs/app/src/internal/db.ts": "",
        "pkgs/app/src/deep/main.js": (
            'import config from "#config";\nimport db from "#internal/db";\n'
            'import dep from "#dep";\nimport none from "#none";\n'
        ),
    }
    index = index_of(tmp_path, files)
    assert resolved(index, "pkgs/app/src/deep/main.js") == {
        "#config": ["pkgs/app/src/config.js"],  # "default" before "node"
        "#internal/db": ["pkgs/app/src/internal/db.ts"],
        "#dep": [],
        "#none": [],
    }


# -- Rust workspace crates ------------------------------------------------------------------------

CARGO = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
    "crates/core-lib/Cargo.toml": '[package]\nname = "core-lib"\nversion = "0.1.0"\n',
    "crates/core-lib/src/lib.rs": "pub mod parser;\npub struct Config;\n",
    "crates/core-lib/src/parser/mod.rs": "pub mod lexer;\n",
    "crates/core-lib/src/parser/lexer.rs": "pub struct Token;\n",
    "crates/core-lib/tests/parse.rs": "use core_lib::parser;\n",
    "crates/other/Cargo.toml": (
        '[package]\nname = "other"\nversion = "0.1.0"\n[lib]\nname = "renamed"\npath = "lib/root.rs"\n'
    ),
    "crates/other/lib/root.rs": "pub fn x() {}\n",
    "crates/broken/Cargo.toml": "[package\nname = ",
    "crates/cli/Cargo.toml": '[package]\nname = "cli"\nversion = "0.1.0"\n',
    "crates/cli/src/main.rs": (
        "use core_lib::parser::lexer::Token;\n"
        "use core_lib::Config;\n"
        "use core_lib::{parser, Config as C};\n"
        "use renamed::x;\n"
        "use serde::Deserialize;\n"
        "extern crate core_lib;\n"
    ),
}


def test_rust_crates_of_the_workspace_resolve_by_name(tmp_path):
    pytest.importorskip("tree_sitter_rust")
    index = index_of(tmp_path, CARGO)
    lib = "crates/core-lib/src/lib.rs"
    main = "crates/cli/src/main.rs"
    source = SourceFile(index.root, main, (index.root / main).read_bytes())
    assert {
        (imp.line_number, imp.source, imp.names): backend.resolve_import(imp, index)
        for imp in backend.extract_imports(source)
    } == {
        (1, "core_lib::parser::lexer", ("Token",)): ["crates/core-lib/src/parser/lexer.rs"],
        (2, "core_lib", ("Config",)): [lib],
        (3, "core_lib", ("parser", "Config")): [lib, "crates/core-lib/src/parser/mod.rs"],
        (4, "renamed", ("x",)): ["crates/other/lib/root.rs"],  # [lib] name and path
        (5, "serde", ("Deserialize",)): [],  # a dependency
        (6, "core_lib", ()): [lib],
    }
    # an integration test uses its own crate by name
    assert resolved(index, "crates/core-lib/tests/parse.rs") == {
        "core_lib": ["crates/core-lib/src/parser/mod.rs"]
    }


_FOLDERS = st.sampled_from(["include", "src", "lib", "a", "b", "inc"])
_HEADERS = st.sampled_from(["x.h", "y.h", "types.h", "x.hpp"])


@given(
    files=st.lists(
        st.builds(lambda d, h: "/".join([*d, h]), st.lists(_FOLDERS, max_size=3), _HEADERS),
        min_size=1,
        max_size=25,
        unique=True,
    ),
    data=st.data(),
    quoted=st.booleans(),
)
@settings(max_examples=400, deadline=None)
def test_an_include_found_from_the_files_named_like_it_is_the_first_of_the_search_order(
    files, data, quoted
):
    # the search by candidates (what a large tree needs) against the search folder by folder,
    # with the includer in a folder of the tree and the spec the end of one of its files
    index = RepoIndex(Path("/nonexistent"), files)
    parts = data.draw(st.sampled_from(files)).split("/")
    here = "/".join(parts[: data.draw(st.integers(0, len(parts) - 1))])
    named = data.draw(st.sampled_from(files)).split("/")
    spec = "/".join(named[data.draw(st.integers(0, len(named) - 1)) :])
    assert includes._plain(spec)
    assert includes._first_found(spec, here, quoted, index) == includes._first_joined(
        spec, here, quoted, index
    )
