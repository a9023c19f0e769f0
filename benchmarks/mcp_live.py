"""Live-index benchmark: ``repomapper mcp`` driven over stdio by the MCP SDK's client.

    python benchmarks/mcp_live.py [--corpus django] [--edits 5] [--budget 1500] [--output FILE]

On a copy of a corpus (``benchmarks/corpora.py``; django by default, fetched from PyPI on first
use) it measures, from the client's side (request sent -> answer received):

* the CLI for reference, as separate processes: ``repomapper map --format json`` cold (empty
  cache dir) and warm (same cache, nothing changed);
* server, cold cache: the first ``repo_map`` call (extraction of the whole corpus included) and
  the first ``find_symbol`` call (which builds the live index);
* server, warm cache (a new server on the cache the cold run filled): the same first calls;
* then, in that server: ``repo_map`` with nothing changed, and after editing one file (a new
  function appended, a different file each time; median of --edits), and ``find_symbol`` /
  ``file_outline`` / ``related_files`` after an edit, with the new definition checked in the
  answers.

Results are printed as a Markdown table (and written to --output when given). Run by hand on an
idle machine; it is not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402

try:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
except ImportError:  # pragma: no cover
    sys.exit('the benchmark needs the mcp extra: pip install -e ".[mcp]"')

EXE = [sys.executable, "-m", "repomapper.cli"]


def timed_cli(args: list[str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run([*EXE, *args], capture_output=True, timeout=1800)
    elapsed = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise RuntimeError(proc.stderr.decode()[-2000:])
    return elapsed


def pick_files(root: Path, n: int) -> list[str]:
    """Mid-sized library modules (not tests), spread over the tree: deterministic."""
    files = sorted(
        p
        for p in root.rglob("*.py")
        if "tests" not in p.parts and 4_000 < p.stat().st_size < 40_000
    )
    step = max(1, len(files) // (n + 1))
    return [str(p.relative_to(root)) for p in files[step::step][:n]]


async def server_run(
    root: Path, cache: Path, budget: int, edits: list[str], results: dict, label: str
) -> None:
    params = StdioServerParameters(
        command=EXE[0], args=[*EXE[1:], "mcp", str(root), "--cache-dir", str(cache)]
    )
    async with (
        stdio_client(params, errlog=sys.stderr) as (read, write),
        ClientSession(read, write) as s,
    ):
        await s.initialize()

        async def call(name: str, args: dict) -> tuple[float, dict]:
            t = time.perf_counter()
            r = await s.call_tool(name, args, read_timeout_seconds=1800)
            elapsed = time.perf_counter() - t
            if r.is_error:
                raise RuntimeError(f"{name} failed: {r.content[0].text[:500]}")
            return elapsed, r.structured_content

        t, first = await call("repo_map", {"token_budget": budget})
        results[f"{label}: first repo_map"] = t
        results["files_total"] = first["files_total"]
        t, _ = await call("find_symbol", {"name": "QuerySet"})
        results[f"{label}: first find_symbol (builds the live index)"] = t
        if not edits:
            return
        t, _ = await call("repo_map", {"token_budget": budget})
        results["repo_map, nothing changed"] = t
        t, _ = await call("find_symbol", {"name": "QuerySet"})
        results["find_symbol, nothing changed"] = t

        after_map, after_sym, after_outline, after_related = [], [], [], []
        seen_in_map = 0
        for i, rel in enumerate(edits):
            path = root / rel
            name = f"benchmark_added_function_{i}"
            path.write_text(path.read_text() + f"\n\ndef {name}(value):\n    return value\n")
            t, env = await call(
                "repo_map",
                {"token_budget": budget, "mentioned_idents": [name], "mentioned_files": [rel]},
            )
            seen_in_map += name in env["map"]
            after_map.append(t)
            t, found = await call("find_symbol", {"name": name})
            assert found["match"] == "exact" and found["results"][0]["path"] == rel
            after_sym.append(t)
            t, outline = await call("file_outline", {"path": rel, "limit": 2000})
            assert name in [d["name"] for d in outline["definitions"]]
            after_outline.append(t)
            t, _ = await call("related_files", {"path": rel})
            after_related.append(t)
        results["edits whose new function the next map shows"] = f"{seen_in_map}/{len(edits)}"
        results["repo_map after editing one file (median)"] = statistics.median(after_map)
        results["repo_map after editing one file (max)"] = max(after_map)
        results["repo_map after each edit, in order"] = " ".join(f"{t:.3f}" for t in after_map)
        results["find_symbol after editing one file (median)"] = statistics.median(after_sym)
        results["file_outline after editing one file (median)"] = statistics.median(after_outline)
        results["related_files after editing one file (median)"] = statistics.median(after_related)


def write_report(first: str, heading: str, results: dict, output: str | None) -> None:
    """``results`` as a Markdown table under the line ``first`` (printed, and written to
    ``output`` when given); the raw figures as JSON on standard error."""
    lines = [first, "", f"| {heading} | seconds |", "|---|---:|"]
    lines += [
        f"| {k} | {v:.3f} |" if isinstance(v, float) else f"| {k} | {v} |"
        for k, v in results.items()
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    print(json.dumps(results), file=sys.stderr)
    if output:
        Path(output).write_text(report, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="django")
    ap.add_argument("--edits", type=int, default=5)
    ap.add_argument("--budget", type=int, default=1500)
    ap.add_argument("--output")
    a = ap.parse_args(argv)
    src = corpora.ensure(a.corpus)
    results: dict = {"corpus": f"{a.corpus} ({corpora.describe(a.corpus)['source']})"}
    with tempfile.TemporaryDirectory(prefix="repomapper-mcp-live-") as tmp:
        tmp = Path(tmp)
        root = tmp / a.corpus
        shutil.copytree(src, root, symlinks=True)
        cli_cache = tmp / "cli-cache"
        cli_map = ["map", str(root), "--tokens", str(a.budget), "--format", "json"]
        cli_map += ["--cache-dir", str(cli_cache)]
        results["CLI map, cold cache (process)"] = timed_cli(cli_map)
        results["CLI map, warm cache (process)"] = timed_cli(cli_map)
        cache = tmp / "server-cache"
        anyio.run(server_run, root, cache, a.budget, [], results, "server, cold cache")
        anyio.run(
            server_run,
            root,
            cache,
            a.budget,
            pick_files(root, a.edits),
            results,
            "server, warm cache",
        )
    write_report(
        f"Corpus: {results.pop('corpus')}, {results.pop('files_total')} files, "
        f"budget {a.budget} tokens.",
        "measurement",
        results,
        a.output,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
