"""Localization of context packs: is the file a real task changed in the pack, and where?

    python benchmarks/pack_localization.py [--tasks PATH] [--only ID,...] [--output docs/localization-packs.md]

Same tasks and snapshots as ``benchmarks/localization.py`` (it reuses its loading and safe
unpacking). For each task, ``RepoMapper.generate_context_pack_sync`` with the problem statement
and no target, role ``coding``, at budgets of 8k, 32k and 100k tokens: is a gold file in the pack
and at what position (1-based, in the pack's file order). Then, with the first gold file given as
the target (32k): of the other gold files (tasks that changed several), how many are in the pack.
Also the time of a warm pack (the second call on the same mapper). ``measure_pack`` is the
per-task function, separate so ``localization.py`` can call it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from localization import DEFAULT_DATA, git_ceiling, load_tasks, log, md_table, unpack  # noqa: E402

BUDGETS = (8_000, 32_000, 100_000)
DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "docs" / "localization-packs.md"


@dataclass
class PackOutcome:
    instance_id: str
    gold: tuple[str, ...]
    error: str | None = None
    #: budget -> (position of the first gold file in the pack or None, files in the pack, tokens)
    at: dict[int, tuple[int | None, int, int]] = field(default_factory=dict)
    #: with gold[0] as the target: (other gold files in the pack, other gold files)
    others: tuple[int, int] = (0, 0)
    warm_seconds: float = 0.0
    cold_seconds: float = 0.0


def measure_pack(instance_id: str, problem: str, gold: tuple[str, ...], root: Path) -> PackOutcome:
    from repomapper.pack import RepoMapper

    out = PackOutcome(instance_id, gold)
    with tempfile.TemporaryDirectory(prefix="repomapper-packloc-") as tmp:
        m = RepoMapper(
            root,
            write=False,
            env={},
            cache_dir=Path(tmp) / "cache",
            ast_context_path=Path(tmp) / "ast.json",
        )
        try:
            for budget in BUDGETS:
                t = time.perf_counter()
                pack = m.generate_context_pack_sync("loc", problem, [], "coding", budget)
                if budget == BUDGETS[0]:
                    out.cold_seconds = time.perf_counter() - t
                paths = [f.path for f in pack.files]
                pos = [paths.index(g) + 1 for g in gold if g in paths]
                out.at[budget] = (min(pos) if pos else None, len(paths), pack.token_count)
            t = time.perf_counter()
            m.generate_context_pack_sync("loc", problem, [], "coding", 32_000)
            out.warm_seconds = time.perf_counter() - t
            if gold and (root / gold[0]).is_file():
                pack = m.generate_context_pack_sync("loc", problem, [gold[0]], "coding", 32_000)
                paths = {f.path for f in pack.files}
                rest = gold[1:]
                out.others = (sum(1 for g in rest if g in paths), len(rest))
        finally:
            m.repomap.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=Path, default=DEFAULT_DATA / "tasks.jsonl")
    ap.add_argument("--only", default="")
    ap.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = ap.parse_args(argv)
    tasks = load_tasks(args.tasks)
    if args.only:
        wanted = {s.strip() for s in args.only.split(",") if s.strip()}
        tasks = [t for t in tasks if t.instance_id in wanted]
    snapshots = args.tasks.parent / "snapshots"
    outcomes: list[PackOutcome] = []
    for n, task in enumerate(tasks, 1):
        log(f"[{n}/{len(tasks)}] {task.instance_id} ...")
        archive = snapshots / f"{task.instance_id}.tar.gz"
        try:
            with (
                tempfile.TemporaryDirectory(prefix="repomapper-packloc-") as tmp,
                git_ceiling(Path(tmp)),
            ):
                root, _ = unpack(archive, Path(tmp), task.instance_id)
                o = measure_pack(task.instance_id, task.problem_statement, task.gold_files, root)
        except Exception as exc:  # an error row, never the end of the run
            o = PackOutcome(task.instance_id, task.gold_files, f"{type(exc).__name__}: {exc}"[:200])
        log(f"  {o.at} others {o.others} warm {o.warm_seconds:.2f}s {o.error or ''}")
        outcomes.append(o)
    ok = [o for o in outcomes if o.error is None]
    header = [
        "task",
        *(f"gold @ {b // 1000}k (pos / files)" for b in BUDGETS),
        "others with target",
        "cold s",
        "warm s",
    ]
    rows = []
    for o in outcomes:
        if o.error:
            rows.append([o.instance_id, o.error, "", "", "", "", ""])
            continue
        cells = [f"{p if p else '-'} / {n}" for p, n, _ in (o.at[b] for b in BUDGETS)]
        rows.append(
            [
                o.instance_id,
                *cells,
                f"{o.others[0]}/{o.others[1]}" if o.others[1] else "n/a",
                f"{o.cold_seconds:.1f}",
                f"{o.warm_seconds:.2f}",
            ]
        )
    summary = [
        f"- tasks: {len(outcomes)} ({len(outcomes) - len(ok)} errors)",
        *(
            f"- a gold file in the pack at {b // 1000}k: {sum(1 for o in ok if o.at[b][0])}/{len(ok)}"
            for b in BUDGETS
        ),
        f"- other gold files in the pack when the first is the target (32k): "
        f"{sum(o.others[0] for o in ok)}/{sum(o.others[1] for o in ok)}",
    ]
    warm = sorted(o.warm_seconds for o in ok)
    if warm:
        summary.append(f"- warm pack time, median: {warm[len(warm) // 2]:.2f}s")
    text = "\n".join(
        [
            "# Context packs: localization",
            "",
            "Generated by `python benchmarks/pack_localization.py` (see its docstring). Role coding, "
            "no target unless said; position is 1-based in the pack's file order; '-' = not in the pack.",
            "",
            *summary,
            "",
            md_table(header, rows, 1),
            "",
        ]
    )
    print(text)
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
