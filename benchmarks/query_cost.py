"""What a task costs on top of a warm map: ranking with the relevance model on a real corpus.

    python benchmarks/query_cost.py [--corpus django] [--repeat 3]

The corpus comes from ``benchmarks/corpora.py`` (django's sdist from PyPI by default). With a
warm tag cache it times, in fresh processes (the CLI), ``map`` without a task (memoised, then with
a budget no earlier run used, so nothing is replayed), ``map --task`` for tasks no run has seen
(the lexical index is warm after the first), and in one long-lived process (an embedding
application or the MCP server) the same task maps one after another. Prints a markdown table.
Task texts are generic descriptions of the kind agents send; their wording is not tuned.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402

TASKS = [
    "QuerySet.bulk_create crashes when a field has a mixed case db_column",
    "Admin list_filter on a ForeignKey to a model with a custom primary key raises FieldError",
    "makemigrations writes an AlterField for unchanged choices",
    "The test client loses cookies set by a redirect response",
    "Template filter date ignores the timezone of an aware datetime",
]


def cli(root: Path, cache: Path, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "repomapper.cli",
            "map",
            str(root),
            "--cache-dir",
            str(cache),
            *args,
        ],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="django")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    root = corpora.ensure(args.corpus)
    rows = []
    with tempfile.TemporaryDirectory(prefix="repomapper-qc-") as tmp:
        cache = Path(tmp)
        rows.append(("cold map (fills the tag cache)", cli(root, cache, "-t", "1024")))
        rows.append(
            (
                "first task map (fills the lexical index)",
                cli(root, cache, "-t", "1024", "--task", "index warm-up"),
            )
        )
        warm = [cli(root, cache, "-t", "1024") for _ in range(args.repeat)]
        rows.append(("warm map, memoised (CLI)", statistics.median(warm)))
        fresh = [cli(root, cache, "-t", str(2000 + i)) for i in range(args.repeat)]
        rows.append(("warm map, not memoised (CLI)", statistics.median(fresh)))
        tasks = [cli(root, cache, "-t", "1024", "--task", t) for t in TASKS[: args.repeat]]
        rows.append(("warm map with a new task (CLI)", statistics.median(tasks)))

        from repomapper import RepoMap

        rm = RepoMap(root, 1024, cache_dir=cache)
        rm.map(task=TASKS[-1])
        times = []
        for t in TASKS[: args.repeat]:
            started = time.perf_counter()
            rm.map(task=t + " (again)")
            times.append(time.perf_counter() - started)
        rows.append(("new task in a long-lived RepoMap", statistics.median(times)))
    print(f"corpus: {args.corpus} ({len(corpora.file_list(root))} files)\n")
    print("| run | seconds (median) |\n|---|---:|")
    for name, secs in rows:
        print(f"| {name} | {secs:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
