"""Edits answered by a running MCP server on a large tree, with the cache a CLI run filled.

    python benchmarks/live_edits.py [--corpus linux] [--cache-dir DIR] [--edits 6] [--output FILE]

``benchmarks/mcp_live.py`` measures the server on a fresh copy of a mid-size corpus (its cold
extraction included); a kernel-sized copy and its cold extraction cost a quarter of an hour each.
This one starts ``repomapper mcp`` (over stdio, driven by the MCP SDK's client) on the corpus
itself (``benchmarks/corpora.py``) with an existing cache directory (the one ``speed.py`` fills,
by default), and measures from the client's side:

* the first ``repo_map`` (a map replayed from the cache, or the stored state loaded), then the
  first one after an edit (the state loaded and updated), and ``repo_map`` with nothing changed;
* ``repo_map`` after each of ``--edits`` edits that change no name (a comment line appended to a
  source file: the ranking stays, the changed file is extracted again), and after each of as
  many edits that add a name (a new function appended to a C file: the graph and the ranking are
  updated), each after a pause like an agent's between calls (the server stores its answers
  when calls pause).

Every edited file is put back as it was at the end (the corpus is the benchmark's own copy).
Run by hand on an idle machine; not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
from mcp_live import (  # noqa: E402
    EXE,
    ClientSession,
    StdioServerParameters,
    anyio,
    stdio_client,
    write_report,  # noqa: E402
)

#: seconds between calls: the server stores what it answered once calls pause
PAUSE = 2.0


def pick(root: Path, suffix: str, n: int) -> list[Path]:
    """``n`` files with ``suffix`` spread over the tree (deterministic): mid-sized ones."""
    found = sorted(
        p
        for p in root.rglob(f"*{suffix}")
        if p.is_file() and not p.is_symlink() and 2_000 < p.stat().st_size < 60_000
    )
    step = max(1, len(found) // (n + 1))
    return found[step::step][:n]


async def run(root: Path, cache: Path, budget: int, edits: int, results: dict) -> None:
    params = StdioServerParameters(  # this environment (PYTHONPATH: another checkout's code)
        command=EXE[0],
        args=[*EXE[1:], "mcp", str(root), "--cache-dir", str(cache)],
        env=dict(os.environ),
    )
    originals: dict[Path, bytes] = {}
    try:
        async with (
            stdio_client(params, errlog=sys.stderr) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()

            async def repo_map() -> float:
                await anyio.sleep(PAUSE)
                t = time.perf_counter()
                r = await s.call_tool(
                    "repo_map", {"token_budget": budget}, read_timeout_seconds=3600
                )
                elapsed = time.perf_counter() - t
                if r.is_error:
                    raise RuntimeError(f"repo_map failed: {r.content[0].text[:500]}")
                results["files_total"] = r.structured_content["files_total"]
                return elapsed

            def append(path: Path, text: str) -> None:
                originals.setdefault(path, path.read_bytes())
                with path.open("a", encoding="utf-8") as f:
                    f.write(text)

            # each run's edits are its own: content another run had was answered from the memo
            salt = time.time_ns()
            results["first repo_map"] = await repo_map()
            results["repo_map, nothing changed"] = await repo_map()
            picked = pick(root, ".c", 2 * edits + 1)  # (distinct files for every edit)
            comments, functions = picked[: edits + 1], picked[edits + 1 :]
            append(comments[0], f"\n/* live edit 0 {salt} */\n")
            results["first repo_map after an edit (state loaded)"] = await repo_map()
            plain = []
            for i, path in enumerate(comments[1:], 1):
                append(path, f"\n/* live edit {i} {salt} */\n")
                plain.append(await repo_map())
            named = []
            for i, path in enumerate(functions):
                name = f"repomapper_live_edit_{i}_{salt}"
                append(path, f"\nstatic int {name}(void)\n{{\n\treturn {i};\n}}\n")
                named.append(await repo_map())
            for label, times in (("a comment", plain), ("a new function", named)):
                results[f"repo_map after an edit adding {label} (median)"] = statistics.median(
                    times
                )
                results[f"repo_map after an edit adding {label} (max)"] = max(times)
                results[f"repo_map after an edit adding {label}, in order"] = " ".join(
                    f"{t:.2f}" for t in times
                )
    finally:
        for path, data in originals.items():
            path.write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="linux")
    ap.add_argument("--cache-dir", help="default: the cache speed.py fills for the corpus")
    ap.add_argument("--edits", type=int, default=6)
    ap.add_argument("--budget", type=int, default=1024)
    ap.add_argument("--output")
    a = ap.parse_args(argv)
    root = corpora.ensure(a.corpus)
    cache = Path(a.cache_dir or HERE / ".cache" / "repomapper-cache" / f"{a.corpus}-{a.budget}")
    results: dict = {}
    anyio.run(run, root, cache, a.budget, a.edits, results)
    write_report(
        f"Corpus: {a.corpus} ({corpora.describe(a.corpus)['source']}), "
        f"{results.pop('files_total')} files, budget {a.budget} tokens, cache {cache.name}.",
        "measurement (MCP server, from the client)",
        results,
        a.output,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
