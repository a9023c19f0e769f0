"""Benchmark corpora: fetch real source trees from package registries and unpack them.

Every corpus is a directory under ``benchmarks/.cache/corpora/<name>/`` that holds ONLY the
source files the benchmark maps (for example every ``.py`` file of the sympy sdist), so that
repomapper (which walks the directory itself) and Aider (which is handed the file list) see
exactly the same files. Downloads are kept in ``benchmarks/.cache/downloads/``; both folders
are git-ignored and must never be committed.

Sources (only package registries are reachable from the benchmark machines):

* PyPI sdists via ``pip download --no-binary :all: --no-deps NAME==VERSION``;
* npm tarballs via ``npm pack NAME@VERSION``;
* Debian ``golang-*-dev`` packages via ``apt-get download NAME`` and ``dpkg-deb -x``;
* derived corpora: ``synthetic20k`` copies another corpus into ``cNN/`` sub-directories until
  it holds at least 20,000 files; ``self`` is this repository's own Python files (no network).

Usable on its own::

    python benchmarks/corpora.py                # list corpora and whether they are ready
    python benchmarks/corpora.py sympy docker   # fetch and unpack these
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
CACHE = HERE / ".cache"
DOWNLOADS = CACHE / "downloads"
CORPORA = CACHE / "corpora"
META_SUFFIX = ".meta.json"
LAYOUT_VERSION = 2  # bump to force every corpus to be rebuilt

DOWNLOAD_TIMEOUT = 900  # seconds, per registry command


def log(msg: str) -> None:
    print(f"[corpora {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class CorpusError(RuntimeError):
    pass


@dataclasses.dataclass(frozen=True)
class Corpus:
    name: str
    kind: str  # "pypi" | "npm" | "deb" | "replicate" | "local"
    package: str = ""
    version: str = ""
    language: str = "python"
    extensions: tuple[str, ...] = (".py",)
    exclude_suffixes: tuple[str, ...] = ()
    # path prefix inside the unpacked archive that becomes the corpus root ("" = whole archive,
    # after stripping a single top-level directory)
    subdir: str = ""
    base: str = ""  # for kind == "replicate": the corpus that is copied
    min_files: int = 0  # for kind == "replicate": copy until at least this many files
    description: str = ""
    comment_prefix: str = "#"  # used by the "one file touched" scenario
    tarball: str = ""  # for kind == "deb": a source tarball inside the package to unpack instead

    def wants(self, rel: str) -> bool:
        return rel.endswith(self.extensions) and not rel.endswith(self.exclude_suffixes)

    @property
    def source(self) -> str:
        if self.kind == "pypi":
            return f"PyPI sdist `{self.package}=={self.version}`"
        if self.kind == "npm":
            return f"npm package `{self.package}@{self.version}`"
        if self.kind == "deb":
            return f"Debian package `{self.package}` {self.version}"
        if self.kind == "replicate":
            return f"`{self.base}` copied into sub-directories up to {self.min_files:,} files"
        return "this repository"


# Pinned so that results stay comparable between runs. Change a pin => the corpus is rebuilt.
CORPUS_LIST: list[Corpus] = [
    Corpus(
        "sympy",
        "pypi",
        "sympy",
        "1.14.0",
        description="sympy sdist, every .py file (library, tests, docs scripts)",
    ),
    Corpus(
        "django",
        "pypi",
        "django",
        "5.2.8",
        description="Django sdist, every .py file",
    ),
    Corpus(
        "babylon",
        "npm",
        "@babylonjs/core",
        "9.34.0",
        language="typescript",
        extensions=(".ts", ".tsx"),
        description="@babylonjs/core npm package: its TypeScript declaration files (.d.ts); "
        "the package ships no .ts sources but its declarations cover the whole engine",
        comment_prefix="//",
    ),
    Corpus(
        "effect",
        "npm",
        "effect",
        "4.1.0",
        language="typescript",
        extensions=(".ts", ".tsx"),
        exclude_suffixes=(".d.ts",),
        subdir="src",
        description="effect npm package: its TypeScript sources (src/**/*.ts)",
        comment_prefix="//",
    ),
    Corpus(
        "docker",
        "deb",
        "golang-github-docker-docker-dev",
        "20.10.24+dfsg1-1+deb12u1",
        language="go",
        extensions=(".go",),
        subdir="usr/share/gocode/src",
        description="Debian golang-github-docker-docker-dev: Docker/Moby Go sources",
        comment_prefix="//",
    ),
    Corpus(
        "ansible",
        "pypi",
        "ansible",
        "12.3.0",
        description="the ansible community package sdist (ansible_collections), every .py file: "
        "a real 17,745-file Python tree (not in the default set: slow)",
    ),
    Corpus(
        "synthetic20k",
        "replicate",
        base="sympy",
        min_files=20_000,
        description="the sympy corpus copied into c00/, c01/, ... until >= 20,000 files "
        "(tests the 20,000-file warm target)",
    ),
    Corpus(
        "synthetic5k",
        "replicate",
        base="sympy",
        min_files=5_000,
        description="the sympy corpus copied into c00/, c01/, ... until >= 5,000 files "
        "(a point of the scale curve)",
    ),
    Corpus(
        "synthetic50k",
        "replicate",
        base="sympy",
        min_files=50_000,
        description="the sympy corpus copied into c00/, c01/, ... until >= 50,000 files "
        "(a point of the scale curve)",
    ),
    Corpus(
        "linux",
        "deb",
        "linux-source-6.1",
        "6.1.192-2",
        language="c",
        extensions=("",),  # every file of the tree: C, headers, assembly, Kconfig, scripts, docs
        tarball="usr/src/linux-source-6.1.tar.xz",
        description="the Linux kernel 6.1 source tree from Debian's linux-source-6.1 package, "
        "every file (mostly C; not in the default set: large)",
        comment_prefix="//",
    ),
    Corpus(
        "self",
        "local",
        description="this repository's own .py files (tiny; for smoke-testing the harness)",
    ),
]
CORPUS_BY_NAME = {c.name: c for c in CORPUS_LIST}
DEFAULT_CORPORA = ["sympy", "django", "babylon", "docker", "synthetic20k"]


# --------------------------------------------------------------------------- helpers


def run(cmd: list[str], *, cwd: Path | None = None, timeout: int = DOWNLOAD_TIMEOUT) -> str:
    """Run a command (argument list, never a shell); raise CorpusError with its output."""
    log("$ " + " ".join(cmd))
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except FileNotFoundError as err:
        raise CorpusError(f"{cmd[0]} not found: {err}") from err
    except subprocess.TimeoutExpired as err:
        raise CorpusError(f"timed out after {timeout}s: {' '.join(cmd)}") from err
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip()[-2000:]
        raise CorpusError(f"exit {proc.returncode}: {' '.join(cmd)}\n{tail}")
    return proc.stdout


def meta_path(name: str) -> Path:
    return CORPORA / f"{name}{META_SUFFIX}"


def read_meta(name: str) -> dict | None:
    try:
        return json.loads(meta_path(name).read_text())
    except (OSError, ValueError):
        return None


def corpus_key(c: Corpus) -> dict:
    key = dataclasses.asdict(c)
    key.pop("description", None)
    if not key.get("tarball"):
        key.pop("tarball", None)  # added later: corpora without one keep their key
    key["layout"] = LAYOUT_VERSION
    if c.kind == "replicate":
        base_meta = read_meta(c.base) or {}
        key["base_key"] = base_meta.get("key")
    return json.loads(json.dumps(key))  # tuples -> lists, as read back from the meta file


def list_files(root: Path) -> list[str]:
    """Every regular file under root (relative, '/'-separated, sorted), skipping hidden
    directories and files (tool caches such as .aider.tags.cache.v4 live there)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for fn in filenames:
            if fn.startswith("."):
                continue
            p = os.path.join(dirpath, fn)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(os.path.relpath(p, root).replace(os.sep, "/"))
    out.sort()
    return out


def _copy_selected(c: Corpus, src_root: Path, dst_root: Path) -> int:
    n = 0
    for dirpath, dirnames, filenames in os.walk(src_root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            src = Path(dirpath) / fn
            rel = src.relative_to(src_root).as_posix()
            if fn.startswith(".") or src.is_symlink() or not src.is_file() or not c.wants(rel):
                continue
            dst = dst_root / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
            n += 1
    return n


def _single_top(path: Path) -> Path:
    entries = [p for p in path.iterdir() if not p.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return path


def _extract_tar(archive: Path, dest: Path) -> None:
    with tarfile.open(archive) as tf:
        try:
            tf.extractall(dest, filter="data")
        except TypeError:  # Python without extraction filters
            tf.extractall(dest)  # noqa: S202 - registry archive, pinned version


# --------------------------------------------------------------------------- fetchers


def _fetch_pypi(c: Corpus) -> Path:
    dl = DOWNLOADS / "pypi"
    dl.mkdir(parents=True, exist_ok=True)
    stem = f"{c.package}-{c.version}".lower()
    found = [p for p in dl.iterdir() if p.name.lower().startswith(stem) and ".tar" in p.name]
    if not found:
        run(
            [
                sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
                "--disable-pip-version-check", "-d", str(dl), f"{c.package}=={c.version}",
            ]
        )  # fmt: skip
        found = [p for p in dl.iterdir() if p.name.lower().startswith(stem) and ".tar" in p.name]
    if not found:
        raise CorpusError(f"pip download produced no sdist for {c.package}=={c.version}")
    return found[0]


def _fetch_npm(c: Corpus) -> Path:
    dl = DOWNLOADS / "npm"
    dl.mkdir(parents=True, exist_ok=True)
    stem = c.package.lstrip("@").replace("/", "-") + f"-{c.version}.tgz"
    target = dl / stem
    if not target.exists():
        npm = shutil.which("npm")
        if not npm:
            raise CorpusError("npm is not installed (apt-get install -y npm)")
        out = run([npm, "pack", f"{c.package}@{c.version}", "--silent"], cwd=dl)
        name = out.strip().splitlines()[-1].strip() if out.strip() else stem
        if (dl / name).exists() and name != stem:
            (dl / name).rename(target)
    if not target.exists():
        raise CorpusError(f"npm pack produced no {target.name}")
    return target


_apt_updated = False


def _fetch_deb(c: Corpus) -> Path:
    global _apt_updated
    dl = DOWNLOADS / "deb"
    dl.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):  # apt drops privileges to _apt when it can
        os.chmod(dl, 0o777)

    def present() -> list[Path]:
        return sorted(dl.glob(f"{c.package}_*.deb"))

    if not present():
        apt = shutil.which("apt-get")
        if not apt:
            raise CorpusError("apt-get is not available: the Go corpus needs a Debian system")
        attempts = [f"{c.package}={c.version}", c.package]
        errors = []
        for i in range(2):
            for spec in attempts:
                try:
                    run([apt, "download", spec], cwd=dl)
                    break
                except CorpusError as err:
                    errors.append(str(err))
            if present():
                break
            if i == 0 and not _apt_updated and os.geteuid() == 0:
                run([apt, "update"])
                _apt_updated = True
        if not present():
            raise CorpusError("apt-get download failed:\n" + "\n".join(errors))
    debs = present()
    pinned = [d for d in debs if c.version.replace(":", "%3a") in d.name]
    return (pinned or debs)[-1]


def _unpack_deb(deb: Path, dest: Path) -> None:
    if shutil.which("dpkg-deb"):
        run(["dpkg-deb", "-x", str(deb), str(dest)])
        return
    # Fallback without dpkg: a .deb is an ar archive holding data.tar.*
    with tempfile.TemporaryDirectory() as td:
        run(["ar", "x", str(deb)], cwd=Path(td))
        data = next(Path(td).glob("data.tar*"), None)
        if data is None:
            raise CorpusError(f"{deb.name}: no data.tar inside")
        _extract_tar(data, dest)


# --------------------------------------------------------------------------- building


def _build(c: Corpus, tmp: Path) -> dict:
    if c.kind in ("pypi", "npm", "deb"):
        fetch = {"pypi": _fetch_pypi, "npm": _fetch_npm, "deb": _fetch_deb}[c.kind]
        archive = fetch(c)
        unpacked = tmp / "_unpacked"
        unpacked.mkdir()
        log(f"unpacking {archive.name}")
        if c.kind == "deb":
            _unpack_deb(archive, unpacked)
            top = unpacked
            if c.tarball:
                inner = unpacked / c.tarball
                if not inner.is_file():
                    raise CorpusError(f"{archive.name}: no {c.tarball} inside")
                tree = tmp / "_tree"
                tree.mkdir()
                log(f"unpacking {inner.name}")
                _extract_tar(inner, tree)
                inner.unlink()
                top = _single_top(tree)
        else:
            _extract_tar(archive, unpacked)
            top = _single_top(unpacked)
        src_root = top / c.subdir if c.subdir else top
        if not src_root.is_dir():
            raise CorpusError(f"{archive.name}: no directory {c.subdir!r} inside")
        out = tmp / "corpus"
        out.mkdir()
        n = _copy_selected(c, src_root, out)
        shutil.rmtree(unpacked)
        shutil.rmtree(tmp / "_tree", ignore_errors=True)
        return {"archive": archive.name, "files": n}
    if c.kind == "replicate":
        base_root = ensure(c.base)
        base_files = list_files(base_root)
        if not base_files:
            raise CorpusError(f"base corpus {c.base} is empty")
        copies = -(-c.min_files // len(base_files))
        out = tmp / "corpus"
        out.mkdir()
        log(f"copying {c.base} ({len(base_files)} files) {copies} times")
        for i in range(copies):
            shutil.copytree(base_root, out / f"c{i:02d}", ignore=shutil.ignore_patterns(".*"))
        return {"files": copies * len(base_files), "copies": copies}
    if c.kind == "local":
        out = tmp / "corpus"
        out.mkdir()
        n = 0
        for sub in ("core", "plugins", "conformance", "tests", "benchmarks"):
            if (REPO_ROOT / sub).is_dir():
                n += _copy_selected(c, REPO_ROOT / sub, out / sub)
        return {"files": n}
    raise CorpusError(f"unknown corpus kind {c.kind}")


def _make_git_root(path: Path) -> None:
    """Make the corpus its own (empty) git repository.

    The corpora live inside this project's work tree, in a git-ignored folder; a tool that asks
    git which files to map (repomapper does) would otherwise see none. Nothing is committed:
    ``git ls-files --others --exclude-standard`` lists every file, and Aider's cache folder is
    excluded through ``.git/info/exclude`` (not a .gitignore, which would be one more file).
    """
    git = shutil.which("git")
    if not git:
        log("git not found: corpus left without its own repository")
        return
    run([git, "init", "--quiet", str(path)])
    exclude = path / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with open(exclude, "a", encoding="utf-8") as f:
        f.write("\n# speed benchmark tool caches\n.aider.tags.cache.v*/\n")


def ensure(name: str, *, rebuild: bool = False) -> Path:
    """Return the corpus directory, fetching and unpacking it first if needed."""
    if name not in CORPUS_BY_NAME:
        raise CorpusError(f"unknown corpus {name!r}; known: {', '.join(CORPUS_BY_NAME)}")
    c = CORPUS_BY_NAME[name]
    root = CORPORA / name
    if c.kind == "replicate":
        ensure(c.base)
    key = corpus_key(c)
    meta = read_meta(name)
    if not rebuild and root.is_dir() and meta and meta.get("key") == key:
        return root
    CORPORA.mkdir(parents=True, exist_ok=True)
    log(f"building corpus {name} from {c.source}")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(dir=CORPORA, prefix=f".build-{name}-") as td:
        info = _build(c, Path(td))
        if info.get("files", 0) == 0:
            raise CorpusError(f"corpus {name}: no {'/'.join(c.extensions)} files found")
        _make_git_root(Path(td) / "corpus")
        if root.exists():
            shutil.rmtree(root)
        (Path(td) / "corpus").rename(root)
    meta = {
        "key": key,
        "name": name,
        "source": source_built(c, info.get("archive")),
        "description": c.description,
        "built": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **info,
    }
    meta_path(name).write_text(json.dumps(meta, indent=2))
    log(f"corpus {name}: {info['files']} files in {time.monotonic() - t0:.1f}s -> {root}")
    return root


def source_built(c: Corpus, archive: str | None) -> str:
    """Where the corpus came from: its pinned source, or the Debian package version apt had
    when the pinned one was gone from the archive (``NAME_VERSION_ARCH.deb``)."""
    if c.kind != "deb" or not archive or archive.count("_") != 2:
        return c.source
    version = archive.split("_")[1].replace("%3a", ":")
    if version == c.version:
        return c.source
    return f"Debian package `{c.package}` {version} (the pinned {c.version} was not available)"


def describe(name: str) -> dict:
    c = CORPUS_BY_NAME[name]
    meta = read_meta(name) or {}
    return {
        "name": name,
        "language": c.language,
        "source": source_built(c, meta.get("archive")),
        "description": c.description,
        "files": meta.get("files"),
        "ready": (CORPORA / name).is_dir() and meta.get("key") == corpus_key(c),
    }


def file_list(root: Path) -> list[str]:
    return list_files(root)


def touch_file(c: Corpus, files: list[str], root: Path) -> str:
    """A deterministic 'typical' file for the one-file-changed scenario: the file of median
    size (ties broken by path)."""
    sized = sorted(((root / f).stat().st_size, f) for f in files)
    return sized[len(sized) // 2][1]


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-l", "--list"):
        for name in CORPUS_BY_NAME:
            d = describe(name)
            state = f"ready, {d['files']} files" if d["ready"] else "not fetched"
            print(f"{name:13} {d['language']:10} {state:22} {d['source']}")
        return 0
    rebuild = "--rebuild" in argv
    rc = 0
    for name in [a for a in argv if not a.startswith("-")]:
        try:
            print(ensure(name, rebuild=rebuild))
        except CorpusError as err:
            log(f"ERROR {name}: {err}")
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
