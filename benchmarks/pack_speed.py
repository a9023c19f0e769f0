"""Context pack generation time on a corpus (default: django from ``benchmarks/corpora.py``).

    python benchmarks/pack_speed.py [--corpus django] [--repeats 5]

Two states, each timing ``RepoMapper.generate_context_pack_sync`` (write=False) for one task
with one target, per role and budget:

* **new mapper**: a new ``RepoMapper`` (a new repository state, read from the tag cache and
  the stored ranking state: what a new process pays once the cache is warm);
* **warm**: the same ``RepoMapper`` again (the median of ``--repeats`` calls: what a long-lived
  process such as the MCP server pays per pack).

Prints a Markdown table (for ``docs/benchmarks.md``) and the host's calibration (seconds of
``for i in range(10**7): pass``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

TASK = "QuerySet.bulk_create crashes with ignore_conflicts on a model with a db_default field"
TARGET = "django/db/models/query.py"
CASES = (("coding", 32_000), ("reviewing", 100_000), ("planning", 32_000))


def calibration() -> float:
    t = time.perf_counter()
    for _ in range(10**7):
        pass
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    from corpora import ensure

    from repomapper.pack import RepoMapper

    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--corpus", default="django")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    root = ensure(args.corpus)
    rows = []
    t = time.perf_counter()
    with RepoMapper(root, write=False, env={}) as m:  # fills the tag cache and stored state
        m.generate_context_pack_sync("bench", TASK, [TARGET], "coding", 32_000)
    first = time.perf_counter() - t
    for role, budget in CASES:
        with RepoMapper(root, write=False, env={}) as fresh:
            t = time.perf_counter()
            fresh.generate_context_pack_sync("bench", TASK, [TARGET], role, budget)
            new_mapper = time.perf_counter() - t
            times = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                pack = fresh.generate_context_pack_sync("bench", TASK, [TARGET], role, budget)
                times.append(time.perf_counter() - t)
        rows.append(
            f"| {role} | {budget:,} | {new_mapper:.2f} | {statistics.median(times):.2f} "
            f"({min(times):.2f}-{max(times):.2f}) | {len(pack.files)} | {pack.token_count:,} |"
        )
    print(f"Corpus {args.corpus} ({root}); task: {TASK!r}; target `{TARGET}`.\n")
    print(f"- first pack (coding 32k, a new mapper, the cache as found): {first:.1f} s")
    print(f"- calibration (`for i in range(10**7): pass`): {calibration():.2f} s\n")
    print("| role | budget | new mapper s | warm s, median (min-max) | files | tokens |")
    print("|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
