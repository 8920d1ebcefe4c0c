"""Bayesian network classifiers learned by local score search, as the reference's
BayesNet (3.6.14) learns them.

The data are made fully nominal and complete first (``model.Coding``): a numeric
attribute is discretised against the class by the MDL criterion and a missing
value becomes the attribute's mode. Every count the search and the estimator need
is a contingency table of a node and its parents, read from an AD-tree or from a
scan of the coded rows (``Counts``): the two give the same numbers.

Scores (``node_score``), per node with parent configurations j and values k, with
counts N_jk, N_j = sum_k N_jk, r values, q configurations and N rows:

* ``bayes``: sum_j [lnG(r a) - lnG(N_j + r a) + sum_k (lnG(N_jk + a) - lnG(a))],
  the K2/BD metric with prior count a (0.5);
* ``bdeu``: the same with a = 1 / (r q) per cell;
* ``loglik`` (the reference's ENTROPY): sum_jk N_jk ln(N_jk / N_j);
* ``aic``: loglik - q (r - 1);
* ``mdl``: loglik - q (r - 1) ln(N) / 2.

Searches: ``k2`` (class first, then the given attribute order; each node greedily
takes the predecessor that raises its score most, while that helps and it has
fewer than ``max_parents`` parents, the class counted), ``tan`` (a maximum
spanning tree over the attributes, weighted by the score gain of one attribute as
the other's extra parent, on top of naive Bayes) and ``hill_climb`` (from naive
Bayes, repeatedly the single arc addition, deletion or reversal that raises the
network score most, keeping the graph acyclic).

The probabilities are the reference's SimpleEstimator: (N_jk + alpha) / (N_j +
r alpha).
"""

import math

import numpy as np

from .. import progress
from ..adtree.tree import ADTree, code_type, scan_table
from ..jit import njit
from . import SCORES  # declared with the learners

SCORE_ALPHA = 0.5  # the prior count of the bayes score in the search


_A = np.array([8.11614167470508450300e-4, -5.95061904284301438324e-4,
               7.93650340457716943945e-4, -2.77777777730099687205e-3,
               8.33333333333331927722e-2])
_B = np.array([-1.37825152569120859100e3, -3.88016315134637840924e4,
               -3.31612992738871184744e5, -1.16237097492762307383e6,
               -1.72173700820839662146e6, -8.53555664245765465627e5])
_C = np.array([-3.51815701436523470549e2, -1.70642106651881159223e4,
               -2.20528590553854454839e5, -1.13933444367982507207e6,
               -2.53252307177582951285e6, -2.01889141433532773231e6])


@njit(cache=True)
def ln_gamma(x):
    """ln |Gamma(x)| for x > 0 by the Cephes rational approximations, in the
    reference's order of operations: score differences between equivalent
    networks are zero in exact arithmetic, so the search's choices between them
    depend on the last bit."""
    if x < 13.0:
        z = 1.0
        while x >= 3.0:
            x -= 1.0
            z *= x
        while x < 2.0:
            z /= x
            x += 1.0
        z = abs(z)
        if x == 2.0:
            return math.log(z)
        x -= 2.0
        num = _B[0]
        for i in range(1, 6):
            num = num * x + _B[i]
        den = x + _C[0]
        for i in range(1, 6):
            den = den * x + _C[i]
        return math.log(z) + x * num / den
    q = (x - 0.5) * math.log(x) - x + 0.91893853320467274178
    if x > 1.0e8:
        return q
    p = 1.0 / (x * x)
    if x >= 1000.0:
        return q + ((7.9365079365079365079365e-4 * p - 2.7777777777777777777778e-3) * p
                    + 0.0833333333333333333333) / x
    a = _A[0]
    for i in range(1, 5):
        a = a * p + _A[i]
    return q + a / x


@njit(cache=True)
def node_score(counts, kind, alpha, n_rows):
    """The local score of a node from its (configurations, values) counts;
    ``kind`` indexes SCORES."""
    q, r = counts.shape
    s = 0.0
    for j in range(q):
        if kind == 0 or kind == 1:
            a = alpha if kind == 0 else 1.0 / (r * q)
            total = 0.0
            for k in range(r):
                if a + counts[j, k] != 0:
                    s += ln_gamma(a + counts[j, k])
                    total += a + counts[j, k]
            if total != 0:
                s -= ln_gamma(total)
            if a != 0:
                s -= r * ln_gamma(a)
                s += ln_gamma(r * a)
        else:
            total = 0.0
            for k in range(r):
                total += counts[j, k]
            for k in range(r):
                if counts[j, k] > 0:
                    s += counts[j, k] * math.log(counts[j, k] / total)
    if kind == 2:
        s -= 0.5 * q * (r - 1) * math.log(n_rows)
    elif kind == 3:
        s -= q * (r - 1)
    return s


class Counts:
    """Contingency tables of the coded rows, from an AD-tree or by scans, cached."""

    def __init__(self, codes, card, use_ad_tree, max_size=None, max_bytes=4 << 30,
                 times=None):
        """``max_size``: the most attributes a table will have (the tree need not
        be deeper); ``times``: how many rows each row of ``codes`` stands for (None:
        one each), as a distributed fit brings back its distinct rows. Such rows are
        counted by scans: the same whole numbers an AD-tree would give."""
        self.card = np.asarray(card, np.int64)
        slot = self.card + 1  # the tree's missing slot (unused: data are complete)
        codes = np.ascontiguousarray(codes, code_type(slot))  # once, not per scan
        self.times = None if times is None else np.asarray(times, np.float64)
        self.tree = ADTree.of(codes, slot, 0, max_bytes, max_size) \
            if use_ad_tree and times is None else None
        self.codes = codes
        self.slot = slot
        self.n = len(codes) if times is None else int(self.times.sum())
        self._cache = {}

    def table(self, node, parents):
        """Counts of ``node`` per configuration of ``parents`` (first parent most
        significant), as a float (configurations, values) array."""
        key = (node, tuple(parents))
        hit = self._cache.get(key)
        if hit is None:
            attrs = [*parents, node]
            if self.tree is not None:
                hit = self.tree.table(attrs).reshape(-1, self.card[node])
            elif self.times is not None:
                hit = self.weighted(node, parents, self.times)
            else:
                hit = scan_table(self.codes, self.slot, attrs).reshape(-1, self.card[node])
            hit = np.ascontiguousarray(hit, np.float64)  # C-ordered, as the kernels'
            self._cache[key] = hit
        return hit

    def weighted(self, node, parents, weights=None):
        """``table`` with each row counted by its weight (None: once)."""
        if weights is None:
            return self.table(node, parents)
        cell = np.zeros(len(self.codes), np.int64)
        known = np.ones(len(self.codes), np.bool_)
        for q in (*parents, node):
            cell = cell * self.card[q] + self.codes[:, q]
            known &= self.codes[:, q] < self.card[q]
        size = int(np.prod([self.card[q] for q in parents])) * int(self.card[node])
        return np.bincount(cell[known], weights[known], size).reshape(-1, self.card[node])


class TreeCounts:
    """``Counts`` of the rows with a class, read from a given AD-tree (whose last
    code of each attribute is its missing value): where an attribute has missing
    values among those rows, their counts go to its value ``fill`` (its mode), as
    the network's ReplaceMissing fills them; rows without a class count in no table."""

    def __init__(self, tree, cls, fill, missing, unlabelled):
        """``missing[a]``: whether attribute ``a`` lacks a value in a row with a class;
        ``unlabelled``: whether some row lacks the class."""
        self.tree = tree
        self.card = np.asarray(tree.card, np.int64) - 1
        self.cls = int(cls)
        self.fill = [int(f) for f in fill]
        self.missing = [bool(m) for m in missing]  # never the class's
        self.unlabelled = bool(unlabelled)
        self.n = int(tree.table([self.cls]).sum())
        self._cache = {}

    def table(self, node, parents):
        key = (node, tuple(parents))
        hit = self._cache.get(key)
        if hit is None:
            attrs = [*parents, node]
            extra = self.unlabelled and self.cls not in attrs  # summed out below
            asked = attrs + [self.cls] if extra else attrs
            full = [self.missing[a] for a in asked]
            t = self.tree.table(asked, missing=full)
            if extra:
                t = t.sum(axis=-1)
            for axis, a in enumerate(attrs):
                if full[axis]:  # the missing value's counts to the mode's
                    t = np.moveaxis(t, axis, 0)
                    kept = t[:-1].copy()
                    kept[self.fill[a]] += t[-1]
                    t = np.moveaxis(kept, 0, axis)
            hit = np.ascontiguousarray(t, np.float64).reshape(-1, self.card[node])
            self._cache[key] = hit
        return hit

    def weighted(self, node, parents, weights=None):
        if weights is not None:
            raise ValueError("an AD-tree counts rows, not weights")
        return self.table(node, parents)


@njit(cache=True)
def _given_class_and(codes, card, cls, atts, kind, alpha, n_rows, out):
    """``out[i, j]``: the score of ``atts[i]`` with the parents ``cls`` and
    ``atts[j]`` (i != j), each counted as ``scan`` counts it (a row with a code past
    an attribute's values, a missing one, left out) into the table ``Counts.table``
    gives, so that ``node_score`` sums the same numbers in the same order. One pass
    over the rows per parent ``atts[j]`` fills the tables of every node at once."""
    n, m, rc = codes.shape[0], len(atts), card[cls]
    hc = np.empty(m, np.int64)  # each node's number of values
    for i in range(m):
        hc[i] = card[atts[i]]
    offs = np.zeros(m + 1, np.int64)
    for j in range(m):
        rt = hc[j]
        for i in range(m):  # node i's table of (class, parent) rows by its values;
            offs[i + 1] = offs[i] + rc * rt * hc[i]  # node j's is counted, not read
        cells = np.zeros(offs[m])
        for r in range(n):
            row = codes[r]
            c, v = row[cls], row[atts[j]]
            if c >= rc or v >= rt:
                continue
            config = c * rt + v
            for i in range(m):
                x = row[atts[i]]
                if x < hc[i]:
                    cells[offs[i] + config * hc[i] + x] += 1.0
        for i in range(m):
            if i != j:
                out[i, j] = node_score(cells[offs[i]:offs[i + 1]].reshape((rc * rt, hc[i])),
                                       kind, alpha, n_rows)


class Scorer:
    """Local scores of nodes under one score, from one ``Counts``."""

    def __init__(self, counts, score):
        self.counts = counts
        self.kind = SCORES.index(score)

    def __call__(self, node, parents):
        return node_score(self.counts.table(node, parents), self.kind, SCORE_ALPHA,
                          self.counts.n)

    def given_class_and(self, cls, atts):
        """The score of each of ``atts`` with the parents ``cls`` and each other of
        them, as a matrix (row: the node; the diagonal 0): when they are counted by
        scans, one pass of a kernel over the rows per parent rather than a scan per
        table (TAN asks for every pair: 46,872 tables of ``supermarket``)."""
        c, m = self.counts, len(atts)
        out = np.zeros((m, m))
        if isinstance(c, Counts) and c.tree is None and c.times is None:
            _given_class_and(c.codes, c.card, cls, np.asarray(atts, np.int64), self.kind,
                             SCORE_ALPHA, c.n, out)
            return out
        for i, h in enumerate(atts):
            for j, t in enumerate(atts):
                if i != j:
                    out[i, j] = self(h, [cls, t])
        return out


def k2(p, cls, max_parents, score):
    """Parent lists by K2 on the order: class first, then the attributes."""
    parents = [[] if i == cls else [cls] for i in range(p)]
    order = [cls] + [i for i in range(p) if i != cls]
    for pos, node in enumerate(order):
        progress.report("K2: nodes searched", pos, p)
        if node == cls:
            continue
        best_old = score(node, parents[node])
        while len(parents[node]) < max_parents:
            best, best_score = -1, -math.inf
            for cand in order[:pos]:
                if cand in parents[node]:
                    continue
                s = score(node, parents[node] + [cand])
                if s > best_score:
                    best, best_score = cand, s
            if best < 0 or best_score <= best_old:
                break
            parents[node].append(best)
            best_old = best_score
    return parents


def tan(p, cls, score):
    """Parent lists of a tree-augmented naive Bayes: each attribute has the class
    and at most one attribute as parents, the attribute arcs forming a maximum
    spanning tree (Prim's, from the best pair) of the gain of h as t's extra
    parent, scored as "h gets t" and oriented away from the first link's h. Each
    step takes the first pair of the largest gain in the order (h, t) of the
    attributes, the first step among all pairs, a later one among those that join
    a linked attribute to one not yet linked."""
    parents = [[] if i == cls else [cls] for i in range(p)]
    atts = [i for i in range(p) if i != cls]
    m = len(atts)
    if m < 2:
        return parents
    base = np.array([score(i, [cls]) for i in atts])
    gain = score.given_class_and(cls, atts) - base[:, None]
    linked = np.zeros(m, np.bool_)
    links = []
    for step in range(m - 1):
        allowed = linked[:, None] != linked[None, :] if step else ~np.eye(m, dtype=np.bool_)
        h, t = divmod(int(np.argmax(np.where(allowed, gain, -np.inf))), m)
        links.append((atts[h], atts[t]))
        linked[h] = linked[t] = True
    tree_parent = {}
    for h, t in links:
        if t not in tree_parent:
            tree_parent[t] = h
        else:
            tree_parent[h] = t
    for child, parent in tree_parent.items():
        parents[child].append(parent)
    return parents


def hill_climb(p, cls, max_parents, score):
    """Parent lists by greedy hill climbing over single arc additions, deletions
    and reversals, from naive Bayes, while the network score rises."""
    parents = [[] if i == cls else [cls] for i in range(p)]
    local = [score(i, parents[i]) for i in range(p)]
    while True:
        below = _descendants(parents)  # below[a, b]: a path a -> ... -> b
        best, best_delta = None, 0.0
        for head in range(p):  # additions: tail -> head closes no cycle
            if len(parents[head]) >= max_parents:
                continue
            for tail in range(p):
                if tail == head or tail in parents[head] or below[head, tail]:
                    continue
                d = score(head, parents[head] + [tail]) - local[head]
                if d > best_delta:
                    best, best_delta = ("add", head, tail), d
        for head in range(p):  # deletions
            for tail in parents[head]:
                rest = [x for x in parents[head] if x != tail]
                d = score(head, rest) - local[head]
                if d > best_delta:
                    best, best_delta = ("delete", head, tail), d
        for head in range(p):  # reversals: no other path tail -> ... -> head
            for tail in parents[head]:
                if len(parents[tail]) >= max_parents or any(
                        below[c, head] for c in range(p) if c != head and tail in parents[c]):
                    continue
                rest = [x for x in parents[head] if x != tail]
                d = (score(head, rest) - local[head]
                     + score(tail, parents[tail] + [head]) - local[tail])
                if d > best_delta:
                    best, best_delta = ("reverse", head, tail), d
        if best is None:
            return parents
        op, head, tail = best
        if op == "add":
            parents[head].append(tail)
        elif op == "delete":
            parents[head].remove(tail)
        else:
            parents[head].remove(tail)
            parents[tail].append(head)
            local[tail] = score(tail, parents[tail])
        local[head] = score(head, parents[head])


def _descendants(parents):
    """below[a, b]: whether b can be reached from a along arcs (a DAG's
    descendants), found once per step of the search rather than per candidate."""
    p = len(parents)
    children = [[] for _ in range(p)]
    for child, ps in enumerate(parents):
        for q in ps:
            children[q].append(child)
    below = np.zeros((p, p), np.bool_)
    for a in range(p):
        stack = list(children[a])
        while stack:
            x = stack.pop()
            if not below[a, x]:
                below[a, x] = True
                stack.extend(children[x])
    return below


def estimator_counts(counts, parents, alpha, weights=None):
    """Each node's (configurations, values) counts as the estimator keeps them:
    alpha plus the weighted count of the rows."""
    return [counts.weighted(node, ps, weights) + alpha for node, ps in enumerate(parents)]


def estimate(cells):
    """The conditional probability tables of ``estimator_counts``: (weighted count
    + alpha) / (row total + values * alpha)."""
    return [c / c.sum(axis=1, keepdims=True) for c in cells]


@njit(cache=True)
def add_table_score(total, cells, kind, alpha, n_rows):
    """``total`` plus a node's term of a printed log score (``kind`` indexes
    SCORES), from the estimator's smoothed (configurations, values) counts, whose
    prior is ``alpha``; every cell counts. Terms are added row by row, in the
    reference's order, so that the printed sums agree to the last digit."""
    q, r = cells.shape
    for j in range(q):
        n_j = 0.0
        for k in range(r):
            n_j += cells[j, k]
        s = 0.0
        if kind <= 1:
            for k in range(r):
                s += ln_gamma(cells[j, k])
            s -= ln_gamma(n_j)
            if kind == 1:
                s -= r * ln_gamma(1.0 / (r * q))
                s += ln_gamma(1.0 / q)
            elif alpha != 0:
                s -= r * ln_gamma(alpha)
                s += ln_gamma(r * alpha)
        else:
            for k in range(r):
                s += cells[j, k] * math.log(cells[j, k] / n_j)
        total += s
    if kind == 2:
        total -= 0.5 * q * (r - 1) * math.log(n_rows)
    elif kind == 3:
        total -= q * (r - 1)
    return total


def network_scores(cells, alpha, n_rows):
    """The network's log scores, by name, as the reference prints them: from the
    ``estimator_counts`` of its nodes."""
    out = {}
    for k, name in enumerate(SCORES):
        total = 0.0
        for c in cells:
            total = add_table_score(total, c, k, alpha, n_rows)
        out[name] = total
    return out


@njit(cache=True)
def log_joint(codes, cls, n_classes, flat, offsets, par, par_off, card, out):
    """out[i, c] = the log probability of row i with class c, summed over nodes."""
    n, p = codes.shape
    for i in range(n):
        for c in range(n_classes):
            s = 0.0
            for node in range(p):
                row = 0
                for q in range(par_off[node], par_off[node + 1]):
                    v = c if par[q] == cls else codes[i, par[q]]
                    row = row * card[par[q]] + v
                v = c if node == cls else codes[i, node]
                s += math.log(flat[offsets[node] + row * card[node] + v])
            out[i, c] = s
