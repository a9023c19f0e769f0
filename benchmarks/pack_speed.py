"""Context pack generation time on a corpus (default: django from ``benchmarks/corpora.py``).

    python benchmarks/pack_speed.py [--corpus django] [--repeats 5]

Three states, each timing ``RepoMapper.generate_context_pack_sync`` (write=False) for one task
with one target, per role and budget:

* **cold**: no ``ast_context.json`` (the tag cache may be warm: the AST context is built from it);
* **file**: a new ``RepoMapper`` reading ``ast_context.json`` (what a new process pays);
* **warm**: the same ``RepoMapper`` again (the median of ``--repeats`` calls).

Prints a Markdown table (for ``docs/benchmarks.md``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

TASK = "QuerySet.bulk_create crashes with ignore_conflicts on a model with a db_default field"
TARGET = "django/db/models/query.py"
CASES = (("coding", 32_000), ("reviewing", 100_000), ("planning", 32_000))


def main(argv=None) -> int:
    from corpora import ensure

    from repomapper.pack import RepoMapper

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="django")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    root = ensure(args.corpus)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ast = Path(tmp) / "ast.json"
        t = time.perf_counter()
        m = RepoMapper(root, write=False, env={}, ast_context_path=ast)
        m.generate_context_pack_sync("bench", TASK, [TARGET], "coding", 32_000)
        cold = time.perf_counter() - t
        size = ast.stat().st_size / 1e6
        for role, budget in CASES:
            fresh = RepoMapper(root, write=False, env={}, ast_context_path=ast)
            t = time.perf_counter()
            fresh.generate_context_pack_sync("bench", TASK, [TARGET], role, budget)
            from_file = time.perf_counter() - t
            first = time.perf_counter()
            fresh.generate_context_pack_sync("bench", TASK, [TARGET], role, budget)
            first = time.perf_counter() - first
            times = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                pack = fresh.generate_context_pack_sync("bench", TASK, [TARGET], role, budget)
                times.append(time.perf_counter() - t)
            rows.append(
                f"| {role} | {budget:,} | {from_file:.2f} | {statistics.median(times):.2f} "
                f"({min(times):.2f}-{max(times):.2f}) | {len(pack.files)} | {pack.token_count:,} |"
            )
    print(f"Corpus {args.corpus} ({root}); task: {TASK!r}; target `{TARGET}`.\n")
    print(
        f"- cold (AST context built from the tag cache, coding 32k): {cold:.1f} s; "
        f"ast_context.json {size:.0f} MB\n"
    )
    print(
        "| role | budget | new mapper, from ast_context.json s | warm s, median (min-max) | files | tokens |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
