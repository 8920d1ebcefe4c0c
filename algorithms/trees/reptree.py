"""REPTree (the book's section 6.1, "reduced-error pruning"), grown and pruned as the
reference's REPTree does it.

The rows with a class are shuffled with ``java.util.Random(seed)`` and (nominal
class) stratified into ``folds`` folds; fold 0 is held out for pruning and the rest,
shuffled again, grows the tree (all rows when ``pruned`` is false).

Growth: every attribute keeps its node's rows sorted by its value (missing values
last), with a weight each. A node is a leaf when its weight is below twice
``min_leaf``, its class is pure (nominal) or its variance is below ``min_variance``
times the training variance (numeric), or ``max_depth`` is reached. Otherwise each
attribute is scored: information gain of its values or of its best binary cut
(nominal class), reduction of the sum of squared errors (numeric class); rows
missing the attribute are spread over the branches in proportion to their weight.
The first attribute of largest score splits the node if the score is above 1e-6
and at least two branches hold ``min_leaf`` weight. A cut lies midway between two
neighbouring values; a row goes left when its value is below the cut.

Pruning: the held-out rows are passed down the tree (a missing value spread by
the branch proportions); a subtree whose held-out error is not below that of its
root as a leaf becomes that leaf. Then every node's class distribution (or mean)
takes in its held-out rows too.

Sums run in the reference's order (rows in each attribute's sorted order, from
the first row on), so every figure comes out to the same double; only where every
sum is of whole numbers, exact in any order, may equal values come in another.

The growth is one kernel (``_grow``). A node holds, for every attribute, its rows
in that attribute's order with their values, targets and weights beside them, so
that scoring reads memory in order; a split deals them, in place, to its
children's columns, and a child that will be a leaf gets none. The kernel first
grows the wide nodes, each scored and dealt on two threads, and hands back the
narrower nodes under them; each of those is then the root of a subtree grown by
the same kernel on one thread, two side by side, in its own columns of the rows.
While the class weights are whole numbers, a sweep keeps counts and looks
``x log x`` up in a table of the same doubles.
"""

import math
import queue

import numpy as np
from numba.typed import List

from .. import memory, progress, stop
from ..classes import code_type
from ..dataset import missing_in, stacked, whole_weights
from ..evaluation import check_folds, randomize, stratify, test_cv, train_cv
from ..halt import halted
from ..javautil import JavaRandom, rows_in_order
from ..jit import PRANGE_ONLY, frozen, njit, prange
from ..sorting import value_order

LOG2 = math.log(2.0)
SMALL = 1e-6  # the reference's tolerance for equal and greater


# ------------------------------------------------------------------ scores

@njit(cache=True)
def _ln(x):
    return 0.0 if x <= 0 else x * math.log(x)


@njit(cache=True)
def _sum(a):
    s = 0.0
    for x in a:
        s += x
    return s


@njit(cache=True)
def xlogx_table(n):
    """``_ln`` of the whole numbers 0..n: the same doubles, looked up. A node's
    class weights are whole numbers while every row weighs one, and then a sweep
    over a numeric attribute's values costs lookups instead of logarithms."""
    out = np.empty(n + 1)
    for c in range(n + 1):
        out[c] = _ln(float(c))
    return out


@njit(cache=True)
def _entropy_over_columns(dist):
    r = 0.0
    total = 0.0
    for j in range(dist.shape[1]):
        col = 0.0
        for i in range(dist.shape[0]):
            col += dist[i, j]
        r -= _ln(col)
        total += col
    if abs(total) < SMALL:
        return 0.0
    return (r + _ln(total)) / (total * LOG2)


@njit(cache=True)
def _entropy_on_rows(dist):
    r = 0.0
    total = 0.0
    for i in range(dist.shape[0]):
        row = 0.0
        for j in range(dist.shape[1]):
            r += _ln(dist[i, j])
            row += dist[i, j]
        r -= _ln(row)
        total += row
    if abs(total) < SMALL:
        return 0.0
    return -r / (total * LOG2)


@njit(cache=True)
def _gain(dist, prior):
    return prior - _entropy_on_rows(dist)


@njit(cache=True)
def _proportions(weights, p):
    """Branch ``weights`` normalised into ``p`` (all equal when there is no
    weight)."""
    s = _sum(weights)
    for j in range(len(p)):
        p[j] = weights[j] / s if s > 0 else 1.0 / len(p)


@njit(cache=True, inline="always")
def _squared_error(s, sq, w):
    """The sum of squared errors of a branch of sum ``s``, sum of squares ``sq``
    and weight ``w`` (none without weight)."""
    return sq - s * s / w if w > 0 else 0.0


@njit(cache=True)
def _variance(s, sq, w):
    v = 0.0
    for i in range(len(s)):
        v += _squared_error(s[i], sq[i], w[i])
    return v


# ------------------------------------------------------------------ splits

@njit(cache=True)
def _class_weights_by_value(x, y, w, dist):
    """Class weights per value of a nominal attribute into ``dist``, up to the
    first missing value: (cut (none), where the missing values start)."""
    m = len(x)
    dist[:] = 0.0
    i = 0
    while i < m and not np.isnan(x[i]):
        dist[int(x[i]), int(y[i])] += w[i]
        i += 1
    return np.nan, i


@njit(cache=True)
def _best_cut_by_gain(x, y, w, dist, cur):
    """The cut of a numeric attribute of largest information gain: its class
    weights below and above into ``dist`` (``cur``: the sweep's, the same shape);
    (cut, where the missing values start). Apart from ``_class_weights_by_value``:
    sharing a kernel, the two sweeps ran 4x slower."""
    m = len(x)
    cut = np.nan
    cur[:] = 0.0
    dist[:] = 0.0
    for j in range(m):
        if np.isnan(x[j]):
            break
        cur[1, int(y[j])] += w[j]
    prior = _entropy_over_columns(cur)
    dist[1] = cur[1]
    split = x[0] if m > 0 else np.nan
    best = -1.7976931348623157e308
    i = 0
    while i < m:
        v = x[i]
        if np.isnan(v):
            break
        if v > split:
            g = _gain(cur, prior)
            if g > best:
                best = g
                cut = (v + split) / 2.0
                if cut <= split:
                    cut = v
                dist[:, :] = cur
        split = v
        cur[0, int(y[i])] += w[i]
        cur[1, int(y[i])] -= w[i]
        i += 1
    return cut, i


@njit(cache=True)
def _whole(x, w, limit):
    """Whether the weights of the known values of ``x`` are whole numbers adding
    up to at most ``limit``."""
    total = 0.0
    for j in range(len(x)):
        if np.isnan(x[j]):
            break
        if w[j] != math.floor(w[j]):
            return False
        total += w[j]
    return total <= limit


@njit(cache=True, inline="always")  # called for every cut: a call costs as much
def _counts_sum(cnt, table):
    """The sum that ``_entropy_on_rows`` of whole class weights held as counts
    divides: the same looked-up terms, added in the same order."""
    r = 0.0
    for i in range(cnt.shape[0]):
        row = 0
        for j in range(cnt.shape[1]):
            r += table[cnt[i, j]]
            row += cnt[i, j]
        r -= table[row]
    return r


@njit(cache=True)
def _best_cut_by_counts(x, y, w, k, table, node, dist, cnt):
    """``_best_cut_by_gain`` when the weights are whole numbers that ``table``
    covers: the sweep keeps counts (in ``cnt``, two rows of ``k``), and each cut's
    entropy is lookups only. Two kernels rather than one over either kind of
    array: one ran at half the speed. ``node``: the node's class weights when every
    row has a value and a whole weight (then the sweep's totals, without a pass to
    count them), else none."""
    m = len(x)
    cut = np.nan
    cnt[:] = 0
    dist[:] = 0.0
    if len(node) == k:
        for c in range(k):
            cnt[1, c] = int(node[c])
    else:
        for j in range(m):
            if np.isnan(x[j]):
                break
            cnt[1, int(y[j])] += int(w[j])
    total = 0.0
    for c in range(k):
        dist[1, c] = cnt[1, c]
        total += cnt[1, c]
    prior = _entropy_over_columns(dist)
    scale = total * LOG2
    split = x[0] if m > 0 else np.nan
    best = -1.7976931348623157e308
    # a cut's gain, prior + r / scale (0 entropy when there is no weight), is a
    # rounded function of its sum r that never falls as r rises: a cut whose r is
    # not above that of the best cut so far cannot have a larger gain, and is
    # passed over without the division
    best_r = -np.inf
    i = 0
    while i < m:
        v = x[i]
        if np.isnan(v):
            break
        if v > split:
            r = _counts_sum(cnt, table)
            g = prior - (0.0 if abs(total) < SMALL else -r / scale) if r > best_r else best
            if g > best:
                best, best_r = g, r
                cut = (v + split) / 2.0
                if cut <= split:
                    cut = v
                for b in range(2):
                    for c in range(k):
                        dist[b, c] = cnt[b, c]
        split = v
        c = int(y[i])
        cnt[0, c] += int(w[i])
        cnt[1, c] -= int(w[i])
        i += 1
    return cut, i


@njit(cache=True)
def split_nominal_class(x, y, w, nominal, n_values, k, table, node, dist, props, weights,
                        cnt, cur):
    """One attribute's split of a node for a nominal class: (gain, cut point), and
    into the first rows of ``dist``, ``props`` and ``weights``, one a branch, the
    class weights, proportion and weight of each branch; ``cnt`` and ``cur``:
    scratch, two rows of ``k`` counts and of ``k`` weights. Nothing is allocated: a
    node's scoring was mostly allocation. ``x``,
    ``y``, ``w``: the node's values, class codes and weights in the attribute's
    order, missing values last; ``table``: ``xlogx_table``; ``node``: the node's
    class weights where no row of the growth lacks a value and every weight is
    whole, else none."""
    b = n_values if nominal else 2
    dist, props, weights = dist[:b], props[:b], weights[:b]
    if nominal:
        cut, i = _class_weights_by_value(x, y, w, dist)
    elif len(node) == k and _sum(node) <= len(table) - 1:
        cut, i = _best_cut_by_counts(x, y, w, k, table, node, dist, cnt)
    elif _whole(x, w, len(table) - 1):
        cut, i = _best_cut_by_counts(x, y, w, k, table, node[:0], dist, cnt)
    else:
        cut, i = _best_cut_by_gain(x, y, w, dist, cur)
    for c in range(b):
        weights[c] = _sum(dist[c])
    _proportions(weights, props)
    for j in range(i, len(x)):  # the rows missing the attribute, spread
        for c in range(b):
            dist[c, int(y[j])] += props[c] * w[j]
    for c in range(b):
        weights[c] = _sum(dist[c])
    return _gain(dist, _entropy_over_columns(dist)), cut


@njit(cache=True)
def _sums_by_value(x, y, w, s, sq, sw):
    """Sums, sums of squares and weights of the target per value of a nominal
    attribute into ``s``, ``sq`` and ``sw``, up to the first missing value: (cut
    (none), where those start, and the three totals)."""
    s[:] = 0.0
    sq[:] = 0.0
    sw[:] = 0.0
    i = 0
    while i < len(x) and not np.isnan(x[i]):
        v = int(x[i])
        t = y[i]
        s[v] += t * w[i]
        sq[v] += t * t * w[i]
        sw[v] += w[i]
        i += 1
    return np.nan, i, _sum(s), _sum(sq), _sum(sw)


@njit(cache=True)
def _best_cut_by_variance(x, y, w, s, sq, sw):
    """The cut of a numeric attribute of least sum of squared errors: the target's
    sums, sums of squares and weights below and above it into ``s``, ``sq`` and
    ``sw`` (two each); (the cut, where the missing values start, and the three
    totals of the known values). The sweep's sums are held in scalars, not arrays:
    a sum stored and read back at every row ran at a third of the speed."""
    m = len(x)
    cut = np.nan
    s0 = sq0 = w0 = s1 = sq1 = w1 = 0.0  # below (0) and above (1) the cut swept
    for j in range(m):
        if np.isnan(x[j]):
            break
        t = y[j]
        s1 += t * w[j]
        sq1 += t * t * w[j]
        w1 += w[j]
    total, total_sq, total_w = s1, sq1, w1
    s[0], sq[0], sw[0], s[1], sq[1], sw[1] = 0.0, 0.0, 0.0, s1, sq1, w1
    split = x[0] if m > 0 else np.nan
    best = 1.7976931348623157e308
    i = 0
    while i < m:
        v = x[i]
        if np.isnan(v):
            break
        if v > split:
            var = 0.0  # _variance of the two sides
            var += _squared_error(s0, sq0, w0)
            var += _squared_error(s1, sq1, w1)
            if var < best:
                best = var
                cut = (v + split) / 2.0
                if cut <= split:
                    cut = v
                s[0], sq[0], sw[0], s[1], sq[1], sw[1] = s0, sq0, w0, s1, sq1, w1
        split = v
        t = y[i] * w[i]
        tt = y[i] * t
        s0 += t
        sq0 += tt
        w0 += w[i]
        s1 -= t
        sq1 -= tt
        w1 -= w[i]
        i += 1
    return cut, i, total, total_sq, total_w


@njit(cache=True)
def split_numeric_class(x, y, w, nominal, n_values, dist, props, weights, sums):
    """One attribute's split of a node for a numeric class: (reduction of the sum
    of squared errors, cut point), and into the first rows of ``dist``, ``props``
    and ``weights``, one a branch, the mean (first column), proportion and weight
    of each branch; ``sums``: scratch, two rows. Nothing is allocated (see
    ``split_nominal_class``)."""
    b = n_values if nominal else 2
    s, sq, sw, props = sums[0, :b], sums[1, :b], weights[:b], props[:b]
    if nominal:
        cut, i, total, total_sq, total_w = _sums_by_value(x, y, w, s, sq, sw)
    else:
        cut, i, total, total_sq, total_w = _best_cut_by_variance(x, y, w, s, sq, sw)
    _proportions(sw, props)
    for j in range(i, len(x)):
        t = y[j]
        for c in range(b):
            s[c] += props[c] * t * w[j]
            sq[c] += props[c] * t * t * w[j]
            sw[c] += props[c] * w[j]
        total += t * w[j]
        total_sq += t * t * w[j]
        total_w += w[j]
    for c in range(b):
        dist[c, 0] = s[c] / sw[c] if sw[c] > 0 else total / total_w
    return (total_sq - total * total / total_w) - _variance(s, sq, sw), cut


def _score_impl(val, yv, w, lo, hi, nominal, n_values, k, table, node, gains, cuts,
                dists, props, weights, tallies, sums):
    """Every attribute's split of a node (columns ``lo:hi`` of ``val``, ``yv``, ``w``:
    the node's values, targets and weights in each attribute's order, a row each),
    into ``gains``, ``cuts`` and, per branch, ``dists`` (class weights or mean),
    ``props`` and ``weights``; ``node``: see ``split_nominal_class``. The sweeps'
    scratch, per attribute: ``tallies`` (a nominal class's counts, two rows) and
    ``sums`` (a numeric class's sums, or a nominal class's weights, two rows)."""
    for t in prange(val.shape[0]):
        if k > 0:
            gains[t], cuts[t] = split_nominal_class(
                val[t, lo:hi], yv[t, lo:hi], w[t, lo:hi], nominal[t], n_values[t], k, table,
                node, dists[t], props[t], weights[t], tallies[t], sums[t])
        else:
            gains[t], cuts[t] = split_numeric_class(
                val[t, lo:hi], yv[t, lo:hi], w[t, lo:hi], nominal[t], n_values[t], dists[t],
                props[t], weights[t], sums[t])


# threads pay off only on large nodes; not cached, as _grow calls it (see jit)
_score_parallel = njit(cache=False, parallel=PRANGE_ONLY)(_score_impl)
_score_serial = njit(cache=True)(_score_impl)
# a node of at least this many cells (attributes times rows) is scored and dealt on
# two threads; a narrower one is the root of a subtree grown by one thread, beside
# others (see grow). NO_CELLS: more than any node has
SUBTREE_CELLS = 200_000
NO_CELLS = 2**62
SHARED = 2**60  # the columns held of a part that subtrees share: more than any has


@njit(cache=True)
def _spread(r, x, t, wt, props, keep, head, f0, at, da, ea, ga, ha, sra, sva, sya, swa):
    """A row missing the split's value, to every branch kept of positive share (the
    head's at ``f0``, another's at ``at[d]`` of the scratch); the head's next place."""
    for d in range(len(props)):
        if not keep[d] or props[d] <= 0:
            continue
        if d == head:
            da[f0], ea[f0], ga[f0], ha[f0] = r, x, t, props[d] * wt
            f0 += 1
        else:
            f = at[d]
            sra[f], sva[f], sya[f], swa[f] = r, x, t, props[d] * wt
            at[d] = f + 1
    return f0


@njit(cache=True)
def _deal_two(ra, va, ya, wa, lo, hi, props, keep, head, branch_of, f0, at, step,
              da, ea, ga, ha, sra, sva, sya, swa):
    """``_deal_impl``'s rows of one attribute for a split in two, the other
    branch's place in the scratch ``at[other]`` moving on by ``step[other]``,
    held in a scalar: about 1.5 times as fast as ``_deal_many``. The head's end."""
    other = 1 - head
    f1, step1 = at[other], step[other]
    for i in range(lo, hi):
        r = ra[i]
        c = branch_of[r]
        x, t, wt = va[i], ya[i], wa[i]
        if c < 0:
            at[other] = f1
            f0 = _spread(r, x, t, wt, props, keep, head, f0, at, da, ea, ga, ha, sra, sva,
                         sya, swa)
            f1 = at[other]
            continue
        da[f0], ea[f0], ga[f0], ha[f0] = r, x, t, wt
        sra[f1], sva[f1], sya[f1], swa[f1] = r, x, t, wt
        h = c == head
        f0 += h
        f1 += step1 - step1 * h
    return f0


@njit(cache=True)
def _deal_many(ra, va, ya, wa, lo, hi, props, keep, head, branch_of, f0, at, step,
               da, ea, ga, ha, sra, sva, sya, swa):
    """``_deal_two`` for any number of branches, each one's place in ``at``."""
    for i in range(lo, hi):
        r = ra[i]
        c = branch_of[r]
        x, t, wt = va[i], ya[i], wa[i]
        if c < 0:
            f0 = _spread(r, x, t, wt, props, keep, head, f0, at, da, ea, ga, ha, sra, sva,
                         sya, swa)
            continue
        da[f0], ea[f0], ga[f0], ha[f0] = r, x, t, wt
        f0 += c == head
        f = at[c]
        sra[f], sva[f], sya[f], swa[f] = r, x, t, wt
        at[c] = f + step[c]
    return f0


def _deal_impl(rid, val, yv, w, lo, hi, props, keep, head, slot, stay, rest, branch_of,
               dr, dv, dy, dw, sr, sv, sy, sw):
    """Each attribute's rows ``lo:hi`` dealt, in order, to the branches that
    ``keep`` marks: branch ``head`` in place, from column ``lo`` on, the others
    through the scratch rows ``sr``, ``sv``, ``sy``, ``sw`` (a row per worker, each
    on attributes of its own) from column ``slot[c]`` of branch ``c`` on. Of the
    ``rest`` columns filled there, the first ``stay`` then follow the head in place
    and the others go to ``dr``, ``dv``, ``dy``, ``dw``. The head's place never
    passes the row read. Every row is written to both the head and the scratch,
    and only the place it belongs to moves on: a branch on its branch would be
    mispredicted half the time."""
    p, workers = rid.shape[0], sr.shape[0]
    step = np.zeros(len(props), np.int64)  # 1 for a branch kept in the scratch
    for c in range(len(props)):
        step[c] = keep[c] and c != head
    for k in prange(workers):
        at = np.empty_like(slot)  # each branch's next place, an attribute at a time
        for a in range(k, p, workers):
            ra, va, ya, wa = rid[a], val[a], yv[a], w[a]  # rows of their own: faster
            sra, sva, sya, swa = sr[k], sv[k], sy[k], sw[k]
            at[:] = slot
            out = (ra, va, ya, wa, sra, sva, sya, swa)
            if len(props) == 2:
                f0 = _deal_two(ra, va, ya, wa, lo, hi, props, keep, head, branch_of, lo, at,
                               step, *out)
            else:
                f0 = _deal_many(ra, va, ya, wa, lo, hi, props, keep, head, branch_of, lo,
                                at, step, *out)
            for j in range(stay):
                ra[f0 + j], va[f0 + j], ya[f0 + j], wa[f0 + j] = sra[j], sva[j], sya[j], \
                    swa[j]
            if rest > stay:
                da, ea, ga, ha = dr[a], dv[a], dy[a], dw[a]
                for j in range(stay, rest):
                    f = j - stay
                    da[f], ea[f], ga[f], ha[f] = sra[j], sva[j], sya[j], swa[j]


# threads pay off only on large nodes; not cached, as _grow calls it (see jit)
_deal_parallel = njit(cache=False, parallel=PRANGE_ONLY)(_deal_impl)
_deal_serial = njit(cache=True)(_deal_impl)


@njit(cache=True)
def _branch_rows(rid, val, lo, hi, at, nominal, cut, props, branch_of):
    """Each row's branch in ``branch_of`` (-1: missing), and each branch's count of
    rows (a missing value counts in every branch of positive proportion)."""
    b = len(props)
    counts = np.zeros(b, np.int64)
    for i in range(lo, hi):
        v = val[at, i]
        if np.isnan(v):
            branch_of[rid[at, i]] = -1
            for c in range(b):
                if props[c] > 0:
                    counts[c] += 1
        else:
            c = int(v) if nominal else (0 if v < cut else 1)
            branch_of[rid[at, i]] = c
            counts[c] += 1
    return counts


COMPACT_COLUMNS = 4096  # a part narrower than this is left as it is until freed


@njit(cache=True)
def _move_columns(rid, val, yv, wts, lo, hi, to_r, to_v, to_y, to_w, at):
    """Columns ``lo:hi`` of the four arrays of a part to columns from ``at`` of
    ``to_...``: other arrays, or the same ones with ``at <= lo`` (copied left to
    right, each column read before it is written over)."""
    for j in range(rid.shape[0]):
        for c in range(hi - lo):
            to_r[j, at + c] = rid[j, lo + c]
            to_v[j, at + c] = val[j, lo + c]
            to_y[j, at + c] = yv[j, lo + c]
            to_w[j, at + c] = wts[j, lo + c]


@njit(cache=True)
def _compact(parts_r, parts_v, parts_y, parts_w, live, part, stack, deferred):
    """The columns of ``part`` that nodes on the ``stack`` or ``deferred`` hold (rows
    [part, lo, hi, ...]), moved to a new part of their size; ``part`` is left
    holding none."""
    p, n = parts_r[part].shape[0], live[part]
    nr, nv = np.empty((p, n), np.int32), np.empty((p, n))
    ny, nw = np.empty((p, n), parts_y[part].dtype), np.empty((p, n))
    at = np.int64(0)  # typed: a literal would compile _move_columns once more
    for held in (stack, deferred):
        for t in range(held.shape[0]):
            if held[t, 0] != part:
                continue
            lo, hi = held[t, 1], held[t, 2]
            _move_columns(parts_r[part], parts_v[part], parts_y[part], parts_w[part],
                          lo, hi, nr, nv, ny, nw, at)
            held[t, 0], held[t, 1], held[t, 2] = len(parts_r), at, at + hi - lo
            at += hi - lo
    parts_r.append(nr)
    parts_v.append(nv)
    parts_y.append(ny)
    parts_w.append(nw)
    live.append(n)
    live[part] = 0


@njit(cache=True)
def _leaf(total_w, probs, depth, k, min_leaf, max_depth):
    """Whether a node of this weight, class weights and depth is a leaf, whatever
    its rows (for a numeric target, its variance decides too)."""
    if total_w < 2 * min_leaf or (max_depth >= 0 and depth >= max_depth):
        return True
    return k > 0 and abs(probs[_argmax_first(probs)] - _sum(probs)) < SMALL


# ------------------------------------------------------------------ the tree

class Grown:
    """The grown tree's nodes, numbered as they were made (a node's children are
    consecutive, after it), as arrays: attribute column (-1 leaf), cut, first child
    and number of children, parent, branch proportions, class probabilities or mean
    (``has``: false for an empty node, which has none), and training distribution
    (nominal: class weights; numeric: [sum of squared errors, weight])."""

    def __init__(self, attr, cut, first, kids, parent, props, probs, has, dist):
        self.attr, self.cut, self.first, self.kids, self.parent = attr, cut, first, kids, parent
        self.props, self.probs, self.has, self.dist = props, probs, has, dist

    @property
    def n(self):
        return len(self.attr)

    def children(self, node):
        return range(self.first[node], self.first[node] + self.kids[node]) \
            if self.attr[node] >= 0 else range(0)


@njit(cache=True)
def _argmax_first(a):
    """numpy's argmax: the first NaN, else the first largest."""
    best = 0
    for i in range(len(a)):
        if np.isnan(a[i]):
            return i
        if a[i] > a[best]:
            best = i
    return best


@njit(cache=True)
def _more(a, n):
    """``a`` with room for ``n`` rows (doubled), the new rows as its first."""
    if a.shape[0] >= n:
        return a
    out = np.empty((max(n, 2 * a.shape[0]),) + a.shape[1:], a.dtype)
    out[:a.shape[0]] = a[:a.shape[0]]
    out[a.shape[0]:] = a[0]
    return out


@njit(cache=True)
def _grow(parts_r, parts_v, parts_y, parts_w, lo0, hi0, depth0, held0, branch_of, nominal,
          n_values, k, width, min_leaf, min_var, max_depth, root_probs, root_w, table,
          plain, compact, wide_cells, defer, threads, halt, count):
    """The tree grown depth first from the node of columns ``lo0:hi0`` of the
    typed lists' first arrays (``presort``'s, which the growth frees once its
    ``held0`` columns are done with), at depth ``depth0``, until ``halt[0]`` is
    set; ``count[0]`` counts the nodes; ``branch_of``: a scratch cell per row;
    ``plain``: no row lacks a value and every weight is whole (then a node's class
    weights are the totals of every attribute's sweep).

    Returns the arrays of ``Grown`` (attributes as rows of the arrays), then the
    nodes left to grow: with ``defer``, a node narrower than ``wide_cells`` (its
    rows times the attributes) is not grown but handed back, as a row of [part, lo,
    hi, depth, node] and one of [weight, class weights or mean], its rows kept.
    A node at least that wide is scored and dealt on two threads (``threads``: false
    when none is, see ``jit.threads``).

    A node's rows are columns of the presorted arrays, and its children's are
    dealt in place of them, so the growth holds the rows once; only the branches
    that no longer fit, when rows missing the value go to several, need arrays of
    their own. A part of at least ``compact`` columns is moved to a smaller one
    once less than half of it is waiting on the stack or handed back (never one
    whose ``held0`` is ``SHARED``: other subtrees read it too)."""
    p = parts_r[0].shape[0]
    pw = k if k > 0 else 1
    cap = 64
    attr = np.full(cap, -1, np.int64)
    cut = np.full(cap, np.nan)
    first = np.full(cap, -1, np.int64)
    kids = np.zeros(cap, np.int64)
    parent = np.full(cap, -1, np.int64)
    props = np.zeros((cap, width))
    probs = np.zeros((cap, pw))
    has = np.zeros(cap, np.bool_)
    dist = np.zeros((cap, k if k > 0 else 2))
    n_nodes = 1
    # the rows: nodes are columns lo:hi of a part, their children dealt in place;
    # branches past the node's room (rows missing the value are copied) go to a new
    # part. ``live``: each part's columns that nodes on the stack hold; a
    # part is freed at none, and moved to one of that size when it is less than
    # half full, so that the parts never hold more than twice the rows waiting
    live = List([held0])
    empty_r = np.empty((0, 0), np.int32)
    empty_f = np.empty((0, 0))
    ytype = parts_y[0].dtype  # narrow class codes, or numbers (see grow)
    empty_y = np.empty((0, 0), ytype)
    # where a split's branches after the first wait, a row per worker, grown as needed
    scratch_r = np.empty((2, 0), np.int32)
    scratch_v, scratch_y, scratch_w = np.empty((2, 0)), np.empty((2, 0), ytype), \
        np.empty((2, 0))
    # the stack: (part, columns lo:hi of it, weight, class weights or mean, depth, node)
    # as arrays, grown as needed: [part, lo, hi, depth, node] and [weight, dist...]
    s_int = np.zeros((64, 5), np.int64)
    s_float = np.zeros((64, 1 + pw))
    s_int[0, 1], s_int[0, 2], s_int[0, 3] = lo0, hi0, depth0
    s_float[0, 0] = root_w
    s_float[0, 1:] = root_probs
    top = 1
    d_int = np.zeros((16, 5), np.int64)  # the nodes handed back, as the stack's rows
    d_float = np.zeros((16, 1 + pw))
    n_deferred = 0
    gains = np.zeros(p)
    cuts = np.zeros(p)
    dists = np.zeros((p, width, pw))
    sprops = np.zeros((p, width))
    sweights = np.zeros((p, width))
    # the sweeps' scratch (see _score_impl): a nominal class's counts, and its
    # weights or a numeric class's sums
    tallies = np.zeros((p, 2, pw if k > 0 else 0), np.int64)
    sums = np.zeros((p, 2, width if k == 0 else pw))
    while top > 0 and not halted(halt):
        top -= 1
        part, lo, hi, depth, node = s_int[top]
        wide = p * (hi - lo) >= wide_cells
        if defer and part >= 0 and hi > lo and not wide:  # its rows stay live
            d_int, d_float = _more(d_int, n_deferred + 1), _more(d_float, n_deferred + 1)
            d_int[n_deferred] = s_int[top]
            d_float[n_deferred] = s_float[top]
            n_deferred += 1
            continue
        count[0] += 1  # (from two threads, a count may be lost: it only reports)
        total_w, nprobs = s_float[top, 0], s_float[top, 1:].copy()
        # no part: a child known to be a leaf, whose rows its parent did not keep
        rid = parts_r[max(part, 0)]
        val = parts_v[max(part, 0)]
        yv = parts_y[max(part, 0)]
        wts = parts_w[max(part, 0)]
        best = -1
        if hi > lo:
            prior = _sse(yv[0, lo:hi], wts[0, lo:hi]) if k == 0 else 0.0
            leaf = _leaf(total_w, nprobs, depth, k, min_leaf, max_depth)
            if k == 0:
                leaf = leaf or prior / total_w < min_var
            if not leaf:
                known = nprobs if plain and k > 0 else nprobs[:0]
                if threads and wide:
                    _score_parallel(val, yv, wts, lo, hi, nominal, n_values, k, table, known,
                                    gains, cuts, dists, sprops, sweights, tallies, sums)
                else:
                    _score_serial(val, yv, wts, lo, hi, nominal, n_values, k, table, known,
                                  gains, cuts, dists, sprops, sweights, tallies, sums)
                a = _argmax_first(gains)
                if gains[a] > SMALL:
                    b = n_values[a] if nominal[a] else 2
                    heavy = 0
                    for c in range(b):
                        heavy += sweights[a, c] >= min_leaf
                    if heavy > 1:
                        best = a
            has[node] = True
            if k > 0:
                dist[node] = nprobs
                total = _sum(nprobs)
                for j in range(k):
                    probs[node, j] = nprobs[j] / total
            else:
                dist[node, 0] = prior
                dist[node, 1] = total_w
                probs[node, 0] = nprobs[0]
        if best >= 0:
            b = n_values[best] if nominal[best] else 2
            attr[node] = best
            cut[node] = cuts[best]
            props[node, :b] = sprops[best, :b]
            keep = np.ones(b, np.bool_)
            if k > 0:  # no rows for a child that will be a leaf
                for c in range(b):
                    keep[c] = not _leaf(sweights[best, c], dists[best, c], depth + 1, k,
                                        min_leaf, max_depth)
            share = sprops[best, :b].copy()
            counts = _branch_rows(rid, val, lo, hi, best, nominal[best], cuts[best], share,
                                  branch_of)
            # the largest branch kept goes first, in place of the node's rows; the
            # others' rows wait in the scratch, then follow it in branch order while
            # they fit (a row missing the value goes to several branches), and those
            # that do not go to a part of their own
            head = -1
            for c in range(b):
                if keep[c] and counts[c] > 0 and (head < 0 or counts[c] > counts[head]):
                    head = c
            into = np.full(b, part, np.int64)  # each branch's part and first column
            start = np.full(b, lo, np.int64)
            if head >= 0:
                slot = np.zeros(b, np.int64)  # each branch's place in the scratch
                placed = ~keep
                placed[head] = True
                end, stay, moved = lo + counts[head], 0, 0
                for c in range(b):
                    if not placed[c] and end + counts[c] <= hi:
                        start[c], slot[c], placed[c] = end, stay, True
                        end += counts[c]
                        stay += counts[c]
                for c in range(b):
                    if not placed[c]:
                        into[c], start[c], slot[c] = len(parts_r), moved, stay + moved
                        moved += counts[c]
                rest = stay + moved
                for c in range(b):  # rows of a branch not kept: past the end
                    if not keep[c] or c == head:
                        slot[c] = rest
                away = (empty_r, empty_f, empty_y, empty_f)
                if moved > 0:
                    away = (np.empty((p, moved), np.int32), np.empty((p, moved)),
                            np.empty((p, moved), ytype), np.empty((p, moved)))
                    parts_r.append(away[0])
                    parts_v.append(away[1])
                    parts_y.append(away[2])
                    parts_w.append(away[3])
                    live.append(0)
                if rest >= scratch_v.shape[1]:  # and a slot past the end
                    scratch_r = np.empty((2, rest + 1), np.int32)
                    scratch_v, scratch_y, scratch_w = np.empty((2, rest + 1)), \
                        np.empty((2, rest + 1), ytype), np.empty((2, rest + 1))
                w2 = 2 if wide else 1
                args = (rid, val, yv, wts, lo, hi, share, keep, head, slot, stay, rest,
                        branch_of, *away, scratch_r[:w2], scratch_v[:w2], scratch_y[:w2],
                        scratch_w[:w2])
                if threads and wide:
                    _deal_parallel(*args)
                else:
                    _deal_serial(*args)
            need = n_nodes + b
            attr, cut, first, kids = _more(attr, need), _more(cut, need), \
                _more(first, need), _more(kids, need)
            parent, props, probs = _more(parent, need), _more(props, need), _more(probs, need)
            has, dist = _more(has, need), _more(dist, need)
            attr[n_nodes:need] = -1
            cut[n_nodes:need] = np.nan
            first[n_nodes:need] = -1
            kids[n_nodes:need] = 0
            parent[n_nodes:need] = node
            props[n_nodes:need] = 0.0
            probs[n_nodes:need] = 0.0
            has[n_nodes:need] = False
            dist[n_nodes:need] = 0.0
            first[node] = n_nodes
            kids[node] = b
            s_int, s_float = _more(s_int, top + b), _more(s_float, top + b)
            for c in range(b - 1, -1, -1):  # last first
                if keep[c] and counts[c] > 0:
                    s_int[top, 0], s_int[top, 1] = into[c], start[c]
                    s_int[top, 2] = start[c] + counts[c]
                    live[into[c]] += counts[c]
                else:  # a leaf, or empty: only whether it has rows matters
                    s_int[top, 0], s_int[top, 1], s_int[top, 2] = -1, 0, counts[c]
                s_int[top, 3], s_int[top, 4] = depth + 1, n_nodes + c
                s_float[top, 0] = sweights[best, c]
                s_float[top, 1:] = dists[best, c]
                top += 1
            n_nodes = need
        if part >= 0:
            live[part] -= hi - lo
            held = parts_v[part].shape[1]
            if live[part] > 0 and 2 * live[part] < held and held >= compact:
                _compact(parts_r, parts_v, parts_y, parts_w, live, part, s_int[:top],
                         d_int[:n_deferred])
            if live[part] == 0:
                parts_r[part] = empty_r
                parts_v[part] = empty_f
                parts_y[part] = empty_y
                parts_w[part] = empty_f
    return (attr[:n_nodes], cut[:n_nodes], first[:n_nodes], kids[:n_nodes],
            parent[:n_nodes], props[:n_nodes], probs[:n_nodes], has[:n_nodes],
            dist[:n_nodes], d_int[:n_deferred], d_float[:n_deferred])


def grow(columns, nominal, n_values, y, w, rows, target, k, min_leaf, min_variance,
         max_depth, release=None):
    """The tree grown on ``rows`` (positions, in order) of the attribute ``columns``
    (the target's column among them, never split on); ``y``: class codes (k > 0) or
    numbers (k = 0).

    The nodes at least ``SUBTREE_CELLS`` wide are grown first, each scored and
    dealt on two threads; the subtrees under them are then grown side by side, the
    largest first, each by one thread on rows of its own. Every subtree is grown
    as it would be in the one depth-first growth, so the tree is the same.
    ``release`` (when given) is called once the columns are presorted, and each
    attribute's pages go back to the system as soon as it is presorted (``presort``'s
    ``spend``): the caller has copied what it reads of them later."""
    attrs = np.array([a for a in range(len(columns)) if a != target], np.int64)
    yf = frozen(np.asarray(y, np.float64))
    nom = np.array([bool(nominal[a]) for a in attrs])
    nvals = np.array([n_values[a] for a in attrs], np.int64)
    width = max(2, int(nvals.max()) if len(nvals) else 2)
    classed = k > 0
    sums, total_w = _totals(yf, frozen(w), rows, k)
    if classed:
        probs = sums[:k].copy()
        min_var = 0.0
    else:
        s, sq = sums[0], sums[1]
        min_var = min_variance * ((sq - s * s / total_w) / total_w)
        probs = np.array([s / total_w])
    table = xlogx_table(min(len(rows), TABLE_ROWS)) if classed else np.empty(0)
    halt = stop.flag()
    count = progress.counter("REPTree: nodes grown")
    X, rows = stacked([columns[a] for a in attrs], len(yf)), np.asarray(rows, np.int64)
    plain = whole_weights(w[rows]) and not missing_in(X, rows).any()
    memory.give_back(len(yf))  # the folds' scratch, before the largest arrays
    # the targets beside the presorted rows: class codes as narrow as they go
    # (``code_type``: a byte, and the arrays take 21 bytes an entry rather than
    # 28), numbers as they are
    ytype = code_type(k) if classed else np.float64
    parts = _listed(*presort(X, nom, rows, yf, frozen(w), classed and plain, ytype,
                             spend=release is not None))
    n, size = len(rows), len(yf)
    del X, y, yf  # views of the table's columns, which may now go
    if release is not None:  # the growth reads the presorted arrays alone
        release()
    # a row's branch (-1: missing), one array per thread at work: a byte each where
    # the branches are few, so that more of the array a split reads at random stays
    # in cache (dealing the root's rows took 15-20% less time than with 32 bits)
    branches = np.int8 if width <= np.iinfo(np.int8).max else np.int32
    scratch = queue.SimpleQueue()
    scratch.put(np.empty(size, branches))
    settings = (nom, nvals, k, width, float(min_leaf), float(min_var), int(max_depth))

    def grown(lists, lo, hi, depth, held, weight, dist, wide_cells, defer):
        try:
            branch_of = scratch.get_nowait()
        except queue.Empty:
            branch_of = np.empty(size, branches)
        try:
            return _grow(*lists, lo, hi, depth, held, branch_of, *settings, dist,
                         float(weight), table, plain, COMPACT_COLUMNS, wide_cells, defer,
                         len(attrs) * (hi - lo) >= wide_cells, halt, count)
        finally:
            scratch.put(branch_of)

    top = grown(parts, 0, n, 0, n, total_w, probs, SUBTREE_CELLS, True)
    stop.check(halt)
    tree, (places, stats) = top[:9], top[9:]
    _packed(parts, places)

    def subtree(i):
        part, lo, hi, depth, _ = places[i]
        lists = _part(*parts, part)
        # the part is the other subtrees' too: no subtree frees or moves it (that
        # would only add a copy), only parts of its own
        return grown(lists, lo, hi, depth, SHARED, stats[i, 0], stats[i, 1:].copy(),
                     NO_CELLS, False)[:9]

    sizes = places[:, 2] - places[:, 1]
    largest = sorted(range(len(places)), key=lambda i: -sizes[i])
    below = dict(zip(largest, stop.each(subtree, largest, threads=2)))
    stop.check(halt)
    attr, *out = _joined(tree, [below[i] for i in range(len(places))], places[:, 4])
    attr[attr >= 0] = attrs[attr[attr >= 0]]
    return Grown(attr, *out)


PACK_BYTES = 16 << 20  # the unread columns a part must hold to be packed


def _packed(parts, places):
    """The columns the subtrees will grow from (``places``: rows of [part, lo, hi,
    depth, node], updated here) moved to the front of their parts, in order, and
    the rest of each part handed back to the system (``memory.give_back_columns``)
    where it takes at least ``PACK_BYTES``. The growth of the wide nodes leaves
    columns that no subtree reads (rows moved to parts of their own, rows of
    leaves), up to half of a part; the subtrees share the parts and free none, so
    those columns would otherwise be held to the end of the growth, at its peak."""
    for q in np.unique(places[:, 0]):
        mine = np.flatnonzero(places[:, 0] == q)
        *arrays, at = _packed_part(*parts, places, q, mine[np.argsort(places[mine, 1])],
                                   PACK_BYTES)
        for a in arrays:
            memory.give_back_columns(a, at)


@njit(cache=True)
def _packed_part(parts_r, parts_v, parts_y, parts_w, places, q, order, min_bytes):
    """Part ``q``'s columns of the ``places`` rows ``order`` (in order of their
    first column) moved to its front, and ``places`` updated, where the columns
    they leave take at least ``min_bytes``; returns the part's arrays and the
    columns they now use (all of them where nothing moved)."""
    rid, val, yv, wts = parts_r[q], parts_v[q], parts_y[q], parts_w[q]
    live = 0
    for i in order:
        live += places[i, 2] - places[i, 1]
    width = rid.shape[0] * (rid.itemsize + val.itemsize + yv.itemsize + wts.itemsize)
    if (rid.shape[1] - live) * width < min_bytes:
        return rid, val, yv, wts, rid.shape[1]
    at = np.int64(0)
    for i in order:
        lo, hi = places[i, 1], places[i, 2]
        if lo != at:
            _move_columns(rid, val, yv, wts, lo, hi, rid, val, yv, wts, at)
        places[i, 1], places[i, 2] = at, at + hi - lo
        at += hi - lo
    return rid, val, yv, wts, at


def _joined(tree, subtrees, at):
    """The node arrays of ``tree`` with each of ``subtrees`` grown from its node
    ``at[i]``: a subtree's root fills that node, and its other nodes follow the
    tree's, numbered on in order (a node's children stay consecutive, after it)."""
    tree = [np.asarray(a) for a in tree]
    pieces = [[a] for a in tree]
    base = len(tree[0])
    for g, sub in zip(at, subtrees):
        m = len(sub[0])
        place = np.concatenate(([g], np.arange(base, base + m - 1)))
        attr, cut, first, kids, parent, *rest = sub
        first = np.where(kids > 0, place[np.maximum(first, 0)], -1)
        parent = np.where(parent >= 0, place[np.maximum(parent, 0)], tree[4][g])
        row = (attr, cut, first, kids, parent, *rest)
        for j, a in enumerate(row):
            tree[j][g] = a[0]
            pieces[j].append(a[1:])
        base += m - 1
    return [np.concatenate(p) for p in pieces]


@njit(cache=True)
def _part(parts_r, parts_v, parts_y, parts_w, part):
    """Typed lists holding the one part ``part`` of the growth's (the arrays
    themselves, not copies), for a subtree's growth."""
    return (List([parts_r[part]]), List([parts_v[part]]), List([parts_y[part]]),
            List([parts_w[part]]))


def presort(X, nominal, rows, y, w, any_order, ytype, spend=False):
    """Each attribute's ``rows`` in its order, as the four arrays ``_grow`` starts
    from: rows, values, targets (as ``ytype``), weights; the attributes two at a
    time. The reference's order (``rows_in_order``: its quicksort of the values,
    missing last; a nominal attribute's known values first, as they come), except
    where it cannot matter (``any_order``): for a nominal class, with whole weights
    and no value missing, every sum is of whole numbers, exact in any order, and no
    row is ever split into fractions, so equal values may come in any order and a
    radix sort (several times faster) orders them. ``spend``: the pages of each
    attribute's row of ``X`` go back to the system once it is presorted (nothing
    reads them again), so that the presorted arrays, which take several times the
    columns, are never held beside all of them."""
    p, n = X.shape[0], len(rows)
    out = (np.empty((p, n), np.int32), np.empty((p, n)), np.empty((p, n), ytype),
           np.empty((p, n)))
    if any_order:
        rows = np.sort(rows)  # in any order: read in the table's, a third faster

    def one(t):  # the kernels release the GIL: two at a time
        if not any_order:
            order = rows_in_order(X, np.int64(t), rows, bool(nominal[t]))
        else:
            order = np.arange(n) if nominal[t] else value_order(X, t, rows)
        _fill_sorted(X, t, rows, order, y, w, *out)
        if spend:
            memory.give_back_columns(X[t:t + 1], 0)

    # the numeric attributes first: their sorts take longest, and the nominal ones'
    # copies then even out the two threads' shares
    stop.each(one, sorted(range(p), key=lambda t: bool(nominal[t])), threads=2, rows=n)
    return out


@njit(cache=True)
def _listed(rid, val, yv, wts):
    """The presorted arrays, each as the one item of a typed list, made in a
    compiled kernel (made by Python, the lists' code compiles in every process)."""
    return List([rid]), List([val]), List([yv]), List([wts])


@njit(cache=True)
def _fill_sorted(X, t, rows, order, y, w, rid, val, yv, wts):
    """Row ``t`` of the presorted arrays: ``rows`` in the ``order`` of their
    positions."""
    for i in range(len(order)):
        r = rows[order[i]]
        rid[t, i] = r
        val[t, i] = X[t, r]
        yv[t, i] = y[r]
        wts[t, i] = w[r]


TABLE_ROWS = 1 << 23  # the largest count looked up rather than computed (64 MiB)


@njit(cache=True)
def _sse(y, w):
    s = sq = sw = 0.0
    for i in range(len(y)):
        s += y[i] * w[i]
        sq += y[i] * y[i] * w[i]
        sw += w[i]
    return sq - s * s / sw


def holdout(tree, columns, nominal, y, w, rows, k):
    """(held-out distribution per node, held-out error per node) of the rows
    ``rows`` (None: every row of ``columns``, ``y`` and ``w``, already the held-out
    rows' own) passed down the tree, each one in turn, depth first."""

    def take(a):
        return a if rows is None else a[rows]

    # what each node predicts: its own probabilities, else (empty) its parent's
    own = np.where(tree.has, np.arange(tree.n), tree.parent)
    guess = tree.probs[own, 0] if k == 0 else np.argmax(tree.probs[own], axis=1).astype(float)
    used = np.unique(tree.attr[tree.attr >= 0])
    y, w = take(np.asarray(y, np.float64)), take(w)
    X = np.empty((max(len(used), 1), len(y)))
    where = np.full(max(len(columns), 1), -1, np.int64)
    for j, a in enumerate(used):
        X[j] = take(columns[a])
        where[a] = j
    inner = tree.attr >= 0
    nodes = (np.where(inner, where[np.maximum(tree.attr, 0)], -1),
             inner & np.array([bool(v) for v in nominal] + [False])[tree.attr],
             tree.cut, tree.first, tree.kids, tree.props, guess, y, w, k)
    # halves on two threads where their sums add up to the same doubles: whole
    # weights of a nominal class, never split by a missing value
    n, parts = len(y), 1
    if n >= HOLDOUT_SPLIT and k > 0 and whole_weights(w) and not np.isnan(X).any():
        parts = 2
    bounds = np.linspace(0, n, parts + 1).astype(np.int64)

    def part(i):
        dist, error = np.zeros((tree.n, k if k > 0 else 2)), np.zeros(tree.n)
        _holdout(X, *nodes, dist, error, bounds[i], bounds[i + 1])
        return dist, error

    dists, errors = zip(*stop.each(part, range(parts), threads=parts))
    return sum(dists[1:], dists[0]), sum(errors[1:], errors[0])


HOLDOUT_SPLIT = 20_000  # held-out rows from which their pass runs on two threads


@njit(cache=True)
def _holdout(X, col, nominal, cut, first, kids, props, guess, y, w, k, dist, error, lo,
             hi):
    """Rows ``lo:hi`` of the held-out rows passed down the tree, their weights
    added to ``dist`` and ``error`` of every node they reach."""
    n_nodes = len(col)
    stack_node = np.empty(n_nodes, np.int64)
    stack_w = np.empty(n_nodes)
    for r in range(lo, hi):
        stack_node[0] = 0
        stack_w[0] = w[r]
        top = 1
        while top > 0:
            top -= 1
            i = stack_node[top]
            weight = stack_w[top]
            if k > 0:
                c = int(y[r])
                dist[i, c] += weight
                if int(guess[i]) != c:
                    error[i] += weight
            else:
                dist[i, 0] += weight
                dist[i, 1] += weight * y[r]
                diff = guess[i] - y[r]
                error[i] += diff * diff * weight
            j = col[i]
            if j < 0:
                continue
            v = X[j, r]
            if np.isnan(v):
                for b in range(kids[i] - 1, -1, -1):
                    if props[i, b] > 0:
                        stack_node[top] = first[i] + b
                        stack_w[top] = weight * props[i, b]
                        top += 1
            else:
                b = int(v) if nominal[i] else (0 if v < cut[i] else 1)
                stack_node[top] = first[i] + b
                stack_w[top] = weight
                top += 1


@njit(cache=True)
def _totals(y, w, rows, k):
    """Class weights (k > 0) or [sum, sum of squares] of ``rows``, and their weight."""
    out = np.zeros(max(k, 2))
    total = 0.0
    for r in rows:
        if k > 0:
            out[int(y[r])] += w[r]
        else:
            out[0] += y[r] * w[r]
            out[1] += y[r] * y[r] * w[r]
        total += w[r]
    return out, total


@njit(cache=True)
def prune(attr, first, kids, error):
    """Reduced-error pruning, bottom up (a node's children come after it): a
    subtree whose held-out error is not below its root's as a leaf becomes that
    leaf (``attr`` -1)."""
    below = error.copy()  # of each (pruned) subtree
    for i in range(len(attr) - 1, -1, -1):
        if attr[i] < 0:
            continue
        total = 0.0
        for c in range(first[i], first[i] + kids[i]):
            total += below[c]
        if total >= error[i]:
            attr[i] = -1
        else:
            below[i] = total


@njit(cache=True)
def depth_first(attr, first, kids):
    """The nodes still reachable from the root, in depth-first order, and each
    node's number in that order (-1: cut off)."""
    order = np.empty(len(attr), np.int64)
    number = np.full(len(attr), -1, np.int64)
    stack = np.empty(len(attr), np.int64)
    stack[0] = 0
    top, n = 1, 0
    while top > 0:
        top -= 1
        i = stack[top]
        number[i] = n
        order[n] = i
        n += 1
        if attr[i] >= 0:
            for c in range(first[i] + kids[i] - 1, first[i] - 1, -1):
                stack[top] = c
                top += 1
    return order[:n], number


@njit(cache=True)
def backfit(probs, has, dist, held, k):
    """Every node's probabilities (mean) from its training and held-out rows."""
    for i in range(len(has)):
        if k > 0:
            total = 0.0
            for j in range(k):
                probs[i, j] = dist[i, j] + held[i, j]
                total += probs[i, j]
            if total > 0:
                for j in range(k):
                    probs[i, j] /= total
            has[i] = total > 0
        else:
            total = dist[i, 1] + held[i, 0]
            if total <= 0:
                continue
            mean = probs[i, 0] * dist[i, 1] if has[i] else 0.0
            probs[i, 0] = (mean + held[i, 1]) / total
            has[i] = True


def build(columns, nominal, n_values, y, w, target, k, options, release=None):
    """(the tree, held-out distributions, held-out errors) of the rows with a class,
    as the reference's REPTree builds it. ``release``, when given, lets the
    ``columns`` (and ``w``) go once they are presorted: the held-out rows' values
    are kept."""
    folds = options["folds"]
    rows = np.flatnonzero(~np.isnan(y))
    rng = JavaRandom(options["seed"])
    rows = randomize(rows, rng)
    if k > 0:
        rows = stratify(rows, np.where(np.isnan(y), -1, y).astype(np.int64), folds)
    if options["pruned"]:
        check_folds(folds, len(rows))
        train, held_rows = train_cv(rows, folds, 0, rng), test_cv(rows, folds, 0).copy()
    else:
        train, held_rows = rows, rows[:0]
    del rows  # (the held-out rows are a copy, not a view that would keep it)
    kept = [columns, y, w, held_rows]  # the held-out rows' values, and where
    let_go = None
    if release is not None:  # copied first: the presort hands the columns' pages back
        kept[:] = [[c[held_rows] if j != target else np.empty(0)  # (the target: y)
                    for j, c in enumerate(columns)], y[held_rows], w[held_rows], None]

        def let_go():
            nonlocal y
            # the target's and the weights' pages go back too (the presort gave back
            # the attributes'): the presorted arrays and ``kept`` hold copies
            for a in (y, w):
                memory.give_back_columns(a.reshape(1, -1), 0)
            y = None  # a view of the table's columns, which now go
            release()

    tree = grow(columns, nominal, n_values, y, w, train, target, k, options["min_leaf"],
                options["min_variance"], options["max_depth"], let_go)
    held_columns, held_y, held_w, at = kept
    held, error = holdout(tree, held_columns, nominal, held_y, held_w, at, k)
    if options["pruned"]:
        prune(tree.attr, tree.first, tree.kids, error)
        backfit(tree.probs, tree.has, tree.dist, held, k)
    return tree, held, error
