"""A fresh ``git clone``'s first map with the cache of the repository it was cloned from.

    python benchmarks/clone_speed.py ROOT --cache-dir DIR [--repeats 2] [--tokens 1024]

ROOT is committed into a git repository of its own first when it is not a work tree (a copy
under the work folder: the corpora are unpacked archives). The origin is mapped until warm
(the cache learns each file's content, and from it each git blob's); then per repeat the origin
is cloned (``git clone``, a checkout of new files), and the clone's first and second maps are
timed as separate processes, with git's index read (the default) and with it left out (every
file read and hashed, as in a copy that is not a clone). Prints a Markdown table.
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

#: the map command with git's index left out of the keys (a threshold no listing reaches)
WITHOUT_INDEX = (
    "import repomapper.extract as x; x.GIT_INDEX_FILES = 10**12; "
    "from repomapper.cli import main; main()"
)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=bench@example.invalid", "-c", "user.name=bench", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def _map(root: Path, cache: Path, tokens: int, index: bool = True) -> list[str]:
    head = [sys.executable, "-m", "repomapper"] if index else [sys.executable, "-c", WITHOUT_INDEX]
    return [*head, "map", str(root), "--cache-dir", str(cache), "--tokens", str(tokens)]


def _forget_root(root: Path, cache: Path) -> None:
    """Remove what the cache keeps for ``root`` alone (its stat memo and stored state): the
    next map of it is a first one, with every content row still there."""
    from repomapper.cache import cache_file_for

    db = cache_file_for(root.resolve(), cache)
    for found in db.parent.glob(db.name + "*"):
        found.unlink()
    for found in db.parent.glob(db.stem + ".state.npz*"):
        found.unlink()


def _origin(root: Path, work: Path) -> Path:
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True
    )
    head = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=root, capture_output=True
    )
    if top.returncode == 0 and Path(top.stdout.strip()) == root and head.returncode == 0:
        return root  # the top of a work tree with a commit to clone
    origin = work / "origin"
    shutil.copytree(root, origin, symlinks=True)
    shutil.rmtree(origin / ".git", ignore_errors=True)
    _git(origin, "init", "-q")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "origin")
    return origin


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--cache-dir", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=1024)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="clone-speed-"))
    try:
        origin = _origin(a.root.resolve(), work)
        for _ in range(2):  # the first may build; the second stores the map that replays
            subprocess.run(_map(origin, a.cache_dir, a.tokens), check=True, capture_output=True)
        results: dict[str, list[float]] = {}
        for _ in range(a.repeats):
            results.setdefault("origin, warm", []).append(
                _timed(_map(origin, a.cache_dir, a.tokens))
            )
            for index in (True, False):
                clone = work / "clone"
                shutil.rmtree(clone, ignore_errors=True)
                _git(work, "clone", "-q", str(origin), str(clone))
                subprocess.run(["sync"], check=False)  # the checkout's writes out of the way
                time.sleep(3)  # (a map within 2 s of a checkout reads its files again next time)
                _forget_root(clone, a.cache_dir)
                how = "git's index" if index else "every file read"
                first = _timed(_map(clone, a.cache_dir, a.tokens, index))
                results.setdefault(f"clone, first map ({how})", []).append(first)
                second = _timed(_map(clone, a.cache_dir, a.tokens))
                results.setdefault(f"clone, second map ({how})", []).append(second)
        warm = statistics.median(results["origin, warm"])
        print(f"| run ({a.root.name}, {a.tokens} tokens) | median s | x warm | runs |")
        print("|---|---:|---:|---|")
        for name, values in results.items():
            med = statistics.median(values)
            runs = ", ".join(f"{v:.2f}" for v in values)
            print(f"| {name} | {med:.2f} | {med / warm:.2f} | {runs} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
