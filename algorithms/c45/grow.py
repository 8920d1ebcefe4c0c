"""C4.5 decision trees (the book's section 6.1), built exactly as J48 builds them.

Each node chooses, among the attributes whose information gain is at least the
average, the split of highest gain ratio; numeric thresholds come from a scan of
the node's instances in sorted order (each attribute is sorted once, at the root,
and the order is carried down), with J48's minimum split size and MDL correction,
and are then moved down onto a value present in the training data. An instance
whose tested value is missing goes down every branch with a fraction of its weight.
The grown tree is collapsed and pruned with the pessimistic error estimate (subtree
replacement and raising of the largest branch).

Comparisons use J48's tolerance of 1e-6 wherever J48 does, so that ties are broken
the same way.
"""

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numba.typed import List

from .. import memory, progress, stop
from ..classes import class_codes
from ..dataset import row_type, rows_where, stacked, whole_weights
from ..halt import halted
from ..jit import PRANGE_ONLY, njit, prange
from ..rules.presorted import unit_weights, weight_at

SMALL = 1e-6
LOG2 = math.log(2.0)


def gr(a, b):
    """``a`` is greater than ``b`` by more than the tolerance."""
    return a - b > SMALL


def eq(a, b):
    """``a`` and ``b`` are equal within the tolerance."""
    return a - b < SMALL and b - a < SMALL


@njit(cache=True)
def _lf(x):
    return 0.0 if x < 1e-6 else x * math.log(x) / LOG2


@njit(cache=True)
def lf_table(n):
    """``_lf`` of 0..n, for nodes whose weights are whole numbers."""
    out = np.empty(n + 1)
    for i in range(n + 1):
        out[i] = _lf(float(i))
    return out


NO_TABLE = np.empty(0)


@njit(cache=True)
def _split_ent(per_bag, known, total):
    """The split information of ``per_bag`` (unknowns count as one more bag)."""
    r = 0.0
    if known - 0.0 > 1e-6:
        for b in range(per_bag.shape[0]):
            r -= _lf(per_bag[b])
        r -= _lf(total - known)
        r += _lf(total)
    return r


@njit(cache=True)
def _gain_ratio(per_bag, known, total, gain):
    d = _split_ent(per_bag, known, total)
    if d < 1e-6 and d > -1e-6:
        return 0.0
    return gain / (d / total)


@njit(cache=True)
def _gain(per_class_per_bag, per_bag, known, total, old_ent):
    new_ent = 0.0
    for b in range(per_class_per_bag.shape[0]):
        for c in range(per_class_per_bag.shape[1]):
            new_ent += _lf(per_class_per_bag[b, c])
        new_ent -= _lf(per_bag[b])
    return _count_gain(old_ent + new_ent, known, total)


@njit(cache=True)
def _old_ent(per_class, known):
    r = 0.0
    for c in range(per_class.shape[0]):
        r += _lf(per_class[c])
    return _lf(known) - r


@njit(cache=True)
def _value_counts(col, y, idx, w, n_values, n_classes):
    """Class weights per value of a nominal attribute over the known values (summed
    in row order), with their per-value, per-class and overall totals."""
    dist = np.zeros((n_values, n_classes))
    per_bag = np.zeros(n_values)
    per_class = np.zeros(n_classes)
    known = 0.0
    for i in range(idx.shape[0]):
        v = col[idx[i]]
        if not np.isnan(v):
            c = y[idx[i]]
            dist[int(v), c] += w[i]
            per_bag[int(v)] += w[i]
            per_class[c] += w[i]
            known += w[i]
    return dist, per_bag, per_class, known


@njit(cache=True)
def nominal_split(col, y, idx, w, n_values, n_classes, min_obj, total):
    """Gain and gain ratio of a multiway split on a nominal attribute; the gain is
    -1 when fewer than two branches would hold ``min_obj`` instances."""
    dist, per_bag, per_class, known = _value_counts(col, y, idx, w, n_values, n_classes)
    enough = 0
    for b in range(n_values):
        if min_obj - per_bag[b] < 1e-6:
            enough += 1
    if enough <= 1:
        return -1.0, 0.0
    gain = _gain(dist, per_bag, known, total, _old_ent(per_class, known))
    return gain, _gain_ratio(per_bag, known, total, gain)


@njit(cache=True)
def binary_nominal_split(col, y, idx, w, n_values, n_classes, min_obj, total):
    """The best "= value" versus "!= value" split (J48's binary splits): gain, gain
    ratio and the value; gain -1 when none qualifies."""
    full = _value_counts(col, y, idx, w, n_values, n_classes)[0]
    best_gain, best_ratio, best_value = -1.0, 0.0, -1
    for value in range(n_values):
        dist = np.zeros((2, n_classes))
        per_bag = np.zeros(2)
        per_class = np.zeros(n_classes)
        known = 0.0
        for v in range(n_values):
            b = 0 if v == value else 1
            for c in range(n_classes):
                dist[b, c] += full[v, c]
                per_bag[b] += full[v, c]
                per_class[c] += full[v, c]
                known += full[v, c]
        if not (min_obj - per_bag[0] < 1e-6 and min_obj - per_bag[1] < 1e-6):
            continue
        gain = _gain(dist, per_bag, known, total, _old_ent(per_class, known))
        ratio = _gain_ratio(per_bag, known, total, gain)
        if ratio - best_ratio > 1e-6:
            best_gain, best_ratio, best_value = gain, ratio, value
    return best_gain, best_ratio, best_value


@njit(cache=True)
def _min_split(known, n_classes, min_obj):
    """The least weight J48 lets each side of a cut hold."""
    min_split = 0.1 * known / n_classes
    if min_split - min_obj < 1e-6:
        min_split = float(min_obj)
    elif min_split - 25.0 > 1e-6:
        min_split = 25.0
    return min_split


@njit(cache=True)
def _sweep(value, cls, weight, dist, per_bag, min_split, known, total, old_ent):
    """J48's walk over the sorted known values: each row moved to the left bag in
    turn, a cut between two values more than 1e-5 apart scored when both bags hold
    ``min_split``. Returns (best gain, the last row left of its cut, cuts scored).
    ``weight`` empty: every row weighs 1 (``presorted.weight_at``)."""
    best_gain, split_at, candidates = 0.0, -1, 0
    for i in range(value.shape[0] - 1):
        c = cls[i]
        wi = weight_at(weight, i)
        dist[1, c] -= wi
        dist[0, c] += wi
        per_bag[1] -= wi
        per_bag[0] += wi
        if value[i] + 1e-5 < value[i + 1]:
            if min_split - per_bag[0] < 1e-6 and min_split - per_bag[1] < 1e-6:
                gain = _gain(dist, per_bag, known, total, old_ent)
                if gain - best_gain > 1e-6:
                    best_gain = gain
                    split_at = i
                candidates += 1
    return best_gain, split_at, candidates


@njit(cache=True)
def _count_gain(num, known, total):
    """The gain from its numerator, the old entropy minus the new."""
    if num < 1e-6 and num > -1e-6:
        return 0.0
    return (1.0 - (total - known) / total) * num / known


@njit(cache=True)
def _sweep_counts(value, cls, weight, cnt, min_split, known, total, old_ent, table):
    """``_sweep`` for whole weights (``cnt``: the class counts, all in the right
    bag): the bags kept as counts, so that each cut's entropy is looked up in
    ``table``, the same sums of the same doubles. Returns what ``_sweep`` does and
    the weight left of the best cut."""
    k = cnt.shape[1]
    bag = np.zeros(2, np.int64)
    for c in range(k):
        bag[1] += cnt[1, c]
    best_gain, split_at, candidates, best_left = 0.0, -1, 0, 0
    seen = -np.inf
    for i in range(value.shape[0] - 1):
        c = cls[i]
        wi = int(weight_at(weight, i))
        cnt[1, c] -= wi
        cnt[0, c] += wi
        bag[1] -= wi
        bag[0] += wi
        if value[i] + 1e-5 < value[i + 1]:
            if min_split - bag[0] < 1e-6 and min_split - bag[1] < 1e-6:
                new_ent = 0.0
                for b in range(2):
                    for j in range(k):
                        new_ent += table[cnt[b, j]]
                    new_ent -= table[bag[b]]
                if old_ent + new_ent > seen:  # as in _sweep_counts2
                    seen = old_ent + new_ent
                    gain = _count_gain(seen, known, total)
                    if gain - best_gain > 1e-6:
                        best_gain, split_at, best_left = gain, i, bag[0]
                candidates += 1
    return best_gain, split_at, candidates, best_left


@njit(cache=True)
def _sweep_counts2(value, cls, weight, cnt, min_split, known, total, old_ent, table):
    """``_sweep_counts`` for two classes, the four counts held in registers."""
    a0, a1, b0, b1 = 0, 0, cnt[1, 0], cnt[1, 1]
    best_gain, split_at, candidates, best_left = 0.0, -1, 0, 0
    seen = -np.inf
    for i in range(value.shape[0] - 1):
        wi = int(weight_at(weight, i))
        one = wi * cls[i]  # no branch on the class: it follows no pattern
        a1 += one
        b1 -= one
        a0 += wi - one
        b0 -= wi - one
        if value[i] + 1e-5 < value[i + 1]:
            left, right = a0 + a1, b0 + b1
            if min_split - left < 1e-6 and min_split - right < 1e-6:
                new_ent = 0.0 + table[a0] + table[a1] - table[left] + table[b0] + \
                    table[b1] - table[right]
                # the gain rises with old_ent + new_ent: a cut whose sum is no
                # larger than one already scored cannot be taken
                if old_ent + new_ent > seen:
                    seen = old_ent + new_ent
                    gain = _count_gain(seen, known, total)
                    if gain - best_gain > 1e-6:
                        best_gain, split_at, best_left = gain, i, left
                candidates += 1
    return best_gain, split_at, candidates, best_left


@njit(cache=True)
def _numeric_counts(value, cls, weight, n_classes, min_obj, total, table):
    """The cut search of ``numeric_split`` for whole weights: (best gain, the last
    row left of its cut, cuts scored (-1: too few rows), known weight, weight left
    of the cut)."""
    cnt = np.zeros((2, n_classes), np.int64)
    if n_classes == 2:
        for i in range(value.shape[0]):
            wi = int(weight_at(weight, i))
            cnt[1, 0] += wi
            cnt[1, 1] += wi * cls[i]
        cnt[1, 0] -= cnt[1, 1]
    else:
        for i in range(value.shape[0]):
            cnt[1, cls[i]] += int(weight_at(weight, i))
    per_class = np.zeros(n_classes)
    known = 0
    for c in range(n_classes):
        per_class[c] = cnt[1, c]
        known += cnt[1, c]
    min_split = _min_split(float(known), n_classes, min_obj)
    if 2.0 * min_split - value.shape[0] > 1e-6:
        return -1.0, -1, -1, float(known), 0
    old_ent = _old_ent(per_class, float(known))
    if n_classes == 2:
        g, at, candidates, left = _sweep_counts2(value, cls, weight, cnt, min_split,
                                                 float(known), total, old_ent, table)
    else:
        g, at, candidates, left = _sweep_counts(value, cls, weight, cnt, min_split,
                                                float(known), total, old_ent, table)
    return g, at, candidates, float(known), left


@njit(cache=True)
def _numeric_weights(value, cls, weight, n_classes, min_obj, total):
    """``_numeric_counts`` for any weights, the bags summed as doubles."""
    dist = np.zeros((2, n_classes))
    per_bag = np.zeros(2)
    per_class = np.zeros(n_classes)
    known = 0.0
    for i in range(value.shape[0]):
        wi = weight_at(weight, i)
        dist[1, cls[i]] += wi
        per_bag[1] += wi
        per_class[cls[i]] += wi
        known += wi
    min_split = _min_split(known, n_classes, min_obj)
    if 2.0 * min_split - value.shape[0] > 1e-6:
        return -1.0, -1, -1, known, 0.0
    g, at, candidates = _sweep(value, cls, weight, dist, per_bag, min_split, known, total,
                               _old_ent(per_class, known))
    left = 0.0
    for i in range(at + 1):
        left += weight_at(weight, i)
    return g, at, candidates, known, left


@njit(cache=True)
def numeric_split(value, cls, weight, n_classes, min_obj, total, mdl, table):
    """J48's threshold search over the node's known values of one attribute, in
    sorted order with their classes and weights (none: each weighs 1); ``table`` is
    ``lf_table`` when all weights are whole numbers (or empty). Returns (gain, gain
    ratio, midpoint); gain -1 when no split qualifies."""
    if table.shape[0] > 0:
        best_gain, split_at, candidates, known, left = _numeric_counts(
            value, cls, weight, n_classes, min_obj, total, table)
    else:
        best_gain, split_at, candidates, known, left = _numeric_weights(
            value, cls, weight, n_classes, min_obj, total)
    if candidates <= 0:
        return -1.0, 0.0, 0.0
    if mdl:
        best_gain -= math.log(candidates) / LOG2 / total
    if best_gain < 1e-6:
        return -1.0, 0.0, 0.0
    lo = value[split_at]
    hi = value[split_at + 1]
    mid = (lo + hi) / 2.0
    if mid == hi:
        mid = lo
    right = 0.0
    for i in range(split_at + 1, value.shape[0]):
        right += weight_at(weight, i)
    return best_gain, _gain_ratio(np.array([left, right]), known, total, best_gain), mid


@njit(cache=True)
def below(v, threshold):
    """A numeric test as J48 makes it (``x <= t`` in print): ``v - t < 1e-6``, so a
    value less than 1e-6 above the threshold goes left too."""
    return v - threshold < SMALL


@njit(cache=True)
def subsets(col, idx, kind, threshold, value):
    """The branch of each instance: 0/1 for ``<=``/``>`` a threshold (kind 0,
    ``below``), the value for a multiway nominal split (kind 1), 0/1 for ``=``/``!=``
    a value (kind 2); -1 when the value is missing (32-bit: one per row of the
    node)."""
    out = np.empty(idx.shape[0], np.int32)
    for i in range(idx.shape[0]):
        out[i] = branch(col[idx[i]], kind, threshold, value)
    return out


@njit(cache=True)
def branch(v, kind, threshold, value):
    """The branch of the value ``v`` (see ``subsets``)."""
    if np.isnan(v):
        return -1
    if kind == 0:
        return 0 if below(v, threshold) else 1
    if kind == 1:
        return int(v)
    return 0 if int(v) == value else 1


@njit(cache=True)
def class_weights(y, idx, w, n_classes):
    out = np.zeros(n_classes)
    for i in range(idx.shape[0]):
        out[y[idx[i]]] += w[i]
    return out


@njit(cache=True)
def distribution(y, idx, w, sub, nb, k, merged):
    """A split's distribution on a node's rows as J48 builds it: each row with a
    value added to its branch in order (``merged``: the second branch of a binary
    split of a nominal value as the known rows' totals less the first, as J48 makes
    it when it chooses the split), then each row without one spread over the
    branches by their shares of the known weight (``addInstWithUnknown``). Returns
    the class weights per branch and J48's running totals beside them, in one array:
    per branch, per class, overall. J48 spreads a row by a branch's running total
    over the overall one, and merges the branches into the per-class totals; sums of
    the matrix's cells differ from those in their last bits where a row was spread,
    and so can break a tie the other way."""
    dist = np.zeros((nb, k))
    tot = np.zeros(nb + k + 1)
    for i in range(idx.shape[0]):
        b = sub[i]
        if b >= 0:
            c = y[idx[i]]
            dist[b, c] += w[i]
            tot[b] += w[i]
            tot[nb + c] += w[i]
            tot[nb + k] += w[i]
    if merged:
        for c in range(k):
            dist[1, c] = tot[nb + c] - dist[0, c]
        tot[1] = tot[nb + k] - tot[0]
    if tot[nb + k] < 1e-6 and tot[nb + k] > -1e-6:
        probs = np.full(nb, 1.0 / nb)
    else:
        probs = tot[:nb] / tot[nb + k]
    for i in range(idx.shape[0]):
        if sub[i] < 0:
            c = y[idx[i]]
            tot[nb + c] += w[i]
            tot[nb + k] += w[i]
            for b in range(nb):
                part = probs[b] * w[i]
                dist[b, c] += part
                tot[b] += part
    return dist, tot


@njit(cache=True)
def totals_of(dist):
    """``distribution``'s totals of a distribution known only as its matrix (the
    sums of its cells): J48's where no row was spread."""
    nb, k = dist.shape
    tot = np.empty(nb + k + 1)
    tot[:nb] = dist.sum(axis=1)
    tot[nb:nb + k] = dist.sum(axis=0)
    tot[nb + k] = tot[:nb].sum()
    return tot


@njit(cache=True)
def shares(tot, nb):
    """Each branch's share of a split's weight (``distribution``'s totals), by which
    a row lacking the tested value is spread: J48's ``perBag / totaL``."""
    total = tot[tot.shape[0] - 1]
    if total < 1e-6 and total > -1e-6:
        return np.full(nb, 1.0 / nb)
    return tot[:nb] / total


@njit(cache=True)
def split_distribution(y, idx, w, sub, fractions, n_classes):
    """Per-bag class weights: known instances in their bag, missing ones spread by
    ``fractions``."""
    dist = np.zeros((fractions.shape[0], n_classes))
    for i in range(idx.shape[0]):
        c = y[idx[i]]
        if sub[i] >= 0:
            dist[sub[i], c] += w[i]
        else:
            for b in range(fractions.shape[0]):
                dist[b, c] += w[i] * fractions[b]
    return dist


# -- distributions (J48's Distribution) ------------------------------------------

@njit(cache=True)
def max_class(per_class):
    """The first class of largest weight (a later one must be larger by 1e-6)."""
    best, at = 0.0, 0
    for c in range(per_class.shape[0]):
        if per_class[c] - best > 1e-6:
            best, at = per_class[c], c
    return at


@njit(cache=True)
def bag_class(dist, b):
    """The majority class of bag ``b``; the overall one when the bag is empty."""
    if dist[b].sum() > 1e-6:
        return max_class(dist[b])
    return max_class(dist.sum(axis=0))


@njit(cache=True)
def incorrect(per_class):
    """Weight not of the majority class."""
    return per_class.sum() - per_class[max_class(per_class)]


@njit(cache=True)
def add_errors(n, e, cf, z):
    """The pessimistic number of additional errors of a leaf: the upper limit of
    the binomial confidence interval at confidence ``cf`` (``z`` its normal
    quantile), interpolated linearly below one error."""
    if e < 1:
        base = n * (1 - cf ** (1 / n))
        if e == 0:
            return base
        return base + e * (add_errors(n, 1.0, cf, z) - base)
    if e + 0.5 >= n:
        return max(n - e, 0.0)
    f = (e + 0.5) / n
    r = (f + z * z / (2 * n) + z * math.sqrt(f / n - f * f / n + z * z / (4 * n * n))) \
        / (1 + z * z / n)
    return r * n - e


@njit(cache=True)
def estimated_errors(per_class, cf, z):
    total = per_class.sum()
    if total < 1e-6 and total > -1e-6:
        return 0.0
    e = incorrect(per_class)
    return e + add_errors(total, e, cf, z)


def confidence_quantile(cf):
    """``cf`` as the reference holds it (a Java float) and the normal quantile of
    1 - cf (computed in float arithmetic, as there)."""
    cf = float(np.float32(cf))
    return cf, NormalDist().inv_cdf(float(np.float32(1) - np.float32(cf)))


# -- the tree in flat arrays -----------------------------------------------------

NUMERIC_SPLIT, NOMINAL_SPLIT, VALUE_SPLIT = 0, 1, 2

# integer node fields: attribute (-1 leaf), split kind, nominal value of a binary
# split, number of branches, first child (children are consecutive), offset of the
# distribution, empty leaf
ATTR, KIND, VALUE, BAGS, CHILD, DIST, EMPTY = range(7)


@njit(cache=True)
def _grow_rows(a, n, fill):
    """The rows of ``a`` in a buffer with room for ``n`` (at least doubled), the
    new ones ``fill``."""
    out = np.full((max(n, 2 * a.shape[0]), a.shape[1]), fill, a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(cache=True)
def _grow(a, n):
    """``a`` in a buffer with room for ``n`` (at least doubled)."""
    out = np.zeros(max(n, 2 * a.shape[0]), a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(cache=True)
def _dist(dists, nodes, i, k):
    return dists[nodes[i, DIST]:nodes[i, DIST] + nodes[i, BAGS] * k].reshape(
        (nodes[i, BAGS], k))


@njit(cache=True)
def _totals(dists, nodes, i, k):
    """A split node's running totals (``distribution``), kept after its matrix."""
    at = nodes[i, DIST] + nodes[i, BAGS] * k
    return dists[at:at + nodes[i, BAGS] + k + 1]


@njit(cache=True)
def node_shares(dists, nodes, i, k):
    """Split node ``i``'s branches' shares of its weight."""
    return shares(_totals(dists, nodes, i, k), nodes[i, BAGS])


@njit(cache=True)
def running_total(w):
    """The weights' sum added one after another, as J48's ``totaL`` is (numpy's sum
    adds in pairs)."""
    total = 0.0
    for i in range(w.shape[0]):
        total += w[i]
    return total


@njit(cache=True)
def node_total(dists, nodes, i, k):
    """Node ``i``'s overall weight: a leaf's running total kept after its class
    weights, a split's after its totals."""
    if nodes[i, ATTR] < 0:
        return dists[nodes[i, DIST] + k]
    return dists[nodes[i, DIST] + nodes[i, BAGS] * (k + 1) + k]


@njit(cache=True)
def node_classes(dists, nodes, i, k):
    """Node ``i``'s weight per class: a leaf's distribution, a split's running
    per-class totals (what J48 merges its branches into)."""
    if nodes[i, ATTR] < 0:
        return dists[nodes[i, DIST]:nodes[i, DIST] + k]
    at = nodes[i, DIST] + nodes[i, BAGS] * (k + 1)
    return dists[at:at + k]


@njit(cache=True)
def branch_data(sub, nb, w, frac):
    """Each branch's (positions, weights) given each instance's branch ``sub`` (a
    missing value, -1, to every branch of fraction above 1e-6, its weight scaled),
    one branch after another: positions, weights, and where each branch starts."""
    take = frac > 1e-6
    base = np.zeros(nb + 1, np.int64)
    missing = 0
    for j in range(sub.shape[0]):
        if sub[j] >= 0:
            base[sub[j] + 1] += 1
        else:
            missing += 1
    for b in range(nb):
        base[b + 1] += base[b] + (missing if take[b] else 0)
    pos = np.empty(base[nb], np.int32)  # positions in the node, 32-bit (one per row)
    wb = np.empty(base[nb])
    fill = base[:nb].copy()
    for j in range(sub.shape[0]):
        b = sub[j]
        if b >= 0:
            pos[fill[b]] = j
            wb[fill[b]] = w[j]
            fill[b] += 1
        else:
            for b in range(nb):
                if take[b]:
                    pos[fill[b]] = j
                    wb[fill[b]] = w[j] * frac[b]
                    fill[b] += 1
    return pos, wb, base


@njit(cache=True)
def _branch_data(sub, nb, w, frac):
    """``branch_data`` as lists of each branch's positions and weights."""
    pos, wb, base = branch_data(sub, nb, w, frac)
    out_pos = List()
    out_w = List()
    for b in range(nb):
        out_pos.append(pos[base[b]:base[b + 1]])
        out_w.append(wb[base[b]:base[b + 1]])
    return out_pos, out_w


@njit(cache=True)
def _entry_weights(srt, s, e):
    """The weights of a node's sorted entries ``s`` to ``e``: each entry's row's
    weight in the node (``srt[5]`` by the rows ``srt[4]``), or none where every row
    of the node weighs 1 (``srt[5]`` empty)."""
    if srt[5].shape[0] == 0:
        return srt[5]
    out = np.empty(e - s)
    for o in range(s, e):
        out[o - s] = srt[5][srt[4][o]]
    return out


@njit(cache=True)
def _evaluate_one(a, X, y, idx, w, srt, n_values, k, min_obj, total, mdl, binary, table):
    """(gain, gain ratio, threshold midpoint, value) of the best split on attribute
    ``a``; gain -1 when it has none. ``srt``: the node's sorted entries (values,
    classes, where each attribute's start and end, rows, and the rows' weights:
    see ``_entry_weights``)."""
    if n_values[a] == 0:
        s, e = srt[2][a], srt[3][a]
        g, r, mid = numeric_split(srt[0][s:e], srt[1][s:e], _entry_weights(srt, s, e), k,
                                  min_obj, total, mdl, table)
        return g, r, mid, -1
    if binary:
        g, r, v = binary_nominal_split(X[a], y, idx, w, n_values[a], k, min_obj, total)
        return g, r, 0.0, v
    g, r = nominal_split(X[a], y, idx, w, n_values[a], k, min_obj, total)
    return g, r, 0.0, -1


CHAIN = 100  # splits that send every row with a value one way, one below another


@njit(cache=True)
def split_point(col, scope, sorted_rows, mid, idx, chain):
    """The midpoint moved down onto a training value as J48 moves it: a walk over
    the rows in order keeps a value when it exceeds the last one kept by more than
    1e-6 and the midpoint by less than 1e-6. The walk ends on the largest such
    value unless another lies within 1e-6 below it, so only then is it made (and
    then the rows' order decides, as it does for J48).

    The walk can end low enough that the test ``below`` sends every one of the
    node's rows (``idx``) with a value down one branch. J48 keeps that split: the
    other branch gets shares of the rows missing the value, and below it the same
    rows are split again with those shares smaller, until another split wins; with
    no such rows, or where none wins, J48 splits without end until its stack
    overflows. So the split is kept where rows miss the value and ``chain`` allows
    another such split below those above the node; else the largest value is kept:
    the split whose gain was measured.

    ``sorted_rows``: the training rows with a value, in the order of their values
    (the values themselves would take twice the memory); none (the midpoint is
    kept) where the threshold is moved after the growth (``_moved``)."""
    if sorted_rows.shape[0] == 0:
        return mid
    lo, hi = 0, sorted_rows.shape[0]
    while lo < hi:  # the largest value v with v - mid < 1e-6, computed as J48 does
        m = (lo + hi) // 2
        if col[sorted_rows[m]] - mid < SMALL:
            lo = m + 1
        else:
            hi = m
    if lo == 0:
        return -1.7976931348623157e308
    top = col[sorted_rows[lo - 1]]
    j = lo - 2
    while j >= 0 and col[sorted_rows[j]] == top:
        j -= 1
    if j < 0 or top - col[sorted_rows[j]] > SMALL:
        return top
    kept = _walk(col, scope, mid)
    left = right = gone = 0
    for i in range(idx.shape[0]):
        v = col[idx[i]]
        if np.isnan(v):
            gone += 1
        elif below(v, kept):
            left += 1
        else:
            right += 1
    return kept if (left > 0 and right > 0) or (gone > 0 and chain) else top


@njit(cache=True)
def _walk(col, scope, mid):
    """J48's walk over the training rows in order (``scope``; none: every row of
    ``col``): the value it moves the midpoint ``mid`` to."""
    kept = -1.7976931348623157e308
    n = scope.shape[0] if scope.shape[0] > 0 else col.shape[0]
    for i in range(n):
        v = col[scope[i]] if scope.shape[0] > 0 else col[i]
        if v - kept > SMALL and v - mid < SMALL:  # false for a missing value (NaN)
            kept = v
    return kept


@njit(cache=True)
def unsplittable(per_class, min_obj):
    """A node J48 makes a leaf before it scores a split: less than twice
    ``min_obj`` of weight, or of one class."""
    total = per_class.sum()
    return 2.0 * min_obj - total > 1e-6 or abs(total - per_class[max_class(per_class)]) < 1e-6


@njit(cache=True)
def chosen(gains, ratios, n_values, multi_valued, n_all):
    """The attribute J48 splits on given each one's best gain and gain ratio (gain
    -1: none): among those whose gain is at least the average (a nominal attribute
    of many values not counted in it), the first of highest ratio; -1 for none."""
    average, counted, best_a = 0.0, 0, -1
    for a in range(gains.shape[0]):
        if gains[a] >= 0 and (n_values[a] == 0 or multi_valued or
                              0.3 * n_all - n_values[a] > 1e-6):
            average += gains[a]
            counted += 1
    if counted > 0:
        average /= counted
        best_ratio = 0.0
        for a in range(gains.shape[0]):
            if gains[a] >= 0 and gains[a] >= average - 1e-3 and \
                    ratios[a] - best_ratio > 1e-6:
                best_a, best_ratio = a, ratios[a]
        if best_a >= 0 and best_ratio < 1e-6:
            best_a = -1
    return best_a


def _select_split(X, y, idx, w, srt, n_values, k, min_obj, mdl, binary, multi_valued,
                 n_all, table, values, value_off, scope, chain):
    """J48's choice of split for one node's data (C45ModelSelection): among the
    attributes whose gain is at least the average, the one of highest gain ratio;
    a numeric threshold moved down onto a training value (``split_point``; ``values``
    the rows in the order of each attribute's values, ``scope`` the training rows in
    order, empty for all of ``X``'s; ``chain``: whether the split may send every row
    with a value one way, as ``split_point`` says). Returns
    (attribute or -1 for a leaf, kind, threshold, value, the node's class weights,
    the threshold's midpoint: where the split's distribution is measured)."""
    n = idx.shape[0]
    m = X.shape[0]
    per_class = class_weights(y, idx, w, k)
    total = per_class.sum()
    best_a = -1
    mids = np.zeros(m)
    vals = np.full(m, -1, np.int64)
    if not unsplittable(per_class, min_obj):
        node_table = table
        for j in range(n):
            if w[j] != math.floor(w[j]):
                node_table = NO_TABLE
                break
        gains, ratios = np.empty(m), np.empty(m)
        for a in prange(m):  # every attribute's best split (np.int64: a prange index
            gains[a], ratios[a], mids[a], vals[a] = _evaluate_one(  # is unsigned)
                np.int64(a), X, y, idx, w, srt, n_values, k, min_obj, total, mdl, binary,
                node_table)
        best_a = chosen(gains, ratios, n_values, multi_valued, n_all)
    if best_a < 0:
        return -1, -1, 0.0, -1, per_class, 0.0
    a = best_a
    if n_values[a] == 0:
        return a, NUMERIC_SPLIT, split_point(
            X[a], scope, values[value_off[a]:value_off[a + 1]], mids[a], idx, chain), -1, \
            per_class, mids[a]
    if binary:
        return a, VALUE_SPLIT, 0.0, vals[a], per_class, 0.0
    return a, NOMINAL_SPLIT, 0.0, -1, per_class, 0.0


select_split = njit(cache=True)(_select_split)
# the same on two threads, for a node of WIDE_CELLS rows times attributes or more;
# called from Python only (see jit.PRANGE_ONLY)
select_split_wide = njit(cache=True, parallel=PRANGE_ONLY)(_select_split)
WIDE_CELLS = 50_000


@njit(cache=True)
def spread(X, y, a, kind, threshold, value, nb, idx, w, k, chosen):
    """Each instance's branch of a split, and the split's distribution on that data
    with its totals (``distribution``): missing values spread in proportion to the
    known weight of each branch. ``chosen``: the split is being made at its node
    (not its distribution reset for other rows, as pruning does)."""
    sub = subsets(X[a], idx, kind, threshold, value)
    dist, tot = distribution(y, idx, w, sub, nb, k, chosen and kind == VALUE_SPLIT)
    return sub, dist, tot


@njit(cache=True)
def spread_at(X, y, a, kind, threshold, mid, value, nb, idx, w, k):
    """``spread`` of a split whose threshold was moved from its midpoint ``mid``:
    the rows go by the threshold, but the distribution (the counts its leaves print,
    the shares a missing value is spread by) is the midpoint's, where J48 measured
    the split. The two differ only where the threshold moved across a value of the
    node, less than 1e-6 above it."""
    if kind != NUMERIC_SPLIT or threshold == mid:
        return spread(X, y, a, kind, threshold, value, nb, idx, w, k, True)
    _, dist, tot = spread(X, y, a, kind, mid, value, nb, idx, w, k, True)
    return subsets(X[a], idx, kind, threshold, value), dist, tot


@njit(cache=True)
def grow(X, n_values, y, k, idx0, w0, entries, start0, end0, values, value_off,
         min_obj, mdl, binary, multi_valued, n_all, table, chains, halt, count):
    """Grow the tree depth-first as J48 does (see the module docstring), until
    ``halt[0]`` is set; ``count[0]`` counts the nodes grown (progress).

    ``X``: attributes by row (NaN missing, nominal values as codes); ``entries``:
    each numeric attribute's rows with a known value and a class, in sorted order,
    as (row, value, class) arrays, attribute ``a``'s from ``start0[a]`` to
    ``end0[a]``; ``values``: each numeric attribute's rows with a value, in the
    order of their values (thresholds move onto them). A node's entries are ranges
    of these arrays: a split deals them to its branches in place (``deal``), unless
    a row of the node lacks the tested value and goes down several branches: then
    the largest branch keeps the node's ranges and the others get arrays of their
    own (``child_sorted``). An entry weighs what its row weighs in the node: a node
    whose rows do not all weigh 1 writes their weights by row (``row_w``, one
    array for the tree) before its split is chosen. A numeric attribute with no
    rows in ``values`` keeps its cuts' midpoints, to be moved after the growth
    (``_moved``), and its splits' node values: the least, the last below the
    midpoint and the first above (``bounds``). At most ``chains`` splits that send
    every row with a value one way follow one another (``split_point``). Returns
    (n_nodes, nodes, thresholds, dists, bounds, the longest such run)."""
    m = X.shape[0]
    nodes = np.full((64, 7), -1, np.int64)
    thresholds = np.zeros(64)
    bounds = np.zeros((64, 3))
    dists = np.zeros(1024)
    n_dist = 0
    n_nodes = 1
    stack_node = List([0])
    stack_idx = List([idx0])
    stack_w = List([w0])
    stack_ent = List([entries])
    stack_start = List([start0])
    stack_end = List([end0])
    stack_chain = List([np.int64(0)])  # see split_point
    deepest = np.int64(0)
    branch_of = np.full(X.shape[1], -1, np.int32)  # a row's branch at the node split
    all_rows = idx0[:0]  # none: thresholds move onto values of every row
    none = np.empty(0)
    row_w = none  # each row's weight in the node, once a node needs them
    while len(stack_node) > 0 and not halted(halt):
        count[0] += 1
        i = stack_node.pop()
        idx = stack_idx.pop()
        w = stack_w.pop()
        ent = stack_ent.pop()
        start = stack_start.pop()
        end = stack_end.pop()
        chain = stack_chain.pop()
        n = idx.shape[0]
        weights = none
        if not unit_weights(w):  # else the entries need no weights
            if row_w.shape[0] == 0:
                row_w = np.empty(X.shape[1])
            for j in range(n):
                row_w[idx[j]] = w[j]
            weights = row_w
        best_a, kind, threshold, value, per_class, mid = select_split(
            X, y, idx, w, (ent[1], ent[2], start, end, ent[0], weights), n_values,
            k, min_obj, mdl, binary, multi_valued, n_all, table, values, value_off,
            all_rows, chain < chains)
        if best_a < 0:
            nodes[i, ATTR] = -1
            nodes[i, BAGS] = 1
            if n_dist + k + 1 > dists.shape[0]:
                dists = _grow(dists, n_dist + k + 1)
            nodes[i, DIST] = n_dist
            dists[n_dist:n_dist + k] = per_class
            dists[n_dist + k] = running_total(w)
            nodes[i, EMPTY] = 1 if abs(dists[n_dist + k]) < 1e-6 else 0
            n_dist += k + 1
            continue
        a = best_a
        nodes[i, ATTR] = a
        nodes[i, EMPTY] = 0
        nodes[i, KIND] = kind
        nodes[i, BAGS] = n_values[a] if kind == NOMINAL_SPLIT else 2
        nodes[i, VALUE] = value
        thresholds[i] = threshold
        if kind == NUMERIC_SPLIT and value_off[a + 1] == value_off[a]:
            bounds[i] = cut_bounds(ent[1], start[a], end[a], threshold)
        nb = nodes[i, BAGS]
        sub, dist, tot = spread_at(X, y, a, kind, threshold, mid, value, nb, idx, w, k)
        size = nb * k + tot.shape[0]
        if n_dist + size > dists.shape[0]:
            dists = _grow(dists, n_dist + size)
        nodes[i, DIST] = n_dist
        dists[n_dist:n_dist + nb * k] = dist.ravel()
        dists[n_dist + nb * k:n_dist + size] = tot
        n_dist += size
        if n_nodes + nb > nodes.shape[0]:
            nodes = _grow_rows(nodes, n_nodes + nb, -1)
            thresholds = _grow(thresholds, n_nodes + nb)
            bounds = _grow_rows(bounds, n_nodes + nb, 0.0)
        nodes[i, CHILD] = n_nodes
        n_nodes += nb
        frac = shares(tot, nb)
        pos, wb = _branch_data(sub, nb, w, frac)
        missing = False
        one_way = np.int64(-1)  # the one branch every row with a value goes down, or -2
        for j in range(n):
            branch_of[idx[j]] = sub[j]
            missing = missing or sub[j] < 0
            if sub[j] >= 0 and one_way != sub[j]:
                one_way = sub[j] if one_way == -1 else -2
        chain = chain + 1 if one_way >= 0 else np.int64(0)
        deepest = max(deepest, chain)
        first = np.int64(0)  # the largest branch, which keeps the node's ranges
        for b in range(nb):
            if pos[b].shape[0] > pos[first].shape[0]:
                first = b
        if missing:  # rows that go down several branches: the others get copies
            rows, vals, clss, base, offsets, first_start, first_end = child_sorted(
                branch_of, frac, ent[0], ent[1], ent[2], start, end, nb, first)
        else:  # every row goes down one branch: the node's ranges dealt in place
            starts, ends = deal(ent[0], ent[1], ent[2], start, end, branch_of, nb, first,
                                n - pos[first].shape[0])
        for b in range(nb - 1, -1, -1):
            stack_node.append(nodes[i, CHILD] + b)
            stack_idx.append(idx[pos[b]])
            stack_w.append(wb[b])
            stack_chain.append(chain)
            if missing and b == first:
                stack_ent.append(ent)
                stack_start.append(first_start)
                stack_end.append(first_end)
            elif missing:
                lo, hi = base[b], base[b + 1]
                stack_ent.append((rows[lo:hi], vals[lo:hi], clss[lo:hi]))
                stack_start.append(offsets[b, :m].copy())
                stack_end.append(offsets[b, 1:].copy())
            else:
                stack_ent.append(ent)
                stack_start.append(starts[b].copy())
                stack_end.append(ends[b].copy())
    return n_nodes, nodes, thresholds, dists, bounds, deepest


@njit(cache=True)
def cut_bounds(vals, s, e, mid):
    """A node's values of a numeric split, sorted in ``vals[s:e]``: the least, the
    last below the midpoint ``mid`` and the first above it."""
    lo, hi = s, e
    while lo < hi:
        m = (lo + hi) // 2
        if vals[m] <= mid:
            lo = m + 1
        else:
            hi = m
    return np.array([vals[s], vals[lo - 1], vals[lo]])


def _deal(rows, vals, clss, start, end, branch_of, nb, first, spare):
    """A node's sorted entries dealt to its branches in place, when each of its rows
    goes down one branch (``branch_of``): within each attribute's range, branch
    ``first`` (the largest) is compacted where it starts and the others follow it in
    turn, each keeping its order, through a buffer of ``spare`` entries (the rows
    of the other branches). Returns each branch's start and end per attribute."""
    m = start.shape[0]
    starts = np.empty((nb, m), np.int64)
    ends = np.empty((nb, m), np.int64)
    for a in prange(m):
        t_row = np.empty(spare + 1, rows.dtype)  # every entry is written to both places
        t_val = np.empty(spare + 1)
        t_cls = np.empty(spare + 1, clss.dtype)
        sizes = np.zeros(nb, np.int64)
        s, e = start[a], end[a]
        at, t = s, 0
        for o in range(s, e):  # without a branch on the entry's branch: at most one
            r, v, c = rows[o], vals[o], clss[o]  # of the two places moves on
            b = branch_of[r]
            sizes[b] += 1
            kept = np.int64(b == first)
            rows[at], vals[at], clss[at] = r, v, c
            t_row[t], t_val[t], t_cls[t] = r, v, c
            at += kept
            t += 1 - kept
        starts[first, a], ends[first, a] = s, at
        for b in range(nb):
            if b != first:
                starts[b, a] = at
                at += sizes[b]
                ends[b, a] = at
        if nb == 2:  # the other branch is the buffer, in order
            o = starts[1 - first, a]
            rows[o:o + t], vals[o:o + t], clss[o:o + t] = t_row[:t], t_val[:t], t_cls[:t]
            continue
        cursor = starts[:, a].copy()
        for q in range(t):
            b = branch_of[t_row[q]]
            o = cursor[b]
            rows[o], vals[o], clss[o] = t_row[q], t_val[q], t_cls[q]
            cursor[b] = o + 1
    return starts, ends


deal = njit(cache=True)(_deal)
deal_wide = njit(cache=True, parallel=PRANGE_ONLY)(_deal)  # attributes side by side


@njit(cache=True)
def child_sorted(branch_of, frac, srow, sval, scls, start, end, nb, first):
    """Each branch's sorted entries, filtered from the node's (attribute ``a``'s from
    ``start[a]`` to ``end[a]``) in one pass: the presorting carried down the tree.
    An entry whose split value is missing goes to every branch of fraction above
    1e-6 (its weight, the row's, is scaled in the branch's weights by row).

    Branch ``first`` is compacted in place, at the start of each of the node's
    ranges; the others get arrays of their own. Returns those arrays (rows,
    values, classes: one branch after another), where each branch starts in them
    (``base``) and its offsets per attribute, and branch ``first``'s start and end
    per attribute."""
    m = start.shape[0]
    take = frac > 1e-6
    sizes = np.zeros((nb, m + 1), np.int64)
    for a in range(m):  # a row's branch is looked up again below: no array an entry
        for o in range(start[a], end[a]):
            b = branch_of[srow[o]]
            if b >= 0:
                sizes[b, a + 1] += 1
            else:
                for b in range(nb):
                    if take[b]:
                        sizes[b, a + 1] += 1
    sizes[first] = 0
    base = np.zeros(nb + 1, np.int64)  # branch b's entries: [base[b], base[b + 1])
    for b in range(nb):
        base[b + 1] = base[b] + sizes[b].sum()
    rows = np.empty(base[nb], srow.dtype)
    vals = np.empty(base[nb])
    clss = np.empty(base[nb], scls.dtype)
    first_start, first_end = start.copy(), start.copy()
    cursor = base[:nb].copy()
    for a in range(m):
        at = start[a]
        for o in range(start[a], end[a]):
            r, v, c = srow[o], sval[o], scls[o]
            b0 = branch_of[r]
            for b in range(b0 if b0 >= 0 else 0, b0 + 1 if b0 >= 0 else nb):
                if b0 < 0 and not take[b]:
                    continue
                if b == first:  # at <= o: only entries already read are written
                    srow[at], sval[at], scls[at] = r, v, c
                    at += 1
                else:
                    j = cursor[b]
                    rows[j], vals[j], clss[j] = r, v, c
                    cursor[b] = j + 1
        first_end[a] = at
    offsets = np.empty((nb, m + 1), np.int64)
    for b in range(nb):
        offsets[b] = np.cumsum(sizes[b])
    return rows, vals, clss, base, offsets, first_start, first_end


@njit(cache=True)
def _make_leaf(nodes, dists, i, k):
    """Node ``i`` made a leaf of its running per-class totals (J48's ``NoSplit`` of
    the split's distribution)."""
    merged = node_classes(dists, nodes, i, k).copy()
    total = node_total(dists, nodes, i, k)
    nodes[i, ATTR] = -1
    nodes[i, BAGS] = 1
    dists[nodes[i, DIST]:nodes[i, DIST] + k] = merged
    dists[nodes[i, DIST] + k] = total


@njit(cache=True)
def collapse(n_nodes, nodes, dists, k):
    """Replace a subtree by a leaf where it makes no fewer training errors."""
    errors = np.zeros(n_nodes)
    for i in range(n_nodes - 1, -1, -1):  # children come after their parent
        if nodes[i, ATTR] < 0:
            errors[i] = incorrect(_dist(dists, nodes, i, k)[0])
        else:
            for b in range(nodes[i, BAGS]):
                errors[i] += errors[nodes[i, CHILD] + b]
    stack = [0]
    while len(stack) > 0:
        i = stack.pop()
        if nodes[i, ATTR] < 0:
            continue
        if errors[i] >= incorrect(node_classes(dists, nodes, i, k)) - 1e-3:
            _make_leaf(nodes, dists, i, k)
        else:
            for b in range(nodes[i, BAGS]):
                stack.append(nodes[i, CHILD] + b)


@njit(cache=True)
def _subtree_errors(nodes, dists, i, k, cf, z):
    total = 0.0
    stack = [i]
    while len(stack) > 0:
        j = stack.pop()
        if nodes[j, ATTR] < 0:
            total += estimated_errors(_dist(dists, nodes, j, k)[0], cf, z)
        else:
            for b in range(nodes[j, BAGS]):
                stack.append(nodes[j, CHILD] + b)
    return total


@njit(cache=True)
def _descend(X, y, nodes, thresholds, dists, i, idx, w, k, cf, z, write):
    """Pass other data down subtree ``i``, missing values spread by the known
    weights at each split. Returns the subtree's estimated errors on that data (for
    subtree raising) and, with ``write``, makes it the subtree's training data:
    distributions and empty leaves."""
    total = 0.0
    s_node = List([i])
    s_idx = List([idx])
    s_w = List([w])
    while len(s_node) > 0:
        j = s_node.pop()
        jdx = s_idx.pop()
        jw = s_w.pop()
        if nodes[j, ATTR] < 0:
            per_class = class_weights(y, jdx, jw, k)
            total += estimated_errors(per_class, cf, z)
            if write:
                dists[nodes[j, DIST]:nodes[j, DIST] + k] = per_class
                dists[nodes[j, DIST] + k] = running_total(jw)
                if abs(dists[nodes[j, DIST] + k]) >= 1e-6:
                    nodes[j, EMPTY] = 0
            continue
        sub, dist, tot = spread(X, y, nodes[j, ATTR], nodes[j, KIND], thresholds[j],
                                nodes[j, VALUE], nodes[j, BAGS], jdx, jw, k, False)
        nb = nodes[j, BAGS]
        if write:
            at = nodes[j, DIST] + nb * k
            dists[nodes[j, DIST]:at] = dist.ravel()
            dists[at:at + tot.shape[0]] = tot
        pos, wb = _branch_data(sub, nb, jw, shares(tot, nb))
        for b in range(nb):
            s_node.append(nodes[j, CHILD] + b)
            s_idx.append(jdx[pos[b]])
            s_w.append(wb[b])
    return total


@njit(cache=True)
def largest_branch(dists, nodes, i, k):
    """The child on node ``i``'s branch of largest weight (the last of those within
    1e-6 of it): the one subtree raising would put in ``i``'s place."""
    per_bag = _totals(dists, nodes, i, k)
    largest, best = 0, 0.0
    for b in range(nodes[i, BAGS]):
        if best - per_bag[b] < 1e-6:
            best, largest = per_bag[b], b
    return nodes[i, CHILD] + largest


@njit(cache=True)
def take_split(nodes, thresholds, i, c):
    """Node ``i`` takes node ``c``'s split and children (subtree raising)."""
    for field in (ATTR, KIND, VALUE, BAGS, CHILD, DIST):
        nodes[i, field] = nodes[c, field]
    thresholds[i] = thresholds[c]


@njit(cache=True)
def prune(X, y, nodes, thresholds, dists, idx0, w0, k, cf, z, raising):
    """Prune bottom-up with the pessimistic error estimate: replace a subtree by a
    leaf, or by its largest branch (subtree raising), where that is no worse.

    Raising passes a node's training data down its largest branch. Rather than
    keep every node's data from the growing (a row for every level it passes), the
    data goes down again beside the walk, from the root's (``idx0``, ``w0``): the
    same spread as the growing made, so the same rows and weights, held only for
    the nodes on the path and their waiting siblings."""
    empty_idx, empty_w = idx0[:0], w0[:0]
    s_node = List([0])
    s_state = List([0])
    s_idx = List([idx0 if raising else empty_idx])
    s_w = List([w0 if raising else empty_w])
    while len(s_node) > 0:
        i = s_node.pop()
        state = s_state.pop()
        idx = s_idx.pop()
        w = s_w.pop()
        if nodes[i, ATTR] < 0:
            continue
        nb = nodes[i, BAGS]
        if state == 0:
            s_node.append(i)
            s_state.append(1)
            s_idx.append(idx)
            s_w.append(w)
            if raising:  # spread by the shares the growth spread by: the node's
                sub = subsets(X[nodes[i, ATTR]], idx, nodes[i, KIND],  # distribution
                              thresholds[i], nodes[i, VALUE])
                pos, wb = _branch_data(sub, nb, w, node_shares(dists, nodes, i, k))
            for b in range(nb - 1, -1, -1):
                c = nodes[i, CHILD] + b
                s_node.append(c)
                s_state.append(0)
                if raising and nodes[c, ATTR] >= 0:  # a leaf needs no data
                    s_idx.append(idx[pos[b]])
                    s_w.append(wb[b])
                else:
                    s_idx.append(empty_idx)
                    s_w.append(empty_w)
            continue
        c = largest_branch(dists, nodes, i, k)
        branch = 1.7976931348623157e308
        if raising:
            branch = _descend(X, y, nodes, thresholds, dists, c, idx, w, k, cf, z,
                              np.bool_(False))
        as_leaf = estimated_errors(node_classes(dists, nodes, i, k), cf, z)
        as_tree = _subtree_errors(nodes, dists, i, k, cf, z)
        if as_leaf - (as_tree + 0.1) < 1e-6 and as_leaf - (branch + 0.1) < 1e-6:
            _make_leaf(nodes, dists, i, k)
            continue
        if branch - (as_tree + 0.1) < 1e-6:
            take_split(nodes, thresholds, i, c)
            _descend(X, y, nodes, thresholds, dists, i, idx, w, k, cf, z, np.bool_(True))
            s_node.append(i)
            s_state.append(0)
            s_idx.append(idx)
            s_w.append(w)
    return nodes


@dataclass
class Options:
    confidence: float = 0.25
    min_leaf: int = 2
    pruned: bool = True
    subtree_raising: bool = True
    binary_splits: bool = False
    mdl_correction: bool = True
    collapse: bool = True


def _table(w):
    """``lf_table`` up to the total weight when all weights are whole numbers."""
    total = w.sum()
    if len(w) and total < 1e8 and whole_weights(w):
        return lf_table(int(total))
    return NO_TABLE


@njit(cache=True)
def _fill_entries(ranked, known, col, y, rows, vals, clss, at, by_value):
    """One attribute's entries from its rows in sorted order (``ranked``, the first
    ``known`` with a value): the rows with a class from ``at`` on, with their
    values; and every row with a value in ``by_value`` (unless empty), in order.
    Returns the end."""
    every = by_value.shape[0] == 0
    for o in range(known):
        r = ranked[o]
        if not every:
            by_value[o] = r
        if y[r] >= 0:
            rows[at], vals[at], clss[at] = r, col[r], y[r]
            at += 1
    return at


def _presort(X, n_values, y, by_value):
    """One sort of each numeric attribute's known values, for thresholds and the
    scan order: (the sorted entries of the rows with a class, as ``grow`` takes
    them: row, value and class arrays, and where each attribute's entries start
    and end; every row with a known value, in the order of its value, where
    ``by_value``, else none; each attribute's offset in those). The entries are
    dealt in place as the tree grows, so that order is kept apart: thresholds move
    onto it at the node, or without it after the growth (``_moved``)."""
    n_all = X.shape[1]
    numeric = [a for a, k in enumerate(n_values) if k == 0]
    has_class = y >= 0
    every = bool(has_class.all())
    known = np.zeros(len(n_values), np.int64)  # rows with a known value
    entries = np.zeros(len(n_values), np.int64)  # of them, those with a class
    for a in numeric:
        seen = ~np.isnan(X[a])
        known[a] = np.count_nonzero(seen)
        entries[a] = known[a] if every else np.count_nonzero(seen & has_class)
    start = np.concatenate(([0], np.cumsum(entries)[:-1])).astype(np.int64)
    end = start + entries
    value_off = np.concatenate(([0], np.cumsum(known if by_value else 0 * known))
                               ).astype(np.int64)
    size = int(entries.sum())
    index = row_type(n_all)
    rows, vals = np.empty(size, index), np.empty(size)
    clss = np.empty(size, y.dtype)
    values = np.empty(value_off[-1], index)  # rows in the order of their values

    def one(a):  # attributes side by side: the sort and the kernel release the GIL
        ranked = np.argsort(X[a])  # NaN sorts last; ties: any order
        _fill_entries(ranked, known[a], X[a], y, rows, vals, clss, start[a],
                      values[:0] if every else values[value_off[a]:value_off[a + 1]])
        if every and by_value:
            values[value_off[a]:value_off[a + 1]] = rows[start[a]:end[a]]

    stop.each(one, numeric, rows=n_all)
    return (rows, vals, clss), start, end, values, value_off


@njit(cache=True)
def _tops(col, mids):
    """For each of the ascending ``mids``, the largest value of ``col`` less than
    SMALL above it (J48's split point, as ``split_point`` finds it; -Double.MAX_VALUE
    for none), and the largest value below that (NaN for none): in one pass, each
    value kept among the two largest of the first midpoint it counts for (it counts
    for those after too), then the midpoints in turn."""
    k = mids.shape[0]
    first, second = np.full(k, np.nan), np.full(k, np.nan)  # NaN: none
    for v in col:
        j = _first(mids, v)
        if j < k:  # (not for a missing value, NaN)
            if not v <= first[j]:
                second[j], first[j] = first[j], v
            elif v < first[j] and not v <= second[j]:
                second[j] = v
    tops, below = np.full(k, -1.7976931348623157e308), np.full(k, np.nan)
    top = under = np.nan
    for j in range(k):
        new = first[j] if top != top or first[j] > top else top
        best = np.nan
        for c in (top, under, first[j], second[j]):
            if c < new and not c <= best:
                best = c
        top, under = new, best
        if top == top:
            tops[j] = top
        below[j] = under
    return tops, below


@njit(cache=True)
def _first(mids, v):
    """The first of the ascending ``mids`` that ``v`` lies less than SMALL above."""
    lo, hi = 0, mids.shape[0]
    while lo < hi:
        m = (lo + hi) // 2
        if v - mids[m] < SMALL:
            hi = m
        else:
            lo = m + 1
    return lo


@njit(cache=True)
def _moved_on(col, thresholds, bounds):
    """The thresholds of one attribute's splits that kept their midpoints, moved as
    ``split_point`` moves them from J48's top value and the one below it
    (``_tops``) and their nodes' ``bounds``; and whether each sends its node's rows
    as its midpoint did."""
    mids = np.unique(thresholds)
    tops, under = _tops(col, mids)
    every = np.empty(0, np.int32)  # none: every row (32-bit, as the growth's scope)
    walked = np.full(mids.shape[0], np.nan)  # a midpoint's walk, made once
    out = np.empty_like(thresholds)
    for i in range(thresholds.shape[0]):
        j = np.searchsorted(mids, thresholds[i])
        out[i] = tops[j]
        if under[j] == under[j] and not tops[j] - under[j] > SMALL:  # the walk decides
            if walked[j] != walked[j]:
                walked[j] = _walk(col, every, mids[j])
            if below(bounds[i, 0], walked[j]):  # a row goes left (one right: bounds[2])
                out[i] = walked[j]
        if not below(bounds[i, 1], out[i]) or below(bounds[i, 2], out[i]):
            return out, False
    return out, True


def _moved(X, n_nodes, nodes, thresholds, bounds):
    """Move the thresholds of the splits that kept their midpoints (see ``grow``)
    onto the values J48 moves them to (``moved_cuts``); False, leaving them, where
    one would send a row of its node down the other branch than its midpoint did."""
    nodes = nodes[:n_nodes]
    split = np.flatnonzero((nodes[:, ATTR] >= 0) & (nodes[:, KIND] == NUMERIC_SPLIT))
    out = moved_cuts(lambda a: X[a], nodes[split, ATTR], thresholds[split], bounds[split],
                     X.shape[1])
    if out is None:
        return False
    thresholds[split] = out
    return True


def moved_cuts(column, attributes, mids, bounds, rows):
    """The thresholds of cuts on ``attributes`` at midpoints ``mids``, with their
    nodes' ``bounds`` (``cut_bounds``), moved onto the values J48 moves them to: one
    pass over each attribute's values (``column(a)``, the ``rows`` in their order)
    finds every cut's top value and the one below it (``_tops``), and J48's walk
    over the rows runs where those two lie within 1e-6; two attributes at once.
    None where one would send a row of its node down the other branch than its
    midpoint did."""
    groups = [np.flatnonzero(attributes == a) for a in np.unique(attributes).tolist()]
    done = stop.each(lambda at: _moved_on(column(int(attributes[at[0]])), mids[at],
                                          bounds[at]), groups, rows=rows)
    if not all(same for _, same in done):
        return None
    out = mids.copy()
    for at, (moved, _) in zip(groups, done):
        out[at] = moved
    return out


def _grown(X, n_values, y, n_classes, weights, opt, chains, by_value):
    """``grow``'s tree, thresholds moving at their nodes where ``by_value``, with
    at most ``chains`` one-way splits in a run; and the rows with a class and their
    weights."""
    n_all = len(y)
    entries, start, end, values, value_off = _presort(X, n_values, y, by_value)
    memory.give_back(n_all)  # the sort's scratch, before the growth's arrays
    idx = rows_where(y >= 0)  # 32-bit where the rows fit, as PART's: one compile of
    # the kernels the two share; they read the classes and weights of these rows only
    w = weights if len(idx) == n_all else weights[idx]
    multi_valued = bool(len(n_values)) and all(
        k > 0 and not 0.3 * n_all - k > SMALL for k in n_values)
    halt = stop.flag()
    tree = grow(
        X, n_values, y, n_classes, idx, w, entries, start, end, values, value_off,
        float(opt.min_leaf), opt.mdl_correction, opt.binary_splits, multi_valued,
        float(n_all), _table(w), np.int64(chains), halt,
        progress.counter("C4.5: nodes grown"))
    del entries, values
    stop.check(halt)
    return (*tree, idx, w)


def fit(columns, n_values, y, n_classes, weights, options):
    """Grow, collapse and prune a tree; return its flat arrays (nodes, thresholds,
    dists) with node 0 the root.

    ``columns``: float64 arrays (NaN missing; nominal values as codes),
    ``n_values``: each nominal column's number of values (0 for numeric), ``y``:
    class codes (-1 missing), ``weights``: instance weights.
    """
    n_all = len(y)
    X = stacked(columns, n_all)
    n_values = np.asarray(n_values, np.int64)
    y = class_codes(y, n_classes)
    weights = np.asarray(weights, np.float64)
    # the thresholds move after the growth, unless one would send a row of its node
    # down the other branch: then the tree is grown again, each moving at its node
    grown = _grown(X, n_values, y, n_classes, weights, options, 0, False)
    n_nodes, nodes, thresholds, dists, bounds, _, idx, w = grown
    if not _moved(X, n_nodes, nodes, thresholds, bounds):
        grown = _grown(X, n_values, y, n_classes, weights, options, CHAIN, True)
        if grown[5] >= CHAIN:  # a run J48 makes without end, until its stack overflows:
            # none, as where no row misses the value (the splits whose gain was measured)
            grown = _grown(X, n_values, y, n_classes, weights, options, 0, True)
        n_nodes, nodes, thresholds, dists, bounds, _, idx, w = grown
    opt = options
    raising = opt.pruned and opt.subtree_raising
    if opt.collapse:
        collapse(n_nodes, nodes, dists, n_classes)
    if opt.pruned:
        cf, z = confidence_quantile(opt.confidence)
        nodes = prune(X, y, nodes, thresholds, dists, idx, w, n_classes, cf, z,
                      raising)
    return nodes, thresholds, dists
