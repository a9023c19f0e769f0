"""End to end: ``repomapper mcp`` started as a subprocess and driven with the MCP SDK's client."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the mcp extra: pip install -e '.[mcp]'")
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema comes with the dev extra")

import anyio  # noqa: E402  (after the skip: anyio comes with mcp)
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from repomapper.contract.schema import RESPONSE_SCHEMA  # noqa: E402

TOOLS = [
    "repo_map",
    "find_symbol",
    "find_references",
    "file_outline",
    "related_files",
    "context_pack",
]


def session(tmp_path: Path, server_args: list[str], scenario, extra_env: dict | None = None):
    """Start the server, initialise a client session, run ``scenario(call)``, return its result."""
    env = {
        "XDG_CACHE_HOME": str(tmp_path / "cache-home"),
        "REPOMAPPER_NO_ENTRY_POINTS": "1",
        **(extra_env or {}),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "repomapper.cli", "mcp", *server_args], env=env
    )
    log = (tmp_path / "server.log").open("w")

    async def main():
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()

            async def call(name, args=None):
                r = await s.call_tool(name, args or {})
                assert r.content and r.content[0].type == "text"
                return r.is_error, r.structured_content, r.content[0].text

            return await scenario(s, call)

    try:
        return anyio.run(main)
    finally:
        log.close()


def _listed_types(node: object) -> list[object]:
    """The ``type`` values of ``node`` and its children that are lists of types."""
    if isinstance(node, dict):
        found = [node["type"]] if isinstance(node.get("type"), list) else []
        return found + [x for v in node.values() for x in _listed_types(v)]
    if isinstance(node, list):
        return [x for v in node for x in _listed_types(v)]
    return []


def test_tools_listed_and_each_answers(tmp_path, pyrepo):
    async def scenario(s, call):
        listed = await s.list_tools()
        by_name = {t.name: t for t in listed.tools}
        assert sorted(by_name) == sorted(TOOLS)
        rm = by_name["repo_map"].input_schema
        assert (
            rm["properties"]["token_budget"]["default"] == 1024
            and rm["properties"]["token_budget"]["minimum"] == 1
        )
        assert rm["additionalProperties"] is False and "clone_path" not in rm.get("required", [])
        assert by_name["find_symbol"].input_schema["properties"]["limit"]["maximum"] == 200
        assert by_name["find_symbol"].input_schema["required"] == ["name"]
        assert by_name["file_outline"].input_schema["required"] == ["path"]
        assert all(t.description for t in listed.tools)
        # one type per schema node, in what a tool takes and what it answers: single-type
        # function-calling dialects (the MCP Inspector's --strict) cannot read ["string", "null"]
        for t in listed.tools:
            for schema in (t.input_schema, t.output_schema or {}):
                assert not _listed_types(schema), (t.name, _listed_types(schema))

        err, data, text = await call(
            "repo_map", {"token_budget": 300, "task": "apply_discount rounds wrong"}
        )
        assert not err and data["outcome"] == "ok" and data["schema"] == "repomapper.map/1"
        jsonschema.validate(data, RESPONSE_SCHEMA)
        assert "apply_discount" in data["map"] and 0 < data["tokens_estimated"] <= 300

        err, data, _ = await call("find_symbol", {"name": "Catalog"})
        assert not err and data["match"] == "exact"
        hit = data["results"][0]
        assert (hit["path"], hit["kind"], hit["signature"]) == (
            "shop/catalog.py",
            "class",
            "class Catalog:",
        )
        assert hit["docstring"] == "All products, by SKU." and hit["end_line"] > hit["line"]
        err, data, _ = await call("find_symbol", {"name": "Catalog.find_product"})
        assert data["results"][0]["scope"] == "Catalog" and data["results"][0]["kind"] == "method"
        err, data, _ = await call("find_symbol", {"name": "catalog"})
        assert data["match"] == "case_insensitive" and data["results"][0]["name"] == "Catalog"
        err, data, _ = await call("find_symbol", {"name": "orderprocesor"})
        assert data["match"] == "fuzzy" and data["results"][0]["name"] == "OrderProcessor"
        err, data, _ = await call("find_symbol", {"name": "aply_discount"})
        assert (
            not err and data["match"] == "fuzzy" and data["results"][0]["name"] == "apply_discount"
        )
        assert "closest" in data["message"]

        err, data, _ = await call("find_references", {"name": "apply_discount"})
        assert not err and data["defined_in"] == ["shop/money.py"]
        assert data["results"][0]["path"] == "shop/orders.py" and data["results"][0]["lines"]

        err, data, _ = await call("file_outline", {"path": "shop/catalog.py", "limit": 2})
        assert not err and [d["name"] for d in data["definitions"]] == ["Product", "sku"]
        assert data["truncated"] and data["next_offset"] == 2 and "offset=2" in data["next"]
        err, data2, _ = await call(
            "file_outline", {"path": "shop/catalog.py", "offset": 2, "limit": 100}
        )
        assert (
            data2["definitions"][0]["line"] >= data["definitions"][-1]["line"]
            and not data2["truncated"]
        )

        err, data, _ = await call("related_files", {"path": "shop/orders.py"})
        assert not err
        assert {"shop/catalog.py", "shop/money.py"} <= {x["path"] for x in data["imports"]}
        assert "shop/cli.py" in {x["path"] for x in data["imported_by"]}
        assert data["uses_names_from"][0]["path"] == "shop/catalog.py" and data["neighbours"]
        return True

    assert session(tmp_path, [str(pyrepo)], scenario)


def test_an_edit_is_seen_by_the_next_call(tmp_path, pyrepo):
    money = pyrepo / "shop" / "money.py"

    async def scenario(s, call):
        _, data, _ = await call("find_symbol", {"name": "convert_currency"})
        assert data["match"] != "exact"
        money.write_text(
            money.read_text() + "\n\ndef convert_currency(cents: int, rate: float) -> int:\n"
            '    """Convert between currencies."""\n    return round(cents * rate)\n'
        )
        _, data, _ = await call("find_symbol", {"name": "convert_currency"})
        assert (
            data["match"] == "exact"
            and data["results"][0]["docstring"] == "Convert between currencies."
        )
        _, outline, _ = await call("file_outline", {"path": "shop/money.py"})
        assert "convert_currency" in [d["name"] for d in outline["definitions"]]
        _, data, _ = await call(
            "repo_map", {"token_budget": 2000, "mentioned_idents": ["convert_currency"]}
        )
        assert "def convert_currency" in data["map"]

        (pyrepo / "shop" / "tax.py").write_text(
            "from shop.money import convert_currency\n\n"
            "def add_tax(cents):\n    return convert_currency(cents, 1.2)\n"
        )
        deadline = (
            time.monotonic() + 10
        )  # a new file is found by the watcher's event or a re-listing
        while True:
            _, data, _ = await call("find_symbol", {"name": "add_tax"})
            if data["match"] == "exact" or time.monotonic() > deadline:
                break
            await anyio.sleep(0.1)
        assert data["results"][0]["path"] == "shop/tax.py"
        _, refs, _ = await call("find_references", {"name": "convert_currency"})
        assert "shop/tax.py" in [r["path"] for r in refs["results"]]

        (pyrepo / "shop" / "tax.py").unlink()
        _, data, _ = await call("find_symbol", {"name": "add_tax"})
        assert data["match"] != "exact"
        return True

    assert session(tmp_path, [str(pyrepo)], scenario)
    assert session(tmp_path, [str(pyrepo), "--no-watch"], scenario_no_watch(pyrepo))


def scenario_no_watch(root: Path):
    async def scenario(s, call):
        (root / "extra.py").write_text("def brand_new_function():\n    pass\n")
        _, data, _ = await call("find_symbol", {"name": "brand_new_function"})
        assert data["match"] == "exact"  # re-listed on the call itself, no watcher needed
        return True

    return scenario


def test_error_paths(tmp_path, pyrepo):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 1\n")
    (pyrepo / "leak.py").symlink_to(outside / "secret.py")
    (pyrepo / "linkdir").symlink_to(outside)

    async def scenario(s, call):
        async def error(name, args, code="invalid_input", fragment=""):
            err, data, text = await call(name, args)
            assert err, (name, args, data)
            reason = data.get("error") or data.get("reason")
            assert reason["code"] == code, (name, args, reason)
            assert fragment in reason["message"], (fragment, reason["message"])
            assert text.startswith(f"error [{code}]")
            return reason

        await error("repo_mapp", {}, fragment="did you mean 'repo_map'")
        await error("find_symbol", {"nam": "x"}, fragment="did you mean 'name'")
        await error("find_symbol", {}, fragment="name is required")
        await error("find_symbol", {"name": 3}, fragment="non-empty string")
        await error("find_symbol", {"name": "x", "limit": 0}, fragment="between 1 and 200")
        await error("find_symbol", {"name": "x", "limit": True}, fragment="integer")
        await error("file_outline", {"path": "../outside/secret.py"}, fragment="'..'")
        await error("file_outline", {"path": "shop/../../outside/secret.py"}, fragment="'..'")
        await error("file_outline", {"path": str(outside / "secret.py")}, fragment="absolute")
        await error("file_outline", {"path": "leak.py"}, fragment="symlink")
        await error("related_files", {"path": "linkdir/secret.py"}, fragment="symlink")
        await error(
            "file_outline",
            {"path": "shop/catalgo.py"},
            "not_found",
            "did you mean 'shop/catalog.py'",
        )
        await error("file_outline", {"path": "shop"}, fragment="directory")
        await error("file_outline", {"path": ""}, fragment="non-empty")
        await error(
            "find_symbol",
            {"name": "x", "clone_path": str(outside)},
            fragment="outside this server's root",
        )
        await error("find_symbol", {"name": "x", "clone_path": "relative/dir"}, fragment="absolute")
        await error(
            "find_symbol",
            {"name": "x", "clone_path": str(tmp_path / "nope")},
            fragment="does not exist",
        )
        reason = await error(
            "repo_map", {"include_globs": ["*.py;rm -rf /"]}, fragment="safe alphabet"
        )
        assert reason["field"] == "include_globs"
        await error("repo_map", {"session_id": "abc"}, fragment="no sessions")
        await error("repo_map", {"token_budget": -5}, fragment="between 1 and")
        await error("repo_map", {"clone_path": str(outside)}, fragment="outside this server's root")

        err, data, _ = await call("repo_map", {"include_globs": ["*.go"]})  # empty is not an error
        assert (
            not err and data["outcome"] == "empty" and data["reason"]["code"] == "no_files_matched"
        )
        jsonschema.validate(data, RESPONSE_SCHEMA)
        err, data, _ = await call("find_symbol", {"name": "zzzqqq"})
        assert not err and data["match"] == "none" and data["message"]
        return True

    assert session(tmp_path, [str(pyrepo)], scenario)


def test_without_root_every_call_names_its_repository(tmp_path, pyrepo):
    async def scenario(s, call):
        listed = await s.list_tools()
        assert all("clone_path" in t.input_schema["required"] for t in listed.tools)
        err, data, _ = await call("find_symbol", {"name": "Catalog"})
        assert err and "clone_path is required" in data["error"]["message"]
        err, data, _ = await call("find_symbol", {"name": "Catalog", "clone_path": str(pyrepo)})
        assert not err and data["results"][0]["path"] == "shop/catalog.py"
        err, data, _ = await call("repo_map", {"clone_path": str(pyrepo), "token_budget": 200})
        assert not err and data["outcome"] == "ok"
        err, data, _ = await call("repo_map", {"token_budget": 200})
        assert err and data["reason"]["field"] == "clone_path"
        return True

    assert session(tmp_path, [], scenario)


def test_bad_root_and_missing_sdk(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "repomapper.cli", "mcp", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    code = "import sys; sys.modules['mcp'] = None; from repomapper.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, "mcp", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1 and 'pip install "repomapper[mcp]"' in proc.stderr


def test_missing_backend_is_explained_over_mcp(tmp_path, make_tree):
    """helmdeck's failure through the MCP tools: ctags absent. The answer says so and how to fix it."""
    root = make_tree({"init.pl": "sub hello {\n  return 1;\n}\n"})  # a type only ctags maps

    async def scenario(s, call):
        err, data, _ = await call("repo_map", {})
        assert not err and (data["outcome"], data["reason"]["code"]) == (
            "empty",
            "all_backends_missing",
        )
        assert (
            "universal-ctags" in data["reason"]["install"]
            and data["counts"]["files_backend_unavailable"] == 1
        )
        err, data, _ = await call("file_outline", {"path": "init.pl"})
        assert not err and data["total"] == 0 and "backend_unavailable" in data["message"]
        return True

    assert session(
        tmp_path, [str(root)], scenario, {"REPOMAPPER_CTAGS": str(tmp_path / "no-ctags")}
    )


def test_context_pack_tool(tmp_path, pyrepo):
    import json as _json

    schema = _json.loads(
        (Path(__file__).parent.parent / "docs/schemas/context_pack.json").read_text("utf-8")
    )

    async def scenario(s, call):
        listed = {t.name: t for t in (await s.list_tools()).tools}
        spec = listed["context_pack"].input_schema
        assert spec["required"] == ["task_id", "task"] and spec["additionalProperties"] is False
        err, data, _ = await call(
            "context_pack",
            {
                "task_id": "mcp-1",
                "task": "apply_discount rounds wrong",
                "targets": ["shop/orders.py"],
                "role": "reviewing",
                "budget": 800,
            },
        )
        assert not err, data
        jsonschema.validate(data, schema)
        assert data["files"][0]["path"] == "shop/orders.py" and data["token_count"] <= 800
        assert not (pyrepo / "context/packs/mcp-1.json").exists()  # answered, not written
        bad = [
            ({"task_id": "../x", "task": "t"}, "task id"),
            ({"task_id": "ok", "task": "t", "targets": ["../outside.py"]}, "targets"),
            ({"task_id": "ok", "task": "t", "targets": ["nope.py"]}, "does not exist"),
            ({"task_id": "ok", "task": "t", "role": "wizard"}, "role"),
            ({"task_id": "ok", "task": "t", "targets": "shop/orders.py"}, "targets"),
            ({"task_id": "ok", "task": "t", "budget": 0}, "budget"),
        ]
        for args, needle in bad:
            err, data, _ = await call("context_pack", args)
            assert err and data["error"]["code"] == "invalid_input", (args, data)
            assert needle in data["error"]["message"] or data["error"].get("field") == needle
        return True

    assert session(tmp_path, [str(pyrepo)], scenario)
