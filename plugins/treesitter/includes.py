"""C and C++ ``#include`` resolved as a compiler's search path would, without the build files.

* ``#include "x.h"``: the including file's folder, then its ancestors (a project compiled with
  ``-Isrc`` writes ``#include "module/x.h"`` from ``src/other/y.c``), then the repository's
  include roots, nearest first; last, a file whose path ends with the written one, nearest to
  the includer (layouts a build file spells out, such as ``-Ideps/lua/src``).
* ``#include <x.h>``: the include roots, then the same last resort; never for a C or POSIX
  standard header (``src/compat/string.h`` is not ``<string.h>``) or a C++ one (``<vector>``,
  ``<cstdio>``), even where a folder of the repository holds a file of that name.

The include roots are the repository's root, every folder named ``include`` (or ``inc``), and
every folder named ``src``, ``lib`` or ``source`` that holds headers directly.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict

from repomapper.index import RepoIndex
from repomapper.model import Import

#: Folder names that compilers are pointed at with ``-I`` by convention.
INCLUDE_DIR_NAMES = frozenset({"include", "inc"})
SOURCE_DIR_NAMES = frozenset({"src", "lib", "source"})
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".h++", ".inc", ".inl", ".ipp", ".tcc")

#: The C standard library's and POSIX's headers: ``<name>`` always means the system's.
_SYSTEM_HEADER_NAMES = """
    assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h
    math.h setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h
    stdlib.h stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h wctype.h aio.h
    arpa/inet.h cpio.h dirent.h dlfcn.h fcntl.h fnmatch.h glob.h grp.h iconv.h langinfo.h
    libgen.h monetary.h mqueue.h netdb.h net/if.h netinet/in.h netinet/tcp.h nl_types.h poll.h
    pthread.h pwd.h regex.h sched.h search.h semaphore.h spawn.h strings.h sys/ipc.h sys/mman.h
    sys/msg.h sys/resource.h sys/select.h sys/sem.h sys/shm.h sys/socket.h sys/stat.h
    sys/statvfs.h sys/time.h sys/times.h sys/types.h sys/uio.h sys/un.h sys/utsname.h sys/wait.h
    syslog.h tar.h termios.h ulimit.h unistd.h utime.h utmpx.h wordexp.h malloc.h memory.h
    windows.h"""
#: The C++ standard library's headers (through C++23), and its ``<cname>`` forms of C's.
_CPP_HEADER_NAMES = """
    algorithm any array atomic barrier bit bitset charconv chrono codecvt compare complex
    concepts condition_variable coroutine deque exception execution expected filesystem flat_map
    flat_set format forward_list fstream functional future generator initializer_list iomanip ios
    iosfwd iostream istream iterator latch limits list locale map mdspan memory memory_resource
    mutex new numbers numeric optional ostream print queue random ranges ratio regex
    scoped_allocator semaphore set shared_mutex source_location span spanstream sstream stack
    stacktrace stdexcept stdfloat stop_token streambuf string string_view strstream syncstream
    system_error thread tuple type_traits typeindex typeinfo unordered_map unordered_set utility
    valarray variant vector version cassert ccomplex cctype cerrno cfenv cfloat cinttypes
    ciso646 climits clocale cmath csetjmp csignal cstdalign cstdarg cstdbool cstddef cstdint
    cstdio cstdlib cstring ctgmath ctime cuchar cwchar cwctype"""
SYSTEM_HEADERS = frozenset(_SYSTEM_HEADER_NAMES.split()) | frozenset(_CPP_HEADER_NAMES.split())


def include_roots(index: RepoIndex) -> tuple[str, ...]:
    """The repository's include roots (``""`` is the root), computed once per index."""
    return index.derived(("treesitter", "c_include_roots"), _include_roots)


def _include_roots(index: RepoIndex) -> tuple[str, ...]:
    roots = {""}
    for directory, files in index.by_dir.items():
        name = posixpath.basename(directory)
        if name in SOURCE_DIR_NAMES and any(f.endswith(HEADER_SUFFIXES) for f in files):
            roots.add(directory)
    # an ``include`` folder counts whether it holds headers itself or only folders of them
    # (the kernel's ``include/linux/``, ``arch/x86/include/asm/``; ``include/fmt/``)
    for directory in _folders(index):
        if posixpath.basename(directory) in INCLUDE_DIR_NAMES:
            roots.add(directory)
    # a folder under an include root is reached through it (``include/fmt/core.h`` is
    # ``<fmt/core.h>``): it is a root of its own only when it is named like one
    return tuple(sorted(roots))


def _folders(index: RepoIndex) -> set[str]:
    """Every folder of the repository that holds a mapped file, directly or below."""
    folders: set[str] = set()
    for directory in index.by_dir:
        while directory and directory not in folders:
            folders.add(directory)
            directory = posixpath.dirname(directory)
    return folders


def _by_basename(index: RepoIndex) -> dict[str, tuple[str, ...]]:
    names: dict[str, list[str]] = defaultdict(list)
    for f in index.files:
        names[posixpath.basename(f)].append(f)
    return {k: tuple(sorted(v)) for k, v in names.items()}


def _shared_depth(a: str, b: str) -> int:
    """How many leading folders ``a`` and ``b`` (folders, ``""`` for the root) share."""
    common = 0
    for x, y in zip(a.split("/") if a else (), b.split("/") if b else (), strict=False):
        if x != y:
            break
        common += 1
    return common


def _joined(directory: str, spec: str) -> str | None:
    path = posixpath.normpath(posixpath.join(directory, spec) if directory else spec)
    if path.startswith("..") or posixpath.isabs(path) or path == ".":
        return None
    return path


def resolve_include(imp: Import, index: RepoIndex) -> list[str]:
    """The file ``imp`` (an ``#include``) names, as a list of at most one (the first hit of the
    search order), or every file nearest to the includer for the last-resort suffix match (a
    folder the build adds with ``-I``: ``<hiredis.h>`` is ``deps/hiredis/hiredis.h``)."""
    spec = imp.source.strip()
    if not spec or posixpath.isabs(spec):
        return []
    here = posixpath.dirname(imp.file_path)
    quoted = imp.is_relative
    if not quoted and spec in SYSTEM_HEADERS:
        return []
    if _plain(spec):
        found = _first_found(spec, here, quoted, index)
    else:
        found = _first_joined(spec, here, quoted, index)
    if found is not None:
        return [found]
    if spec in SYSTEM_HEADERS or (not quoted and "." not in posixpath.basename(spec)):
        return []  # the compiler's own headers come next (``<vector>``: a C++ standard one)
    name = posixpath.basename(spec)
    suffix = "/" + spec.lstrip("./")
    candidates = [f for f in _named(index, name) if ("/" + f).endswith(suffix)]
    if not candidates:
        return []
    best = max(_shared_depth(posixpath.dirname(f), here) for f in candidates)
    return sorted(f for f in candidates if _shared_depth(posixpath.dirname(f), here) == best)


def _plain(spec: str) -> bool:
    """No ``.`` or ``..`` folder and nothing to normalize: ``folder/spec`` is a file's path
    exactly when that file's path is ``spec`` under ``folder``."""
    return posixpath.normpath(spec) == spec and not {".", ".."} & set(spec.split("/"))


def _first_found(spec: str, here: str, quoted: bool, index: RepoIndex) -> str | None:
    """The first file of the search order (:func:`_first_joined`), found from the files whose
    path ends with ``spec`` rather than by trying each folder of the order: a large tree has
    hundreds of include roots and a file includes dozens of headers."""
    roots = index.derived(("treesitter", "c_include_root_set"), _include_root_set)
    best: tuple[tuple[int, int, str], str] | None = None
    for f in _named(index, posixpath.basename(spec)):
        if f == spec:
            folder = ""
        elif f.endswith(spec) and f[-len(spec) - 1] == "/":
            folder = f[: -len(spec) - 1]
        else:
            continue
        if quoted and (not folder or here == folder or here.startswith(folder + "/")):
            key = (0, -len(folder), "")  # the includer's folder, then its ancestors
        elif folder in roots:
            key = (1, -_shared_depth(folder, here), folder)  # the roots, nearest first
        else:
            continue
        if best is None or key < best[0]:
            best = (key, f)
    return None if best is None else best[1]


def _first_joined(spec: str, here: str, quoted: bool, index: RepoIndex) -> str | None:
    """The first file the search order finds: for a quoted include the includer's folder and
    its ancestors, then the include roots, nearest to the includer first."""
    searched: list[str] = []
    if quoted:
        d: str | None = here
        while d is not None:
            searched.append(d)
            d = posixpath.dirname(d) if d else None
    roots = sorted(include_roots(index), key=lambda r: (-_shared_depth(r, here), r))
    searched += [r for r in roots if r not in searched]
    for directory in searched:
        path = _joined(directory, spec)
        if path is not None and path in index.files:
            return path
    return None


def _named(index: RepoIndex, name: str) -> tuple[str, ...]:
    """The repository's files called ``name``."""
    return index.derived(("treesitter", "by_basename"), _by_basename).get(name, ())


def _include_root_set(index: RepoIndex) -> frozenset[str]:
    return frozenset(include_roots(index))
