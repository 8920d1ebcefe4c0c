"""Minimal cost-complexity pruning as the reference's SimpleCart does it, on a
grown CART tree flattened depth first: each inner node's complexity alpha (the
training errors its split saves per row and per leaf it adds), the weakest link cut
one at a time, and the held-out error of each step, kept up to date by updating
only the rows under a cut."""

import math
import sys

import numpy as np

from ..dataset import whole_weights
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
        count, split = _judge(i, is_leaf, attr_none, model_err, tree_err, leaves, alpha,
                              total, changed, count)
        if split:
            stack[top] = right[i]
            stack[top + 1] = left[i]
            top += 2
    return count


@njit(cache=True, inline="always")
def _judge(i, is_leaf, attr_none, model_err, tree_err, leaves, alpha, total, changed,
           count):
    """Node ``i``'s alpha (a leaf's DBL_MAX); a split that saves nothing is cut
    at once, and recorded in ``changed``. Returns the count of those cut, and
    whether ``i`` is still split."""
    if is_leaf[i]:
        alpha[i] = DBL_MAX
        return count, False
    diff = model_err[i] - tree_err[i]
    if diff <= 0:
        is_leaf[i] = True
        attr_none[i] = True
        alpha[i] = DBL_MAX
        changed[count] = i
        return count + 1, False
    alpha[i] = _alpha_of(diff / total, leaves[i])
    return count, True


@njit(cache=True, inline="always")
def _before(a, b, alpha, leaves):
    """Whether node ``a`` is a weaker link than node ``b`` (-1: none): of less
    alpha, of more leaves on a tie, else the first depth first."""
    if a < 0:
        return False
    if b < 0 or alpha[a] < alpha[b]:
        return True
    if alpha[a] != alpha[b]:
        return False
    return leaves[a] > leaves[b] or (leaves[a] == leaves[b] and a < b)


@njit(cache=True)
def _seat(weak, i, active, alpha, leaves):
    """Node ``i`` (in)active in ``weak``, a tournament tree over the nodes whose
    root ``weak[1]`` is the weakest active link, and its matches up to the root
    played again."""
    j = len(weak) // 2 + i
    weak[j] = i if active else -1
    j //= 2
    while j >= 1:
        a, b = weak[2 * j], weak[2 * j + 1]
        weak[j] = a if _before(a, b, alpha, leaves) else b
        j //= 2


@njit(cache=True)
def _retire(i, end, left, is_leaf, weak, alpha, leaves):
    """Node ``i`` (just cut) and the inner nodes below it leave ``weak`` (the
    subtrees of nodes cut before are skipped: they left it then)."""
    _seat(weak, i, np.bool_(False), alpha, leaves)
    j = i + 1
    while j < end[i]:
        if left[j] >= 0 and not is_leaf[j]:
            _seat(weak, j, np.bool_(False), alpha, leaves)
            j += 1
        elif left[j] >= 0:
            j = end[j]
        else:
            j += 1


@njit(cache=True)
def _climb(i, left, right, parent, model_err, tree_err, leaves, dirty, marked, weak,
           alpha):
    """``_subtree_pass`` for the nodes whose values node ``i``'s cut changes: it,
    then the nodes above it, bottom up (the same sums in the same order). Those
    are marked for their alphas (``marked``, ``dirty``), and their leaves move them in
    ``weak``."""
    tree_err[i] = model_err[i]
    leaves[i] = 1
    a = parent[i]
    while a >= 0:
        tree_err[a] = 0.0 + tree_err[left[a]] + tree_err[right[a]]
        leaves[a] = leaves[left[a]] + leaves[right[a]]
        _mark(a, dirty, marked)
        if weak[len(weak) // 2 + a] >= 0:
            _seat(weak, a, np.bool_(True), alpha, leaves)
        a = parent[a]


@njit(cache=True, inline="always")
def _mark(a, dirty, marked):
    """Node ``a`` marked for its alpha, once (``dirty``: the count marked, then a
    flag a node)."""
    if not dirty[a + 1]:
        dirty[a + 1] = 1
        dirty[0] += 1
        marked[dirty[0] - 1] = a


@njit(cache=True)
def _mark_above(nodes, parent, dirty, marked):
    """The nodes above each of ``nodes`` marked for their alphas."""
    for c in nodes:
        a = parent[c]
        while a >= 0:
            _mark(a, dirty, marked)
            a = parent[a]


@njit(cache=True)
def _alpha_of(diff, leaves):
    r = math.floor(diff / (leaves - 1) * 1e10)
    if diff / (leaves - 1) * 1e10 - r >= 0.5:  # Math.round: half up
        r += 1
    return r / 1e10


@njit(cache=True)
def _cut(i, attr_none_too, left, right, parent, end, is_leaf, attr_none, model_err,
         tree_err, leaves, alpha, total, dirty, marked, weak, changed):
    """Cut node ``i``, the weakest link, and bring the values up to date as
    ``_passes`` would by passes over the whole tree: only the nodes whose values
    change are worked out. Returns how many nodes were cut for saving nothing (in
    ``changed``, depth first). The alphas of the nodes above those stay as the
    whole passes leave them, worked out before those cuts (``marked`` for the next
    cut)."""
    is_leaf[i] = True
    if attr_none_too:
        attr_none[i] = True
    _retire(i, end, left, is_leaf, weak, alpha, leaves)
    _climb(i, left, right, parent, model_err, tree_err, leaves, dirty, marked, weak, alpha)
    alpha[i] = DBL_MAX
    # ascending: depth first, and every node above a marked node is marked (so
    # seen before it: a node is reachable when the one above is, and is split)
    todo = np.sort(marked[:dirty[0]])
    dirty[0] = 0
    count = 0
    for a in todo:
        p = parent[a]
        if p >= 0 and (dirty[p + 1] != 2 or is_leaf[p]):
            continue
        dirty[a + 1] = 2
        was_leaf = is_leaf[a]
        count, split = _judge(a, is_leaf, attr_none, model_err, tree_err, leaves, alpha,
                              total, changed, count)
        if split:
            _seat(weak, a, np.bool_(True), alpha, leaves)
        elif not was_leaf:
            _retire(a, end, left, is_leaf, weak, alpha, leaves)
    for a in todo:
        dirty[a + 1] = 0
    for c in range(count):
        _climb(changed[c], left, right, parent, model_err, tree_err, leaves, dirty, marked,
               weak, alpha)
    return count


@njit(cache=True)
def _tournament(parent, is_leaf, alpha, leaves):
    """``weak`` of the reachable inner nodes (a node is reachable when the one above
    it is, and is split: the one above comes first depth first)."""
    n = len(parent)
    size = 1
    while size < n:
        size *= 2
    weak = np.full(2 * size, -1, np.int64)
    reachable = np.ones(n, np.bool_)
    for i in range(1, n):
        reachable[i] = reachable[parent[i]] and not is_leaf[parent[i]]
    for i in range(n):
        if reachable[i] and not is_leaf[i]:
            weak[size + i] = i
    for j in range(size - 1, 0, -1):
        a, b = weak[2 * j], weak[2 * j + 1]
        weak[j] = a if _before(a, b, alpha, leaves) else b
    return weak


@njit(cache=True)
def _ends(left, right):
    """Each node's subtree as the range [i, end[i]) of the depth-first numbering
    (the nodes cut back keep their children)."""
    end = np.empty(len(left), np.int64)
    for i in range(len(left) - 1, -1, -1):
        end[i] = i + 1 if left[i] < 0 else end[right[i]]
    return end


@njit(cache=True)
def _paths(X, attr, cut, lefts, left, right, rows):
    """The node where each row (``rows``) ends in the grown tree: its leaf, or the
    first node whose value it lacks (such a row is spread over both branches, so
    scored otherwise). The rows under a node are those that end in its range."""
    final = np.empty(len(rows), np.int64)
    spread = np.zeros(len(rows), np.bool_)
    for p in range(len(rows)):
        i = 0
        while left[i] >= 0:
            v = X[attr[i], rows[p]]
            if np.isnan(v):
                spread[p] = True
                break
            if np.isnan(cut[i]):
                i = left[i] if lefts[i, int(v)] else right[i]
            else:
                i = left[i] if v < cut[i] else right[i]
        final[p] = i
    return final, spread


@njit(cache=True)
def _by_node(final, n):
    """The rows in order of the node they end in (a counting sort), and where each
    node's rows start: the rows under node i are ``members[starts[i]:starts[end[i]]]``."""
    starts = np.zeros(n + 1, np.int64)
    for p in range(len(final)):
        starts[final[p] + 1] += 1
    for i in range(n):
        starts[i + 1] += starts[i]
    fill = starts[:-1].copy()
    members = np.empty(len(final), np.int64)
    for p in range(len(final)):
        members[fill[final[p]]] = p
        fill[final[p]] += 1
    return members, starts


@njit(cache=True, inline="always")
def _wrong_by(old, new, y, w):
    """How much a row of class ``y`` and weight ``w`` adds to the weight of rows
    wrongly classified when its prediction goes from ``old`` to ``new`` (-1:
    none, neither right nor wrong)."""
    return ((w if new >= 0 and new != y else 0.0)
            - (w if old >= 0 and old != y else 0.0))


@njit(cache=True)
def _assign(nodes, end, starts, members, pred, row_pred, y, w):
    """The rows under each node of ``nodes`` (now leaves) take its prediction.
    Returns the change in the weight of rows wrongly classified."""
    change = 0.0
    for i in nodes:
        for j in range(starts[i], starts[end[i]]):
            m = members[j]
            change += _wrong_by(row_pred[m], pred[i], y[m], w[m])
            row_pred[m] = pred[i]
    return change


@njit(cache=True)
def _settle(spread, spread_pred, row_pred, y, w):
    """The spread rows take their own predictions: ``_assign``'s return."""
    change = 0.0
    for p in range(len(spread)):
        m = spread[p]
        if row_pred[m] != spread_pred[p]:
            change += _wrong_by(row_pred[m], spread_pred[p], y[m], w[m])
            row_pred[m] = spread_pred[p]
    return change


@njit(cache=True)
def _parents(left, right):
    parent = np.full(len(left), -1, np.int64)
    for i in range(len(left)):
        if left[i] >= 0:
            parent[left[i]] = i
            parent[right[i]] = i
    return parent


@njit(cache=True)
def _reaching(X, rows, attr, cut, lefts, left, parent, is_leaf, nodes):
    """Which of the spread rows ``rows`` reach one of ``nodes`` (just cut), and so
    may score otherwise: every node above it is still split, and the row's value
    there is missing or leads towards it."""
    out = np.zeros(len(rows), np.bool_)
    for p in range(len(rows)):
        for c in nodes:
            child, a = c, parent[c]
            reached = True
            while a >= 0:
                if is_leaf[a]:
                    reached = False
                    break
                v = X[attr[a], rows[p]]
                if not np.isnan(v):
                    go_left = lefts[a, int(v)] if np.isnan(cut[a]) else v < cut[a]
                    if go_left != (left[a] == child):
                        reached = False
                        break
                child, a = a, parent[a]
            if reached:
                out[p] = True
                break
    return out


@njit(cache=True)
def _wrong_and_total(row_pred, y, w):
    """The weight of wrongly classified rows (a row with no prediction, -1, is
    neither) and of all, summed in order."""
    wrong = 0.0
    total = 0.0
    for i in range(len(y)):
        total += w[i]
        if row_pred[i] >= 0 and row_pred[i] != y[i]:
            wrong += w[i]
    return wrong, total


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
    """A grown tree numbered depth first, for pruning and scoring: ``is_leaf``
    marks leaves and nodes cut back (their children kept, to grow back), while
    ``attr_none`` marks nodes made leaves for good, as the reference keeps them."""

    def __init__(self, nodes, rows):
        """``nodes``: the grown tree's ``Nodes``, numbered depth first."""
        grown = nodes.trimmed()
        self.texts = nodes.texts
        self.left, self.right = grown["left"], grown["right"]
        self.is_leaf = self.left < 0
        self.attr_none = self.left < 0
        self.attr, self.cut, self.lefts = grown["attr"], grown["cut"], grown["lefts"]
        self.props, self.dist, self.probs = grown["props"], grown["dist"], grown["probs"]
        self.has_probs, self.model_err = grown["has_probs"], grown["model_err"]
        self.pred = _predictions(self.probs)  # -1 for a node of no weight: no probs
        self.parent = _parents(self.left, self.right)
        self.end = _ends(self.left, self.right)
        self.total = float(len(rows))

    def _passes(self):
        """Subtree errors, then alphas (cutting splits that save nothing), then the
        leaf counts again, over the whole tree; then the weakest links' tournament.
        Returns the nodes cut. (The arrays the pruning works on are made here: a
        tree waiting for its pruning holds none.)"""
        n = len(self.left)
        self.tree_err, self.leaves = np.zeros(n), np.zeros(n, np.int64)
        self.alpha, self.changed = np.zeros(n), np.zeros(n, np.int64)
        _subtree_pass(self.left, self.right, self.is_leaf, self.model_err, self.tree_err,
                      self.leaves)
        count = _alphas_pass(self.left, self.right, self.is_leaf, self.attr_none,
                             self.model_err, self.tree_err, self.leaves, self.total,
                             self.alpha, self.changed)
        if count:
            _subtree_pass(self.left, self.right, self.is_leaf, self.model_err,
                          self.tree_err, self.leaves)
        self.dirty, self.marked = np.zeros(n + 1, np.int64), np.zeros(n, np.int64)
        # the alphas above those cut were worked out before the cuts
        _mark_above(self.changed[:count], self.parent, self.dirty, self.marked)
        self.weak = _tournament(self.parent, self.is_leaf, self.alpha, self.leaves)
        return self.changed[:count].copy()

    def _weakest(self):
        """The reachable inner node of least alpha (of more leaves on a tie, else
        the first depth first); -1 when there is none."""
        return self.weak[1]

    def _cut(self, i, for_good):
        """Cut node ``i`` (``for_good``: its test dropped too) and update what the
        passes would: returns the nodes cut for saving nothing."""
        count = _cut(i, for_good, self.left, self.right, self.parent, self.end,
                     self.is_leaf, self.attr_none, self.model_err, self.tree_err,
                     self.leaves, self.alpha, self.total, self.dirty, self.marked,
                     self.weak, self.changed)
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
            i = self._weakest()
            if i < 0:
                break
            alpha = self.alpha[i]
            if alpha != previous:
                alphas.append(alpha)
                if scorer is not None:
                    self.is_leaf[i] = True  # scored cut, before the passes
                    errors.append(scorer.error(np.array([i], np.int64)))
                previous = alpha
            elif scorer is not None:
                scorer.pending.append(i)
            changed = self._cut(i, False)  # children kept, to grow back
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
            i = self._weakest()
            if i < 0 or self.alpha[i] > alpha:
                break
            self._cut(i, True)


class _Scorer:
    """The held-out error of a tree being cut back, kept up to date: a row that
    meets no missing value takes the prediction of the first leaf on its path, so
    only the rows under a node cut change; a spread row is scored again only when it
    reaches a node cut. Where the weights are whole numbers, the weight of the rows
    wrongly classified is kept up to date too (such sums are exact in any order);
    else it is summed again in order at every step, as the reference does."""

    def __init__(self, tree, fit, rows):
        self.tree, self.fit, self.rows = tree, fit, rows
        final, spread = _paths(fit.X, tree.attr, tree.cut, tree.lefts, tree.left,
                               tree.right, rows)
        self.members, self.starts = _by_node(final, len(tree.left))
        self.y = fit.y[rows]
        self.w = fit.w[rows].astype(np.float64)
        self.row_pred = np.full(len(rows), -1, np.int64)
        leaves = np.flatnonzero(tree.is_leaf)
        _assign(leaves, tree.end, self.starts, self.members, tree.pred, self.row_pred,
                self.y, self.w)
        self.spread = np.flatnonzero(spread)
        self.spread_rows = np.asarray(rows, np.int64)[self.spread]
        self.spread_pred = None  # each spread row's prediction, once scored
        self.pending = []
        self.kept = whole_weights(self.w)
        self.wrong = None

    def error(self, changed):
        nodes = np.array(self.pending + list(changed), np.int64)
        self.pending = []
        t = self.tree
        change = _assign(nodes, t.end, self.starts, self.members, t.pred, self.row_pred,
                         self.y, self.w)
        if len(self.spread):
            if self.spread_pred is None:
                self.spread_pred = np.empty(len(self.spread), np.int64)
                redo = np.arange(len(self.spread))
            else:
                redo = np.flatnonzero(_reaching(self.fit.X, self.spread_rows, t.attr, t.cut,
                                                t.lefts, t.left, t.parent, t.is_leaf,
                                                nodes))
            if len(redo):
                self.spread_pred[redo] = _predictions(
                    t.distribution(self.fit, self.spread_rows[redo]))
            change += _settle(self.spread, self.spread_pred, self.row_pred, self.y, self.w)
        if self.kept and self.wrong is not None:
            self.wrong += change
        else:
            self.wrong, self.total = _wrong_and_total(self.row_pred, self.y, self.w)
        return self.wrong / self.total
