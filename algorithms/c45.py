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
import sys
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numba import njit

SMALL = 1e-6
LOG2 = math.log(2.0)


def gr(a, b):
    return a - b > SMALL


def sm(a, b):
    return b - a > SMALL


def eq(a, b):
    return a - b < SMALL and b - a < SMALL


def gr_or_eq(a, b):
    return b - a < SMALL


def sm_or_eq(a, b):
    return a - b < SMALL


@njit(cache=True, nogil=True)
def _lf(x):
    return 0.0 if x < 1e-6 else x * math.log(x) / LOG2


@njit(cache=True, nogil=True)
def _split_ent(per_bag, known, total):
    """The split information of ``per_bag`` (unknowns count as one more bag)."""
    r = 0.0
    if known - 0.0 > 1e-6:
        for b in range(per_bag.shape[0]):
            r -= _lf(per_bag[b])
        r -= _lf(total - known)
        r += _lf(total)
    return r


@njit(cache=True, nogil=True)
def _gain_ratio(per_bag, known, total, gain):
    d = _split_ent(per_bag, known, total)
    if d < 1e-6 and d > -1e-6:
        return 0.0
    return gain / (d / total)


@njit(cache=True, nogil=True)
def _gain(per_class_per_bag, per_bag, known, total, old_ent):
    new_ent = 0.0
    for b in range(per_class_per_bag.shape[0]):
        for c in range(per_class_per_bag.shape[1]):
            new_ent += _lf(per_class_per_bag[b, c])
        new_ent -= _lf(per_bag[b])
    num = old_ent + new_ent  # old entropy minus new entropy
    if num < 1e-6 and num > -1e-6:
        return 0.0
    return (1.0 - (total - known) / total) * num / known


@njit(cache=True, nogil=True)
def _old_ent(per_class, known):
    r = 0.0
    for c in range(per_class.shape[0]):
        r += _lf(per_class[c])
    return _lf(known) - r


@njit(cache=True, nogil=True)
def nominal_split(col, y, idx, w, n_values, n_classes, min_obj, total):
    """Gain and gain ratio of a multiway split on a nominal attribute; the gain is
    -1 when fewer than two branches would hold ``min_obj`` instances."""
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
    enough = 0
    for b in range(n_values):
        if min_obj - per_bag[b] < 1e-6:
            enough += 1
    if enough <= 1:
        return -1.0, 0.0, dist
    gain = _gain(dist, per_bag, known, total, _old_ent(per_class, known))
    return gain, _gain_ratio(per_bag, known, total, gain), dist


@njit(cache=True, nogil=True)
def binary_nominal_split(col, y, idx, w, n_values, n_classes, min_obj, total):
    """The best "= value" versus "!= value" split (J48's binary splits): gain, gain
    ratio, the value and the two-bag distribution; gain -1 when none qualifies."""
    full = np.zeros((n_values, n_classes))
    for i in range(idx.shape[0]):
        v = col[idx[i]]
        if not np.isnan(v):
            full[int(v), y[idx[i]]] += w[i]
    best_gain, best_ratio, best_value = -1.0, 0.0, -1
    best = np.zeros((2, n_classes))
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
            best[:, :] = dist
    return best_gain, best_ratio, best_value, best


@njit(cache=True, nogil=True)
def numeric_split(col, y, idx, w, order, n_classes, min_obj, total, mdl):
    """J48's threshold search over the node's known values in sorted order.

    ``order`` lists positions into ``idx``/``w`` sorted by value, missing values
    excluded. Returns (gain, gain ratio, midpoint, index of the last instance on
    the left in ``order``); gain -1 when no split qualifies.
    """
    n = order.shape[0]
    dist = np.zeros((2, n_classes))
    per_bag = np.zeros(2)
    per_class = np.zeros(n_classes)
    known = 0.0
    for i in range(n):
        p = order[i]
        c = y[idx[p]]
        dist[1, c] += w[p]
        per_bag[1] += w[p]
        per_class[c] += w[p]
        known += w[p]
    min_split = 0.1 * known / n_classes
    if min_split - min_obj < 1e-6:
        min_split = float(min_obj)
    elif min_split - 25.0 > 1e-6:
        min_split = 25.0
    if 2.0 * min_split - n > 1e-6:
        return -1.0, 0.0, 0.0, -1
    old_ent = _old_ent(per_class, known)
    best_gain, split_at, candidates, last = 0.0, -1, 0, 0
    for nxt in range(1, n):
        if col[idx[order[nxt - 1]]] + 1e-5 < col[idx[order[nxt]]]:
            for i in range(last, nxt):
                p = order[i]
                c = y[idx[p]]
                dist[1, c] -= w[p]
                dist[0, c] += w[p]
                per_bag[1] -= w[p]
                per_bag[0] += w[p]
            if min_split - per_bag[0] < 1e-6 and min_split - per_bag[1] < 1e-6:
                gain = _gain(dist, per_bag, known, total, old_ent)
                if gain - best_gain > 1e-6:
                    best_gain = gain
                    split_at = nxt - 1
                candidates += 1
            last = nxt
    if candidates == 0:
        return -1.0, 0.0, 0.0, -1
    if mdl:
        best_gain -= math.log(candidates) / LOG2 / total
    if best_gain < 1e-6:
        return -1.0, 0.0, 0.0, -1
    lo = col[idx[order[split_at]]]
    hi = col[idx[order[split_at + 1]]]
    mid = (lo + hi) / 2.0
    if mid == hi:
        mid = lo
    per_bag[:] = 0.0
    for i in range(n):
        p = order[i]
        per_bag[0 if i <= split_at else 1] += w[p]
    return best_gain, _gain_ratio(per_bag, known, total, best_gain), mid, split_at


@njit(cache=True, nogil=True)
def subsets(col, idx, kind, threshold, value):
    """The branch of each instance: 0/1 for ``<=``/``>`` a threshold (kind 0), the
    value for a multiway nominal split (kind 1), 0/1 for ``=``/``!=`` a value (kind
    2); -1 when the value is missing."""
    out = np.empty(idx.shape[0], np.int64)
    for i in range(idx.shape[0]):
        v = col[idx[i]]
        if np.isnan(v):
            out[i] = -1
        elif kind == 0:
            out[i] = 0 if v <= threshold else 1
        elif kind == 1:
            out[i] = int(v)
        else:
            out[i] = 0 if int(v) == value else 1
    return out


@njit(cache=True, nogil=True)
def class_weights(y, idx, w, n_classes):
    out = np.zeros(n_classes)
    for i in range(idx.shape[0]):
        out[y[idx[i]]] += w[i]
    return out


@njit(cache=True, nogil=True)
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


# -- distributions ---------------------------------------------------------------

def max_class(per_class):
    """The first class of largest weight (ties and near-ties to the first)."""
    best, at = 0.0, 0
    for c, x in enumerate(per_class):
        if gr(x, best):
            best, at = x, c
    return at


def bag_class(dist, b):
    """The majority class of bag ``b``; the overall one when the bag is empty."""
    if gr(dist[b].sum(), 0):
        return max_class(dist[b])
    return max_class(dist.sum(axis=0))


def incorrect(dist):
    """Weight not of the majority class, for class weights (per bag or not)."""
    per_class = dist.sum(axis=0) if dist.ndim == 2 else dist
    return per_class.sum() - per_class[max_class(per_class)]


def fractions(dist):
    """The share of each bag in the known weight, as missing values are spread."""
    per_bag = dist.sum(axis=1)
    total = per_bag.sum()
    if eq(total, 0):
        return np.full(len(per_bag), 1.0 / len(per_bag))
    return per_bag / total


def add_errors(n, e, cf):
    """The pessimistic number of additional errors of a leaf: the upper limit of
    the binomial confidence interval at confidence ``cf`` (a Java float, as in the
    reference), with linear interpolation below one error."""
    if e < 1:
        base = n * (1 - math.pow(cf, 1 / n))
        if e == 0:
            return base
        return base + e * (add_errors(n, 1, cf) - base)
    if e + 0.5 >= n:
        return max(n - e, 0.0)
    z = NormalDist().inv_cdf(float(np.float32(1) - np.float32(cf)))
    f = (e + 0.5) / n
    r = (f + z * z / (2 * n) + z * math.sqrt(f / n - f * f / n + z * z / (4 * n * n))) \
        / (1 + z * z / n)
    return r * n - e


def estimated_errors(dist, cf):
    total = dist.sum()
    if eq(total, 0):
        return 0.0
    e = incorrect(dist)
    return e + add_errors(total, e, cf)


# -- the tree --------------------------------------------------------------------

NUMERIC_SPLIT, NOMINAL_SPLIT, VALUE_SPLIT = 0, 1, 2


class Node:
    """A node: a leaf (``attr`` -1) with its class distribution (1 x classes), or a
    split with the distribution of its branches (branches x classes), missing
    values spread. ``idx``/``w`` are the node's training instances, kept for
    subtree raising."""

    __slots__ = ("attr", "kind", "threshold", "value", "children", "dist", "empty",
                 "idx", "w")

    def __init__(self, dist, idx, w):
        self.attr, self.kind, self.threshold, self.value = -1, -1, 0.0, -1
        self.children = []
        self.dist = dist
        self.empty = False
        self.idx, self.w = idx, w

    @property
    def leaf(self):
        return self.attr < 0

    def make_leaf(self):
        self.attr, self.kind, self.children = -1, -1, []
        self.dist = self.dist.sum(axis=0, keepdims=True)


@dataclass
class Options:
    confidence: float = 0.25
    min_leaf: int = 2
    pruned: bool = True
    subtree_raising: bool = True
    binary_splits: bool = False
    mdl_correction: bool = True
    collapse: bool = True


class C45:
    """Grow, collapse and prune a tree on numeric/nominal columns.

    ``columns``: float64 arrays (NaN missing; nominal as codes), ``n_values``: the
    number of values of each nominal column (0 for numeric), ``y``: class codes
    (-1 missing), ``weights``: instance weights.
    """

    def __init__(self, columns, n_values, y, n_classes, weights, options):
        self.columns = columns
        self.n_values = n_values
        self.n_classes = n_classes
        self.opt = options
        self.cf = float(np.float32(options.confidence))
        self.y = np.ascontiguousarray(np.where(y < 0, 0, y), np.int64)
        # thresholds move onto values present anywhere in the data
        self.values = [np.sort(c[~np.isnan(c)]) if k == 0 else None
                       for c, k in zip(columns, n_values)]
        self.n_all = len(y)
        self.multi_valued = all(k > 0 and not k < 0.3 * self.n_all for k in n_values)
        self.weights = weights
        self.train = np.flatnonzero(y >= 0)

    def fit(self):
        idx = self.train
        w = self.weights[idx].astype(np.float64)
        orders = []
        for c, k in zip(self.columns, self.n_values):
            if k == 0:
                v = c[idx]
                known = np.flatnonzero(~np.isnan(v))
                orders.append(known[np.argsort(v[known], kind="stable")])
            else:
                orders.append(None)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20000))
        try:
            root = self._grow(idx, w, orders)
            if self.opt.collapse:
                self._collapse(root)
            if self.opt.pruned:
                self._prune(root)
        finally:
            sys.setrecursionlimit(limit)
        return root

    # growing

    def _select(self, idx, w, orders):
        """J48's choice of split at a node: (kind, attr, threshold, value, dist) or
        None for a leaf."""
        opt = self.opt
        dist = class_weights(self.y, idx, w, self.n_classes)
        total = dist.sum()
        if sm(total, 2 * opt.min_leaf) or eq(total, dist[max_class(dist)]):
            return None
        candidates = []
        for a, (col, k) in enumerate(zip(self.columns, self.n_values)):
            if k == 0:
                gain, ratio, mid, _ = numeric_split(col, self.y, idx, w, orders[a],
                                                    self.n_classes, opt.min_leaf, total,
                                                    opt.mdl_correction)
                spec = (NUMERIC_SPLIT, a, mid, -1)
            elif opt.binary_splits:
                gain, ratio, value, _ = binary_nominal_split(
                    col, self.y, idx, w, k, self.n_classes, opt.min_leaf, total)
                spec = (VALUE_SPLIT, a, 0.0, value)
            else:
                gain, ratio, _ = nominal_split(col, self.y, idx, w, k, self.n_classes,
                                               opt.min_leaf, total)
                spec = (NOMINAL_SPLIT, a, 0.0, -1)
            if gain >= 0:
                counts = k == 0 or self.multi_valued or k < 0.3 * self.n_all
                candidates.append((spec, gain, ratio, counts))
        averaged = [g for _, g, _, counts in candidates if counts]
        if not averaged:
            return None
        average = sum(averaged) / len(averaged)
        best, best_ratio = None, 0.0
        for spec, gain, ratio, _ in candidates:
            if gain >= average - 1e-3 and gr(ratio, best_ratio):
                best, best_ratio = spec, ratio
        if best is None or eq(best_ratio, 0):
            return None
        kind, a, threshold, value = best
        if kind == NUMERIC_SPLIT:
            # the largest value in the data not above the midpoint (within 1e-6)
            values = self.values[a]
            at = np.searchsorted(values, threshold + SMALL, side="left") - 1
            threshold = float(values[at]) if at >= 0 else -sys.float_info.max
        return kind, a, threshold, value

    def _branches(self, node):
        return 2 if node.kind != NOMINAL_SPLIT else self.n_values[node.attr]

    def _split(self, node, idx, w, frac):
        """Each branch's instances (positions into idx) and weights."""
        sub = subsets(self.columns[node.attr], idx, node.kind, node.threshold, node.value)
        missing = sub < 0
        out = []
        for b in range(len(frac)):
            take = (sub == b) | (missing & gr(frac[b], 0))
            pos = np.flatnonzero(take)
            wb = w[pos]
            if missing.any():
                wb = np.where(missing[pos], wb * frac[b], wb)
            out.append((pos, wb))
        return sub, out

    def _grow(self, idx, w, orders):
        choice = self._select(idx, w, orders)
        if choice is None:
            node = Node(class_weights(self.y, idx, w, self.n_classes)[None, :], idx, w)
            node.empty = eq(w.sum(), 0)
            return node
        node = Node(None, idx, w)
        node.kind, node.attr, node.threshold, node.value = choice
        node.dist = self._spread(node, idx, w)
        _, parts = self._split(node, idx, w, fractions(node.dist))
        for pos, wb in parts:
            where = np.full(len(idx), -1, np.int64)
            where[pos] = np.arange(len(pos))
            child_orders = []
            for o in orders:
                if o is None:
                    child_orders.append(None)
                else:
                    m = where[o]
                    child_orders.append(m[m >= 0])
            node.children.append(self._grow(idx[pos], wb, child_orders))
        if not self.opt.subtree_raising:
            node.idx = node.w = None
        return node

    # collapsing and pruning

    def _training_errors(self, node):
        if node.leaf:
            return incorrect(node.dist)
        return sum(self._training_errors(c) for c in node.children)

    def _collapse(self, node):
        if node.leaf:
            return
        if self._training_errors(node) >= incorrect(node.dist) - 1e-3:
            node.make_leaf()
        else:
            for c in node.children:
                self._collapse(c)

    def _errors(self, node):
        if node.leaf:
            return estimated_errors(node.dist, self.cf)
        return sum(self._errors(c) for c in node.children)

    def _reset(self, node, idx, w):
        """The node's distribution recomputed for other data, missing values spread
        in proportion to the known ones."""
        if node.leaf:
            return class_weights(self.y, idx, w, self.n_classes)[None, :]
        return self._spread(node, idx, w)

    def _spread(self, node, idx, w):
        sub = subsets(self.columns[node.attr], idx, node.kind, node.threshold, node.value)
        n_b = self._branches(node)
        known = split_distribution(self.y, idx, w, sub, np.zeros(n_b), self.n_classes)
        return split_distribution(self.y, idx, w, sub, fractions(known), self.n_classes)

    def _branch_errors(self, node, idx, w):
        """Estimated errors of the subtree on other data (for subtree raising)."""
        if node.leaf:
            return estimated_errors(class_weights(self.y, idx, w, self.n_classes), self.cf)
        dist = self._reset(node, idx, w)
        _, parts = self._split(node, idx, w, fractions(dist))
        return sum(self._branch_errors(c, idx[pos], wb)
                   for c, (pos, wb) in zip(node.children, parts))

    def _redistribute(self, node, idx, w):
        node.dist = self._reset(node, idx, w)
        node.idx, node.w = idx, w
        if node.leaf:
            if not eq(w.sum(), 0):
                node.empty = False
            return
        _, parts = self._split(node, idx, w, fractions(node.dist))
        for c, (pos, wb) in zip(node.children, parts):
            self._redistribute(c, idx[pos], wb)

    def _prune(self, node):
        if node.leaf:
            return
        for c in node.children:
            self._prune(c)
        per_bag = node.dist.sum(axis=1)
        largest = 0
        best = 0.0
        for b, x in enumerate(per_bag):
            if gr_or_eq(x, best):
                best, largest = x, b
        if self.opt.subtree_raising:
            branch = self._branch_errors(node.children[largest], node.idx, node.w)
        else:
            branch = sys.float_info.max
        as_leaf = estimated_errors(node.dist, self.cf)
        as_tree = self._errors(node)
        if sm_or_eq(as_leaf, as_tree + 0.1) and sm_or_eq(as_leaf, branch + 0.1):
            node.make_leaf()
            return
        if sm_or_eq(branch, as_tree + 0.1):
            raised = node.children[largest]
            node.attr, node.kind = raised.attr, raised.kind
            node.threshold, node.value = raised.threshold, raised.value
            node.children, node.dist = raised.children, raised.dist
            self._redistribute(node, node.idx, node.w)
            self._prune(node)
