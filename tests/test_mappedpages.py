"""Pages of arrays mapped from a file are given back once read, and read again unchanged."""

from __future__ import annotations

import mmap
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from repomapper import mappedpages
from repomapper.mappedpages import PAGE, give_back

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(mmap, "MADV_DONTNEED"),
    reason="resident pages per mapping are read from /proc/self/smaps",
)


def _mapped(path: Path, values: np.ndarray) -> tuple[mmap.mmap, np.ndarray]:
    path.write_bytes(values.tobytes())
    with open(path, "rb") as f:
        view = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return view, np.frombuffer(view, dtype=values.dtype)


def _resident_kb(path: Path) -> int:
    """Resident kilobytes of this process's mappings of ``path``."""
    total, inside = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                inside = line.rstrip().endswith(str(path))
            elif inside and line.startswith("Rss:"):
                total += int(line.split()[1])
    return total


@linux_only
def test_pages_given_back_leave_the_process_and_read_again_the_same(tmp_path):
    values = np.arange(4 << 20, dtype=np.int64)  # 32 MB
    view, array = _mapped(tmp_path / "state.bin", values)
    assert int(array.sum()) == int(values.sum())  # every page read
    before = _resident_kb(tmp_path / "state.bin")
    assert before >= 30_000
    assert give_back(array) == array.nbytes  # page-aligned from the file's start
    assert _resident_kb(tmp_path / "state.bin") < before // 10
    assert np.array_equal(array, values)  # read again from the file, unchanged
    del array
    view.close()


@linux_only
def test_a_slice_gives_back_only_the_whole_pages_inside_it(tmp_path):
    values = np.arange(1 << 20, dtype=np.int64)
    view, array = _mapped(tmp_path / "state.bin", values)
    per_page = PAGE // values.itemsize
    part = array[per_page // 2 : 10 * per_page + 3]  # starts and ends inside a page
    assert give_back(part) == 9 * PAGE  # the edges may hold a neighbour's values
    assert np.array_equal(array, values)
    del array, part
    view.close()


def test_arrays_not_read_from_a_read_only_mapping_are_left_alone(tmp_path):
    assert give_back(np.arange(1 << 16), None, [1, 2, 3]) == 0
    path = tmp_path / "rw.bin"
    path.write_bytes(bytes(1 << 16))
    with open(path, "r+b") as f:
        writable = mmap.mmap(f.fileno(), 0)
    try:
        # a writable mapping may hold what was written to it and not yet to the file
        assert give_back(np.frombuffer(writable, dtype=np.uint8)) == 0
    finally:
        writable.close()


def test_without_madvise_nothing_is_given_back(tmp_path, monkeypatch):
    view, array = _mapped(tmp_path / "state.bin", np.arange(1 << 16, dtype=np.int64))
    monkeypatch.delattr(mappedpages.mmap, "MADV_DONTNEED", raising=False)
    assert give_back(array) == 0
    del array
    view.close()
