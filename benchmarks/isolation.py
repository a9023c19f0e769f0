"""What running plugin hooks in supervised workers costs: isolated vs in-process extraction.

    python benchmarks/isolation.py ROOT [ROOT ...] [--repeats 5]

For each ROOT it times the cold extraction of every file (an in-memory tag cache, so nothing is
read from disk but the sources) with one process doing the work in both cases: hooks in one
supervised worker (the default) and hooks in the calling process (``Limits(isolate=False)``,
what ``REPOMAPPER_ISOLATE=0`` does). Both validate the plugins' output at the boundary, so the
difference is the isolation itself: the fork, shipping results over a pipe, supervision.
Runs alternate; the median and the minimum are printed. Run by hand, not by CI.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from repomapper.cache import TagCache
from repomapper.discover import discover
from repomapper.extract import Extractor
from repomapper.isolation.limits import Limits
from repomapper.registry import PluginConfig, PluginSet


def measure(root: Path, repeats: int) -> dict[bool, list[float]]:
    files = discover(root, (), (), 1_000_000).files
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(repeats):
        for isolate in (True, False):
            plugins = PluginSet(
                PluginConfig(load_entry_points=False, limits=Limits(isolate=isolate))
            )
            _ = plugins.infos  # backend detection is not extraction
            started = time.perf_counter()
            Extractor(plugins, TagCache(), jobs=1).run(root, files)
            times[isolate].append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    for root in args.roots:
        n = len(discover(root, (), (), 1_000_000).files)
        times = measure(root, args.repeats)
        iso, inproc = statistics.median(times[True]), statistics.median(times[False])
        print(
            f"{root.name} ({n} files): isolated median {iso:.3f}s (min {min(times[True]):.3f}s), "
            f"in-process median {inproc:.3f}s (min {min(times[False]):.3f}s), "
            f"overhead {iso - inproc:+.3f}s ({(iso / inproc - 1) * 100:+.1f}%)"
        )


if __name__ == "__main__":
    main()
