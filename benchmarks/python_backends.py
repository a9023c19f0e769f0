"""Extraction speed and output of the two Python backends (ast and libcst) on a real corpus.

    python benchmarks/python_backends.py                    # requests 2.32.3 (about a minute)
    python benchmarks/python_backends.py --corpus django --repeat 1  # Django 5.2.8 (~10 min)
    python benchmarks/python_backends.py --corpus PATH      # any directory of .py files
    python benchmarks/python_backends.py --limit 200 --json out.json

A named corpus is the package's sdist from PyPI (``pip download --no-binary :all: --no-deps``),
kept in ``benchmarks/.cache/`` (git-ignored). Every ``.py`` file is read into memory first, then
each backend's ``extract_tags`` and ``extract_imports`` are called for every file, one after the
other as the core does, in this one process (no cache). Reported per backend: files, seconds
(wall and CPU), files per second, definitions, references, references with a target, how many
targets name a definition found in the corpus, and the warnings logged by code. Results are
printed as a markdown table; ``docs/python-backends.md`` holds a recorded run.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import subprocess
import sys
import tarfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from repomapper.model import SourceFile, Tag
from repomapper.plugins.python import ast_backend as python_ast
from repomapper.plugins.python import libcst_backend as python_libcst
from repomapper.plugins.python.libcst_scopes import module_name

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
DOWNLOADS = CACHE / "downloads" / "pypi"
UNPACKED = CACHE / "python-backends"
PINNED = {"requests": "2.32.3", "django": "5.2.8", "flask": "3.0.3"}
BACKENDS = {"ast": python_ast, "libcst": python_libcst}

log = logging.getLogger("python_backends")


def fetch_sdist(package: str, version: str) -> Path:
    """Download (once) and unpack (once) ``package==version``'s sdist; return its top folder."""
    target = UNPACKED / f"{package}-{version}"
    if target.is_dir():
        return target
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    stem = f"{package}-{version}".lower()

    def present() -> list[Path]:
        return [
            p for p in DOWNLOADS.iterdir() if p.name.lower().startswith(stem) and ".tar" in p.name
        ]

    if not present():
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-binary",
            ":all:",
            "--no-deps",
            "--disable-pip-version-check",
            "-d",
            str(DOWNLOADS),
            f"{package}=={version}",
        ]
        log.info("$ %s", " ".join(cmd))
        subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL, capture_output=True)
    archives = present()
    if not archives:
        raise SystemExit(f"pip download produced no sdist for {package}=={version}")
    partial = target.with_name(target.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archives[0]) as tf:
        tf.extractall(partial, filter="data")
    tops = [p for p in partial.iterdir() if p.is_dir()]
    (tops[0] if len(tops) == 1 else partial).rename(target)
    if partial.exists():
        partial.rmdir()
    return target


def corpus_root(spec: str) -> tuple[Path, str]:
    if os.path.isdir(spec):
        return Path(spec).resolve(), spec
    name, _, version = spec.partition("==")
    version = version or PINNED.get(name, "")
    if not version:
        raise SystemExit(
            f"unknown corpus {spec!r}: use NAME==VERSION, a directory or one of {', '.join(PINNED)}"
        )
    return fetch_sdist(name, version), f"PyPI sdist {name}=={version}"


def load_sources(root: Path, limit: int | None) -> list[SourceFile]:
    paths = sorted(p for p in root.rglob("*.py") if p.is_file() and not p.is_symlink())
    if limit is not None and len(paths) > limit:
        step = len(paths) / limit  # an even spread, deterministic
        paths = [paths[int(i * step)] for i in range(limit)]
    return [SourceFile(root, p.relative_to(root).as_posix(), p.read_bytes()) for p in paths]


class CodeCounter(logging.Handler):
    """Counts the warnings the backends log, by their ``code``."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.codes: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        self.codes[str(getattr(record, "code", "?"))] += 1


@dataclass
class Result:
    backend: str
    files: int = 0
    lines: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    defs: int = 0
    refs: int = 0
    refs_with_target: int = 0
    targets_defined_in_corpus: int = 0
    imports: int = 0
    warnings: dict[str, int] = field(default_factory=dict)

    @property
    def files_per_s(self) -> float:
        return self.files / self.wall_s if self.wall_s else 0.0

    @property
    def files_per_cpu_s(self) -> float:
        return self.files / self.cpu_s if self.cpu_s else 0.0


def run_backend(name: str, sources: list[SourceFile]) -> tuple[Result, dict[str, list[Tag]]]:
    module = BACKENDS[name]
    module.extract_tags(SourceFile.from_text("warm_up.py", "x = 1\n"))  # lazy imports, not timed
    counter = CodeCounter()
    loggers = [logging.getLogger(m.__name__) for m in BACKENDS.values()]
    for lg in loggers:
        lg.addHandler(counter)
        lg.propagate = False
    result = Result(name, files=len(sources), lines=sum(s.data.count(b"\n") for s in sources))
    tags_by_file: dict[str, list[Tag]] = {}
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        for source in sources:
            tags = module.extract_tags(source) or []
            result.imports += len(module.extract_imports(source) or [])
            source.drop_memo()  # as the core does when a file is done
            tags_by_file[source.path] = tags
        result.wall_s = time.perf_counter() - wall
        result.cpu_s = time.process_time() - cpu
    finally:
        for lg in loggers:
            lg.removeHandler(counter)
            lg.propagate = True
    result.warnings = dict(sorted(counter.codes.items()))
    for tags in tags_by_file.values():
        for t in tags:
            if t.is_def:
                result.defs += 1
            else:
                result.refs += 1
                result.refs_with_target += t.target is not None
    return result, tags_by_file


def count_targets_defined(tags_by_file: dict[str, list[Tag]]) -> int:
    """References whose target is ``<module>.<qualified name>`` of a definition in the corpus."""
    defined = {
        f"{module_name(path)}.{t.qualified_name}".lstrip(".")
        for path, tags in tags_by_file.items()
        for t in tags
        if t.is_def
    }
    return sum(1 for tags in tags_by_file.values() for t in tags if t.target in defined)


def definitions_agree(a: dict[str, list[Tag]], b: dict[str, list[Tag]]) -> tuple[int, list[str]]:
    def key(tags: list[Tag]) -> list[tuple]:
        return sorted(
            (
                t.name,
                t.kind,
                str(t.symbol_kind),
                t.start_line,
                t.end_line,
                t.scope,
                t.signature or "",
                t.docstring or "",
            )
            for t in tags
            if t.is_def
        )

    differ = [p for p in a if key(a[p]) != key(b.get(p, []))]
    return len(a) - len(differ), differ


def markdown(corpus: str, results: list[Result], agree: int, differ: list[str], repeat: int) -> str:
    rows = [
        "| backend | files | seconds (wall) | seconds (CPU) | files/s (wall) | files/s (CPU) "
        "| definitions | references | with target | target defined in corpus | warnings |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        pct = 100 * r.refs_with_target / r.refs if r.refs else 0.0
        warn = ", ".join(f"{k}: {v}" for k, v in r.warnings.items()) or "none"
        rows.append(
            f"| {r.backend} | {r.files:,} | {r.wall_s:.1f} | {r.cpu_s:.1f} | {r.files_per_s:.1f} "
            f"| {r.files_per_cpu_s:.1f} | {r.defs:,} | {r.refs:,} | {r.refs_with_target:,} "
            f"({pct:.0f}%) | {r.targets_defined_in_corpus:,} | {warn} |"
        )
    ratio = results[1].cpu_s / results[0].cpu_s if results[0].cpu_s else float("nan")
    lines = [
        f"Corpus: {corpus}; {results[0].files:,} files, {results[0].lines:,} lines; "
        f"median of {repeat} run(s) per backend.",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, load average "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}; Python {platform.python_version()}, "
        f"libcst {python_libcst.LIBCST_VERSION}.",
        "",
        *rows,
        "",
        f"libcst takes {ratio:.1f}x the CPU time of ast. Definitions identical (names, kinds, "
        f"lines, scopes, signatures, docstrings) in {agree:,} of {results[0].files:,} files.",
    ]
    if differ:
        more = " ..." if len(differ) > 10 else ""
        lines.append(f"Files that differ: {', '.join(differ[:10])}{more}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        default="requests",
        help=f"{', '.join(PINNED)}, NAME==VERSION (a PyPI sdist) or a directory",
    )
    parser.add_argument("--limit", type=int, default=None, help="at most N files, evenly spread")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs per backend, alternating; the median (by CPU time) is shown",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[python_backends] %(message)s")

    root, label = corpus_root(args.corpus)
    sources = load_sources(root, args.limit)
    if not sources:
        raise SystemExit(f"no .py files under {root}")
    log.info("%s: %d files under %s", label, len(sources), root)
    runs: dict[str, list[Result]] = {name: [] for name in BACKENDS}
    outputs: list[dict[str, list[Tag]]] = []
    for i in range(max(1, args.repeat)):
        for name in BACKENDS:
            log.info("run %d: %s ...", i + 1, name)
            result, tags = run_backend(name, sources)
            log.info("%s: %.1f s wall, %.1f s CPU", name, result.wall_s, result.cpu_s)
            runs[name].append(result)
            if i == 0:
                result.targets_defined_in_corpus = count_targets_defined(tags)
                outputs.append(tags)
    results = []
    for rs in runs.values():
        median = sorted(rs, key=lambda r: r.cpu_s)[len(rs) // 2]
        median.targets_defined_in_corpus = rs[0].targets_defined_in_corpus
        results.append(median)
    agree, differ = definitions_agree(outputs[0], outputs[1])
    print(markdown(label, results, agree, differ, max(1, args.repeat)))
    if args.json:
        payload = {
            "corpus": label,
            "python": platform.python_version(),
            "libcst": python_libcst.LIBCST_VERSION,
            "cpus": os.cpu_count(),
            "loadavg": os.getloadavg(),
            "definitions_agree": agree,
            "definitions_differ": differ,
            "results": [
                asdict(r) | {"files_per_s": r.files_per_s, "files_per_cpu_s": r.files_per_cpu_s}
                for r in results
            ],
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
