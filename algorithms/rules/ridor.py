"""Ridor: ripple-down rules (the book's section 6.2, "rules with exceptions"),
learned as the reference's Ridor learns them.

A node predicts a default class and holds exceptions: rules for the rows of the
other classes. For each class with enough weight (or only the majority class,
``majority_class``) the rows are relabelled "default" or "other", and rules for
"other" are grown one at a time by IREP: a rule is grown on two folds of the
shuffled and stratified rows (each condition the one of highest information gain
on the rows the rule still covers) and pruned on the third (trailing conditions
dropped while they lower the accuracy); rules are added while their accuracy is at
least 0.5. The class whose rules give the highest weighted accuracy becomes the
node's default. The rows each exception covers then get a node of their own,
recursively. A row takes the class of the deepest node it reaches through the
first covering exception at each level.

Every row order of the reference is kept (its shuffles, its unstable sorts, the
order in which it merges the classes' rows), because the rules depend on it.
"""

import math
from collections import deque

import numpy as np

from .. import pictures, stop
from ..dataset import stacked, whole_weights
from ..evaluation import check_folds, stratified
from ..halt import halted
from ..javafmt import double_to_string, java_double
from ..javautil import JavaRandom, _randomize, sorted_by
from ..jit import PRANGE_ONLY, njit, prange
from ..models import Classifier, attributes_of, body, check_array, check_attribute, check_records
from .presorted import (
    kept,
    log2_above,
    rows_kept,
    sorted_rows,
    storage,
    unit_weights,
    weight_at,
)

SMALL = 1e-6
LOG2 = math.log(2.0)
PARALLEL_ROWS = 50_000  # rows from which a rule's candidates pay for two threads
# the classes' rule sets are learned side by side while a rule set's copy of the
# presorted lists (13 bytes an entry: a row, its value, its label) takes at most this
SIDE_BY_SIDE_BYTES = 32 << 20


def _eq(a, b):
    return abs(a - b) < SMALL


NO_LABELS = np.empty(0, np.int8)


def _weight_of(w, ids):
    """The weights of the rows ``ids`` (32-bit numbers) summed in their order, as
    the reference adds them: through the row numbers, with the signature the rule
    sets' kernel compiles."""
    return float(_wsum(w, ids, NO_LABELS, np.int64(-1)))


@njit(cache=True)
def _log2(x):
    return math.log(x) / LOG2 if x > 0 else -np.inf


@njit(cache=True)
def _numeric_cut(x, label, w, min_weight, default_rate):
    """The reference's search for the best cut of sorted values ``x`` (weights ``w``,
    read by ``weight_at``): (rows with a value, end of the first bag, cut, side (0
    at or below, 1 above), gain, accuracy, accurate weight, covered weight); a
    first entry -1 when there is no cut."""
    n = len(x)
    total = n
    weight_all = 0.0
    for i in range(n):
        weight_all += weight_at(w, i)
    min_split = 0.1 * weight_all / 2.0
    if min_split - min_weight < SMALL:
        min_split = min_weight
    elif min_split - 25 > SMALL:
        min_split = 25.0
    first_cover = 0.0
    second_cover = 0.0
    first_accu = 0.0
    second_accu = 0.0
    for i in range(n):
        if np.isnan(x[i]):
            total = i
            break
        wi = weight_at(w, i)
        second_cover += wi
        if label[i] == 0:
            second_accu += wi
    if 2 * min_split - second_cover > SMALL or total == 0:
        return -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    best_gain = 0.0
    side = 0.0
    cut = x[total - 1]
    rate = np.nan
    accu = np.nan
    cover = np.nan
    final = 1
    prev = 0
    log_default = _log2(default_rate)
    for split in range(1, total):
        if abs(x[split] - x[prev]) < SMALL:
            continue
        for i in range(prev, split):
            wi = weight_at(w, i)
            first_cover += wi
            second_cover -= wi
            accurate = wi * (label[i] == 0)  # no branch on the label
            first_accu += accurate
            second_accu -= accurate
        if min_split - first_cover > SMALL or min_split - second_cover > SMALL:
            prev = split
            continue
        # a side whose gain is bounded by the best cannot be taken, and when neither
        # can the logarithms are not needed
        if first_cover >= SMALL and second_cover >= SMALL and \
                first_accu * (log2_above(first_accu, first_cover) - log_default) \
                - best_gain <= SMALL and \
                second_accu * (log2_above(second_accu, second_cover) - log_default) \
                - best_gain <= SMALL:
            prev = split
            continue
        first_rate = first_accu / first_cover if abs(first_cover) >= SMALL else 0.0
        second_rate = second_accu / second_cover if abs(second_cover) >= SMALL else 0.0
        first_gain = 0.0 if abs(first_rate) < SMALL else \
            first_accu * (_log2(first_rate) - log_default)
        second_gain = 0.0 if abs(second_rate) < SMALL else \
            second_accu * (_log2(second_rate) - log_default)
        if first_gain - second_gain > SMALL or \
                (abs(first_gain - second_gain) < SMALL and first_rate - second_rate > -SMALL):
            first, gain, r, a, c = True, first_gain, first_rate, first_accu, first_cover
        else:
            first, gain, r, a, c = False, second_gain, second_rate, second_accu, second_cover
        if gain - best_gain > SMALL:
            cut = (x[split] + x[prev]) / 2
            side = 0.0 if first else 1.0
            rate, accu, cover, best_gain = r, a, c, gain
            final = split
        prev = split
    return float(total), float(final), cut, side, best_gain, rate, accu, cover


@njit(cache=True)
def _wsum(w, ids, label, want):
    """The weights of the rows ``ids`` (of label ``want``, or all when -1), summed
    in order, as the reference adds them."""
    s = 0.0
    for i in range(len(ids)):
        if want < 0 or label[i] == want:
            s += w[ids[i]]
    return s


@njit(cache=True)
def _antd_hit(x, nominal, value, split):
    """Whether value ``x`` satisfies a condition (a missing value never does)."""
    if np.isnan(x):
        return False
    if nominal:
        return abs(x - value) < SMALL
    if abs(value) < SMALL:
        return x - split < SMALL
    return x - split > SMALL


@njit(cache=True, inline="always")
def _set_row(row, a, value, split, cover, accurate, rate):
    row[0], row[1], row[2] = a, value, split
    row[3], row[4], row[5] = cover, accurate, rate


@njit(cache=True)
def _candidate(x, is_nominal, bags, wi, label, min_weight, default_rate, row):
    """The best condition on one attribute (values ``x`` of the rows, weights ``wi``:
    none where every row weighs 1): its gain (0 when it has none) with ``row`` =
    (value, split, cover, accurate, rate, end of the first bag, rows with a value)."""
    if is_nominal:
        cov = np.zeros(bags)
        acc = np.zeros(bags)
        for i in range(len(x)):
            if not np.isnan(x[i]):
                v = int(x[i])
                cov[v] += weight_at(wi, i)
                if label[i] == 0:
                    acc[v] += weight_at(wi, i)
        gain = np.zeros(bags)
        count = 0
        for v in range(bags):
            if cov[v] - min_weight > -SMALL:
                if abs(cov[v]) >= SMALL:
                    gain[v] = acc[v] * (_log2(acc[v] / cov[v]) - _log2(default_rate))
                count += 1
        if count < 2:
            return 0.0
        v = 0
        for u in range(1, bags):  # the first largest; a NaN never wins but at 0
            if gain[u] > gain[v]:
                v = u
        row[0], row[1], row[2], row[3] = v, np.nan, cov[v], acc[v]
        row[4] = acc[v] / cov[v] if abs(cov[v]) >= SMALL else 0.0
        return gain[v]
    order = sorted_by(x)
    return _numeric_candidate(x[order], label[order], wi[order] if len(wi) else wi,
                              min_weight, default_rate, row)


@njit(cache=True)
def _numeric_candidate(xs, ls, ws, min_weight, default_rate, row):
    """The best cut of a numeric attribute, its rows sorted by value (missing last);
    as ``_candidate``."""
    found = _numeric_cut(xs, ls, ws, min_weight, default_rate)
    if found[0] < 0:
        return 0.0
    total, final, cut, side, gain, rate, accurate, covered = found
    row[0], row[1], row[2], row[3], row[4] = side, cut, covered, accurate, rate
    row[5], row[6] = final, total
    return gain


@njit(cache=False)  # holds parallel code, called from _grow (see jit.PRANGE_ONLY)
def _candidates(X, nominal, n_values, attrs, used, ids, w, label, min_weight,
                default_rate, presorted, weighed, threads):
    """Every unused attribute's best condition; with ``exact``, ``presorted`` holds
    each numeric attribute's rows of ``ids`` in order; the rows' weights are
    gathered only where some row weighs other than 1 (``weighed``); with ``threads``
    (see ``jit.threads``), from ``PARALLEL_ROWS`` rows, those are searched two at a
    time (a kernel that calls a parallel one runs several times slower on small data)."""
    m = len(attrs)
    gains = np.zeros(m)
    rows = np.zeros((m, 7))
    exact, srt_rows, srt_off, mark, srt_x, srt_w, srt_lab = presorted
    listed = np.zeros(m, np.bool_)  # searched in the presorted lists
    for counter in range(m):
        listed[counter] = exact and not used[counter] and not nominal[attrs[counter]]
    wide = False
    if threads and len(ids) >= PARALLEL_ROWS:
        wide = True
        _numeric_candidates(np.flatnonzero(listed), srt_off, srt_x, srt_lab, srt_w,
                            min_weight, default_rate, gains, rows)
    wi = w[ids] if weighed else w[:0]  # none: every row weighs 1
    for counter in range(m):
        if used[counter]:
            continue
        a = attrs[counter]
        if listed[counter]:
            if not wide:
                lo, hi = srt_off[counter], srt_off[counter + 1]
                gains[counter] = _numeric_candidate(srt_x[lo:hi], srt_lab[lo:hi],
                                                    srt_w[lo:hi], min_weight, default_rate,
                                                    rows[counter])
        else:
            gains[counter] = _candidate(X[a][ids], nominal[a], n_values[a], wi, label,
                                        min_weight, default_rate, rows[counter])
    return gains, rows


@njit(cache=False, parallel=PRANGE_ONLY)  # called from _candidates (see jit.PRANGE_ONLY)
def _numeric_candidates(counters, srt_off, srt_x, srt_lab, srt_w, min_weight, default_rate,
                        gains, rows):
    """``_numeric_candidate`` of the attributes at positions ``counters``, into
    ``gains`` and ``rows``, two at a time."""
    for j in prange(len(counters)):
        c = counters[j]
        lo, hi = srt_off[c], srt_off[c + 1]
        gains[c] = _numeric_candidate(srt_x[lo:hi], srt_lab[lo:hi], srt_w[lo:hi],
                                      min_weight, default_rate, rows[c])


@njit(cache=True)
def _gathered(srt_rows, srt_off, X, attrs, w, weighed, lab_row, ids, mark, store):
    """The lists of rows ``srt_rows`` (offsets ``srt_off``, one for each of
    ``attrs``) kept to the rows ``ids``, in ``store`` (``storage``), with each
    row's value, weight (where ``weighed``) and label beside it; their offsets."""
    rows, xs, ws, ys = store
    rows, off = rows_kept(srt_rows, srt_off, ids, mark, rows)
    for a in range(len(off) - 1):
        x = X[attrs[a]]
        for o in range(off[a], off[a + 1]):
            r = rows[o]
            xs[o], ys[o] = x[r], lab_row[r]
            if weighed:
                ws[o] = w[r]
    n = len(rows)
    return rows, off, xs[:n], ws[:n if weighed else 0], ys[:n]


@njit(cache=False)  # holds parallel code, called from _ruleset (see jit.PRANGE_ONLY)
def _grow(X, nominal, n_values, attrs, w, ids, label, min_weight, antds, lists, store,
          threads):
    """Grow one rule on the rows ``ids`` (labels 0: other, 1: default): add the
    condition of highest gain while one gains (the first such attribute on a tie).
    ``antds`` rows are (attribute, value, split, cover, accurate, rate); returns
    them, the rule's length, and the grow weights (accurate, covered).

    ``lists`` = (exact, rows sorted per numeric attribute, their offsets, a scratch
    mask, whether weights are kept, each row's label). With ``exact`` (whole
    weights, so that sums do not depend on the order of equal values) a numeric
    attribute's rows come from that presorted list, kept to the rule's rows as it
    grows, instead of the reference's quicksort at every step: the same cuts, the
    same sums. The rule's lists are written to ``store`` (``storage`` for the rows
    ``ids``) with their values, weights and labels beside them, so that a search
    reads memory in order, then narrowed in place. ``threads``: see ``_candidates``."""
    exact, srt_rows, srt_off, mark, weighed, lab_row = lists
    accu = _wsum(w, ids, label, np.int64(0))
    cover = _wsum(w, ids, label, np.int64(-1))
    default_rate = accu / cover
    n_attr = X.shape[0]
    used = np.zeros(n_attr, np.bool_)  # tested by position among attrs, set by index
    unused = n_attr
    size = 0
    srt_x, srt_w, srt_lab = store[1][:0], store[2][:0], store[3][:0]
    if exact:  # each numeric attribute's rows of ids in order
        srt_rows, srt_off, srt_x, srt_w, srt_lab = _gathered(
            srt_rows, srt_off, X, attrs, w, weighed, lab_row, ids, mark, store)
    while True:
        gains, rows = _candidates(X, nominal, n_values, attrs, used, ids, w, label,
                                  min_weight, default_rate,
                                  (exact, srt_rows, srt_off, mark, srt_x, srt_w, srt_lab),
                                  weighed, threads)
        pick = -1
        best_gain = 0.0
        for counter in range(len(attrs)):
            if not used[counter] and gains[counter] - best_gain > SMALL:
                pick, best_gain = counter, gains[counter]
        if pick < 0:
            return antds, size, accu, cover
        best = attrs[pick]
        if size == len(antds):
            more = np.empty((2 * size, 6))
            more[:size] = antds
            antds = more
        _set_row(antds[size], best, rows[pick, 0], rows[pick, 1], rows[pick, 2],
                 rows[pick, 3], rows[pick, 4])
        size += 1
        lo, hi = 0, int(rows[pick, 5])
        if rows[pick, 0] != 0.0:
            lo, hi = int(rows[pick, 5]), int(rows[pick, 6])
        if nominal[best]:
            used[best] = True
            unused -= 1
            at = np.abs(X[best][ids] - rows[pick, 0]) < 0.5  # a missing value is not equal
            ids, label = ids[at], label[at]
        elif exact:  # the bag's rows, in the presorted order
            s = srt_off[pick]
            ids, label = srt_rows[s + lo:s + hi].copy(), srt_lab[s + lo:s + hi].copy()
        else:  # the bag's rows, in the sorted order
            order = sorted_by(X[best][ids])
            ids, label = ids[order[lo:hi]], label[order[lo:hi]]
        default_rate = rows[pick, 4]
        if abs(_wsum(w, ids, label, np.int64(-1))) < SMALL or abs(default_rate - 1.0) < SMALL \
                or unused == 0:
            return antds, size, accu, cover
        if exact:  # in place: the lists are this rule's own
            srt_rows, srt_off, srt_x, srt_w, srt_lab = kept(
                srt_rows, srt_off, srt_x, srt_w, srt_lab, ids, mark, srt_rows, srt_x, srt_w,
                srt_lab)


@njit(cache=True)
def _prune(X, nominal, w, ids, label, antds, size, stats):
    """Drop trailing conditions while they lower the accuracy on the pruning rows
    ``ids``; the rule's statistics go to ``stats`` (worth, worth rate, pruning cover,
    grow cover, grow accurate). Returns the kept length."""
    total = _wsum(w, ids, label, np.int64(-1))
    if size == 0:
        return 0
    rate = np.zeros(size)
    coverage = np.zeros(size)
    worth = np.zeros(size)
    live = np.ones(len(ids), np.bool_)
    for k in range(size):
        a = int(antds[k, 0])
        for i in range(len(ids)):
            if live[i]:
                if _antd_hit(X[a][ids[i]], nominal[a], antds[k, 1], antds[k, 2]):
                    coverage[k] += w[ids[i]]
                    if label[i] == 0:
                        worth[k] += w[ids[i]]
                else:
                    live[i] = False
        if coverage[k] != 0:
            rate[k] = worth[k] / coverage[k]
    n = size
    while n > 1 and rate[n - 2] - rate[n - 1] > SMALL:
        n -= 1
    default_accu = 0.0
    default_rate = 0.0
    if n == 1:
        default_accu = _wsum(w, ids, label, np.int64(0))
        default_rate = default_accu / total
        if default_rate - rate[0] > SMALL:
            n = 0
    if n:
        stats[0], stats[1], stats[2] = worth[n - 1], rate[n - 1], coverage[n - 1]
        stats[3], stats[4] = antds[n - 1, 3], antds[n - 1, 4]
    else:
        stats[0], stats[1], stats[2] = default_accu, default_rate, total
    return n


@njit(cache=True)
def _ruleset(X, nominal, n_values, attrs, w, ids, label, class_count, folds, shuffles,
             init, state, all_data_error, min_weight, exact, srt_rows, srt_off, threads,
             halt):
    """Rules for the rows labelled 0 (other) against 1, added while the best of
    ``shuffles`` builds is at least half accurate (and the stop flag ``halt`` is
    not set). Returns (weighted accuracy, generator state, rule lengths, their
    conditions, their statistics); a length -1 means too few rows for the folds.

    The presorted lists of rows (``srt_rows``, offsets ``srt_off``) hold at least
    the rows ``ids``; every class's rule set reads the same ones. A build copies
    them kept to its rows, so they are narrowed here (a copy of this rule set's
    own) only once the rows left are at most half of them."""
    lengths = np.empty(0, np.int64)
    conds = np.empty((0, 6))
    stats = np.empty((0, 5))
    w_ac = 0.0
    total = _wsum(w, ids, label, np.int64(-1))
    antds = np.empty((16, 6))
    lab_row = np.zeros(X.shape[1], label.dtype)
    for i in range(len(ids)):
        lab_row[ids[i]] = label[i]
    listed = 0  # the most rows an attribute's list holds
    for c in range(len(srt_off) - 1):
        listed = max(listed, srt_off[c + 1] - srt_off[c])
    mark = np.zeros(X.shape[1], np.bool_)
    weighed = not unit_weights(w)
    # where each build's lists are written: made for the first build's rows, and
    # again once the lists above are narrowed, so that builds allocate nothing
    store = storage(srt_rows, srt_off, np.empty(0), weighed, lab_row, np.int64(0))
    stored = 0  # the rows it is made for
    while class_count >= folds:
        best_rate = -1.0
        best_worth = -1.0
        rule = np.zeros(5)
        size = 0
        for _ in range(shuffles):
            if halted(halt):
                return w_ac, state, lengths, conds, stats
            if shuffles > 1:
                shuffled = np.arange(len(ids))
                state = _randomize(shuffled, state)
                ids, label = ids[shuffled], label[shuffled]
            n = len(ids)
            if n < folds:
                return w_ac, state, np.full(1, -1, np.int64), conds, stats
            state = init  # each build starts the generator again from the seed
            order = np.arange(n, dtype=ids.dtype)  # positions, as narrow as the rows
            state = _randomize(order, state)
            order = stratified(order, label, folds)
            first = (folds - 1) * (n // folds) + n % folds
            grow = order[:first].copy()
            state = _randomize(grow, state)
            held = order[first:]
            if exact and len(grow) > stored:
                store = storage(srt_rows, srt_off, np.empty(0), weighed, lab_row, len(grow))
                stored = len(grow)
            antds, size, accu, cover = _grow(
                X, nominal, n_values, attrs, w, ids[grow], label[grow], min_weight, antds,
                (exact, srt_rows, srt_off, mark, weighed, lab_row), store, threads)
            rule[3], rule[4] = cover, accu
            size = _prune(X, nominal, w, ids[held], label[held], antds, size, rule)
            if all_data_error:
                rate = (rule[0] + rule[4]) / (rule[2] + rule[3])
                worth = rule[0] + rule[4]
            else:
                rate, worth = rule[1], rule[0]
            if rate - best_rate > SMALL or (abs(rate - best_rate) < SMALL
                                            and worth - best_worth > SMALL):
                best_rate, best_worth = rate, worth  # the reference keeps the last build
        if 0.5 - best_rate > SMALL or size == 0:
            break
        hit = np.ones(len(ids), np.bool_)
        for k in range(size):
            a = int(antds[k, 0])
            _hits(X[a][ids], nominal[a], antds[k, 1], antds[k, 2], hit)
        cover = 0.0
        class_count = 0.0
        for i in range(len(ids)):
            if hit[i]:
                cover += w[ids[i]]
            elif label[i] == 0:
                class_count += w[ids[i]]
        ids, label = ids[~hit], label[~hit]
        if exact and 2 * len(ids) <= listed:  # the next rule's builds read the rows left
            store = storage(srt_rows, srt_off, np.empty(0), weighed, lab_row,  # freed
                            np.int64(0))  # first
            stored = 0
            srt_rows, srt_off = rows_kept(srt_rows, srt_off, ids, mark,
                                          np.empty(len(srt_rows) + 1, srt_rows.dtype))
            listed = len(ids)
        w_ac += best_rate * (cover / total)
        lengths = np.concatenate((lengths, np.full(1, size, np.int64)))
        conds = np.concatenate((conds, antds[:size].copy()))
        stats = np.concatenate((stats, rule.reshape(1, 5)))
    rest = _wsum(w, ids, label, np.int64(-1))
    return w_ac + (rest - class_count) / total, state, lengths, conds, stats


class Learner:
    """The state one Ridor fit shares: the data, the options and the generator."""

    def __init__(self, columns, nominal, n_values, target, weights, options):
        self.columns = columns
        self.X = stacked(columns, len(columns[0]))
        self.nominal = np.asarray(nominal, np.bool_)
        self.n_values = np.asarray(n_values, np.int64)
        self.attrs = np.array([a for a in range(len(columns)) if a != target], np.int64)
        self.w = weights
        self.folds = options["folds"]
        self.shuffles = options["shuffles"]
        self.all_data_error = options["all_data_error"]
        self.majority = options["majority_class"]
        self.min_weight = options["min_weight"]
        self.init = np.uint64(JavaRandom(options["seed"]).seed)
        # whole weights: sums do not depend on the order of equal values
        self.exact = whole_weights(weights)
        self.state = self.init  # java.util.Random, shared by every build and shuffle
        self.error = 0.0

    def rulesets(self, rows, jobs):
        """``ruleset`` of each job: a function that gives (rows, labels, weight of
        the others) as the job starts, so that a job waiting holds no rows.

        Every job reads the same ``rows``, each in its own order, so each numeric
        attribute is sorted once for all of them, ties in the order of the rows: with whole
        weights, the only case that reads the sorted lists, the order of equal
        values changes no sum. With one shuffle the generator's state reaches no
        build (each restarts it from the seed), so the jobs do not depend on each
        other, and while their lists take at most ``SIDE_BY_SIDE_BYTES`` they are
        learned on two threads (the kernels release the GIL). Otherwise each goes on
        from the generator's state the last left, and holds its copies of the lists
        alone; a large rule's candidates are then searched on two threads."""
        halt = stop.flag()  # the caller's, which stop.each also gives its threads
        rows = np.sort(rows)
        n = len(rows)
        srt_rows, srt_off = sorted_rows(
            self.X, self.attrs,
            [n if self.exact and not self.nominal[a] else 0 for a in self.attrs], rows)
        del rows  # not held through the rule sets
        if self.shuffles == 1 and len(jobs) > 1 and n >= PARALLEL_ROWS and \
                13 * len(srt_rows) <= SIDE_BY_SIDE_BYTES:
            out = stop.each(lambda job: self.ruleset(*job(), (srt_rows, srt_off, False), halt),
                            jobs, threads=2)
            self.state = out[-1][2]
        else:
            out = []
            for job in jobs:
                out.append(self.ruleset(*job(), (srt_rows, srt_off,
                                                 n >= PARALLEL_ROWS), halt))
                self.state = out[-1][2]
        stop.check(halt)
        return [(rate, rules) for rate, rules, _ in out]

    def ruleset(self, ids, label, class_count, lists, halt):
        """(weighted accuracy, the rules, the generator's state after them) for the
        rows labelled 0 (other) / 1: ``lists`` are the presorted lists of ``rulesets``
        and whether to search candidates on two threads."""
        rate, state, lengths, conds, stats = _ruleset(
            self.X, self.nominal, self.n_values, self.attrs, self.w,
            np.asarray(ids, np.int32), np.asarray(label, np.int8), float(class_count),
            self.folds, self.shuffles, self.init, np.uint64(self.state), self.all_data_error,
            self.min_weight, self.exact, *lists, halt)
        stop.check(halt)
        if len(lengths) and lengths[0] < 0:
            raise ValueError(f"folds: a rule's rows are fewer than the {self.folds} folds "
                             "of reduced-error pruning (heavy weights on few rows); "
                             "lower folds")
        rules, at = [], 0
        for size, (worth, _, cover_prune, cover_grow, accu_grow) in zip(lengths, stats):
            rules.append({"antds": [[int(c[0]), bool(self.nominal[int(c[0])]), float(c[1]),
                                     None if self.nominal[int(c[0])] else float(c[2])]
                                    for c in conds[at:at + size]],
                          "cover_grow": float(cover_grow), "accu_grow": float(accu_grow),
                          "cover_prune": float(cover_prune), "worth": float(worth)})
            at += size
        return rate, rules, state

    def merged(self, by_class, i):
        """The rows of class ``i`` (labelled 1) with the others' (0), merged in the
        reference's order (each other class's rows after the rows so far, or before
        them where they are more), the labels in a byte: joined once."""
        ids, labels = deque([by_class[i]]), deque([np.ones(len(by_class[i]), np.int8)])
        size = len(by_class[i])
        for k, other in enumerate(by_class):
            if k == i:
                continue
            zeros = np.zeros(len(other), np.int8)
            if size >= len(other):
                ids.append(other)
                labels.append(zeros)
            else:
                ids.appendleft(other)
                labels.appendleft(zeros)
            size += len(other)
        return np.concatenate(ids), np.concatenate(labels)

    def find_rules(self, by_class, level):
        node = {"level": level + 1, "default": 0, "rules": None, "excepts": None}
        pure = [_weight_of(self.w, b) for b in by_class]
        if sum(p - self.folds > -SMALL for p in pure) <= 1:
            node["default"] = int(np.argmax(pure))
            return node
        total = 0.0
        for p in pure:
            total += p
        if self.majority:
            default = int(np.argmax(pure))
            node["default"] = default
            [(_, final)] = self.rulesets(np.concatenate(by_class), [
                lambda: (*self.merged(by_class, default), total - pure[default])])
            if not final:
                return node
        else:
            best = pure[int(np.argmax(pure))] / total
            final, default = None, -1
            classes = [i for i in range(len(by_class)) if pure[i] >= self.folds]

            def job(i):
                def rows():
                    ids, label = self.merged(by_class, i)
                    return ids, label, _weight_of(self.w, ids) - pure[i]
                return rows

            jobs = [job(i) for i in classes]
            for i, (rate, rules) in zip(classes, self.rulesets(np.concatenate(by_class), jobs)):
                if rate - best > SMALL:
                    final, best, default = rules, rate, i
            if final is None:
                node["default"] = int(np.argmax(pure))
                return node
            node["default"] = default
        if node["level"] == 1:
            self.error = total - pure[default]
        uncovered = list(by_class)
        uncovered[default] = uncovered[default][:0]
        node["rules"] = final
        node["excepts"] = []
        rows = np.concatenate(uncovered)  # every class's, tested at once by a rule
        ends = np.cumsum([len(b) for b in uncovered])
        for rule in final:
            hit = np.split(_covers(rule, self.columns, rows), ends[:-1])
            covered = [b[h] for b, h in zip(uncovered, hit)]
            node["excepts"].append(self.find_rules(covered, node["level"]))
        return node




def _covers(rule, columns, rows):
    """Which of the rows ``rows`` the rule covers."""
    hit = np.ones(len(rows), np.bool_)
    for a, nominal, value, split in rule["antds"]:
        _hits(np.asarray(columns[a][rows], np.float64), nominal, value,
              np.nan if split is None else split, hit)
    return hit


@njit(cache=True)
def _hits(x, nominal, value, split, hit):
    """Clear ``hit`` where the value in ``x`` fails the condition."""
    for i in range(len(x)):
        if hit[i] and not _antd_hit(x[i], nominal, value, split):
            hit[i] = False


NODE_FIELDS = ("level", "default", "rules", "excepts")
RULE_FIELDS = ("antds", "accu_grow", "cover_grow", "cover_prune", "worth")


def _check_shape(root):
    """Raise ValueError unless the tree of exceptions below ``root`` is made of
    nodes and rules with their fields (the figures finite), before any is read."""
    stack = [[root]]
    while stack:
        nodes = stack.pop()
        check_records(nodes, NODE_FIELDS, "node")
        for node in nodes:
            for key, fields in (("rules", RULE_FIELDS), ("excepts", None)):
                if node[key] is None or node[key] == []:
                    continue
                if fields is None:
                    stack.append(node[key])
                    continue
                check_records(node[key], fields, "rule")
                for r in node[key]:
                    check_array([r[f] for f in fields[1:]], "a rule's figures", (4,))
                    if not isinstance(r["antds"], list) or not all(
                            isinstance(a, list) and len(a) == 4 and isinstance(a[1], bool)
                            and _number(a[2]) and (a[3] is None or _number(a[3]))
                            for a in r["antds"]):
                        raise ValueError("a rule's tests are not an attribute, a kind, a "
                                         "value and a split")


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class RidorModel(Classifier):
    learner = "ridor"

    def __init__(self, attributes, target, root, cover, error, options, instances):
        super().__init__(attributes, target, options, instances)
        self.root, self.cover, self.error = root, float(cover), float(error)
        used = set()
        stack = [root]
        while stack:
            node = stack.pop()
            for r in node["rules"] or []:
                used.update(a[0] for a in r["antds"])
            stack.extend(node["excepts"] or [])
        self.used = sorted(used)

    def to_json(self):
        return body(self, root=self.root, cover=self.cover, error=self.error)

    @classmethod
    def from_json(cls, d):
        _check_shape(d["root"])
        check_array([d["cover"], d["error"]], "its cover and error", (2,))
        return cls(attributes_of(d), d["target"],
                   d["root"], d["cover"], d["error"], d["options"], d["instances"])

    def validate(self):
        k = len(self.classes)
        stack = [(self.root, 1)]
        while stack:
            node, level = stack.pop()
            if node.get("level") != level or not isinstance(node.get("default"), int) \
                    or not 0 <= node["default"] < k:
                raise ValueError(f"a node at depth {level} gives no class of the model's")
            rules, excepts = node["rules"] or [], node["excepts"] or []
            if len(rules) != len(excepts):
                raise ValueError(f"a node at depth {level} has rules and exceptions that "
                                 "do not pair")
            for rule in rules:
                for a, nominal, value, split in rule["antds"]:
                    attr = check_attribute(self.attributes, a, self.target, "a rule")
                    ok = (nominal and 0 <= value < len(attr.values)) if attr.nominal else \
                        (not nominal and math.isfinite(split))
                    if not ok:
                        raise ValueError(f"a rule's test does not fit attribute "
                                         f"{attr.name!r}")
            stack.extend((e, level + 1) for e in excepts)

    def classify(self, x, n):
        """The class of each row (``x``: the used columns by attribute index): the
        default of the deepest node reached."""
        out = np.empty(n, np.int64)
        stack = [(self.root, np.arange(n))]
        while stack:
            node, rows = stack.pop()
            left = np.ones(len(rows), np.bool_)
            out[rows] = node["default"]
            for rule, sub in zip(node["rules"] or [], node["excepts"] or []):
                hit = _covers(rule, x, rows) & left
                if hit.any():
                    stack.append((sub, rows[hit]))
                left &= ~hit
        return out

    def proba(self, columns, n):
        x = {a: np.asarray(c, np.float64) for a, c in zip(self.used, columns)}
        out = np.zeros((n, len(self.classes)))
        out[np.arange(n), self.classify(x, n)] = 1.0
        return out

    def _antd_text(self, a, nominal, value, split):
        attr = self.attributes[a]
        if nominal:
            return f"{attr.name} = {attr.values[int(value)]}"
        return f"{attr.name}{' <= ' if _eq(value, 0) else ' > '}{double_to_string(split, 6)}"

    def _rule_text(self, rule, cls):
        antds = " and ".join(f"({self._antd_text(*a)})" for a in rule["antds"])
        return (f"{antds} => {self.target} = {cls}  ({java_double(rule['cover_grow'])}/"
                f"{java_double(rule['cover_grow'] - rule['accu_grow'])}) "
                f"[{java_double(rule['cover_prune'])}/"
                f"{java_double(rule['cover_prune'] - rule['worth'])}]")

    def _node_text(self, node, out):
        if node["level"] == 1:
            out.append(f"{self.target} = {self.classes[node['default']]}  "
                       f"({java_double(self.cover)}/{java_double(self.error)})\n")
        for rule, sub in zip(node["rules"] or [], node["excepts"] or []):
            out.append("         " * node["level"] + "  Except "
                       + self._rule_text(rule, self.classes[sub["default"]]) + "\n")
            self._node_text(sub, out)

    def _size(self, node):
        rules = node["rules"] or []
        return len(rules) + sum(self._size(e) for e in node["excepts"] or [])

    def text(self):
        out = []
        self._node_text(self.root, out)
        return ("RIpple DOwn Rule Learner(Ridor) rules\n"
                "--------------------------------------\n\n" + "".join(out)
                + f"\nTotal number of rules (incl. the default rule): "
                f"{self._size(self.root) + 1}")

    def picture(self):
        return pictures.exceptions(self.rows(), "ridor")

    def rows(self):
        """The exception tree, depth first: one row per rule (the default rule
        first), with its parent rule, its depth and the class it gives."""
        out = [{"rule": 0, "parent": None, "depth": 0, "conditions": [],
                "class": self.classes[self.root["default"]], "coverage": self.cover,
                "errors": self.error}]

        def visit(node, parent):
            for rule, sub in zip(node["rules"] or [], node["excepts"] or []):
                out.append({"rule": len(out), "parent": parent, "depth": node["level"],
                            "conditions": [self._antd_text(*a) for a in rule["antds"]],
                            "class": self.classes[sub["default"]],
                            "coverage": rule["cover_grow"],
                            "errors": rule["cover_grow"] - rule["accu_grow"]})
                visit(sub, out[-1]["rule"])
        visit(self.root, 0)
        return out


def fit(data, target, options, settings):
    """The contract's fit for ridor."""
    y = data.columns[target]
    keep = np.flatnonzero(~np.isnan(y))
    check_folds(options["folds"], len(keep))  # the reference: the default rule alone
    k = len(data.attributes[target].values)
    learner = Learner(data.columns, [a.nominal for a in data.attributes],
                      [len(a.values) for a in data.attributes], target, data.weights,
                      options)
    # rows as 32-bit numbers: the presorted lists, read and narrowed often, hold them
    by_class = [keep[y[keep] == c].astype(np.int32) for c in range(k)]
    cover, known = _weight_of(data.weights, keep.astype(np.int32)), len(keep)
    del keep  # not held through the fit
    data.spend(target)  # read no more: the classes are by_class
    root = learner.find_rules(by_class, 0)
    return RidorModel(data.attributes, data.attributes[target].name, root,
                      cover, learner.error, options, known)
