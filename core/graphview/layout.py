"""Where the page draws each file: directories as nested circles, files packed inside them.

The layout is computed here, once, from the paths and ranks alone, so the page is the same bytes
for the same graph and its script only draws. A file is a disc whose radius grows with the square
root of its rank; the files and subdirectories of a directory are packed around its centre, larger
first, each placed tangent to two circles of the pack's outer chain (the front-chain method of
Wang et al., "Visualization of large hierarchical data by circle packing", CHI 2006), and the
directory's circle encloses them. Neighbouring files are therefore files of one directory, and a
collapsed directory is drawn in the space its files take when it is expanded: nothing moves when
the reader opens or closes one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: A file's disc radius, in layout units: the least-ranked file's and the most-ranked's.
MIN_RADIUS = 3.0
MAX_RADIUS = 16.0
#: Space kept around each file and each directory in its parent's pack.
FILE_GAP = 1.5
DIR_GAP = 3.0
#: Space inside a directory's circle around its contents (room for its outline and label).
DIR_PAD = 4.0
#: Decimal places kept (the positions are data on the page).
DIGITS = 1


@dataclass(slots=True)
class Circle:
    x: float
    y: float
    r: float


@dataclass(slots=True)
class _Dir:
    path: str
    files: list[int] = field(default_factory=list)
    subdirs: list[str] = field(default_factory=list)


def file_radius(rank: float, max_rank: float) -> float:
    share = min(rank, max_rank) / max_rank if max_rank > 0 else 0.0
    return MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * math.sqrt(max(share, 0.0))


def _tangent(a: Circle, b: Circle, r: float) -> tuple[float, float]:
    """The centre of a circle of radius ``r`` touching ``a`` and ``b``, right of the way a -> b."""
    dx, dy = b.x - a.x, b.y - a.y
    d2 = dx * dx + dy * dy
    ra, rb = a.r + r, b.r + r
    if d2 <= 1e-12:
        return a.x + ra, a.y
    d = math.sqrt(d2)
    along = (d2 + ra * ra - rb * rb) / (2 * d)
    h2 = ra * ra - along * along
    # a and b too far apart to touch both: touch ``a`` on the line towards ``b``
    h = math.sqrt(h2) if h2 > 0 else 0.0
    ux, uy = dx / d, dy / d
    # right of a -> b is (uy, -ux): outside a chain that runs counter-clockwise
    return a.x + along * ux + h * uy, a.y + along * uy - h * ux


def _overlap(c: Circle, x: float, y: float, r: float) -> bool:
    dx, dy = c.x - x, c.y - y
    reach = c.r + r - 1e-6
    return dx * dx + dy * dy < reach * reach


def pack(radii: list[float]) -> list[tuple[float, float]]:
    """Centres for circles of ``radii`` packed around the origin without overlapping.

    Circles are placed in the order given (callers give the larger first); each new one touches
    two neighbours on the pack's outer chain, next to the chain circle nearest the origin, and
    the chain is shortened past any circle the new one would overlap.
    """
    n = len(radii)
    if n == 0:
        return []
    cs = [Circle(0.0, 0.0, radii[0])]
    if n == 1:
        return [(0.0, 0.0)]
    cs.append(Circle(radii[0] + radii[1], 0.0, radii[1]))
    if n == 2:
        return [(c.x, c.y) for c in cs]
    # the third touches both on the left of 0 -> 1, so that 0 -> 1 -> 2 runs counter-clockwise
    x, y = _tangent(cs[1], cs[0], radii[2])
    cs.append(Circle(x, y, radii[2]))
    nxt = {0: 1, 1: 2, 2: 0}
    prv = {1: 0, 2: 1, 0: 2}
    for i in range(3, n):
        r = radii[i]
        m = min(nxt, key=lambda k: (cs[k].x ** 2 + cs[k].y ** 2, k))
        nn = nxt[m]
        while True:
            x, y = _tangent(cs[m], cs[nn], r)
            # the rest of the chain, nearest first in either direction
            fwd, back = [], []
            j, k = nxt[nn], prv[m]
            while j != m:
                fwd.append(j)
                j = nxt[j]
            while k != nn:
                back.append(k)
                k = prv[k]
            hit = None
            for j, k in zip(fwd, back, strict=True):
                if _overlap(cs[j], x, y, r):
                    hit = ("f", j)
                    break
                if _overlap(cs[k], x, y, r):
                    hit = ("b", k)
                    break
            if hit is None:
                break
            side, j = hit
            if side == "f":  # drop nn .. before j: the new circle will touch m and j
                k = nn
                while k != j:
                    after = nxt[k]
                    del nxt[k], prv[k]
                    k = after
                nxt[m], prv[j] = j, m
                nn = j
            else:  # drop after j .. m: the new circle will touch j and nn
                k = nxt[j]
                while k != nn:
                    after = nxt[k]
                    del nxt[k], prv[k]
                    k = after
                nxt[j], prv[nn] = nn, j
                m = j
        cs.append(Circle(x, y, r))
        nxt[m], prv[i], nxt[i], prv[nn] = i, m, nn, i
    return [(c.x, c.y) for c in cs]


def enclose(circles: list[Circle]) -> Circle:
    """A circle around ``circles``: close to the smallest, found by moving towards the farthest."""
    if not circles:
        return Circle(0.0, 0.0, 0.0)
    lo_x = min(c.x - c.r for c in circles)
    hi_x = max(c.x + c.r for c in circles)
    lo_y = min(c.y - c.r for c in circles)
    hi_y = max(c.y + c.r for c in circles)
    cx, cy = (lo_x + hi_x) / 2, (lo_y + hi_y) / 2

    def reach(px: float, py: float) -> tuple[float, Circle]:
        out, far = -1.0, circles[0]
        for c in circles:
            d = math.hypot(c.x - px, c.y - py) + c.r
            if d > out:
                out, far = d, c
        return out, far

    best_r, far = reach(cx, cy)
    best = (cx, cy)
    stale = 0
    for step in range(1, 40):
        d = math.hypot(far.x - cx, far.y - cy)
        if d < 1e-9 or stale >= 4:
            break
        move = min((best_r - (d + far.r)) / 2 + d / (step + 1), d)
        cx, cy = cx + (far.x - cx) / d * move, cy + (far.y - cy) / d * move
        r, far = reach(cx, cy)
        if r < best_r - 1e-9:
            best_r, best, stale = r, (cx, cy), 0
        else:
            stale += 1
    return Circle(best[0], best[1], best_r)


def _round(v: float) -> float:
    out = round(v, DIGITS)
    return 0.0 if out == 0 else out


def circle_layout(
    paths: list[str], ranks: list[float]
) -> tuple[list[tuple[float, float, float]], dict[str, tuple[float, float, float]]]:
    """(x, y, radius) of each file, in the order given, and of each directory (``""`` the root)."""
    max_rank = max(ranks, default=0.0)
    dirs: dict[str, _Dir] = {"": _Dir("")}

    def dir_of(path: str) -> _Dir:
        d = dirs.get(path)
        if d is None:
            d = dirs[path] = _Dir(path)
            parent = path.rsplit("/", 1)[0] if "/" in path else ""
            dir_of(parent).subdirs.append(path)
        return d

    for i, p in enumerate(paths):
        dir_of(p.rsplit("/", 1)[0] if "/" in p else "").files.append(i)
    radius = [file_radius(r, max_rank) for r in ranks]
    # each file's and directory's centre relative to its parent's centre, then made absolute
    local_file: dict[int, tuple[float, float]] = {}
    local_dir: dict[str, tuple[float, float]] = {}
    dir_r: dict[str, float] = {}
    for path in sorted(dirs, key=lambda p: (-p.count("/") if p else 1, p)):
        d = dirs[path]
        items: list[tuple[float, int, str]] = []  # (packing radius, 0 file / 1 dir, key)
        items += [(radius[i] + FILE_GAP, 0, paths[i]) for i in d.files]
        items += [(dir_r[s] + DIR_GAP, 1, s) for s in d.subdirs]
        order = sorted(range(len(items)), key=lambda k: (-items[k][0], items[k][2]))
        centres = pack([items[k][0] for k in order])
        placed = [Circle(x, y, items[k][0]) for k, (x, y) in zip(order, centres, strict=True)]
        hull = enclose(placed)
        dir_r[path] = hull.r + DIR_PAD
        file_index = {paths[i]: i for i in d.files}
        for k, c in zip(order, placed, strict=True):
            _, is_dir, key = items[k]
            at = (c.x - hull.x, c.y - hull.y)
            if is_dir:
                local_dir[key] = at
            else:
                local_file[file_index[key]] = at
    absolute: dict[str, tuple[float, float]] = {"": (0.0, 0.0)}
    for path in sorted(dirs, key=lambda p: (p.count("/") if p else -1, p)):
        if not path:
            continue
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        px, py = absolute[parent]
        lx, ly = local_dir[path]
        absolute[path] = (px + lx, py + ly)
    files = []
    for i, p in enumerate(paths):
        px, py = absolute[p.rsplit("/", 1)[0] if "/" in p else ""]
        lx, ly = local_file[i]
        files.append((_round(px + lx), _round(py + ly), _round(radius[i])))
    return files, {
        p: (_round(absolute[p][0]), _round(absolute[p][1]), _round(dir_r[p])) for p in dirs
    }
