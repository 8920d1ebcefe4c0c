"""CART (the book's section 6.1: binary splits chosen by the Gini index, minimal
cost-complexity pruning chosen by cross-validation), grown as the reference's
SimpleCart grows it.

A node splits on the attribute of the largest Gini gain: a numeric attribute at the
midpoint between two adjacent values, a nominal one into two subsets of its values
(two classes: the values ordered by their share of the first class, then the best
cut of that order; more classes: every subset, or with ``heuristic`` and more than
four values the order of the values along the first principal component of their
class probabilities). A row with a missing value goes down both branches, weighted
by their shares. The tree grows while a node holds twice ``min_leaf`` weight and
each branch at least ``min_leaf`` rows.

Pruning: trees grown on ``folds`` folds of the (shuffled, stratified) rows are
pruned back weakest link first, each step's complexity alpha and held-out error
recorded; the tree grown on every row is pruned to the alpha (between two of its
own steps) of least cross-validated error, or with ``one_se_rule`` to the most
pruned within one standard error of it.
"""

import math
import sys
import threading

import numpy as np

from .. import memory, pictures, progress, stop
from ..classes import class_codes
from ..dataset import stacked
from ..eigen import symmetric_eigen
from ..evaluation import check_folds, stratify, test_cv, train_cv
from ..halt import halted
from ..javafmt import java_double
from ..javautil import JavaRandom, randomize, rows_in_order
from ..jit import PRANGE_ONLY, njit, prange
from ..models import (
    MAX_WEIGHT,
    Classifier,
    attributes_of,
    body,
    check_array,
    check_records,
    check_tree,
    preorder,
)
from ..stop import checkpoint
from .cost_complexity import Tree, predicted
from .reptree import _sum, _totals

DBL_MAX = sys.float_info.max
EPSILON = sys.float_info.epsilon / 2  # the unit roundoff
PARALLEL_ENTRIES = 40_000  # a node's sorted rows (all attributes) worth two threads
# the narrowest node one grower hands the other (its sorted rows); a narrower one
# grows its whole subtree in one kernel call, where no split is left to Python
HAND_ENTRIES = 5_000
NO_WEIGHTS = np.empty(0)  # a node whose rows weigh their own weights


# ---------------------------------------------------------------- kernels

@njit(cache=True)
def _gini(dist, total):
    if total == 0:
        return 0.0
    val = 0.0
    for d in dist:
        val += (d / total) * (d / total)
    return 1 - val


@njit(cache=True)
def _gini_gain(parent, child):
    total = _sum(parent)
    if total == 0:
        return 0.0
    left = _sum(child[0])
    right = _sum(child[1])
    return (_gini(parent, total) - left / total * _gini(child[0], left)
            - right / total * _gini(child[1], right))


@njit(cache=True)
def _shares(dist, even):
    """The two sides' shares of the class weights ``dist`` (``even``: halves when
    there is no weight, as for a nominal split; else zeros)."""
    props = np.zeros(2)
    props[0] = _sum(dist[0])
    props[1] = _sum(dist[1])
    total = _sum(props)
    if even and not total > 0:
        props[0] = props[1] = 0.5
    elif total != 0:
        props[0] /= total
        props[1] /= total
    return props


@njit(cache=True)
def _spread_missing(dist, props, y, wts, start):
    """Add the rows from ``start`` on (those missing the attribute) to both sides
    of ``dist``, weighted by the sides' shares ``props`` (``_shares`` of ``dist``
    without them)."""
    for i in range(start, len(wts)):
        for j in range(2):
            dist[j, y[i]] += props[j] * wts[i]


@njit(cache=True)
def _gain_given(parent_total, parent_gini, child):
    """``_gini_gain`` with the parent's total weight and Gini index known."""
    if parent_total == 0:
        return 0.0
    left = _sum(child[0])
    right = _sum(child[1])
    return (parent_gini - left / parent_total * _gini(child[0], left)
            - right / parent_total * _gini(child[1], right))


@njit(cache=True)
def _sweep(x, y, rows, wr, k, sides0, parent_total, parent_gini, missing, missing_y,
           missing_w, estimates, bound):
    """One sweep of ``_numeric_split`` over the cuts: (best gain, cut, class weights
    per side). Where rows miss the value (``missing_y``), a cut's gain is first
    estimated with them spread by their weight by class: ``estimates`` gives the
    best estimate alone; otherwise a cut whose estimate reaches ``bound`` has them
    spread row by row, as the reference does, and the others cannot win."""
    sides = sides0.copy()
    dist = np.zeros((2, k))
    dist[1] = sides[1]
    temp = np.empty((2, k))
    spread = len(missing_y) > 0
    best = -DBL_MAX
    cut = np.nan
    current = x[rows[0]]
    for i in range(len(rows)):
        r = rows[i]
        v = x[r]
        if np.isnan(v):
            break
        if v > current:
            if spread:  # rows missing the value go to both sides
                props = _shares(sides, np.bool_(False))
                for s in range(2):
                    for c in range(k):
                        temp[s, c] = sides[s, c] + props[s] * missing[c]
                gain = _gain_given(parent_total, parent_gini, temp)
                if estimates:
                    pass
                elif gain >= bound:  # it may win: spread as the reference does
                    temp[:] = sides
                    _spread_missing(temp, props, missing_y, missing_w, np.int64(0))
                    gain = _gain_given(parent_total, parent_gini, temp)
                else:
                    gain = -DBL_MAX
            else:
                gain = _gain_given(parent_total, parent_gini, sides)
            if gain > best:
                best = gain
                cut = (v + current) / 2.0
                dist[:] = temp if spread else sides
        current = v
        sides[0, y[r]] += wr[r]
        sides[1, y[r]] -= wr[r]
    return best, cut, dist


@njit(cache=True)
def _numeric_split(x, y, rows, wr, k):
    """The best cut of one numeric attribute at a node: (gain, cut, class weights
    per side). ``rows``: the node's rows in the attribute's order (missing last),
    of its values ``x``, the classes ``y`` and the weights in the node ``wr`` (by
    row); the gain is -DBL_MAX when no two values differ. Values, classes and
    weights are read through ``rows`` rather than gathered into arrays of the
    node's own."""
    n = len(rows)
    parent = np.zeros(k)
    sides = np.zeros((2, k))  # left, right
    start = np.int64(0)  # typed: a literal would compile _spread_missing once more
    for j in range(n):
        r = rows[j]
        if not np.isnan(x[r]):
            start += 1
            sides[1, y[r]] += wr[r]
        parent[y[r]] += wr[r]
    parent_total = _sum(parent)
    parent_gini = _gini(parent, parent_total)
    missing_y = np.empty(n - start, np.int64)  # the classes of the rows missing it,
    missing_w = np.empty(n - start)  # their weights,
    missing = np.zeros(k)  # and their weight by class
    for j in range(start, n):
        missing_y[j - start] = y[rows[j]]
        missing_w[j - start] = wr[rows[j]]
        missing[y[rows[j]]] += wr[rows[j]]
    # Spreading the rows missing the value row by row at every cut, as the
    # reference does, costs (cuts x rows missing it). A cut's gain is first
    # estimated from their weight by class; it differs from the row-by-row gain by
    # less than ``slack`` (rounding: each spread weight is off by under (2m + 5)u
    # of the node's, and the gain moves at most 6k times that). So a cut whose
    # estimate is below the best estimate by more than twice that cannot win, nor
    # tie: a first sweep finds the best estimate, and the second spreads only the
    # cuts within twice the slack of it (where the gains rise cut after cut, the
    # sweep that compared each cut with the best so far spread nearly every one).
    slack = 64.0 * k * (n - start + 4) * EPSILON
    bound = -DBL_MAX
    if start < n:
        bound = _sweep(x, y, rows, wr, k, sides, parent_total, parent_gini, missing,
                       missing_y, missing_w, np.bool_(True), bound)[0] - 2.0 * slack
    return _sweep(x, y, rows, wr, k, sides, parent_total, parent_gini, missing, missing_y,
                  missing_w, np.bool_(False), bound)


@njit(cache=True)
def _subset_split(codes, y, wts, k, lefts):
    """The best of the candidate value subsets ``lefts`` (one row per candidate,
    True for a value that goes left) of a nominal attribute at a node: (gain,
    candidate, class weights per side). ``codes``: the node's values (missing
    last)."""
    n = len(codes)
    parent = np.zeros(k)
    start = np.int64(0)
    for i in range(n):
        if not np.isnan(codes[i]):
            start += 1
        parent[y[i]] += wts[i]
    best = -DBL_MAX
    pick = -1
    dist = np.zeros((2, k))
    for c in range(lefts.shape[0]):
        temp = np.zeros((2, k))
        for i in range(start):
            side = 0 if lefts[c, int(codes[i])] else 1
            temp[side, y[i]] += wts[i]
        _spread_missing(temp, _shares(temp, np.bool_(False)), y, wts, start)
        gain = _gini_gain(parent, temp)
        if gain > best:
            best = gain
            pick = c
            dist = temp
    return best, pick, dist


@njit(cache=True)
def _nominal_best(codes, y, wts, w_own, k, n_values, heuristic, out_lefts, out_order):
    """The best binary split of a nominal attribute at a node, as ``nominal_split``
    finds it for two classes, or by every subset: (gain, class weights per side,
    shares of the sides, how many values go left). The left values go to
    ``out_lefts`` and, in the order the split's text names them, to
    ``out_order``. A gain of NaN asks for the principal-component ordering, which
    is left to Python."""
    n = len(codes)
    freq = np.zeros(n_values, np.int64)
    for i in range(n):
        if not np.isnan(codes[i]):
            freq[int(codes[i])] += 1
    non_empty = np.flatnonzero(freq != 0)
    m = len(non_empty)
    dist = np.zeros((2, k))
    props = np.zeros(2)
    if m <= 1:
        return 0.0, dist, props, 0
    if k == 2:
        vd = _value_class_weights(codes, y, w_own, n_values)
        p0 = np.zeros(m)
        for j in range(m):
            total = vd[non_empty[j], 0] + vd[non_empty[j], 1]
            p0[j] = 0.0 if total == 0 else vd[non_empty[j], 0] / total
        order = np.empty(m, np.int64)
        for t in range(m):  # repeated first minimum
            pick = 0
            for j in range(1, m):
                if p0[j] < p0[pick]:
                    pick = j
            order[t] = non_empty[pick]
            p0[pick] = DBL_MAX
        lefts = np.zeros((m - 1, n_values), np.bool_)
        for c in range(m - 1):
            for t in range(c + 1):
                lefts[c, order[t]] = True
    elif not heuristic or m <= 4:
        count = 1 << (m - 1)
        lefts = np.zeros((count, n_values), np.bool_)
        for c in range(count):
            bits = c
            for j in range(m - 1, -1, -1):
                if bits % 2 == 1:
                    lefts[c, non_empty[j]] = True
                bits //= 2
    else:
        return np.nan, dist, props, 0
    gain, pick, dist = _subset_split(codes, y, wts, k, lefts)
    props = _shares(dist, np.bool_(True))
    size = 0
    if pick >= 0:
        if k == 2:
            for t in range(pick + 1):
                out_order[size] = order[t]
                size += 1
        else:
            for j in range(m - 1, -1, -1):
                if lefts[pick, non_empty[j]]:
                    out_order[size] = non_empty[j]
                    size += 1
    if props[0] >= props[1]:  # values no row has go to the heavier side
        for v in range(n_values):
            if freq[v] == 0:
                out_order[size] = v
                size += 1
    out_lefts[:] = False
    for t in range(size):
        out_lefts[out_order[t]] = True
    return gain, dist, props, size


@njit(cache=True)
def _attribute_best(a, X, y, w, nominal, textual, n_values, heuristic, idx_all, span, wr,
                    k, gains, cuts, dists, props, lefts, orders, sizes):
    """Attribute ``a``'s best split at a node, into its rows of the outputs of
    ``_node_best``."""
    idx = idx_all[span[a, 0]:span[a, 1]]
    if textual[a]:
        gains[a] = np.nan
        return
    if nominal[a]:
        gain, d, p, size = _nominal_best(X[a][idx], y[idx], wr[idx], w[idx], k,
                                         n_values[a], heuristic, lefts[a, :n_values[a]],
                                         orders[a])
        sizes[a] = size
    else:
        gain, cut, d = _numeric_split(X[a], y, idx, wr, k)
        cuts[a] = cut
        p = _shares(d, np.bool_(False))
    gains[a] = gain
    dists[a] = d
    props[a] = p


@njit(cache=True)
def _outputs(n_values, k):
    n_attr = len(n_values)
    width = max(1, n_values.max()) if n_attr else 1
    return (np.zeros(n_attr), np.full(n_attr, np.nan), np.zeros((n_attr, 2, k)),
            np.zeros((n_attr, 2)), np.zeros((n_attr, width), np.bool_),
            np.zeros((n_attr, width), np.int64), np.zeros(n_attr, np.int64))


@njit(cache=True, inline="always")
def _node_weights(w, attrs, idx_all, span, node_w, scratch):
    """The weights by row of a node's rows: their own ``w`` (``node_w`` empty), or
    the node's own, ``node_w`` in the first attribute's order, written into
    ``scratch``."""
    if len(node_w) == 0:
        return w
    first = attrs[0]
    lo = span[first, 0]
    for j in range(len(node_w)):
        scratch[idx_all[lo + j]] = node_w[j]
    return scratch


@njit(cache=True)
def _node_best(X, y, w, nominal, textual, n_values, attrs, heuristic, idx_all, span,
               node_w, scratch, k):
    """Every attribute's best split at a node (its sorted rows ``idx_all[span[a, 0]:
    span[a, 1]]``, weighing the rows by ``_node_weights``): gains (0 for the
    target, NaN where Python must find the split), cuts, class weights per side,
    side shares, left value masks and their order in the split's text."""
    wr = _node_weights(w, attrs, idx_all, span, node_w, scratch)
    gains, cuts, dists, props, lefts, orders, sizes = _outputs(n_values, k)
    for j in range(len(attrs)):
        _attribute_best(attrs[j], X, y, w, nominal, textual, n_values, heuristic, idx_all,
                        span, wr, k, gains, cuts, dists, props, lefts, orders, sizes)
    return gains, cuts, dists, props, lefts, orders, sizes


@njit(cache=True, parallel=True)
def _node_best_parallel(X, y, w, nominal, textual, n_values, attrs, heuristic, idx_all,
                        span, node_w, scratch, k):
    """``_node_best`` with the attributes shared between the cores (for a large
    node: starting the threads costs more than a small one's work)."""
    wr = _node_weights(w, attrs, idx_all, span, node_w, scratch)
    gains, cuts, dists, props, lefts, orders, sizes = _outputs(n_values, k)
    for j in prange(len(attrs)):
        _attribute_best(attrs[j], X, y, w, nominal, textual, n_values, heuristic, idx_all,
                        span, wr, k, gains, cuts, dists, props, lefts, orders, sizes)
    return gains, cuts, dists, props, lefts, orders, sizes


@njit(cache=True)
def _split_all(idx_all, span, attrs, x, numeric, cut, lefts, props, wr, spread, min_leaf):
    """Every attribute's sorted rows dealt to the two children by the split
    attribute's values ``x`` (by row), each attribute's in its order: (the rows
    each side gets; whether the children keep weights; each child's rows, spans
    and weights, or nothing where a side gets fewer than ``min_leaf`` rows).
    Every attribute lists the same rows, so the first one's count sizes both
    sides.

    The left side's rows take the node's place in its array, in the order they
    were; the right side's follow them there where no row lacks the value, and
    are put in an array of their own where some row does (it goes to both sides,
    weighted by ``props``). A child's weights are those of its rows in the first
    attribute's order, where some row weighs other than its own weight
    (``spread``: the node's rows do, or one is spread now), else none."""
    count = np.zeros(2, np.int64)
    missing = 0
    first = attrs[0]
    for j in range(span[first, 0], span[first, 1]):
        s = _side(x[idx_all[j]], numeric, cut, lefts)
        if s < 0:
            missing += 1
            for t in range(2):
                count[t] += props[t] > 0
        else:
            count[s] += 1
    none = np.empty(0, np.int32), np.empty((0, 2), np.int64), np.empty(0)
    weighted = spread or missing > 0
    if count[0] < min_leaf or count[1] < min_leaf:
        return count, weighted, none, none
    w0 = np.empty(count[0] if weighted else 0)
    w1 = np.empty(count[1] if weighted else 0)
    span0, span1 = np.zeros_like(span), np.zeros_like(span)
    out1 = np.empty(count[1] * len(attrs), np.int32)  # the right side's rows, apart
    for t in range(len(attrs)):
        a = attrs[t]
        lo, f1 = span[a, 0], count[1] * t
        f0 = 0
        keep = weighted and a == first
        for j in range(lo, span[a, 1]):
            r = idx_all[j]
            s = _side(x[r], numeric, cut, lefts)
            if s != 0 and (s == 1 or props[1] > 0):
                if keep:
                    w1[f1 - count[1] * t] = wr[r] if s == 1 else props[1] * wr[r]
                out1[f1] = r
                f1 += 1
            if s <= 0 and (s == 0 or props[0] > 0):  # in place: j >= lo + f0
                if keep:
                    w0[f0] = wr[r] if s == 0 else props[0] * wr[r]
                idx_all[lo + f0] = r
                f0 += 1
        span0[a, 0], span0[a, 1] = lo, lo + f0
        span1[a, 0], span1[a, 1] = count[1] * t, f1
    if missing == 0:  # the right side's rows fit after the left's, in place too
        for a in attrs:
            n1 = span1[a, 1] - span1[a, 0]
            idx_all[span0[a, 1]:span0[a, 1] + n1] = out1[span1[a, 0]:span1[a, 1]]
            span1[a, 0], span1[a, 1] = span0[a, 1], span0[a, 1] + n1
        return count, weighted, (idx_all, span0, w0), (idx_all, span1, w1)
    return count, weighted, (idx_all, span0, w0), (out1, span1, w1)


@njit(cache=True, inline="always")
def _side(v, numeric, cut, lefts):
    """The child a value goes to (-1: missing, to both)."""
    if np.isnan(v):
        return -1
    if numeric:
        return 0 if v < cut else 1
    return 0 if lefts[int(v)] else 1


@njit(cache=True)
def _value_class_weights(codes, y, w, n_values):
    """Class weights (two classes) of each value, the rows' own weights summed in
    order, up to the first missing value."""
    out = np.zeros((n_values, 2))
    for i in range(len(codes)):
        if np.isnan(codes[i]):
            break
        out[int(codes[i]), y[i]] += w[i]
    return out


@njit(cache=True)
def _chosen(X, y, nominal, attrs, target, idx_all, span, wr, pred, gains, cuts, lefts,
            props, total, min_leaf, spread):
    """A scored node's choice: (whether it splits, the attribute of the largest gain
    (the first of equal ones), the training errors it makes as a leaf, and where it
    splits ``_split_all``'s last three results). It stays a leaf where no attribute
    gains, it holds less than twice ``min_leaf`` weight, a side would have no share,
    or a side fewer than ``min_leaf`` rows."""
    att = 0
    for a in range(1, len(gains)):
        if gains[a] > gains[att]:
            att = a
    err = _incorrect(y, idx_all[span[att, 0]:span[att, 1]], wr, pred)
    none = np.empty(0, np.int32), np.empty((0, 2), np.int64), np.empty(0)
    if att == target or gains[att] == 0 or total < 2 * min_leaf \
            or props[att, 0] == 0 or props[att, 1] == 0:
        return False, att, err, False, none, none
    count, weighted, left, right = _split_all(
        idx_all, span, attrs, X[att], not nominal[att], cuts[att], lefts[att], props[att],
        wr, spread, min_leaf)
    if count[0] < min_leaf or count[1] < min_leaf:
        return False, att, err, False, none, none
    return True, att, err, weighted, left, right


@njit(cache=True)
def _incorrect(y, rows, wr, pred):
    """The weight (``wr``, by row) of the rows ``rows`` (of ``y``) whose class is
    not ``pred`` (none when -1: the reference leaves a row with no positive
    probability unclassified)."""
    s = 0.0
    if pred < 0:
        return s
    for i in range(len(rows)):
        if y[rows[i]] != pred:
            s += wr[rows[i]]
    return s


@njit(cache=True)
def _opened(at, d, dist, probs, has_probs):
    """Node ``at``'s class weights ``d`` and its probabilities, written."""
    dist[at] = d
    s = _sum(d)
    if s != 0:
        probs[at] = d / s
    else:
        probs[at] = d
    has_probs[at] = True


@njit(cache=True)
def _settled(at, X, y, nominal, n_values, attrs, target, ii, sp, wr, total, min_leaf,
             weighted, gains, cuts, dists, props_, lefts_, probs, attr, cut, props, lefts,
             model_err):
    """Node ``at``'s choice (``_chosen``), written: its errors as a leaf and, where
    it splits, its test. (The split attribute, -1 for a leaf; each child's rows,
    spans, weights (empty unless the rows keep weights of their own), class weights
    and total weight.)"""
    splits, att, err, _, l_side, r_side = _chosen(
        X, y, nominal, attrs, target, ii, sp, wr, predicted(probs[at]), gains, cuts,
        lefts_, props_, total, min_leaf, weighted)
    model_err[at] = err
    dd = dists[att]
    # a side's weights are empty where the rows keep none of their own (``spread``)
    children = ((l_side[0], l_side[1], l_side[2], dd[0].copy(), _sum(dd[0])),
                (r_side[0], r_side[1], r_side[2], dd[1].copy(), _sum(dd[1])))
    if not splits:
        return np.int64(-1), children
    attr[at], cut[at], props[at] = att, cuts[att], props_[att]
    if nominal[att]:
        lefts[at, :n_values[att]] = lefts_[att, :n_values[att]]
    return np.int64(att), children


@njit(cache=True)
def _subtree(X, y, w, nominal, textual, n_values, attrs, heuristic, target, min_leaf,
             idx_all, span, node_w, scratch, dist0, total0, k, width, halt, count):
    """A node's whole subtree, grown as ``Grower._grown`` and ``make_node`` grow it
    (depth first, a node numbered when taken from the stack, the left child
    first), in one call: for narrow nodes, where the calls of a node's kernels
    from Python cost more than their work. No split of it may be left to Python
    (``Fit.python_splits``). The nodes as ``Nodes`` holds them, numbered from 0
    (the node itself), each nominal split's values in its text's order (``orders``,
    ``sizes``; -1 for no such split), each counted into ``count[0]``; no nodes
    where ``halt`` was set."""
    cap = 16
    left, right = np.full(cap, -1, np.int64), np.full(cap, -1, np.int64)
    attr, cut = np.zeros(cap, np.int64), np.full(cap, np.nan)
    props, lefts = np.zeros((cap, 2)), np.zeros((cap, width), np.bool_)
    dist, probs = np.zeros((cap, k)), np.zeros((cap, k))
    has_probs, model_err = np.zeros(cap, np.bool_), np.zeros(cap)
    orders, sizes = np.zeros((cap, width), np.int64), np.full(cap, -1, np.int64)
    stack = [(np.int64(-1), np.int64(0), idx_all, span, node_w, dist0, total0)]
    n = 0
    while len(stack):
        if halted(halt):
            return 0, left, right, attr, cut, props, lefts, dist, probs, has_probs, \
                model_err, orders, sizes
        parent, side, ii, sp, nw, d, total = stack.pop()
        if n == cap:  # room for twice as many
            cap *= 2
            left, right = _doubled(left, cap, -1), _doubled(right, cap, -1)
            attr, cut = _doubled(attr, cap, 0), _doubled(cut, cap, np.nan)
            props, lefts = _doubled(props, cap, 0), _doubled(lefts, cap, False)
            dist, probs = _doubled(dist, cap, 0), _doubled(probs, cap, 0)
            has_probs, model_err = _doubled(has_probs, cap, False), _doubled(model_err, cap, 0)
            orders, sizes = _doubled(orders, cap, 0), _doubled(sizes, cap, -1)
        at = n
        n += 1
        count[0] += 1
        if parent >= 0:
            if side == 0:
                left[parent] = at
            else:
                right[parent] = at
        if total == 0:
            continue
        _opened(at, d, dist, probs, has_probs)
        gains, cuts, dists, props_, lefts_, orders_, sizes_ = _node_best(
            X, y, w, nominal, textual, n_values, attrs, heuristic, ii, sp, nw, scratch, k)
        att, children = _settled(at, X, y, nominal, n_values, attrs, target, ii, sp,
                                 scratch if len(nw) else w, total, min_leaf, len(nw) > 0,
                                 gains, cuts, dists, props_, lefts_, probs, attr, cut,
                                 props, lefts, model_err)
        if att < 0:
            continue
        if nominal[att]:
            sizes[at] = sizes_[att]
            orders[at, :sizes_[att]] = orders_[att, :sizes_[att]]
        for j in (1, 0):  # the left child on top
            ii_, sp_, w_, d_, t_ = children[j]
            stack.append((at, np.int64(j), ii_, sp_, w_, d_, t_))
    return n, left[:n], right[:n], attr[:n], cut[:n], props[:n], lefts[:n], dist[:n], \
        probs[:n], has_probs[:n], model_err[:n], orders[:n], sizes[:n]


@njit(cache=True)
def _doubled(a, cap, fill):
    """``a`` in an array of ``cap`` rows, the new ones ``fill``."""
    out = np.empty((cap,) + a.shape[1:], a.dtype)
    out[:len(a)] = a
    out[len(a):] = fill
    return out


def _max_index(values):
    best, pick = values[0], 0
    for i in range(1, len(values)):
        if values[i] > best:
            best, pick = values[i], i
    return pick


def _min_order(values):
    """The order in which repeated ``Utils.minIndex`` picks ``values``."""
    values = list(values)
    out = []
    for _ in values:
        best, pick = values[0], 0
        for i in range(1, len(values)):
            if values[i] < best:
                best, pick = values[i], i
        out.append(pick)
        values[pick] = DBL_MAX
    return out


# ---------------------------------------------------------------- the tree

class Nodes:
    """A tree's nodes as they grow, numbered depth first (a node is numbered when
    it is taken from the stack, so before its subtrees), in arrays that double as
    they fill: children (-1 at a leaf), test (attribute, cut or the left values,
    the sides' shares, the split's text for a nominal test), class weights and
    probabilities (none for a node of no weight), and the training errors it makes
    as a leaf."""

    def __init__(self, k, width):
        self.n, self.texts, self.k, self.width = 0, {}, k, width
        self.columns = {"left": (np.int64, (), -1), "right": (np.int64, (), -1),
                        "attr": (np.int64, (), 0), "cut": (np.float64, (), np.nan),
                        "props": (np.float64, (2,), 0), "lefts": (np.bool_, (width,), False),
                        "dist": (np.float64, (k,), 0), "probs": (np.float64, (k,), 0),
                        "has_probs": (np.bool_, (), False),
                        "model_err": (np.float64, (), 0)}
        for name, (dtype, shape, fill) in self.columns.items():
            setattr(self, name, np.full((64, *shape), fill, dtype))

    def add(self, parent, side):
        """A new node, below ``parent`` (-1: the root) on ``side``."""
        self._room(self.n + 1)
        at = self.n
        self.n += 1
        if parent >= 0:
            (self.left if side == 0 else self.right)[parent] = at
        return at

    def graft(self, parent, side, grown):
        """The nodes of a subtree grown whole (``_subtree``'s), its root below
        ``parent`` on ``side``: the number of that root."""
        m, *columns = grown[:11]
        at = self.add(parent, side)
        self._room(at + m)
        for name, values in zip(self.columns, columns):
            getattr(self, name)[at:at + m] = values
        for links in (self.left[at:at + m], self.right[at:at + m]):
            links[links >= 0] += at
        self.n = at + m
        return at

    def _room(self, n):
        """Room for ``n`` nodes, the arrays doubled as often as it takes."""
        while n > len(self.left):
            size = len(self.left)
            for name, (_, shape, fill) in self.columns.items():
                # in place (the allocator moves a large block's pages, not its bytes,
                # so the old and new arrays are never held at once)
                column = getattr(self, name)
                column.resize((2 * size, *shape), refcheck=False)
                column[size:] = fill

    def trimmed(self):
        """{column: its array cut to the nodes grown}, in place (shrunk where it
        lies, not copied: each array is this object's alone)."""
        out = {}
        for name, (_, shape, _) in self.columns.items():
            a = getattr(self, name)
            a.resize((self.n, *shape), refcheck=False)
            out[name] = a
        return out


def _entries(span, attrs):
    """A node's sorted rows, over all its attributes ``attrs`` (each lists the node's
    rows once: its array is shared with others)."""
    return int(span[attrs[0], 1] - span[attrs[0], 0]) * len(attrs)


def _size(hole):
    """The number of nodes of a grown hole's subtree, its holes filled."""
    nodes, holes = hole.grown
    return nodes.n + sum(_size(h) - 1 for _, h in holes)


def _placed(hole, first, pieces):
    """Add to ``pieces`` the grown nodes of ``hole`` and of every hole below it, each
    as (nodes, each one's number in the whole tree numbered depth first from
    ``first``, which of them are nodes rather than holes)."""
    nodes, holes = hole.grown
    at = np.array([a for a, _ in holes], np.int64)
    added = np.zeros(nodes.n, np.int64)
    added[at] = [_size(h) - 1 for _, h in holes]
    number = first + np.arange(nodes.n) + np.cumsum(added) - added
    own = np.ones(nodes.n, np.bool_)
    own[at] = False
    pieces.append((nodes, number, own))
    for a, h in holes:
        _placed(h, int(number[a]), pieces)


def _joined(root):
    """The ``Nodes`` of a grown hole with every hole below it filled: numbered depth
    first, a subtree's nodes in place of its hole. Built a column at a time, each
    piece's column let go of once copied, so the tree is held about once."""
    pieces = []
    _placed(root, 0, pieces)
    first = pieces[0][0]
    out = Nodes(first.k, first.width)  # its columns replaced below
    out.n = _size(root)
    for name, (dtype, shape, _) in out.columns.items():
        column = np.empty((out.n, *shape), dtype)
        for nodes, number, own in pieces:
            part = getattr(nodes, name)[:nodes.n]
            if name in ("left", "right"):
                part = np.where(part >= 0, number[np.maximum(part, 0)], -1)
            column[number[own]] = part[own]
            setattr(nodes, name, None)
        setattr(out, name, column)
    out.texts = {int(number[i]): text for nodes, number, _ in pieces
                 for i, text in nodes.texts.items()}
    return out


class _Hole:
    """A subtree to grow (the root's, or one handed to the other grower): its root's
    rows, class weights and total weight until it is taken, then its nodes and
    their own holes once grown."""

    def __init__(self, part):
        self.part, self.grown = part, None

    def taken(self):
        """The stack its growth starts from; the hole lets go of its rows."""
        part, self.part = self.part, None
        return [(-1, 0, *part)]

    def filled(self):
        """Its nodes, every hole below filled (``_joined``)."""
        return self.grown[0] if not self.grown[1] else _joined(self)


class _Sharing:
    """Two growers of one tree and the subtrees handed between them: a grower
    that runs out of work waits for one; both waiting ends the growth."""

    def __init__(self, root):
        self.cond = threading.Condition()
        self.given = []  # holes handed over, not yet taken
        self.waiting = 0  # growers waiting (read without the lock: a hint)
        self.over = False
        self.root = root  # the root's hole, which one grower starts from

    def hand(self, work, attrs):
        """Hand the oldest node of ``work`` (a stack; the largest subtree still to
        grow) not handed already, and not the next to grow, to the waiting grower,
        if it is wide enough and the grower still waits."""
        j = next((j for j in range(len(work) - 1) if not isinstance(work[j][2], _Hole)), -1)
        if j < 0 or _entries(work[j][2][1], attrs) < HAND_ENTRIES:
            return
        parent, side, lists, dist, total = work[j]
        with self.cond:
            if self.waiting > len(self.given):
                hole = _Hole((lists, dist, total))
                work[j] = (parent, side, hole, None, None)
                self.given.append(hole)
                self.cond.notify()

    def work(self, grower, hole):
        """Grow ``hole`` (None: none at first), then what is handed over, until both
        growers wait."""
        try:
            while True:
                if hole is None:
                    with self.cond:
                        self.waiting += 1
                        while not self.given and not self.over:
                            if self.waiting == 2:
                                self.over = True
                                self.cond.notify_all()
                                break
                            self.cond.wait()
                        if self.over:
                            return
                        hole = self.given.pop()
                        self.waiting -= 1
                hole.grown = grower._grown(hole.taken(), self)
                hole = None
        except BaseException:
            with self.cond:  # the other grower stops waiting
                self.over = True
                self.cond.notify_all()
            raise


def _presorted_rows(X, rows, nominal, target):
    """Every attribute's ``rows`` in the order the reference sorts them (its
    quicksort, missing last; a nominal attribute's in data order, missing last), one
    after another (none for the target), and each one's offset: with ``_wide``, the
    attributes on two threads."""
    p, n = X.shape[0], len(rows)
    span = np.zeros((p, 2), np.int64)
    for a in range(p):
        span[a, 0] = 0 if a == 0 else span[a - 1, 1]
        span[a, 1] = span[a, 0] + (0 if a == target else n)
    idx = np.empty(span[p - 1, 1], np.int32)  # row numbers: half the memory of int64
    for a in prange(p):
        if a != target:
            order = rows_in_order(X, np.int64(a), rows, nominal[a])  # (see jit)
            for i in range(n):
                idx[span[a, 0] + i] = rows[order[i]]
    return idx, span


_presorted = njit(cache=True)(_presorted_rows)
# called from Python only (see jit); a small table compiles no parallel code
_presorted_wide = njit(cache=True, parallel=PRANGE_ONLY)(_presorted_rows)


class Grower:
    """Grows one tree on the rows ``rows`` (in their order: the reference's data
    set for this tree).

    A node's rows are listed once for each attribute, in its order, as row numbers
    only. Their weights in the node are their own weights (``fit.w``) until a
    split spreads a row missing its value over both sides; from there on a node
    keeps its rows' weights, once, and writes them into ``scratch`` (one slot a
    row) when it is grown."""

    def __init__(self, fit, rows, pca_cache=None):
        self.f = fit
        self.rows = rows
        self.pca_cache = {} if pca_cache is None else pca_cache
        self.scratch = None

    def sorted_info(self):
        """Every attribute's rows in the order the reference sorts them (a nominal
        attribute's in data order, missing last), one after another, with their
        offsets by attribute; the class weights and their total."""
        f, rows = self.f, self.rows
        sort = _presorted_wide if len(rows) * len(f.X) >= PARALLEL_ENTRIES else _presorted
        idx, span = sort(f.X, np.asarray(rows, np.int64), f.nominal_mask, f.target)
        dist, total = _totals(f.y, f.w, rows, f.k)  # summed in row order
        return (idx, span, None), dist[:f.k].copy(), total

    def grow(self):
        """The tree, numbered depth first, grown by two growers that share the work
        (``_Sharing``): one whose partner waits hands it the oldest node on its
        stack, the largest subtree it has yet to grow, and leaves a hole in its
        own numbering there; the holes are filled once both are done. Each holds
        its own path's rows (a row missing a value is in both sides' subtrees, so
        each has a ``scratch`` of its own), and each subtree grows as it would in
        one depth-first growth, so the tree is the same."""
        root = _Hole(self.sorted_info())
        if len(self.rows) < stop.SERIAL_ROWS:
            return self._grown(root.taken(), None)[0]
        share = _Sharing(root)
        del root
        growers = (self, Grower(self.f, self.rows, self.pca_cache))
        stop.each(lambda i: share.work(growers[i], share.root if i == 0 else None), [0, 1],
                  threads=2)
        for grower in growers:  # before the join, which holds the nodes
            grower.scratch = None
        return share.root.filled()

    def _grown(self, work, share):
        """The nodes grown depth first from ``work`` (a stack of (parent, side,
        rows, class weights, total weight)), and the holes left in them, (node,
        ``_Hole``), for the subtrees handed to the partner grower (``share``)."""
        f = self.f
        nodes, holes = Nodes(f.k, f.width), []
        while work:  # depth first, without recursion
            checkpoint()
            if share is not None and (share.waiting or share.over):
                if share.over:  # the other grower failed: the fit fails with it
                    break
                share.hand(work, f.attr_array)
            parent, side, lists, dist, total = work.pop()
            if not f.python_splits and not isinstance(lists, _Hole) and \
                    _entries(lists[1], f.attr_array) < HAND_ENTRIES:
                self.subtree(nodes, parent, side, lists, dist, total)
                continue
            at = nodes.add(parent, side)
            if isinstance(lists, _Hole):
                holes.append((at, lists))
                continue
            f.count[0] += 1  # (from two threads, a count may be lost: it only reports)
            for child in reversed(self.make_node(nodes, at, lists, dist, total)):
                work.append((at, *child))
        return nodes, holes

    def subtree(self, nodes, parent, side, lists, dist, total):
        """Grow a narrow node's whole subtree in one kernel call (``_subtree``) into
        ``nodes``, below ``parent`` on ``side``."""
        f = self.f
        idx, span, node_w = lists
        if self.scratch is None:
            self.scratch = np.empty(len(f.w))
        halt = stop.flag()
        grown = _subtree(f.X, f.y, f.w, f.nominal_mask, f.textual, f.n_values, f.attr_array,
                         f.heuristic, f.target, f.min_leaf, idx, span,
                         NO_WEIGHTS if node_w is None else node_w, self.scratch,
                         np.ascontiguousarray(dist, np.float64), float(total), f.k, f.width,
                         halt, f.count)
        stop.check(halt)
        at = nodes.graft(parent, side, grown)
        attr, orders, sizes = grown[3], grown[11], grown[12]
        for i in np.flatnonzero(sizes >= 0):
            names = f.values[attr[i]]
            nodes.texts[at + i] = "|".join(f"({names[v]})" for v in orders[i, :sizes[i]])

    def make_node(self, nodes, at, lists, dist, total):
        """Fill node ``at`` from its rows: a leaf, or a split whose two children
        (with their side, rows, class weights and total weight) are returned to be
        grown."""
        f = self.f
        if total == 0:
            return []
        _opened(at, dist, nodes.dist, nodes.probs, nodes.has_probs)
        idx_all, span, node_w = lists
        weighted = node_w is not None  # the node keeps weights of its own
        if not weighted:  # its rows weigh their own weights
            node_w, scratch, wr = NO_WEIGHTS, NO_WEIGHTS, f.w
        else:  # the node's own, which the kernel writes into scratch
            if self.scratch is None:
                self.scratch = np.empty(len(f.w))
            scratch = wr = self.scratch
        best = _node_best_parallel if _entries(span, f.attr_array) >= PARALLEL_ENTRIES \
            else _node_best
        gains, cuts, dists, props, lefts, orders, sizes = best(
            f.X, f.y, f.w, f.nominal_mask, f.textual, f.n_values, f.attr_array, f.heuristic,
            idx_all, span, node_w, scratch, f.k)
        texts = {}
        if f.python_splits:
            for a in np.flatnonzero(np.isnan(gains)):  # the principal-component order
                lo, hi = span[a]
                gain, text, mask, d = self.nominal_split(
                    a, idx_all[lo:hi], f.X[a][idx_all[lo:hi]], f.y[idx_all[lo:hi]],
                    wr[idx_all[lo:hi]])
                gains[a] = gain
                if d is not None:
                    texts[a], dists[a], props[a] = text, d, _shares(d, np.bool_(True))
                    lefts[a, :len(mask)] = mask
        att, children = _settled(at, f.X, f.y, f.nominal_mask, f.n_values, f.attr_array,
                                 f.target, idx_all, span, wr, total, f.min_leaf, weighted,
                                 gains, cuts, dists, props, lefts, nodes.probs, nodes.attr,
                                 nodes.cut, nodes.props, nodes.lefts, nodes.model_err)
        if att < 0:
            return []
        if f.nominal[att]:
            names = f.values[att]
            nodes.texts[at] = texts.get(att) or "|".join(f"({names[v]})"
                                                         for v in orders[att, :sizes[att]])
        return [(side, (ii, o, w if len(w) else None), d, t)
                for side, (ii, o, w, d, t) in enumerate(children)]

    def nominal_split(self, a, idx, x, y, wts):
        """(gain, split string, value mask of the left side, class weights per
        side) of nominal attribute ``a`` at a node."""
        f = self.f
        names = f.values[a]
        known = x[~np.isnan(x)].astype(np.int64)
        freq = np.bincount(known, minlength=len(names))
        non_empty = [j for j in range(len(names)) if freq[j] != 0]
        empty = [j for j in range(len(names)) if freq[j] == 0]
        if len(non_empty) <= 1:
            return 0.0, "", None, None
        strings = []
        if f.k == 2:
            vd = _value_class_weights(x, y, f.w[idx], len(names))
            p0 = [0.0 if _sum(vd[j]) == 0 else vd[j][0] / _sum(vd[j]) for j in non_empty]
            order = [non_empty[i] for i in _min_order(p0)]
            strings = _prefixes(names, order)
        elif not f.heuristic or len(non_empty) <= 4:
            for i in range(2 ** (len(non_empty) - 1)):
                text, bits = "", i
                for j in range(len(non_empty) - 1, -1, -1):
                    if bits % 2 == 1:
                        part = f"({names[non_empty[j]]})"
                        text = part if text == "" else text + "|" + part
                    bits //= 2
                strings.append(text)
        else:
            order = self.principal_order(a, non_empty)
            strings = _prefixes(names, order)
        lefts = np.array([[f"({v})" in s for v in names] for s in strings], np.bool_)
        gain, pick, d = _subset_split(x, y, wts, f.k, lefts)
        split = strings[pick] if pick >= 0 else ""
        props = _shares(d, np.bool_(True))
        for j in empty:  # values no row has go to the heavier side
            if props[0] >= props[1]:
                split = f"({names[j]})" if split == "" else split + f"|({names[j]})"
        return gain, split, np.array([f"({v})" in split for v in names], np.bool_), d

    def principal_order(self, a, non_empty):
        """The values ``non_empty`` ordered by their scores on the first principal
        component of the class probabilities of the values (counted on the whole
        data set of this tree, as the reference counts them)."""
        key = (a, tuple(non_empty))
        if key in self.pca_cache:
            return self.pca_cache[key]
        f = self.f
        names = f.values[a]
        n, k = len(non_empty), f.k
        lowered = [names[j].lower() for j in non_empty]
        slot = []
        for v in names:  # the first non-empty value equal ignoring case, else the first
            low = v.lower()
            slot.append(next((i for i, u in enumerate(lowered) if u == low), 0))
        x = f.X[a, self.rows]
        codes = np.where(np.isnan(x), 0, x).astype(np.int64)  # the reference reads 0
        counts = np.zeros((n, k))
        per_value = np.zeros(n)
        mean = np.zeros(k)
        pairs = np.zeros((len(names), k), np.int64)
        np.add.at(pairs, (codes, f.y[self.rows]), 1)
        for v in range(len(names)):
            counts[slot[v]] += pairs[v]
            per_value[slot[v]] += pairs[v].sum()
        for c in range(k):
            mean[c] = pairs[:, c].sum()
        p = [[0.0 if per_value[i] == 0 else counts[i][j] / per_value[i] for j in range(k)]
             for i in range(n)]
        mean = [m / len(self.rows) for m in mean]
        cov = [[0.0] * k for _ in range(k)]
        for i1 in range(k):
            for i2 in range(k):
                element = 0.0
                for j in range(n):
                    element += (p[j][i2] - mean[i2]) * (p[j][i1] - mean[i1])
                cov[i1][i2] = element
        values, vectors = symmetric_eigen(cov)
        top = _max_index(values)
        component = [vectors[i][top] for i in range(k)]
        scores = []
        for i in range(n):
            s = 0.0
            for j in range(k):
                s += component[j] * p[i][j]
            scores.append(s)
        order = [non_empty[i] for i in _min_order(scores)]
        self.pca_cache[key] = order
        return order


def _prefixes(names, order):
    """The split strings of the cuts of ``order``: its first 1, 2, ... values."""
    out, text = [], ""
    for j in order[:-1]:
        text = f"({names[j]})" if text == "" else text + f"|({names[j]})"
        out.append(text)
    return out


class Fit:
    """What one SimpleCart fit shares: the data, the options, and the count of the
    nodes its trees have grown."""

    def __init__(self, data, target, y, options):
        # the nodes grown over every tree, which the job's waiting thread reports
        self.count = progress.counter("CART: nodes grown")
        self.X = stacked(data.columns, data.n)
        self.nominal = [a.nominal for a in data.attributes]
        self.values = [a.values for a in data.attributes]
        self.target = target
        self.attrs = [a for a in range(len(data.columns)) if a != target]
        self.n_attributes = len(data.columns)
        self.w = data.weights
        self.y = y
        self.k = len(data.attributes[target].values)
        self.min_leaf = float(options["min_leaf"])
        self.heuristic = options["heuristic"]
        self.nominal_mask = np.array(self.nominal, np.bool_)
        self.n_values = np.array([len(v) for v in self.values], np.int64)
        self.width = max([len(v) for v in self.values] + [1])  # a node's value masks
        self.attr_array = np.array(self.attrs, np.int64)
        # the reference tests a value by text ("(v)" within the split's text): where
        # a value holds '(', ')' or '|' that is not a test of membership, so Python
        # does it as the reference does
        self.textual = np.array([self.nominal[a] and any(set("()|") & set(v)
                                                         for v in self.values[a])
                                 for a in range(len(self.values))], np.bool_)
        # whether a node may leave a split to Python (``_nominal_best``'s NaN gain);
        # where none can, narrow nodes' subtrees grow whole in one kernel call
        self.python_splits = bool(self.textual.any()) or (
            self.heuristic and self.k > 2
            and any(self.nominal[a] and len(self.values[a]) > 4 for a in self.attrs))

    def tree(self, rows):
        return Tree(Grower(self, rows).grow(), rows)


def fit(data, target, options, settings):
    """The contract's fit for cart."""
    labels = data.columns[target]
    rows = np.flatnonzero(~np.isnan(labels))  # int64
    k = len(data.attributes[target].values)
    y = class_codes(np.where(np.isnan(labels), 0, labels), k)
    f = Fit(data, target, y, options)
    data.spend(target)  # read no more: the classes are y
    if len(rows) == 0:
        raise ValueError("no row has a class")
    if not options["pruned"]:
        return CartModel.of(data.attributes, data.attributes[target].name, f.tree(rows),
                            options, len(rows))
    folds = options["folds"]
    rng = JavaRandom(options["seed"])
    order = randomize(rows, rng)
    order = order[:int(len(order) * options["train_fraction"]) - 1]
    check_folds(folds, len(order), "rows of the pruning cross-validation "
                "(train_fraction of the rows with a class, less one, as in the reference)")
    order = stratify(order, y, folds)

    # one tree at a time (each grows its subtrees two at a time): the folds' trees,
    # each let go once its pruning sequence is known, then the whole tree
    sequences = []
    for i in range(folds):
        sequences.append(f.tree(train_cv(order, folds, i)).sequence(f, test_cv(order, folds, i)))
        memory.give_back(len(rows))  # the tree's arrays, freed on other threads too
    del order  # the folds' rows: the whole tree grows on them all
    tree = f.tree(rows)
    cv_alphas = [alphas for alphas, _, _ in sequences]
    cv_errors = [errors for _, errors, _ in sequences]
    tree_alphas, _, iterations = tree.sequence(f)
    tree_errors = []
    for i in range(iterations + 1):
        alpha = math.sqrt(tree_alphas[i] * tree_alphas[i + 1])
        error = 0.0
        for alphas, errors in zip(cv_alphas, cv_errors):
            j = 0
            while alphas[j] <= alpha:
                j += 1
            error += errors[j - 1]
        tree_errors.append(error / folds)
    best, best_error = -1, DBL_MAX
    for i in range(iterations, -1, -1):
        if tree_errors[i] < best_error:
            best, best_error = i, tree_errors[i]
    if options["one_se_rule"]:
        one_se = math.sqrt(best_error * (1 - best_error) / len(rows))
        for i in range(iterations, -1, -1):
            if tree_errors[i] <= best_error + one_se:
                best = i
                break
    tree.unprune()
    tree.prune_to(math.sqrt(tree_alphas[best] * tree_alphas[best + 1]))
    return CartModel.of(data.attributes, data.attributes[target].name, tree, options,
                        len(rows))


# ---------------------------------------------------------------- the model

NODE_FIELDS = ("attr", "cut", "split", "lefts", "props", "probs", "dist", "cls",
               "children", "size")


class CartModel(Classifier):
    learner = "cart"

    def __init__(self, attributes, target, nodes, options, instances):
        super().__init__(attributes, target, options, instances)
        # depth first: attr (-1 leaf), cut, split, lefts, props, probs, dist, cls,
        # children, size
        self.nodes = nodes
        self.used = sorted({n["attr"] for n in nodes if n["attr"] >= 0})

    @classmethod
    def of(cls, attributes, target, tree, options, instances):
        """The model of a pruned ``Tree``: the nodes still reachable, depth first."""
        nodes = []

        def count(i):  # (nodes, leaves) of the subtree, as the reference counts them
            size, leaves, stack = 0, 0, [i]
            while stack:
                j = stack.pop()
                size += 1
                if tree.is_leaf[j]:
                    leaves += 1
                else:
                    stack += [tree.right[j], tree.left[j]]
            return size, leaves

        # depth first, without recursion (a tree may be thousands deep): (node, the
        # number of its parent, which side of it)
        stack = [(0, None, 0)]
        while stack:
            i, parent, side = stack.pop()
            if parent is not None:
                nodes[parent]["children"][side] = len(nodes)
            inner = not tree.is_leaf[i] and not tree.attr_none[i]
            nominal = inner and np.isnan(tree.cut[i])
            values = len(attributes[tree.attr[i]].values) if nominal else 0
            nodes.append({
                "attr": int(tree.attr[i]) if inner else -1,
                "cut": float(tree.cut[i]) if inner and not nominal else None,
                "split": tree.texts.get(i, "") if inner else "",
                "lefts": [bool(v) for v in tree.lefts[i, :values]] if nominal else None,
                "props": [float(p) for p in tree.props[i]] if inner else None,
                "probs": [float(p) for p in tree.probs[i]] if tree.has_probs[i] else None,
                "dist": [float(d) for d in tree.dist[i]],
                "cls": _max_index(tree.probs[i]) if tree.has_probs[i] else -1,
                "children": [None, None] if inner else None,
                # a node cut back for good, then grown back without its test, prints
                # as a leaf yet counts its subtree, as in the reference
                "size": None if inner else list(count(i))})
            if inner:
                at = len(nodes) - 1
                stack += [(tree.right[i], at, 1), (tree.left[i], at, 0)]
        return cls(attributes, target, nodes, options, instances)

    def to_json(self):
        return body(self, nodes=self.nodes)

    @classmethod
    def from_json(cls, d):
        check_records(d["nodes"], NODE_FIELDS, "node")
        return cls(attributes_of(d), d["target"],
                   d["nodes"], d["options"], d["instances"])

    def validate(self):
        nd = self.nodes
        check_tree(self.attributes, [n["attr"] for n in nd], [n["children"] for n in nd],
                   [n["props"] for n in nd], [n["probs"] for n in nd], len(self.classes),
                   lambda a: 2, self.target)
        k = len(self.classes)
        for i, n in enumerate(nd):
            # class weights, less a rounding error where weights were subtracted
            check_array(n["dist"], f"node {i}'s class weights", (k,), -1e-6, MAX_WEIGHT)
            if type(n["cls"]) is not int or not -1 <= n["cls"] < k \
                    or not isinstance(n["split"], str):
                raise ValueError(f"node {i} does not name a class and a split")
            if n["attr"] < 0 or n["size"] is not None:  # a leaf's (nodes, leaves) below
                check_array(n["size"], f"node {i}'s size", (2,), 0, 2**62, whole=True)
            if n["attr"] < 0:
                continue
            a = self.attributes[n["attr"]]
            if a.nominal and not (isinstance(n["lefts"], list)
                                  and len(n["lefts"]) == len(a.values)):
                raise ValueError(f"node {i} does not say where each value of {a.name!r} goes")
            if not a.nominal and not (isinstance(n["cut"], (int, float))
                                      and math.isfinite(n["cut"])):
                raise ValueError(f"node {i} has no finite cut")

    def proba(self, columns, n):
        """As the reference's recursion: a known value's rows take their branch's
        probabilities, a missing value's the branches' sum weighted by their shares.
        Each (node, rows) is a task made before the tasks of its branches and worked
        out after them, so that no Python stack grows with the tree's depth; a task
        keeps only its number of rows once its branches' tasks are made, so the rows
        held are those of about two depths of the tree, not of every node."""
        x = {a: np.asarray(c, np.float64) for a, c in zip(self.used, columns)}
        k = len(self.classes)
        tasks, parts = [(0, np.arange(n))], []  # parts: (missing, [(share, task)], [(rows, task)])
        for t, (at, rows) in enumerate(tasks):  # it grows as it goes, a depth after another
            tasks[t] = (at, len(rows))
            node = self.nodes[at]
            if node["attr"] < 0:
                parts.append(None)
                continue
            v = x[node["attr"]][rows]
            missing = np.isnan(v)
            spread = []
            if missing.any():
                sub = rows[missing]
                for p, child in zip(node["props"], node["children"]):
                    spread.append((p, len(tasks)))
                    tasks.append((child, sub))
            known = ~missing
            if node["lefts"] is not None:
                go_left = np.zeros(len(rows), np.bool_)
                go_left[known] = np.asarray(node["lefts"], np.bool_)[v[known].astype(np.int64)]
            else:
                go_left = known & (np.where(known, v, 0.0) < node["cut"])
            sides = []
            for side, child in ((go_left, node["children"][0]),
                                (known & ~go_left, node["children"][1])):
                if side.any():
                    sides.append((side, len(tasks)))
                    tasks.append((child, rows[side]))
            parts.append((missing, spread, sides))
        done = [None] * len(tasks)
        for t in range(len(tasks) - 1, -1, -1):  # a task's branches come after it
            at, size = tasks[t]
            out = np.zeros((size, k))
            if parts[t] is None:
                out[:] = self.nodes[at]["probs"] if self.nodes[at]["probs"] is not None else 0.0
            else:
                missing, spread, sides = parts[t]
                if spread:
                    acc = np.zeros((int(missing.sum()), k))
                    for p, c in spread:
                        acc = acc + p * done[c]
                        done[c] = None
                    out[missing] = acc
                for side, c in sides:
                    out[side] = done[c]
                    done[c] = None
            done[t] = out
        return done[0]

    def _leaf_text(self, node):
        if node["probs"] is None:  # no training weight reached it
            return ": null"
        dist = node["dist"]
        best = _max_index(dist)
        correct = int(dist[best] * 100) / 100.0
        wrong = int((_sum(np.asarray(dist)) - dist[best]) * 100) / 100.0
        return f": {self.classes[node['cls']]}({java_double(correct)}/{java_double(wrong)})"

    def _test(self, node, side):
        name = self.attributes[node["attr"]].name
        if node["lefts"] is None:
            return f"{name} {'<' if side == 0 else '>='} {java_double(node['cut'])}"
        return f"{name}{'=' if side == 0 else '!='}{node['split']}"

    def text(self):
        out = []
        for at, parent, side, level in preorder([n["children"] for n in self.nodes]):
            if parent is not None:  # the test that leads to it
                out.append("\n" + "|  " * (level - 1) + self._test(self.nodes[parent], side))
            if self.nodes[at]["attr"] < 0:
                out.append(self._leaf_text(self.nodes[at]))
        size = sum(n["size"][0] if n["attr"] < 0 else 1 for n in self.nodes)
        leaves = sum(n["size"][1] for n in self.nodes if n["attr"] < 0)
        return (f"CART Decision Tree\n{''.join(out)}\n\nNumber of Leaf Nodes: {leaves}\n\n"
                f"Size of the Tree: {size}")

    def picture(self):
        return pictures.tree(self.rows(), "cart", {
            i: self.attributes[n["attr"]].name for i, n in enumerate(self.nodes)
            if n["attr"] >= 0})

    def rows(self):
        """One row per node, depth first, with its parent, the test that leads to
        it, and (at a leaf) its class and weights."""
        out = []
        for at, parent, side, depth in preorder([n["children"] for n in self.nodes]):
            node = self.nodes[at]
            leaf = node["attr"] < 0
            dist = node["dist"]
            best = _max_index(dist)
            out.append({"node": at, "parent": parent, "depth": depth,
                        "test": None if parent is None else self._test(self.nodes[parent], side),
                        "is_leaf": leaf,
                        "class": self.classes[node["cls"]] if leaf and node["cls"] >= 0
                        else None,
                        "weight": float(_sum(np.asarray(dist))),
                        "errors": float(_sum(np.asarray(dist)) - dist[best])})
        return out
