"""What the sweeps of the rule learners (RIPPER and Ridor) share: presorted lists,
each numeric attribute's rows in order of value with their values, weights and
classes beside them so that a sweep reads memory in sequence, kept to a rule's
rows as the rule grows (for whole weights only, whose sums do not depend on the
order of the rows); and a bound on a gain's logarithm that spares computing it."""

import math

import numpy as np

from ..jit import njit

LOG2 = math.log(2.0)


@njit(cache=True)
def log2_above(part, whole):
    """A bound above log2(part / whole) for 0 < part <= whole, without a
    logarithm: ln x <= 2 (x - 1) / (x + 1) for x in (0, 1], and the margin of
    1e-12 is far above the rounding of either side, so that a gain bounded by it
    is bounded as computed."""
    return 2.0 * (part - whole) / ((part + whole) * LOG2) + 1e-12


@njit(cache=True)
def narrowed(srt_rows, srt_off, srt_x, srt_w, srt_y, ids, mark):
    """Each attribute's list (rows, values, weights, classes; offsets
    ``srt_off``) kept to the rows ``ids``, in its order; ``mark`` is scratch, left
    clear."""
    mark[ids] = True
    m = len(srt_off) - 1
    n = 1  # every entry is written, and the next one written over unless kept
    for a in range(m):
        n += min(len(ids), srt_off[a + 1] - srt_off[a])
    rows = np.empty(n, srt_rows.dtype)
    xs = np.empty(n)
    ws = np.empty(n)
    ys = np.empty(n, srt_y.dtype)
    off = np.zeros(m + 1, np.int64)
    c = 0
    for a in range(m):
        for o in range(srt_off[a], srt_off[a + 1]):
            r = srt_rows[o]
            rows[c], xs[c], ws[c], ys[c] = r, srt_x[o], srt_w[o], srt_y[o]
            c += mark[r]  # no branch: which rows are kept follows no pattern
        off[a + 1] = c
    mark[ids] = False
    return rows[:c], off, xs[:c], ws[:c], ys[:c]


@njit(cache=True)
def in_storage_order(ids, mark):
    """The distinct rows ``ids`` in increasing order, by a pass over the scratch
    mask (left clear) rather than a sort."""
    for r in ids:
        mark[r] = True
    out = np.empty(len(ids), ids.dtype)
    c = 0
    for r in range(len(mark)):
        if mark[r]:
            out[c] = r
            mark[r] = False
            c += 1
    return out
