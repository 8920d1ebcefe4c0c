"""Minimal cost-complexity pruning as the reference's SimpleCart does it, on a
grown CART tree flattened depth first: each inner node's complexity alpha (the
training errors its split saves per row and per leaf it adds), the weakest link cut
one at a time, and the held-out error of each step, kept up to date by updating
only the rows under a cut."""

import math
import sys

import numpy as np

from ..jit import njit
from ..stop import checkpoint

DBL_MAX = sys.float_info.max


@njit(cache=True)
def predicted(probs):
    """The reference's evaluation's prediction: the first largest positive
    probability, -1 for none."""
    best, pick = 0.0, -1
    for i in range(len(probs)):
        if probs[i] > best:
            best, pick = probs[i], i
    return pick


@njit(cache=True)
def _subtree_pass(left, right, is_leaf, model_err, tree_err, leaves):
    """Each node's training errors as a subtree (its leaves' errors, added left to
    right) and its number of leaves, bottom up (children come after their parent)."""
    for i in range(len(left) - 1, -1, -1):
        if is_leaf[i]:
            tree_err[i] = model_err[i]
            leaves[i] = 1
        else:
            tree_err[i] = 0.0 + tree_err[left[i]] + tree_err[right[i]]
            leaves[i] = leaves[left[i]] + leaves[right[i]]


@njit(cache=True)
def _alphas_pass(left, right, is_leaf, attr_none, model_err, tree_err, leaves, total,
                 alpha, changed):
    """Each reachable inner node's complexity alpha: the training errors its split
    saves per row and per leaf it adds, rounded to 1e-10. A split that saves none
    is cut at once (its node recorded in ``changed``). Returns how many were."""
    count = 0
    stack = np.empty(len(left) + 1, np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        i = stack[top]
        if is_leaf[i]:
            alpha[i] = DBL_MAX
            continue
        diff = model_err[i] - tree_err[i]
        if diff <= 0:
            is_leaf[i] = True
            attr_none[i] = True
            alpha[i] = DBL_MAX
            changed[count] = i
            count += 1
            continue
        diff /= total
        a = diff / (leaves[i] - 1) * 1e10
        r = math.floor(a)
        if a - r >= 0.5:  # Math.round: half up
            r += 1
        alpha[i] = r / 1e10
        stack[top] = right[i]
        stack[top + 1] = left[i]
        top += 2
    return count


@njit(cache=True)
def _weakest(left, right, is_leaf, alpha, leaves):
    """The reachable inner node of least alpha (of more leaves on a tie, else the
    first depth first); -1 when there is none."""
    pick = -1
    stack = np.empty(len(left) + 1, np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        i = stack[top]
        if is_leaf[i]:
            continue
        if pick < 0 or alpha[i] < alpha[pick] or \
                (alpha[i] == alpha[pick] and leaves[i] > leaves[pick]):
            pick = i
        stack[top] = right[i]
        stack[top + 1] = left[i]
        top += 2
    return pick


@njit(cache=True)
def _paths(X, attr, cut, lefts, left, right, is_leaf, rows):
    """Where each row (``rows``) goes in the grown tree: the rows reaching each
    node, grouped by node (offsets, positions in ``rows``), and which rows meet a
    missing value on the way (they are spread over both branches, so scored
    otherwise)."""
    n = len(left)
    spread = np.zeros(len(rows), np.bool_)
    counts = np.zeros(n + 1, np.int64)
    for p in range(len(rows)):
        i = 0
        while True:
            counts[i + 1] += 1
            if is_leaf[i]:
                break
            v = X[attr[i], rows[p]]
            if np.isnan(v):
                spread[p] = True
                break
            if np.isnan(cut[i]):
                i = left[i] if lefts[i, int(v)] else right[i]
            else:
                i = left[i] if v < cut[i] else right[i]
    offsets = np.cumsum(counts)
    fill = offsets[:-1].copy()
    members = np.empty(offsets[-1], np.int64)
    for p in range(len(rows)):
        i = 0
        while True:
            members[fill[i]] = p
            fill[i] += 1
            if is_leaf[i]:
                break
            v = X[attr[i], rows[p]]
            if np.isnan(v):
                break
            if np.isnan(cut[i]):
                i = left[i] if lefts[i, int(v)] else right[i]
            else:
                i = left[i] if v < cut[i] else right[i]
    return offsets, members, spread


@njit(cache=True)
def _assign(nodes, offsets, members, pred, row_pred):
    """The rows under each node of ``nodes`` (now leaves) take its prediction."""
    for i in nodes:
        for j in range(offsets[i], offsets[i + 1]):
            row_pred[members[j]] = pred[i]


@njit(cache=True)
def _error_rate(row_pred, y, w):
    """The weight of wrongly classified rows over all (a row with no prediction,
    -1, is neither), summed in order."""
    wrong = 0.0
    total = 0.0
    for i in range(len(y)):
        total += w[i]
        if row_pred[i] >= 0 and row_pred[i] != y[i]:
            wrong += w[i]
    return wrong / total


@njit(cache=True)
def _distributions(X, attr, cut, lefts, left, right, is_leaf, props, probs, rows, out):
    """``distributionForInstance`` of each row of ``rows`` from the root: a known
    value goes down its branch, a missing one down both, the two results added as
    ``(0 + p_left * left) + p_right * right`` (the reference's order of sums, kept
    with an explicit stack of frames and of results)."""
    n = len(left)
    k = out.shape[1]
    node = np.empty(2 * n + 1, np.int64)
    state = np.empty(2 * n + 1, np.int64)
    vals = np.empty((n + 1, k))
    for r in range(len(rows)):
        row = rows[r]
        sp, vp = 1, 0
        node[0], state[0] = 0, 0
        while sp > 0:
            sp -= 1
            i = node[sp]
            if state[sp] == 1:  # both branches known: add them
                vp -= 1
                for c in range(k):
                    vals[vp - 1, c] = (props[i, 0] * vals[vp - 1, c]
                                       + props[i, 1] * vals[vp, c])
                continue
            if is_leaf[i]:
                vals[vp] = probs[i]
                vp += 1
                continue
            v = X[attr[i], row]
            if np.isnan(v):  # left is worked out first, then right, then added
                node[sp], state[sp] = i, 1
                node[sp + 1], state[sp + 1] = right[i], 0
                node[sp + 2], state[sp + 2] = left[i], 0
                sp += 3
            else:
                go_left = lefts[i, int(v)] if np.isnan(cut[i]) else v < cut[i]
                node[sp], state[sp] = left[i] if go_left else right[i], 0
                sp += 1
        out[r] = vals[0]


@njit(cache=True)
def _predictions(dist):
    """``predicted`` of each row."""
    out = np.empty(dist.shape[0], np.int64)
    for r in range(dist.shape[0]):
        out[r] = predicted(dist[r])
    return out


class Tree:
    """A grown tree flattened depth first, for pruning and scoring: ``is_leaf``
    marks leaves and nodes cut back (their children kept, to grow back), while
    ``attr_none`` marks nodes made leaves for good, as the reference keeps them."""

    def __init__(self, root, fit, rows):
        nodes = []
        stack = [root]
        while stack:
            node = stack.pop()
            nodes.append(node)
            if node.children is not None:
                stack.extend(reversed(node.children))
        at = {id(node): i for i, node in enumerate(nodes)}
        n = len(nodes)
        self.nodes = nodes
        self.left = np.full(n, -1, np.int64)
        self.right = np.full(n, -1, np.int64)
        self.is_leaf = np.zeros(n, np.bool_)
        self.attr_none = np.zeros(n, np.bool_)
        self.attr = np.zeros(n, np.int64)
        self.cut = np.full(n, np.nan)
        width = max([len(v) for v in fit.values] + [1])
        self.lefts = np.zeros((n, width), np.bool_)
        self.props = np.zeros((n, 2))
        self.probs = np.zeros((n, fit.k))
        self.pred = np.full(n, -1, np.int64)
        self.model_err = np.zeros(n)
        for i, node in enumerate(nodes):
            if i % 4096 == 0:
                checkpoint()
            if node.children is not None:
                self.left[i], self.right[i] = at[id(node.children[0])], at[id(node.children[1])]
                self.attr[i], self.cut[i], self.props[i] = node.attr, node.cut, node.props
                if node.lefts is not None:
                    self.lefts[i, :len(node.lefts)] = node.lefts
            else:
                self.is_leaf[i] = True
                self.attr_none[i] = True
            if node.probs is not None:
                self.probs[i] = node.probs
                self.pred[i] = predicted(node.probs)
            self.model_err[i] = node.model_errors
        self.total = float(len(rows))
        self.tree_err = np.zeros(n)
        self.leaves = np.zeros(n, np.int64)
        self.alpha = np.zeros(n)
        self.changed = np.zeros(n, np.int64)

    def _passes(self):
        """Subtree errors, then alphas (cutting splits that save nothing), then the
        leaf counts again. Returns the nodes cut."""
        _subtree_pass(self.left, self.right, self.is_leaf, self.model_err, self.tree_err,
                      self.leaves)
        count = _alphas_pass(self.left, self.right, self.is_leaf, self.attr_none,
                             self.model_err, self.tree_err, self.leaves, self.total,
                             self.alpha, self.changed)
        if count:
            _subtree_pass(self.left, self.right, self.is_leaf, self.model_err,
                          self.tree_err, self.leaves)
        return self.changed[:count].copy()

    def distribution(self, fit, rows):
        """``distributionForInstance`` of the rows ``rows``."""
        out = np.empty((len(rows), fit.k))
        _distributions(fit.X, self.attr, self.cut, self.lefts, self.left, self.right,
                       self.is_leaf, self.props, self.probs, np.asarray(rows, np.int64),
                       out)
        return out

    def sequence(self, fit, test=None):
        """Cut the tree back weakest link first: (each step's alpha, ending with 1;
        the held-out error rate after each step; the number of steps)."""
        scorer = None if test is None else _Scorer(self, fit, test)
        changed = self._passes()
        alphas = [0.0]
        errors = None
        if scorer is not None:
            errors = [scorer.error(changed)]
        previous = DBL_MAX
        while True:
            checkpoint()
            i = _weakest(self.left, self.right, self.is_leaf, self.alpha, self.leaves)
            if i < 0:
                break
            self.is_leaf[i] = True  # children kept, to grow back
            if self.alpha[i] != previous:
                alphas.append(self.alpha[i])
                if scorer is not None:
                    errors.append(scorer.error(np.array([i], np.int64)))
                previous = self.alpha[i]
            elif scorer is not None:
                scorer.pending.append(i)
            changed = self._passes()
            if scorer is not None:
                scorer.pending.extend(changed)
        alphas.append(1.0)
        return alphas, errors, len(alphas) - 2

    def unprune(self):
        self.is_leaf[:] = self.left < 0

    def prune_to(self, alpha):
        """Cut the tree back while the weakest link's alpha is at most ``alpha``."""
        self._passes()
        while True:
            checkpoint()
            i = _weakest(self.left, self.right, self.is_leaf, self.alpha, self.leaves)
            if i < 0 or self.alpha[i] > alpha:
                break
            self.is_leaf[i] = True
            self.attr_none[i] = True
            self._passes()


class _Scorer:
    """The held-out error of a tree being cut back, kept up to date: a row that
    meets no missing value takes the prediction of the first leaf on its path, so
    only the rows under a node cut change; the others are scored again."""

    def __init__(self, tree, fit, rows):
        self.tree, self.fit, self.rows = tree, fit, rows
        self.offsets, self.members, self.spread = _paths(
            fit.X, tree.attr, tree.cut, tree.lefts, tree.left, tree.right, tree.is_leaf,
            rows)
        self.row_pred = np.full(len(rows), -1, np.int64)
        leaves = np.flatnonzero(tree.is_leaf)
        _assign(leaves, self.offsets, self.members, tree.pred, self.row_pred)
        self.y = fit.y[rows]
        self.w = fit.w[rows].astype(np.float64)
        self.pending = []

    def error(self, changed):
        nodes = np.array(self.pending + list(changed), np.int64)
        self.pending = []
        _assign(nodes, self.offsets, self.members, self.tree.pred, self.row_pred)
        if self.spread.any():
            sub = self.rows[self.spread]
            self.row_pred[self.spread] = _predictions(self.tree.distribution(self.fit, sub))
        return _error_rate(self.row_pred, self.y, self.w)
