"""What the sweeps of the rule learners (RIPPER and Ridor) share: presorted lists,
each numeric attribute's rows in order of value (and, for RIPPER, a sparse nominal
attribute's rows with a value) with their values (RIPPER's as 4-byte ranks:
``ranks_beside``), weights and classes beside them, so that a sweep reads memory
in sequence, kept to a rule's rows as the rule grows
(for whole weights only, whose sums do not depend on the order of the rows; where
every row weighs 1, as in a table without weights, the lists keep no weights, 8
bytes an entry less: ``unit_weights``, ``weight_at``, which C4.5's sorted entries
use too); and a bound on a gain's logarithm that spares computing it."""

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


def sorted_rows(X, attrs, lengths, rows):
    """For each attribute ``attrs[c]``, the first ``lengths[c]`` of ``rows`` in order
    of value (missing last, ties in the order of ``rows``): all of them, those with
    a value, or none. Returns the rows as 32-bit numbers, written as each attribute
    is sorted (no list of 64-bit ones is held), and each list's offsets."""
    off = np.cumsum([0] + list(lengths)).astype(np.int64)
    out = np.empty(off[-1], np.int32)
    for c, a in enumerate(attrs):
        if lengths[c]:
            order = np.argsort(X[a][rows], kind="stable")[:lengths[c]]
            out[off[c]:off[c + 1]] = rows[order]
    return out, off


@njit(cache=True)
def unit_weights(w):
    """Whether every row weighs 1, so that no weight is kept beside the lists."""
    for v in w:
        if v != 1.0:
            return False
    return True


@njit(cache=True)
def listed_weights(w, rows):
    """The weights to keep beside a presorted list of ``rows``: none (an empty
    array) where every row weighs 1, which ``weight_at`` then gives."""
    return np.empty(0) if unit_weights(w) else w[rows]


@njit(cache=True, inline="always")
def weight_at(ws, i):
    """The weight of entry ``i`` of a presorted list (``listed_weights``)."""
    return ws[i] if len(ws) else 1.0


@njit(cache=True)
def narrowed(srt_rows, srt_off, srt_x, srt_w, srt_y, ids, mark):
    """Each attribute's list (rows, values, weights (none where every row weighs
    1), classes; offsets ``srt_off``) kept to the rows ``ids``, in its order, in new
    arrays; ``mark`` is scratch, left clear."""
    return kept(srt_rows, srt_off, srt_x, srt_w, srt_y, ids, mark,
                *storage(srt_rows, srt_off, srt_x, len(srt_w) > 0, srt_y, len(ids)))


@njit(cache=True)
def storage(srt_rows, srt_off, srt_x, weighed, srt_y, n):
    """Arrays (rows, values (of ``srt_x``'s type), weights (none unless
    ``weighed``), classes) that the lists kept to ``n`` of their rows fit in, with
    the one spare entry ``kept`` writes."""
    size = 1
    for a in range(len(srt_off) - 1):
        size += min(n, srt_off[a + 1] - srt_off[a])
    return (np.empty(size, srt_rows.dtype), np.empty(size, srt_x.dtype),
            np.empty(size if weighed else 0), np.empty(size, srt_y.dtype))


@njit(cache=True)
def rows_kept(srt_rows, srt_off, ids, mark, rows):
    """The lists of rows alone (``srt_rows``, offsets ``srt_off``) kept to the rows
    ``ids``, written to the front of ``rows`` (one longer than what is kept, or
    ``srt_rows`` itself); a view of what is kept, and its offsets."""
    mark[ids] = True
    off = np.zeros(len(srt_off), np.int64)
    c = 0
    for a in range(len(srt_off) - 1):
        for o in range(srt_off[a], srt_off[a + 1]):
            r = srt_rows[o]
            rows[c] = r
            c += mark[r]
        off[a + 1] = c
    mark[ids] = False
    return rows[:c], off


@njit(cache=True)
def kept(srt_rows, srt_off, srt_x, srt_w, srt_y, ids, mark, rows, xs, ws, ys):
    """The lists kept to the rows ``ids``, in order, written to the front of
    ``rows``, ``xs``, ``ws`` and ``ys`` (``storage`` for as many rows, or the lists
    themselves: an entry only moves towards the front); views of what is kept,
    and their offsets. ``mark`` is scratch, left clear."""
    mark[ids] = True
    m = len(srt_off) - 1
    weighed = len(srt_w) > 0
    off = np.zeros(m + 1, np.int64)
    c = 0  # every entry is written, and the next one written over unless kept
    for a in range(m):
        for o in range(srt_off[a], srt_off[a + 1]):
            r = srt_rows[o]
            rows[c], xs[c], ys[c] = r, srt_x[o], srt_y[o]
            if weighed:
                ws[c] = srt_w[o]
            c += mark[r]  # no branch: which rows are kept follows no pattern
        off[a + 1] = c
    mark[ids] = False
    return rows[:c], off, xs[:c], ws[:c], ys[:c]


@njit(cache=True)
def ranks_beside(X, nominal, srt_rows, srt_off):
    """What a sweep reads of each attribute's presorted list (``sorted_rows``), 4
    bytes an entry where the values would take 8: a numeric value's rank among the
    list's distinct values (equal values, -0.0 and 0.0 too, share one; missing
    -1), which orders and ties entries as their values do, the value itself being
    read from ``X`` where a cut is recorded; a nominal value's code."""
    out = np.empty(len(srt_rows), np.int32)
    for a in range(len(srt_off) - 1):
        lo, hi = srt_off[a], srt_off[a + 1]
        rank = -1
        last = np.nan
        for o in range(lo, hi):
            x = X[a, srt_rows[o]]
            if np.isnan(x):
                out[o] = -1
            elif nominal[a]:
                out[o] = np.int32(x)
            else:
                if rank < 0 or x != last:
                    rank += 1
                    last = x
                out[o] = rank
    return out


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
