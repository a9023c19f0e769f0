"""The graph page's layout: files packed in their directories' circles, nothing overlapping, the
same positions for the same paths and ranks."""

from __future__ import annotations

import math
import random

import pytest

from repomapper.graphview.layout import (
    MAX_RADIUS,
    MIN_RADIUS,
    Circle,
    circle_layout,
    enclose,
    file_radius,
    pack,
)


def _overlaps(a: tuple[float, float, float], b: tuple[float, float, float], slack: float) -> bool:
    return math.hypot(a[0] - b[0], a[1] - b[1]) < a[2] + b[2] - slack


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 40, 250])
def test_pack_places_circles_without_overlap(n):
    rnd = random.Random(n)
    radii = sorted((rnd.uniform(1, 20) for _ in range(n)), reverse=True)
    centres = pack(radii)
    circles = [(x, y, r) for (x, y), r in zip(centres, radii, strict=True)]
    assert len(circles) == n
    for i in range(n):
        for j in range(i):
            assert not _overlaps(circles[i], circles[j], 1e-6), (i, j)
    if n >= 40:  # tight: the enclosing radius stays near that of a disc of the same total area
        hull = enclose([Circle(*c) for c in circles])
        assert all(math.hypot(x - hull.x, y - hull.y) + r <= hull.r + 1e-6 for x, y, r in circles)
        assert sum(r * r for r in radii) / hull.r**2 > 0.55


def _tree(n: int) -> tuple[list[str], list[float]]:
    rnd = random.Random(5)
    paths = set()
    while len(paths) < n:
        depth = rnd.choice([1, 2, 2, 3, 3, 4, 5])
        parts = [f"d{rnd.randrange(3 if k < 2 else 6)}" for k in range(depth - 1)]
        paths.add("/".join([*parts, f"f{rnd.randrange(60)}.py"]))
    ordered = sorted(paths)
    return ordered, [rnd.random() ** 5 for _ in ordered]


def test_files_sit_inside_their_directory_and_nothing_overlaps():
    paths, ranks = _tree(600)
    files, dirs = circle_layout(paths, ranks)
    parent = lambda p: p.rsplit("/", 1)[0] if "/" in p else ""  # noqa: E731
    for p, f in zip(paths, files, strict=True):
        d = dirs[parent(p)]
        assert math.hypot(f[0] - d[0], f[1] - d[1]) + f[2] <= d[2] + 0.2, p
    for path, d in dirs.items():
        if path:
            up = dirs[parent(path)]
            assert math.hypot(d[0] - up[0], d[1] - up[1]) + d[2] <= up[2] + 0.2, path
    # siblings (files and directories of one directory) never overlap
    children: dict[str, list[tuple[float, float, float]]] = {}
    for p, f in zip(paths, files, strict=True):
        children.setdefault(parent(p), []).append(f)
    for path, d in dirs.items():
        if path:
            children.setdefault(parent(path), []).append(d)
    for sibs in children.values():
        for i in range(len(sibs)):
            for j in range(i):
                assert not _overlaps(sibs[i], sibs[j], 0.2)


def test_the_layout_is_deterministic_and_sized_by_rank():
    paths, ranks = _tree(300)
    assert circle_layout(paths, ranks) == circle_layout(list(paths), list(ranks))
    files, _ = circle_layout(paths, ranks)
    top = max(range(len(paths)), key=lambda i: ranks[i])
    assert files[top][2] == MAX_RADIUS
    assert min(f[2] for f in files) >= MIN_RADIUS
    assert file_radius(0.0, 0.0) == MIN_RADIUS
    assert circle_layout([], [])[0] == []
