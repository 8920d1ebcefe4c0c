"""RIPPER (the book's section 6.2, "rule learning with reduced-error pruning"),
learned as the reference's JRip learns it.

Classes are taken from the least frequent to the most frequent; the last is the
default. For each class a rule set is grown one rule at a time: the rows are
shuffled and stratified, two thirds grow a rule (each condition the one of highest
information gain p(log(p/t) - log(P/T)) on the rows it still covers) and the last
third prunes it (trailing conditions dropped unless they raise (p+1)/(t+2)). Rules
are added until the rule set's description length is 64 bits above the least seen,
a rule covers no positive row, or its error reaches one half. Each optimisation pass
then rebuilds every rule twice, as a *replacement* grown from nothing and as a
*revision* grown on from the rule, and keeps whichever of the three gives the least
description length; rules that lengthen the description are deleted last.

Every random draw and row order of the reference is kept (the generator's seed
comes from a hash of one row's printed form; each stratification shuffles the
classes' rows; the reference's quicksort orders the rows a numeric condition
splits), because the rules depend on them.
"""

import math

import numpy as np

from .. import pictures, progress
from ..classes import code_type
from ..dataset import rows_where, stacked, whole_weights
from ..evaluation import check_folds
from ..javafmt import double_to_string, java_double
from ..javautil import JavaRandom, randomize, sorted_by, weka_order
from ..jit import PRANGE_ONLY, njit, prange
from ..models import Classifier, attributes_of, body, check_attribute, check_weights
from ..stop import checkpoint
from .description_length import RuleStats, check_stop, data_dl
from .presorted import (
    in_storage_order,
    kept,
    listed_weights,
    log2_above,
    narrowed,
    ranks_beside,
    sorted_rows,
    weight_at,
)

SMALL = 1e-6
LOG2 = math.log(2.0)
PARALLEL_ROWS = 50_000  # rows from which a kernel's two halves pay for the threads


@njit(cache=True)
def _nlog2(x):
    return math.log(x) / LOG2


# ---------------------------------------------------------------- kernels

@njit(cache=True, inline="always")
def _antd_covers(x, nominal, value, split):
    """Whether value ``x`` satisfies a condition: a nominal value equal to
    ``value``, a numeric one at most (``value`` 0) or at least (1) ``split``; a
    missing value satisfies none."""
    if np.isnan(x):
        return False
    if nominal:
        return int(x) == int(value)
    if value == 0.0:
        return x <= split
    return x >= split


@njit(cache=True)
def _covered(X, nominal, antds, ends, ids):
    """Which of the rows ``ids`` some rule of a list covers (rule ``k``'s
    conditions end at ``ends[k]``)."""
    hit = np.zeros(len(ids), np.bool_)
    for i in range(len(ids)):
        hit[i] = _first_covering(X, nominal, antds, ends, ids[i]) < len(ends)
    return hit


@njit(cache=True, inline="always")
def _rule_covers(X, nominal, antds, lo, hi, r):
    """Whether row ``r`` satisfies conditions ``antds[lo:hi]``."""
    for j in range(lo, hi):
        a = int(antds[j, 0])
        if not _antd_covers(X[a, r], nominal[a], antds[j, 1], antds[j, 2]):
            return False
    return True


@njit(cache=True)
def _rows_covered(X, a, nominal, value, split, cur):
    """The rows of ``cur`` (in order) whose value of attribute ``a`` satisfies the
    condition (``value``, ``split``)."""
    keep = np.zeros(len(cur), np.bool_)
    for i in range(len(cur)):
        keep[i] = _antd_covers(X[a, cur[i]], nominal, value, split)
    return cur[keep]


@njit(cache=True, inline="always")
def _first_covering(X, nominal, antds, ends, r):
    """The first rule of a list (rule ``k``'s conditions end at ``ends[k]``) that
    covers row ``r``; the number of rules when none does."""
    start = 0
    for k in range(len(ends)):
        if _rule_covers(X, nominal, antds, start, ends[k], r):
            return k
        start = ends[k]
    return len(ends)


@njit(cache=True, inline="always")
def _tally(stats, dist, first, n_rules, wr, yr, cls):
    """A row (weight ``wr``, class ``yr``) counted down a rule list: covered by its
    first covering rule ``first`` (``n_rules`` for none), uncovered by each before."""
    for k in range(min(first + 1, n_rules)):
        if k == first:
            stats[k, 0] += wr
            stats[k, 2 if yr == cls else 4] += wr
            dist[k, yr] += wr
        else:
            stats[k, 1] += wr
            stats[k, 3 if yr != cls else 5] += wr


def _cascade_of(X, nominal, antds, ends, w, y, cls, n_classes, ids, member, parts):
    """Each rule of a list (conditions ``antds``, rule ``k``'s ending at
    ``ends[k]``) counted on the rows the rules before it leave, each row going down
    the list to the first rule that covers it, in one pass: (per rule the
    statistics (covered, uncovered, true positive, true negative, false positive,
    false negative) and the class weights of the rows it covers; each row's first
    covering rule, the number of rules for none). Each sum takes its rows in the
    order of ``ids`` (``parts`` 1); or, for whole weights, whose sums do not depend
    on the order, over every row in storage order (the rows ``ids`` marked in
    ``member``, a scratch mask) in ``parts`` ranges at once, without the random
    access of the rows' own order."""
    n_rules = len(ends)
    stats = np.zeros((parts, n_rules, 6))
    dist = np.zeros((parts, n_rules, n_classes))
    for r in ids:
        member[r] = True
    n = len(w) if parts > 1 else len(ids)
    first_at = np.empty(n, np.int64)  # by row in storage order, else by place in ids
    for p in prange(parts):
        for i in range(p * n // parts, (p + 1) * n // parts):
            r = i if parts > 1 else ids[i]
            if not member[r]:
                continue
            first = _first_covering(X, nominal, antds, ends, r)
            first_at[i] = first
            _tally(stats[p], dist[p], first, n_rules, w[r], y[r], cls)
    for r in ids:
        member[r] = False
    out, out_dist = np.zeros((n_rules, 6)), np.zeros((n_rules, n_classes))
    for p in range(parts):
        for k in range(n_rules):
            for j in range(6):
                out[k, j] += stats[p, k, j]
            for j in range(n_classes):
                out_dist[k, j] += dist[p, k, j]
    return out, out_dist, first_at[ids] if parts > 1 else first_at


_cascade = njit(cache=True)(_cascade_of)
_cascade_sequential = njit(cache=True, parallel=PRANGE_ONLY)(_cascade_of)


@njit(cache=True)
def _cascades_before(X, nominal, antds, ends, w, y, cls, n_classes, ids, first_after,
                     n_after):
    """For each rule of a list (rule ``v``'s conditions end at ``ends[v]``), what
    ``_cascade_of`` gives for the list of that rule followed by ``n_after`` rules
    whose first covering rule of each row of ``ids`` is known (``first_after``, by
    place in ``ids``; ``n_after`` for none): only each rule's own conditions are
    checked, and each sum takes its rows in the order of ``ids`` as there."""
    n_rules = n_after + 1
    stats = np.zeros((len(ends), n_rules, 6))
    dist = np.zeros((n_rules, n_classes))
    start = 0
    for v in range(len(ends)):
        for i in range(len(ids)):
            r = ids[i]
            first = 0 if _rule_covers(X, nominal, antds, start, ends[v], r) \
                else 1 + first_after[i]
            _tally(stats[v], dist, first, n_rules, w[r], y[r], cls)
        start = ends[v]
    return stats


@njit(cache=True)
def _numeric_gain(X, a, w, y, cls, cur, default_rate, out):
    """The best condition on numeric attribute ``a``, the rows ``cur`` sorted by
    it in place (the reference sorts its grow rows so): its gain, or -1 when every
    value is missing; ``out`` = (value, split, accuracy rate, accurate weight, end of
    the first bag, rows with a value)."""
    n = len(cur)
    total = n
    snd_cover = 0.0
    snd_accu = 0.0
    for i in range(n):
        r = cur[i]
        if np.isnan(X[a, r]):
            total = i
            break
        snd_cover += w[r]
        if y[r] == cls:
            snd_accu += w[r]
    if total == 0:
        return -1.0
    log_default = _nlog2(default_rate)
    best = 0.0
    out[0], out[1], out[2], out[3] = 0.0, X[a, cur[total - 1]], np.nan, np.nan
    out[4], out[5] = 1.0, total
    fst_cover = 0.0
    fst_accu = 0.0
    prev = 0
    for split in range(1, total + 1):
        if split == total or X[a, cur[split]] > X[a, cur[prev]]:
            for i in range(prev, split):
                r = cur[i]
                fst_cover += w[r]
                if y[r] == cls:
                    fst_accu += w[r]
            fst_rate = (fst_accu + 1.0) / (fst_cover + 1.0)
            snd_rate = (snd_accu + 1.0) / (snd_cover + 1.0)
            fst_gain = fst_accu * (_nlog2(fst_rate) - log_default)
            snd_gain = snd_accu * (_nlog2(snd_rate) - log_default)
            if fst_gain > snd_gain:
                gain, side, rate, accu, end = fst_gain, 0.0, fst_rate, fst_accu, split
            else:
                gain, side, rate, accu, end = snd_gain, 1.0, snd_rate, snd_accu, prev
            if gain > best:
                out[0], out[1], out[2], out[3], out[4] = side, X[a, cur[prev]], rate, accu, end
                best = gain
            for i in range(prev, split):
                r = cur[i]
                snd_cover -= w[r]
                if y[r] == cls:
                    snd_accu -= w[r]
            prev = split
    return best


@njit(cache=True)
def _presorted_gain(x, rows, xs, ws, ys, mark, cls, default_rate, out, cover, accu):
    """``_numeric_gain`` over an attribute's presorted rows (``xs``, ``ws``, ``ys``
    their values' ranks (``ranks_beside``, missing last), weights (``weight_at``)
    and classes; ``x`` the attribute's column), counting only the marked rows,
    whose weight is ``cover`` (``accu`` of class ``cls``): a sequential scan
    instead of a sort. Group sums stand for the reference's row-by-row sums, so
    this is for whole weights. ``out`` (4) and (5) are the bag's bounds in the
    presorted list."""
    n = len(rows)
    known = n  # the marked rows missing a value are not counted
    while known > 0 and xs[known - 1] < 0:
        known -= 1
    snd_cover = cover
    snd_accu = accu
    for i in range(known, n):
        if mark[rows[i]]:
            snd_cover -= weight_at(ws, i)
            if ys[i] == cls:
                snd_accu -= weight_at(ws, i)
    end = known  # past the last marked row with a value
    while end > 0 and not mark[rows[end - 1]]:
        end -= 1
    if end == 0:
        return -1.0
    log_default = _nlog2(default_rate)
    best = 0.0
    out[0], out[1], out[2], out[3], out[4], out[5] = 0.0, np.nan, np.nan, np.nan, 0, end
    fst_cover = 0.0
    fst_accu = 0.0
    group_start = 0  # the first marked row starts the first group
    while not mark[rows[group_start]]:
        group_start += 1
    group_rank = xs[group_start]
    group_cover = 0.0
    group_accu = 0.0
    for i in range(group_start, end + 1):
        if i < end:
            if not mark[rows[i]]:
                continue
            if not xs[i] > group_rank:  # the group goes on
                wi = weight_at(ws, i)
                group_cover += wi
                group_accu += wi * (ys[i] == cls)
                continue
        # a group ends: its rows join the first bag
        fst_cover += group_cover
        fst_accu += group_accu
        # a side whose gain is bounded by the best cannot be taken, nor can it
        # keep the other side from being taken, so its logarithm is not needed
        fst_gain = snd_gain = -np.inf
        fst_rate = snd_rate = 0.0
        if fst_accu * -log_default > best and \
                fst_accu * (log2_above(fst_accu + 1.0, fst_cover + 1.0) - log_default) > best:
            fst_rate = (fst_accu + 1.0) / (fst_cover + 1.0)
            fst_gain = fst_accu * (_nlog2(fst_rate) - log_default)
        if snd_accu * -log_default > best and \
                snd_accu * (log2_above(snd_accu + 1.0, snd_cover + 1.0) - log_default) > best:
            snd_rate = (snd_accu + 1.0) / (snd_cover + 1.0)
            snd_gain = snd_accu * (_nlog2(snd_rate) - log_default)
        if fst_gain > snd_gain:
            if fst_gain > best:
                best = fst_gain
                out[0], out[1], out[2], out[3] = 0.0, x[rows[group_start]], fst_rate, fst_accu
                out[4], out[5] = 0, i
        elif snd_gain > best:
            best = snd_gain
            out[0], out[1], out[2], out[3] = 1.0, x[rows[group_start]], snd_rate, snd_accu
            out[4], out[5] = group_start, end
        snd_cover -= group_cover
        snd_accu -= group_accu
        if i < end:  # row i starts the next group
            group_start, group_rank = i, xs[i]
            group_cover = weight_at(ws, i)
            group_accu = group_cover * (ys[i] == cls)
    if best == 0.0:
        out[1] = x[rows[group_start]]  # the reference's split point when nothing gains
    return best


@njit(cache=False, parallel=True)  # called from _grow (see jit.PRANGE_ONLY)
def _presorted_gains(X, attrs, srt_rows, srt_off, srt_x, srt_w, srt_y, mark, cls,
                     default_rate, cover, accu):
    """``_presorted_gain`` of each attribute in ``attrs``, two at a time: (gains,
    their ``out`` rows)."""
    gains = np.zeros(len(attrs))
    outs = np.zeros((len(attrs), 6))
    for j in prange(len(attrs)):
        lo, hi = srt_off[attrs[j]], srt_off[attrs[j] + 1]
        gains[j] = _presorted_gain(X[attrs[j]], srt_rows[lo:hi], srt_x[lo:hi], srt_w[lo:hi],
                                   srt_y[lo:hi], mark, cls, default_rate, outs[j], cover,
                                   accu)
    return gains, outs


@njit(cache=True)
def _nominal_gain(X, a, n_values, w, y, cls, cur, default_rate, out):
    """The best condition on nominal attribute ``a``: its gain; ``out`` = (value,
    NaN, accuracy rate, accurate weight)."""
    cover = np.zeros(n_values)
    accu = np.zeros(n_values)
    for i in range(len(cur)):
        r = cur[i]
        x = X[a, r]
        if not np.isnan(x):
            cover[int(x)] += w[r]
            if y[r] == cls:
                accu[int(x)] += w[r]
    return _best_value(cover, accu, default_rate, out)


@njit(cache=True)
def _listed_nominal_gain(rows, xs, ws, ys, mark, n_values, cls, default_rate, out):
    """``_nominal_gain`` from a sparse attribute's list (its rows with a value),
    counting the marked rows: with whole weights the sums are those of the scan."""
    cover = np.zeros(n_values)
    accu = np.zeros(n_values)
    for i in range(len(rows)):
        if mark[rows[i]]:
            v = int(xs[i])
            wi = weight_at(ws, i)
            cover[v] += wi
            if ys[i] == cls:
                accu[v] += wi
    return _best_value(cover, accu, default_rate, out)


@njit(cache=True)
def _best_value(cover, accu, default_rate, out):
    """The value of highest gain (the first on a tie) given each value's covered
    and accurate weight: its gain, with ``out`` as ``_nominal_gain`` sets it."""
    n_values = len(cover)
    log_default = _nlog2(default_rate)
    best = 0.0
    for v in range(n_values):
        rate = (accu[v] + 1.0) / (cover[v] + 1.0)
        gain = accu[v] * (_nlog2(rate) - log_default)
        if gain > best:
            best = gain
            out[0], out[1], out[2], out[3] = v, np.nan, rate, accu[v]
    return best


@njit(cache=True)
def _weights(w, y, cls, ids):
    """The total weight of the rows ``ids`` and that of class ``cls``, added in
    order."""
    total = 0.0
    positive = 0.0
    for r in ids:
        total += w[r]
        if y[r] == cls:
            positive += w[r]
    return total, positive


@njit(cache=True)
def _grow(X, nominal, n_values, attrs, n_attributes, w, y, cls, min_no, ids, antds, size,
          presorted, sparse, threads):
    """Grow a rule for class ``cls`` on the rows ``ids`` (in order), from its first
    ``size`` conditions: add the condition of highest gain (the first attribute on a
    tie) while one gains, covers at least ``min_no`` positive weight and the rule is
    not yet pure. ``antds`` rows are (attribute, value, split). Returns them, the
    rule's length, and ``ids`` in the order the first step's sorts leave them (the
    reference sorts the rows it is handed in place).

    ``presorted`` = (exact, every row sorted per numeric attribute, offsets by
    attribute, a scratch mask, and the sorted rows' value ranks (``ranks_beside``),
    weights and classes). With ``exact`` (whole weights, whose sums do not depend
    on the order they are added in) a numeric attribute's rows are taken from its
    presorted list, kept to the rule's rows as it grows, instead of the reference's
    quicksort at every step: the same cuts and sums, and the sorted orders reach no
    shuffle (only sums). A nominal attribute where ``sparse`` (few rows with a value)
    is counted from its list too, which holds only the rows with a value.
    ``threads``: from ``PARALLEL_ROWS`` rows the numeric attributes are searched on
    two threads (see ``jit.threads``)."""
    total, default_accu = _weights(w, y, cls, ids)
    if not total > SMALL:
        return antds, size, ids
    default_rate = (default_accu + 1.0) / (total + 1.0)
    used = np.zeros(X.shape[0], np.bool_)
    unused = n_attributes  # the class counts too, as in the reference
    for k in range(size):
        a = int(antds[k, 0])
        if nominal[a]:
            used[a] = True
            unused -= 1
    exact, srt_rows, srt_off, mark, srt_x, srt_w, srt_y = presorted
    # with whole weights the order of the rows does not matter: in storage order
    # the scans below read memory in sequence
    cur = in_storage_order(ids, mark) if exact else ids.copy()
    listed = len(w)  # the most rows an attribute's list holds
    handed = ids
    first = True
    out = np.zeros(6)
    while len(cur) > 0 and unused > 0 and default_rate - 1.0 < -SMALL:
        best_gain = 0.0
        best = np.int64(-1)  # (see jit)
        pick = np.zeros(4)
        bag = cur[:0]
        sweep = exact  # a sweep of the presorted lists
        if sweep:
            # the lists kept to the rule's rows as it grows: first a copy of the
            # shared lists (once they are four times the rows, which bounds the
            # copy), then that copy in place (at twice)
            if listed > (4 if listed == len(w) else 2) * len(cur):
                if listed == len(w):
                    srt_rows, srt_off, srt_x, srt_w, srt_y = narrowed(
                        srt_rows, srt_off, srt_x, srt_w, srt_y, cur, mark)
                else:
                    srt_rows, srt_off, srt_x, srt_w, srt_y = kept(
                        srt_rows, srt_off, srt_x, srt_w, srt_y, cur, mark,
                        srt_rows, srt_x, srt_w, srt_y)
                listed = len(cur)
            mark[cur] = True
            numeric = np.array([a for a in attrs if not nominal[a] and not used[a]],
                               np.int64)
            cover, accu = _weights(w, y, cls, cur)
            if threads and len(cur) >= PARALLEL_ROWS:
                gains, outs = _presorted_gains(X, numeric, srt_rows, srt_off, srt_x, srt_w,
                                               srt_y, mark, cls, default_rate, cover, accu)
            else:
                gains = np.zeros(len(numeric))
                outs = np.zeros((len(numeric), 6))
                for k in range(len(numeric)):
                    lo, hi = srt_off[numeric[k]], srt_off[numeric[k] + 1]
                    gains[k] = _presorted_gain(X[numeric[k]], srt_rows[lo:hi], srt_x[lo:hi],
                                               srt_w[lo:hi], srt_y[lo:hi], mark, cls,
                                               default_rate, outs[k], cover, accu)
        j = 0
        for a in attrs:
            if used[a]:
                continue
            if nominal[a]:
                if sweep and sparse[a]:
                    lo, hi = srt_off[a], srt_off[a + 1]
                    gain = _listed_nominal_gain(srt_rows[lo:hi], srt_x[lo:hi], srt_w[lo:hi],
                                                srt_y[lo:hi], mark, n_values[a], cls,
                                                default_rate, out)
                else:
                    gain = _nominal_gain(X, a, n_values[a], w, y, cls, cur, default_rate,
                                         out)
                if gain > best_gain:
                    best_gain, best = gain, a
                    pick[:] = out[:4]
                    if not sweep:  # the later sorts reorder cur: the bag in today's order
                        bag = _rows_covered(X, a, nominal[a], out[0], np.nan, cur)
                continue
            if sweep:
                if gains[j] > best_gain:
                    best_gain, best = gains[j], a
                    pick[:] = outs[j, :4]
                    bag = cur[:0]  # taken below, once the best is known
                j += 1
                continue
            cur = cur[sorted_by(X[a][cur])]
            gain = _numeric_gain(X, a, w, y, cls, cur, default_rate, out)
            if gain > best_gain:
                best_gain, best = gain, a
                pick[:] = out[:4]
                if out[0] == 0.0:
                    bag = cur[:int(out[4])].copy()
                else:
                    bag = cur[int(out[4]):int(out[5])].copy()
        if sweep:
            mark[cur] = False
            if best >= 0:  # the rows the condition holds for, once the best is known
                bag = _rows_covered(X, best, nominal[best], pick[0], pick[1], cur)
        if first:
            handed, first = cur, False
        if best < 0 or pick[3] - min_no < -SMALL:
            break
        if size == len(antds):
            more = np.empty((2 * size + 1, 3))
            more[:size] = antds[:size]
            antds = more
        antds[size, 0], antds[size, 1], antds[size, 2] = best, pick[0], pick[1]
        size += 1
        if nominal[best]:
            used[best] = True
            unused -= 1
        cur = bag
        default_rate = pick[2]
    return antds, size, handed


@njit(cache=True)
def _prune(X, nominal, w, y, cls, ids, antds, size, use_whole):
    """The length the rule keeps on the pruning rows ``ids``: the shortest prefix of
    highest worth, (p+1)/(t+2) of the rows it covers, or with ``use_whole`` its
    accuracy on all the rows (true positives and true negatives); none when no
    prefix beats the empty rule."""
    total, default_accu = _weights(w, y, cls, ids)
    if not total > SMALL or size == 0:
        return size
    worth_rate = np.zeros(size)
    live = np.ones(len(ids), np.bool_)
    tn = 0.0
    for k in range(size):
        a = int(antds[k, 0])
        coverage = 0.0
        worth = 0.0
        for i in range(len(ids)):
            if not live[i]:
                continue
            r = ids[i]
            if _antd_covers(X[a, r], nominal[a], antds[k, 1], antds[k, 2]):
                coverage += w[r]
                if y[r] == cls:
                    worth += w[r]
            else:
                live[i] = False
                if use_whole and y[r] != cls:
                    tn += w[r]
        if use_whole:
            worth_rate[k] = (worth + tn) / total
        else:
            worth_rate[k] = (worth + 1.0) / (coverage + 2.0)
    best = (default_accu + 1.0) / (total + 2.0)
    keep = 0
    for k in range(size):
        if worth_rate[k] > best:
            best = worth_rate[k]
            keep = k + 1
    return keep


@njit(cache=True)
def _score(X, nominal, antds, ends, dists, n):
    """Each row's distribution: that of the first rule covering it (the last rule,
    the default, covers every row)."""
    out = np.zeros((n, dists.shape[1]))
    for i in range(n):
        first = _first_covering(X, nominal, antds, ends, i)
        if first < len(ends):
            out[i] = dists[first]
    return out


def _java_hash(text):
    """``String.hashCode``: over UTF-16 code units, in 32-bit arithmetic."""
    h = 0
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _quote(s):
    """The reference's quoting of a nominal value in a printed row."""
    specials = {"\\": "\\\\", "'": "\\'", "\t": "\\t", "\n": "\\n", "\r": "\\r",
                '"': '\\"', "%": "\\%", "\u001e": "\\u001E"}
    quote = any(c in s for c in specials)
    if quote:
        s = "".join(specials.get(c, c) for c in s)
    if quote or any(c in s for c in "{}, ") or s in ("?", ""):
        s = f"'{s}'"
    return s


def _row_text(data, row):
    """A row as the reference prints it (values comma separated, "?" missing)."""
    out = []
    for a, col in zip(data.attributes, data.columns):
        x = col[row]
        if np.isnan(x):
            out.append("?")
        elif a.nominal:
            out.append(_quote(a.values[int(x)]))
        else:
            out.append(double_to_string(float(x), 6))
    return ",".join(out)


class Fit:
    """One RIPPER fit: the data (classes recoded rarest first), the options and the
    generator."""

    def __init__(self, data, target, y, rows, options, rng):
        self.X = stacked(data.columns, data.n)
        self.nominal = np.array([a.nominal for a in data.attributes], np.bool_)
        self.n_values = np.array([len(a.values) for a in data.attributes], np.int64)
        self.attrs = np.array([a for a in range(len(data.columns)) if a != target], np.int64)
        self.n_attributes = len(data.columns)
        self.w = data.weights
        self.y = y
        self.n_classes = len(data.attributes[target].values)
        self.folds = options["folds"]
        self.min_no = float(options["min_weight"])
        self.optimizations = options["optimizations"]
        self.check_err = options["check_error_rate"]
        self.pruned = options["pruned"]
        self.rng = rng
        total = 0.0
        for a in self.attrs:
            if self.nominal[a]:
                total += self.n_values[a]
            else:
                x = self.X[a, rows]
                total += 2.0 * len(np.unique(x[~np.isnan(x)]))
        self.total_conditions = total
        # whole weights: sums do not depend on the order of the rows
        exact = whole_weights(self.w)
        # each numeric attribute's rows presorted; a nominal attribute with a value
        # in at most half the rows (a basket's items) is counted from a list of
        # those rows rather than by a scan
        lengths = np.zeros(self.n_attributes, np.int64)
        self.sparse = np.zeros(self.n_attributes, np.bool_)
        for a in range(self.n_attributes):
            if not exact or a == target:
                continue
            if not self.nominal[a]:
                lengths[a] = len(rows)
                continue
            known = np.count_nonzero(~np.isnan(self.X[a, rows]))
            if 2 * known <= len(rows):
                lengths[a], self.sparse[a] = known, True
        srt, off = sorted_rows(self.X, range(self.n_attributes), lengths, rows)
        values = ranks_beside(self.X, self.nominal, srt, off)
        self.presorted = (exact, srt, off, np.zeros(len(self.w), np.bool_), values,
                          listed_weights(self.w, srt), self.y[srt])
        self.member = np.zeros(len(self.w), np.bool_)

    def stats(self, rule, rows):
        """A rule's statistics on ``rows``, which of them it covers, and their
        class weights."""
        stats, dist, first = self._cascade([rule], rows)
        return stats[0], first == 0, dist[0]

    def cascade(self, rules, rows):
        """Each rule's statistics on the rows the rules before it leave (of
        ``rows``), as ``stats`` gives them one rule at a time."""
        return list(self._cascade(rules, rows)[0]) if rules else []

    def _cascade(self, rules, rows):
        args = (self.X, self.nominal, *_packed(rules), self.w, self.y, self.cls,
                self.n_classes, rows, self.member)
        if self.presorted[0] and 8 * len(rows) > len(self.w) and len(rows) >= PARALLEL_ROWS:
            return _cascade_sequential(*args, 2)
        return _cascade(*args, 1)

    def cascades(self, variants, after, rows):
        """``cascade([v] + after, rows)`` for each rule ``v`` of ``variants``, the
        rows taken down ``after`` once for all of them; and ``cascade(after, rows)``."""
        if after:
            stats, _, first = self._cascade(after, rows)
        else:
            stats, first = np.zeros((0, 6)), np.zeros(len(rows), np.int64)
        counted = _cascades_before(self.X, self.nominal, *_packed(variants), self.w, self.y,
                                   self.cls, self.n_classes, rows, first, len(after))
        return [list(c) for c in counted], list(stats)

    def covered(self, rules, rows):
        """Which of ``rows`` some rule of ``rules`` covers."""
        return _covered(self.X, self.nominal, *_packed(rules), rows)

    def stratify(self, rows):
        """``RuleStats.stratify``: the rows by class, each class shuffled, then dealt
        into the folds."""
        y = self.y[rows]
        dealt = np.concatenate([randomize(rows[y == c], self.rng)
                                for c in range(self.n_classes)])
        return np.concatenate([dealt[k::self.folds] for k in range(self.folds)])

    def partition(self, rows):
        split = len(rows) * (self.folds - 1) // self.folds
        return rows[:split], rows[split:]

    def grow(self, rows, rule=None):
        """A rule grown on ``rows`` (from ``rule``), and ``rows`` in the order the
        reference's in-place sorts leave them."""
        checkpoint()
        start = np.zeros((4, 3)) if rule is None else np.vstack([rule, np.zeros((4, 3))])
        size = 0 if rule is None else len(rule)
        antds, size, rows = _grow(self.X, self.nominal, self.n_values, self.attrs,
                                  self.n_attributes, self.w, self.y, self.cls, self.min_no,
                                  rows, start, size, self.presorted, self.sparse,
                                  len(rows) >= PARALLEL_ROWS)
        return antds[:size].copy(), rows

    def prune(self, rule, rows, use_whole):
        keep = _prune(self.X, self.nominal, self.w, self.y, self.cls, rows, rule,
                      len(rule), use_whole)
        return rule[:keep]

    def ruleset(self, exp_fp, data, cls, default_dl):
        """``rulesetForOneClass``: the rules for class ``cls`` (built, then
        optimised) and the rows they leave."""
        self.cls = cls
        new = data
        ruleset = []
        dl = min_dl = default_dl
        rstats = None
        stop, positive = False, True
        while not stop and positive:
            if self.pruned:
                new = self.stratify(new)
                grow, prune = self.partition(new)
                rule = self.prune(self.grow(grow)[0], prune, False)
            else:  # the rows are sorted in place, and with them the rule set's
                rule, sorted_rows = self.grow(new)
                if rstats is None:
                    data = sorted_rows
                else:
                    rstats.left.put(len(rstats.left) - 1, sorted_rows)
                new = sorted_rows
            if rstats is None:
                rstats = RuleStats(self, new)
            rstats.add(rule)
            last = len(rstats.rules) - 1
            dl += rstats.relative_dl(last, exp_fp, self.check_err)
            if dl < min_dl:
                min_dl = dl
            rst = rstats.stats[last]
            stop = check_stop(rst, min_dl, dl, self.check_err)
            if not stop:
                ruleset.append(rule)
                new = rstats.left.rows(last)
                positive = rst[5] > SMALL
            else:
                rstats.remove_last()
        if self.pruned:
            for _ in range(self.optimizations):
                ruleset, rstats = self.optimise(exp_fp, data, ruleset, default_dl)
        if ruleset:
            return rstats, rstats.left.rows(len(ruleset) - 1)
        return rstats, data

    def optimise(self, exp_fp, data, ruleset, default_dl):
        """One optimisation pass over ``ruleset``: each rule against its
        replacement and its revision, rules added for positives left, and the
        rules that lengthen the description deleted."""
        new = data
        final = RuleStats(self, data)
        position = 0
        stop, positive = False, True
        dl = min_dl = default_dl
        while not stop and positive:
            residual = position >= len(ruleset)
            new = self.stratify(new)
            grow, prune = self.partition(new)
            if residual:
                final_rule = self.prune(self.grow(grow)[0], prune, False)
            else:
                old = ruleset[position]
                if not self.covered([old], new).any():
                    final.add(old)
                    position += 1
                    continue
                prune = prune[~self.covered(ruleset[position + 1:], prune)]
                replace, grow = self.grow(grow)  # the grow rows sorted in place
                replace = self.prune(replace, prune, True)
                revision = self.prune(self.grow(grow[self.covered([old], grow)], old)[0],
                                      prune, True)
                previous = final.stats[:position]
                candidates = []
                variants = (replace, revision, old)
                # the same for the three: the rules after, counted without this one
                counted, after = self.cascades(variants, ruleset[position + 1:], new)
                if position == 0 and not self.presorted[0]:
                    # counted by the reference on the rows in their own order (``new``
                    # is them shuffled), which only fractional weights can tell apart
                    after = self.cascade(ruleset[1:], data)
                for rule, counts in zip(variants, counted):
                    rules = list(ruleset)
                    rules[position] = rule
                    stats = RuleStats(self, data, rules)
                    stats.count_from(position, new, previous, counts)
                    candidates.append(stats.relative_dl(position, exp_fp, self.check_err,
                                                        after))
                rep_dl, rev_dl, old_dl = candidates
                if old_dl <= rev_dl and old_dl <= rep_dl:
                    final_rule = old
                elif rev_dl <= rep_dl:
                    final_rule = revision
                else:
                    final_rule = replace
            final.add(final_rule)
            rst = final.stats[position]
            if residual:
                dl += final.relative_dl(position, exp_fp, self.check_err)
                if dl < min_dl:
                    min_dl = dl
                stop = check_stop(rst, min_dl, dl, self.check_err)
                if not stop:
                    ruleset.append(final_rule)
                else:
                    final.remove_last()
                    position -= 1
            else:
                ruleset[position] = final_rule
            if final.rules:
                new = final.left.rows(position)
            positive = rst[5] > SMALL
            position += 1
        # the reference adds back the rules after the next one (that one is lost)
        for k in range(position + 1, len(ruleset)):
            final.add(ruleset[k])
        final.reduce_dl(exp_fp, self.check_err)
        return final.rules, final



def _packed(rules):
    """A list of rules as one array of conditions and where each rule's end."""
    antds = np.concatenate([np.asarray(r, np.float64).reshape(-1, 3) for r in rules] +
                           [np.zeros((0, 3))])
    return antds, np.cumsum([0] + [len(r) for r in rules])[1:].astype(np.int64)


def _class_order(counts, seed):
    """The reference's ClassOrder filter (ascending frequency): the classes
    shuffled by ``seed``, then quicksorted by weight. Returns the original class of
    each new position."""
    rng = JavaRandom(seed)
    shuffled = np.arange(len(counts))
    for j in range(len(counts) - 1, 0, -1):
        k = rng.next_int(j + 1)
        shuffled[j], shuffled[k] = shuffled[k], shuffled[j]
    return shuffled[weka_order(counts[shuffled])]


def fit(data, target, options, settings):
    """The contract's fit for ripper."""
    labels = data.columns[target]
    rows = rows_where(~np.isnan(labels))  # and the classes in a byte where they fit
    check_folds(options["folds"], len(rows))
    k = len(data.attributes[target].values)
    codes = np.where(np.isnan(labels), -1, labels).astype(np.int64)
    counts = np.array([_weights(data.weights, codes, c, rows)[1]  # in row order, as
                       for c in range(k)])  # the filter adds them
    del codes  # not held through the fit
    seed = options["seed"]
    rng = JavaRandom(seed)  # Instances.getRandomNumberGenerator: seeded by a row's text
    rng = JavaRandom(_java_hash(_row_text(data, rows[rng.next_int(len(rows))])) + seed)
    original = _class_order(counts, rng.next_int())
    new_code = np.empty(k, np.int64)
    new_code[original] = np.arange(k)
    y = np.zeros(len(labels), code_type(k))
    y[rows] = new_code[labels[rows].astype(np.int64)]
    learner = Fit(data, target, y, rows, options, rng)
    data.spend(target)  # read no more: the classes are y
    ordered = counts[original]
    per_class = []
    rest = rows
    for c in range(k - 1):
        progress.report("RIPPER: classes", c, k - 1)
        if abs(ordered[c]) < SMALL:
            continue
        exp_fp = ordered[c] / _total(ordered[c:])  # the class's share of the rest
        total, positive = _weights(data.weights, y, c, rest)
        if not positive > 0:
            continue
        default_dl = data_dl(exp_fp, 0.0, total, 0.0, positive)
        stats, rest = learner.ruleset(exp_fp, rest, c, default_dl)
        per_class.append((c, stats))
    learner.cls = k - 1
    default = RuleStats(learner, rest)
    default.add(np.zeros((0, 3)))
    per_class.append((k - 1, default))
    rules = []
    for c, stats in per_class:
        for rule, s, dist in zip(stats.rules, stats.stats, stats.dists):
            rules.append({"antds": [[int(a), float(v), None if np.isnan(sp) else float(sp)]
                                    for a, v, sp in rule],
                          "class": int(original[c]), "cover": float(s[0]),
                          "errors": float(s[4]),
                          "dist": [float(dist[new_code[j]]) for j in range(k)]})
    return RipperModel(data.attributes, data.attributes[target].name, rules, options,
                       len(rows))


def _total(values):
    s = 0.0
    for v in values:
        s += v
    return s


class RipperModel(Classifier):
    learner = "ripper"

    def __init__(self, attributes, target, rules, options, instances):
        super().__init__(attributes, target, options, instances)
        self.rules = rules
        self.used = sorted({a[0] for r in rules for a in r["antds"]})

    def to_json(self):
        return body(self, rules=self.rules)

    @classmethod
    def from_json(cls, d):
        return cls(attributes_of(d), d["target"],
                   d["rules"], d["options"], d["instances"])

    def validate(self):
        k = len(self.classes)
        if not self.rules or self.rules[-1]["antds"]:
            raise ValueError("its rules do not end with a default rule")
        for i, r in enumerate(self.rules):
            where = f"rule {i}"
            if set(r) != {"antds", "class", "dist", "cover", "errors"} or not all(
                    isinstance(r[key], (int, float)) and not isinstance(r[key], bool)
                    and math.isfinite(r[key]) for key in ("cover", "errors")):
                raise ValueError(f"{where} is not tests, a class and its figures")
            check_weights(r["dist"], k, where)
            if not isinstance(r["class"], int) or not 0 <= r["class"] < k:
                raise ValueError(f"{where} gives no class of the model's")
            for a, value, split in r["antds"]:
                attr = check_attribute(self.attributes, a, self.target, where)
                ok = (0 <= value < len(attr.values) and split is None) if attr.nominal \
                    else (value in (0, 1) and math.isfinite(split))
                if not ok:
                    raise ValueError(f"{where}'s test does not fit attribute {attr.name!r}")

    def probs(self):
        """Each rule's class distribution: its covered weights, normalised."""
        out = np.zeros((len(self.rules), len(self.classes)))
        for i, r in enumerate(self.rules):
            dist = np.asarray(r["dist"], np.float64)
            total = _total(dist)
            if total > 0:
                out[i] = dist / total
        return out

    def proba(self, columns, n):
        where = {a: i for i, a in enumerate(self.used)}
        X = np.vstack([np.asarray(c, np.float64) for c in columns]) if columns else \
            np.empty((0, n))
        nominal = np.array([self.attributes[a].nominal for a in self.used] or [False],
                           np.bool_)
        antds = np.array([[where[a], v, np.nan if s is None else s]
                          for r in self.rules for a, v, s in r["antds"]],
                         np.float64).reshape(-1, 3)
        ends = np.cumsum([len(r["antds"]) for r in self.rules]).astype(np.int64)
        return _score(X, nominal, antds, ends, self.probs(), n)

    def condition(self, a, value, split):
        attr = self.attributes[a]
        if attr.nominal:
            return f"{attr.name} = {attr.values[int(value)]}"
        return f"{attr.name}{' <= ' if value == 0 else ' >= '}{double_to_string(split, 6)}"

    def _rule_text(self, r):
        antds = " and ".join(f"({self.condition(*a)})" for a in r["antds"])
        return (f"{antds} => {self.target}={self.classes[r['class']]} "
                f"({java_double(r['cover'])}/{java_double(r['errors'])})")

    def text(self):
        body = "".join(self._rule_text(r) + "\n" for r in self.rules)
        return (f"JRIP rules:\n===========\n\n{body}\nNumber of Rules : "
                f"{len(self.rules)}\n")

    def picture(self):
        return pictures.decision_list(self.rows(), "ripper")

    def rows(self):
        return [{"rule": i, "conditions": [self.condition(*a) for a in r["antds"]],
                 "class": self.classes[r["class"]], "coverage": r["cover"],
                 "errors": r["errors"]} for i, r in enumerate(self.rules)]
