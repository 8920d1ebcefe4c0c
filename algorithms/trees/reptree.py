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
the first row on), so every figure comes out to the same double.
"""

import math

import numpy as np

from .. import progress
from ..evaluation import check_folds, randomize, stratify, test_cv, train_cv
from ..javautil import JavaRandom, weka_order
from ..jit import njit, prange
from ..stop import checkpoint

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
def _proportions(weights):
    """Branch weights normalised (all equal when there is no weight)."""
    p = weights.copy()
    s = _sum(p)
    if not s > 0:
        p[:] = 1.0 / len(p)
    else:
        for j in range(len(p)):
            p[j] /= s
    return p


@njit(cache=True)
def _variance(s, sq, w):
    v = 0.0
    for i in range(len(s)):
        if w[i] > 0:
            v += sq[i] - s[i] * s[i] / w[i]
    return v


# ------------------------------------------------------------------ splits

@njit(cache=True)
def split_nominal_class(x, y, idx, w, nominal, n_values, k):
    """One attribute's split of a node for a nominal class: (gain, cut point,
    class weights per branch, branch proportions). ``idx``/``w``: the node's rows
    in the attribute's order, missing values last."""
    m = len(idx)
    cut = np.nan
    if nominal:
        dist = np.zeros((n_values, k))
        i = 0
        while i < m and not np.isnan(x[idx[i]]):
            dist[int(x[idx[i]]), y[idx[i]]] += w[i]
            i += 1
    else:
        cur = np.zeros((2, k))
        dist = np.zeros((2, k))
        for j in range(m):
            if np.isnan(x[idx[j]]):
                break
            cur[1, y[idx[j]]] += w[j]
        prior = _entropy_over_columns(cur)
        dist[1] = cur[1]
        split = x[idx[0]] if m > 0 else np.nan
        best = -1.7976931348623157e308
        i = 0
        while i < m:
            v = x[idx[i]]
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
            cur[0, y[idx[i]]] += w[i]
            cur[1, y[idx[i]]] -= w[i]
            i += 1
    rows = np.zeros(dist.shape[0])
    for b in range(dist.shape[0]):
        rows[b] = _sum(dist[b])
    props = _proportions(rows)
    while i < m:  # the rows missing the attribute, spread
        for b in range(dist.shape[0]):
            dist[b, y[idx[i]]] += props[b] * w[i]
        i += 1
    weights = np.zeros(dist.shape[0])
    for b in range(dist.shape[0]):
        weights[b] += _sum(dist[b])
    return _gain(dist, _entropy_over_columns(dist)), cut, dist, props, weights


@njit(cache=True)
def split_numeric_class(x, y, idx, w, nominal, n_values):
    """One attribute's split of a node for a numeric class: (reduction of the sum
    of squared errors, cut point, mean per branch, branch proportions, weight
    per branch)."""
    m = len(idx)
    cut = np.nan
    b = n_values if nominal else 2
    s = np.zeros(b)
    sq = np.zeros(b)
    sw = np.zeros(b)
    i = 0
    if nominal:
        while i < m and not np.isnan(x[idx[i]]):
            v = int(x[idx[i]])
            t = y[idx[i]]
            s[v] += t * w[i]
            sq[v] += t * t * w[i]
            sw[v] += w[i]
            i += 1
        total, total_sq, total_w = _sum(s), _sum(sq), _sum(sw)
    else:
        cs = np.zeros(2)
        csq = np.zeros(2)
        cw = np.zeros(2)
        for j in range(m):
            if np.isnan(x[idx[j]]):
                break
            t = y[idx[j]]
            cs[1] += t * w[j]
            csq[1] += t * t * w[j]
            cw[1] += w[j]
        total, total_sq, total_w = cs[1], csq[1], cw[1]
        s[1], sq[1], sw[1] = cs[1], csq[1], cw[1]
        split = x[idx[0]] if m > 0 else np.nan
        best = 1.7976931348623157e308
        while i < m:
            v = x[idx[i]]
            if np.isnan(v):
                break
            if v > split:
                var = _variance(cs, csq, cw)
                if var < best:
                    best = var
                    cut = (v + split) / 2.0
                    if cut <= split:
                        cut = v
                    s[:] = cs
                    sq[:] = csq
                    sw[:] = cw
            split = v
            t = y[idx[i]] * w[i]
            tt = y[idx[i]] * t
            cs[0] += t
            csq[0] += tt
            cw[0] += w[i]
            cs[1] -= t
            csq[1] -= tt
            cw[1] -= w[i]
            i += 1
    props = _proportions(sw)
    while i < m:
        t = y[idx[i]]
        for j in range(b):
            s[j] += props[j] * t * w[i]
            sq[j] += props[j] * t * t * w[i]
            sw[j] += props[j] * w[i]
        total += t * w[i]
        total_sq += t * t * w[i]
        total_w += w[i]
        i += 1
    means = np.empty((b, 1))
    for j in range(b):
        means[j, 0] = s[j] / sw[j] if sw[j] > 0 else total / total_w
    gain = (total_sq - total * total / total_w) - _variance(s, sq, sw)
    return gain, cut, means, props, sw


def _score_all_impl(X, at, nominal, n_values, codes, y, idx, w, k, width):
    """Every attribute's split of a node, in parallel: (gains, cut points, class
    weights or means per branch, proportions, weights), padded to ``width``
    branches. ``codes``: the class codes (k > 0), ``y``: the numeric target."""
    p = len(at)
    gains = np.zeros(p)
    cuts = np.full(p, np.nan)
    dists = np.zeros((p, width, max(k, 1)))
    props = np.zeros((p, width))
    weights = np.zeros((p, width))
    for t in prange(p):
        if k > 0:
            g, c, d, pr, wt = split_nominal_class(X[at[t]], codes, idx[t], w[t],
                                                  nominal[t], n_values[t], k)
        else:
            g, c, d, pr, wt = split_numeric_class(X[at[t]], y, idx[t], w[t], nominal[t],
                                                  n_values[t])
        gains[t] = g
        cuts[t] = c
        b = len(pr)
        dists[t, :b, :] = d
        props[t, :b] = pr
        weights[t, :b] = wt
    return gains, cuts, dists, props, weights


# threads pay off only on large nodes
_score_parallel = njit(cache=True, parallel=True)(_score_all_impl)
_score_serial = njit(cache=True)(_score_all_impl)
PARALLEL_CELLS = 200_000  # attributes times rows of a node


def _score_all(X, at, nominal, n_values, codes, y, idx, w, k, width):
    score = _score_parallel if idx.size >= PARALLEL_CELLS else _score_serial
    return score(X, at, nominal, n_values, codes, y, idx, w, k, width)


@njit(cache=True)
def split_rows(idx, w, x, nominal, cut, props):
    """The node's sorted rows of every attribute dealt to the branches of the
    split on ``x``: a missing value to every branch of positive proportion with
    its weight times that proportion. Returns (rows, weights, offsets): branch
    ``c`` holds columns ``offsets[c]:offsets[c + 1]`` of each attribute's row."""
    p, m = idx.shape
    b = len(props)
    offsets = np.zeros(b + 1, np.int64)
    for i in range(m):  # the same rows are in every attribute's list
        v = x[idx[0, i]]
        if np.isnan(v):
            for c in range(b):
                if props[c] > 0:
                    offsets[c + 1] += 1
        else:
            offsets[(int(v) if nominal else (0 if v < cut else 1)) + 1] += 1
    for c in range(b):
        offsets[c + 1] += offsets[c]
    out_idx = np.empty((p, offsets[b]), np.int64)
    out_w = np.empty((p, offsets[b]))
    for a in range(p):
        fill = offsets[:b].copy()
        for i in range(m):
            r = idx[a, i]
            v = x[r]
            if np.isnan(v):
                for c in range(b):
                    if props[c] > 0:
                        out_idx[a, fill[c]] = r
                        out_w[a, fill[c]] = props[c] * w[a, i]
                        fill[c] += 1
            else:
                c = int(v) if nominal else (0 if v < cut else 1)
                out_idx[a, fill[c]] = r
                out_w[a, fill[c]] = w[a, i]
                fill[c] += 1
    return out_idx, out_w, offsets


# ------------------------------------------------------------------ the tree

class Grown:
    """The nodes in depth-first order, as lists: attribute (-1 leaf), cut, branch
    proportions, children, class probabilities (None: an empty node), training
    distribution (nominal: class weights; numeric: [sum of squared errors,
    weight])."""

    def __init__(self):
        self.attr, self.cut, self.props, self.children = [], [], [], []
        self.probs, self.dist = [], []

    def add(self):
        for col in (self.attr, self.cut, self.props, self.children, self.probs, self.dist):
            col.append(None)
        self.attr[-1] = -1
        self.cut[-1] = math.nan
        self.children[-1] = []
        return len(self.attr) - 1


def grow(columns, nominal, n_values, y, w, rows, target, k, min_leaf, min_variance,
         max_depth):
    """The tree grown on ``rows`` (positions, in order) of the attribute ``columns``
    (the target's column among them, never split on); ``y``: class codes (k > 0) or
    numbers (k = 0)."""
    p = len(columns)
    attrs = [a for a in range(p) if a != target]
    n = len(rows)
    # strided like the children's slices (parts[:, lo:hi]), so that the kernels that
    # read them compile for one layout
    idx = np.empty((len(attrs), n + 1), np.int64)[:, :n]
    for t, a in enumerate(attrs):
        x = columns[a][rows]
        if nominal[a]:
            known = ~np.isnan(x)
            idx[t] = np.concatenate([rows[known], rows[~known]])
        else:
            idx[t] = rows[weka_order(np.where(np.isnan(x), np.finfo(np.float64).max, x))]
    wts = np.empty((len(attrs), n + 1))[:, :n]
    np.take(w, idx, out=wts, mode="clip")
    X = np.empty((len(attrs), len(y)))  # the split attributes, a row each
    for t, a in enumerate(attrs):
        X[t] = columns[a]
    at = np.arange(len(attrs))
    nom = np.array([bool(nominal[a]) for a in attrs])
    nvals = np.array([n_values[a] for a in attrs], np.int64)
    width = max(2, int(nvals.max()) if len(nvals) else 2)
    classed = k > 0
    yf = np.asarray(y, np.float64)
    yk = np.where(np.isnan(yf), -1, yf).astype(np.int64) if classed else \
        np.zeros(len(yf), np.int64)
    sums, total_w = _totals(np.asarray(y, np.float64), w, rows, k)
    if classed:
        probs = sums[:k]
        min_var = 0.0
    else:
        s, sq = sums
        min_var = min_variance * ((sq - s * s / total_w) / total_w)
        probs = np.array([s / total_w])
    tree = Grown()
    stack = [(idx, wts, total_w, probs, 0, tree.add())]
    grown = 0
    while stack:
        checkpoint()
        progress.report("REPTree: nodes grown", grown)
        grown += 1
        idx, wts, total_w, probs, depth, node = stack.pop()
        if idx.shape[1] == 0:  # no rows: an empty leaf
            tree.dist[node] = np.zeros(k if classed else 2)
            continue
        if not classed:
            prior = _sse(y, idx[0], wts[0])
        probs = probs.copy()
        leaf = total_w < 2 * min_leaf or (max_depth >= 0 and depth >= max_depth)
        if classed:
            leaf = leaf or abs(probs[np.argmax(probs)] - _sum(probs)) < SMALL
        else:
            leaf = leaf or prior / total_w < min_var
        best = None
        if not leaf:
            gains, cuts, dists, props, weights = _score_all(
                X, at, nom, nvals, yk, yf, idx, wts, k, width)
            scores = np.zeros(p)
            scores[attrs] = gains
            a = int(np.argmax(scores))
            if a != target and scores[a] > SMALL:
                t = attrs.index(a)
                b = nvals[t] if nom[t] else 2
                if (weights[t, :b] >= min_leaf).sum() > 1:
                    best = a
                    found = (cuts[t], dists[t, :b], props[t, :b], weights[t, :b])
        if classed:
            tree.dist[node] = probs.copy()
            tree.probs[node] = probs / _sum(probs)
        else:
            tree.dist[node] = np.array([prior, total_w])
            tree.probs[node] = probs
        if best is None:
            continue
        cut, dists, props, weights = found
        tree.attr[node], tree.cut[node], tree.props[node] = best, cut, props
        parts, part_w, offsets = split_rows(idx, wts, columns[best], nominal[best], cut,
                                            props)
        del idx, wts
        kids = [tree.add() for _ in range(len(props))]
        tree.children[node] = kids
        for c in reversed(range(len(props))):
            lo, hi = offsets[c], offsets[c + 1]
            stack.append((parts[:, lo:hi], part_w[:, lo:hi], weights[c], dists[c], depth + 1,
                          kids[c]))
    return tree


@njit(cache=True)
def _sse(y, idx, w):
    s = sq = sw = 0.0
    for i in range(len(idx)):
        s += y[idx[i]] * w[i]
        sq += y[idx[i]] * y[idx[i]] * w[i]
        sw += w[i]
    return sq - s * s / sw


def holdout(tree, columns, nominal, y, w, rows, k):
    """(held-out distribution per node, held-out error per node) of the rows
    ``rows`` passed down the tree, each one in turn, depth first."""
    n = len(tree.attr)
    attr = np.array(tree.attr, np.int64)
    offsets = np.zeros(n + 1, np.int64)
    offsets[1:] = np.cumsum([len(c) for c in tree.children])
    children = np.array([c for cs in tree.children for c in cs], np.int64)
    props = np.array([x for i, cs in enumerate(tree.children) for x in
                      (tree.props[i] if cs else [])], np.float64)
    # what each node predicts: its own probabilities, else (empty) its parent's
    guess = np.zeros(n)
    for i in range(n):
        for c in tree.children[i]:
            own = tree.probs[c]
            probs = own if own is not None else tree.probs[i]
            guess[c] = probs[0] if k == 0 else int(np.argmax(probs))
    guess[0] = tree.probs[0][0] if k == 0 else int(np.argmax(tree.probs[0]))
    used = sorted({a for a in tree.attr if a >= 0})
    X = np.empty((max(len(used), 1), len(rows)))
    where = np.full(max(len(columns), 1), -1, np.int64)
    for j, a in enumerate(used):
        X[j] = columns[a][rows]
        where[a] = j
    dist = np.zeros((n, k if k > 0 else 2))
    error = np.zeros(n)
    _holdout(X, np.where(attr >= 0, where[np.maximum(attr, 0)], -1),
             np.array([bool(nominal[a]) if a >= 0 else False for a in tree.attr]),
             np.array(tree.cut, np.float64), offsets, children, props, guess,
             np.asarray(y, np.float64)[rows], w[rows], k, dist, error)
    return list(dist), list(error)


@njit(cache=True)
def _holdout(X, col, nominal, cut, offsets, children, props, guess, y, w, k, dist, error):
    n_nodes = len(col)
    stack_node = np.empty(n_nodes, np.int64)
    stack_w = np.empty(n_nodes)
    for r in range(X.shape[1]):
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
            lo = offsets[i]
            if np.isnan(v):
                for b in range(offsets[i + 1] - lo - 1, -1, -1):
                    if props[lo + b] > 0:
                        stack_node[top] = children[lo + b]
                        stack_w[top] = weight * props[lo + b]
                        top += 1
            else:
                b = int(v) if nominal[i] else (0 if v < cut[i] else 1)
                stack_node[top] = children[lo + b]
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


def prune(tree, error, node=0):
    """Reduced-error pruning, bottom up: the held-out error of the (pruned) subtree."""
    if tree.attr[node] < 0:
        return error[node]
    below = 0.0
    for c in tree.children[node]:
        below += prune(tree, error, c)
    if below >= error[node]:
        tree.attr[node] = -1
        return error[node]
    return below


def backfit(tree, held, k):
    """Every node's probabilities (mean) from its training and held-out rows."""
    stack = [0]
    while stack:
        node = stack.pop()
        if k > 0:
            probs = tree.dist[node][:k].copy()
            probs += held[node]
            total = _sum(probs)
            tree.probs[node] = probs / total if total > 0 else None
        else:
            total = tree.dist[node][1] + held[node][0]
            if total <= 0:
                continue
            mean = 0.0 if tree.probs[node] is None else tree.probs[node][0] * tree.dist[node][1]
            tree.probs[node] = np.array([(mean + held[node][1]) / total])
        if tree.attr[node] >= 0:
            stack.extend(reversed(tree.children[node]))


def build(columns, nominal, n_values, y, w, target, k, options):
    """(the tree, held-out distributions, held-out errors) of the rows with a class,
    as the reference's REPTree builds it."""
    folds = options["folds"]
    rows = np.flatnonzero(~np.isnan(y))
    rng = JavaRandom(options["seed"])
    rows = randomize(rows, rng)
    if k > 0:
        rows = stratify(rows, np.where(np.isnan(y), -1, y).astype(np.int64), folds)
    if options["pruned"]:
        check_folds(folds, len(rows))
        train, held_rows = train_cv(rows, folds, 0, rng), test_cv(rows, folds, 0)
    else:
        train, held_rows = rows, rows[:0]
    tree = grow(columns, nominal, n_values, y, w, train, target, k, options["min_leaf"],
                options["min_variance"], options["max_depth"])
    held, error = holdout(tree, columns, nominal, y, w, held_rows, k)
    if options["pruned"]:
        prune(tree, error)
        backfit(tree, held, k)
    return tree, held, error
