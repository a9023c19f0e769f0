"""A fresh clone's first map after ``repomapper index import``, against a warm run.

    python benchmarks/bundle_speed.py ROOT [--repeats 3] [--task TEXT]

Exports ROOT's index once, then per repeat copies ROOT to a new directory (every mtime new),
imports the bundle into an empty cache directory and times the clone's first map (a separate
process, timed from outside), with and without a task. For comparison: the warm run (the same
map again in ROOT's own cache), the first map with other settings, with a task, and after
``--rows-only`` (what the other parts save). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOMAPPER = str(Path(sys.executable).with_name("repomapper"))
TASK = "fix the migration autodetector when a model is renamed"


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([REPOMAPPER, *args], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--task", default=TASK)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bundle-speed-"))
    bundle, home = work / "index.bundle", work / "home-cache"
    start = time.perf_counter()
    subprocess.run(
        [REPOMAPPER, "index", "export", str(a.root), "-o", str(bundle), "--cache-dir", str(home)],
        check=True,
        capture_output=True,
    )
    export_s = time.perf_counter() - start
    subprocess.run(
        [REPOMAPPER, "map", str(a.root), "--cache-dir", str(home), "--task", a.task],
        check=True,
        capture_output=True,
    )
    results: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        results.setdefault(name, []).append(value)

    for i in range(a.repeats):
        add("warm", timed(["map", str(a.root), "--cache-dir", str(home)]))
        add(
            "warm, --tokens 2048",
            timed(["map", str(a.root), "--cache-dir", str(home), "-t", "2048"]),
        )
        add("warm, task", timed(["map", str(a.root), "--cache-dir", str(home), "--task", a.task]))
        for variant in ("full", "budget", "task", "rows"):
            clone, cache = work / f"clone-{i}-{variant}", work / f"cache-{i}-{variant}"
            shutil.copytree(a.root, clone)
            start = time.perf_counter()
            imported = ["index", "import", str(bundle), str(clone), "--cache-dir", str(cache)]
            if variant == "rows":
                imported.append("--rows-only")
            subprocess.run([REPOMAPPER, *imported], check=True, capture_output=True)
            if variant == "full":
                add("import", time.perf_counter() - start)
            args = ["map", str(clone), "--cache-dir", str(cache)]
            if variant == "task":
                args += ["--task", a.task]
            if variant == "budget":
                args += ["--tokens", "2048"]
            label = {
                "full": "bundle (the export's settings: a replay)",
                "budget": "bundle, --tokens 2048",
                "task": "bundle, a task",
                "rows": "--rows-only",
            }[variant]
            add(f"first map of a clone, {label}", timed(args))
            shutil.rmtree(clone)
            shutil.rmtree(cache)
    print(f"bundle {bundle.stat().st_size / 1e6:.1f} MB, export {export_s:.1f} s")
    print("| run | median s | runs |\n|---|---:|---|")
    for name, values in results.items():
        runs = ", ".join(f"{v:.2f}" for v in values)
        print(f"| {name} | {statistics.median(values):.2f} | {runs} |")
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
