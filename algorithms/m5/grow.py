"""M5' model trees (the book's section 6.6) built as the reference's M5P builds them.

The pipeline: rows with a missing target are dropped; missing values are replaced
by the training mean or mode; each nominal attribute becomes k-1 binary attributes
ordered by the target's mean per value; constant attributes are removed; the rows
are shuffled with the reference's generator (seed 1). Then the tree is grown, its
linear models fitted and pruned, and the leaf models smoothed (k = 15).

Growth (``_search``): a node with fewer than ``min_leaf`` rows, or whose target
standard deviation is below 5% of the whole data's, is a leaf. Otherwise each
attribute in turn sorts the node's rows (the reference's quicksort, which is not
stable: the row order it leaves fixes every later sum, so it is reproduced) and
the cut maximising ``va^(1/5) - nl/n vl^(1/5) - nr/n vr^(1/5)`` is kept, each side
holding at least a fifth of the rows. Each node keeps its row order for its linear
model; children take their rows in that order.

Pruning (``_fit_node``), bottom-up: a node's model is fitted on the attributes tested
in its unpruned subtree; it replaces the subtree when its RMSE times
``(n + 2v)/(n - v)`` is no worse than the subtree's. Smoothing folds the path's
models into each leaf: ``(n·below + 15·parent)/(n + 15)`` going up.

How the work is laid out, so that it holds little beyond the coded table, is
``build_tree``'s: the wide nodes a depth at a time, the subtrees under them depth
first, each node's model fitted as soon as its children's are.
"""

import math
from dataclasses import dataclass

import numpy as np
from numba.typed import List

from .. import linear, memory, stop
from ..filters import NominalToBinary, Pipeline, ReplaceMissing
from ..halt import halted
from ..javautil import JavaRandom, _qsort, randomize
from ..jit import frozen, njit

SMOOTHING = 15.0
SMALL = 1e-10   # the reference's tolerance once its split search has run

# node columns of the int table
ATTR, LEFT, RIGHT, PARENT, COUNT, LEAF, DEPTH = range(7)


@dataclass(frozen=True)
class Options:
    min_leaf: float = 4.0
    pruned: bool = True
    smoothed: bool = True
    regression_tree: bool = False


# ------------------------------------------------------------------ the filters

class Filters:
    """The reference's M5 preprocessing as shared filters: ReplaceMissing, then
    NominalToBinary ranked by the target's mean per value, then the columns that
    are constant on the training rows dropped (``keep``). ``apply`` codes any rows
    the same way, as an attribute-major matrix."""

    def __init__(self, attributes, pipeline, keep):
        self.attributes = list(attributes)
        self.pipeline = pipeline
        self.keep = [int(k) for k in keep]
        outputs = pipeline.outputs
        self.names = [outputs[k].name for k in self.keep]
        binary = pipeline.filters[-1]
        self.sources = [binary.columns[k][0] for k in self.keep]  # raw attribute

    @classmethod
    def fit(cls, attributes, columns, y, w):
        """(the filters fitted on ``columns``, one per attribute, with target ``y``
        and weights ``w``; those columns coded). Only the nominal columns are
        filled in to rank their values: the coding fills one column at a time."""
        replace = ReplaceMissing(attributes).fit(columns, w, y)
        nominal = replace.apply([c if a.nominal else c[:0]
                                 for a, c in zip(attributes, columns)])
        binary = NominalToBinary(attributes, ranked=True).fit(nominal, w, y)
        del nominal
        pipeline = Pipeline(attributes, [replace, binary])
        coded = _coded(pipeline, columns, range(len(binary.columns)), len(y))
        keep = [c for c in range(len(coded)) if _varies(coded[c])]
        for r, c in enumerate(keep):  # in place: the constant columns' rows go
            coded[r] = coded[c]
        return cls(attributes, pipeline, keep), coded[:len(keep)]

    def apply(self, columns, n):
        """The coded attribute-major matrix of raw ``columns`` (one per attribute)."""
        return _coded(self.pipeline, columns, self.keep, n)

    def to_json(self):
        return {"pipeline": self.pipeline.to_json(), "keep": self.keep}

    @classmethod
    def from_json(cls, attributes, d):
        return cls(attributes, Pipeline.from_json(attributes, d["pipeline"]), d["keep"])


def _varies(col):
    return len(col) > 0 and bool((col != col[0]).any())


# a table of more rows than this is coded one input column at a time; a smaller one
# (a scoring chunk) at once: a pipeline call per column costs more than the copy
CODED_WHOLE_ROWS = 1 << 16


def _coded(pipeline, columns, outputs, n):
    """The ``outputs`` (numbers) of the pipeline's columns as the rows of an
    attribute-major matrix. A large table is coded one input column at a time, so
    that no second copy of it is made on the way."""
    binary = pipeline.filters[-1]
    out = np.empty((len(outputs), n))
    groups = [range(len(columns))] if n <= CODED_WHOLE_ROWS else \
        [[j] for j in range(len(columns))]
    for group in groups:
        rows = [(r, k) for r, k in enumerate(outputs) if binary.columns[k][0] in group]
        if rows:
            coded = pipeline.apply([c if i in group else c[:0]
                                    for i, c in enumerate(columns)])
            for r, k in rows:
                out[r] = coded[k]
    return out


# ------------------------------------------------------------------ growing

@njit(cache=True)
def std_dev(y, rows):
    """Population standard deviation of ``y`` over ``rows``, summed in order."""
    n = len(rows)
    if n <= 1:
        return 0.0
    s = 0.0
    s2 = 0.0
    for r in rows:
        s += y[r]
        s2 += y[r] * y[r]
    return math.sqrt(abs((s2 - s * s / n) / n))


@njit(cache=True, error_model="numpy")
def _best_cut(xs, ys):
    """(impurity, cut position) of the best cut of rows sorted by one attribute:
    the leftmost maximum of va^(1/5) - nl/n vl^(1/5) - nr/n vr^(1/5)."""
    n = len(ys)
    best = -1e20
    pos = -1
    if n < 4:
        return best, pos
    pos = 0
    ln = 1 if n < 5 else n // 5
    part = ln - 1
    s = 0.0
    s2 = 0.0
    for i in range(n):
        s += ys[i]
        s2 += ys[i] * ys[i]
    va = abs((s2 - s * s / n) / n) if n > 1 else 0.0
    root = va ** 0.2
    sl = 0.0
    s2l = 0.0
    for i in range(part + 1):
        sl += ys[i]
        s2l += ys[i] * ys[i]
    sr = 0.0
    s2r = 0.0
    for i in range(part + 1, n):
        sr += ys[i]
        s2r += ys[i] * ys[i]
    nl = float(part + 1)
    nr = float(n - part - 1)
    fn = float(n)
    for i in range(ln, n - ln - 1):
        v = ys[i]
        nl += 1.0
        nr -= 1.0
        sl += v
        sr -= v
        s2l += v * v
        s2r -= v * v
        a = xs[i]
        b = xs[i + 1]
        if b == a or (b - a < SMALL and a - b < SMALL):
            continue
        if nl <= 0 or nr <= 0:
            imp = 0.0
        else:
            vl = abs((nl * s2l - sl * sl) / (nl * nl))
            vr = abs((nr * s2r - sr * sr) / (nr * nr))
            imp = root - nl / fn * vl ** 0.2 - nr / fn * vr ** 0.2
        if imp > best:
            best = imp
            pos = i
    return best, pos


@njit(cache=True, error_model="numpy")
def _search(x, y, seg, vals, ys, min_leaf, min_sd, halt):
    """Sort the node's rows ``seg`` by each attribute in turn (in place) and find
    the best cut: (attribute or -1 for a leaf, split value)."""
    m = len(seg)
    if m < min_leaf or std_dev(y, seg) < min_sd:
        return -1, 0.0
    qstack = np.empty(2 * 64, np.int64)
    best_imp = -1e20
    best_attr = -1
    best_pos = -1
    best_val = 0.0
    for a in range(x.shape[0]):
        if halted(halt):  # stopped (algorithms.stop)
            return -1, 0.0
        for i in range(m):
            vals[i] = x[a, seg[i]]
        if m > 1:
            _qsort(vals, seg, np.int64(0), m - 1, qstack)
        for i in range(m):
            ys[i] = y[seg[i]]
        imp, pos = _best_cut(vals, ys)
        if abs(imp - best_imp) > 1e-6 and imp > best_imp + 1e-6:
            best_imp = imp
            best_attr = a
            best_pos = pos
            best_val = (vals[pos] + vals[pos + 1]) * 0.5
    if best_attr < 0 or best_pos < 1 or best_pos > m - 1:
        return -1, 0.0
    return best_attr, best_val


@njit(cache=True)
def _halves(x, seg, attr, value):
    """The rows of ``seg`` going left (``<= value``) and right, each in its order."""
    nl = 0
    for r in seg:
        if x[attr, r] <= value:
            nl += 1
    left = np.empty(nl, seg.dtype)
    right = np.empty(len(seg) - nl, seg.dtype)
    a = 0
    b = 0
    for r in seg:
        if x[attr, r] <= value:
            left[a] = r
            a += 1
        else:
            right[b] = r
            b += 1
    return left, right


@njit(cache=True, error_model="numpy")
def _split(x, y, seg, min_leaf, min_sd, halt):
    """Search one node (``seg`` left in its model's order) and deal its rows:
    (attribute or -1 for a leaf, split value, left rows, right rows)."""
    m = len(seg)
    a, v = _search(x, y, seg, np.empty(m), np.empty(m), min_leaf, min_sd, halt)
    if a < 0:
        return a, v, seg[:0].copy(), seg[:0].copy()
    left, right = _halves(x, seg, a, v)
    return a, v, left, right


@njit(cache=True)
def _node_arrays(cap, p):
    """Arrays for ``cap`` nodes of ``p`` attributes: the node table (-1), split
    values, coefficients, intercepts, rms and parameters (0)."""
    return (np.full((cap, 7), -1, np.int64), np.zeros(cap), np.zeros((cap, p)),
            np.zeros(cap), np.zeros(cap), np.zeros(cap, np.int64))


@njit(cache=True)
def _room(a, cap, fill):
    """``a`` with room for ``cap`` rows, the new ones ``fill``."""
    out = np.full((cap,) + a.shape[1:], fill, a.dtype)
    out[:len(a)] = a
    return out


# ------------------------------------------------------------------ models, pruning

@njit(cache=True, error_model="numpy")
def _rmse_at(pred, at, y, w):
    """Root mean squared error of ``pred[at]`` against ``y``, weighted by ``w``."""
    s = 0.0
    sw = 0.0
    for i in range(len(y)):
        d = pred[at[i]] - y[i]
        s += w[i] * (d * d)
        sw += w[i]
    return math.sqrt(s / sw)


@njit(cache=True, error_model="numpy")
def _factor(n, v):
    if n <= v:
        return 10.0
    return (n + 2.0 * v) / (n - v)


@njit(cache=True, error_model="numpy")
def _model_at(xa, cols, j, sub, intercept):
    """The model's prediction for column ``j`` of ``xa``: terms in attribute order."""
    s = 0.0
    for c in range(len(cols)):
        if sub[c] != 0.0:
            s += sub[c] * xa[cols[c], j]
    return s + intercept


@njit(cache=True, error_model="numpy")
def _fit_node(xa, cols, lo, attrs, y, w, seg, leaf, prune, global_sd, sub_params, pred,
              coef):
    """Fit a node's model on its rows ``seg`` (in the order the sums run), whose
    values of the attributes ``attrs`` are the columns from ``lo`` of ``xa``'s rows
    ``cols``; when pruning, decide whether it replaces the subtree, whose rows'
    predictions ``pred`` holds (a final leaf writes its own there). Writes the
    coefficients into ``coef``; returns (intercept, rms, parameters, leaf)."""
    m = len(seg)
    k = len(cols)
    yb = np.empty(m)
    wb = np.empty(m)
    for i in range(m):
        yb[i] = y[seg[i]]
        wb[i] = w[seg[i]]
    sub = np.zeros(k)
    intercept = linear.fit(xa, cols, lo, yb, wb, sub)
    nz = 0
    for c in range(k):
        coef[attrs[c]] = sub[c]
        if sub[c] != 0.0:
            nz += 1
    s = 0.0
    sw = 0.0
    for i in range(m):
        d = _model_at(xa, cols, lo + i, sub, intercept) - yb[i]
        s += wb[i] * (d * d)
        sw += wb[i]
    rms_model = math.sqrt(s / sw)
    if not leaf:
        if not prune:
            return intercept, rms_model, 0, False
        rms_sub = _rmse_at(pred, seg, yb, wb)
        adj_model = rms_model * _factor(m, nz + 1)
        if not (adj_model <= rms_sub * _factor(m, sub_params) or adj_model < global_sd * 1e-5):
            return intercept, rms_sub, sub_params, False
    for i in range(m):
        pred[seg[i]] = _model_at(xa, cols, lo + i, sub, intercept)
    return intercept, rms_model, (nz + 1) if not leaf else 1, True


@njit(cache=True, error_model="numpy")
def _fit_here(x, y, w, seg, lo, tested, leaf, prune, constant, global_sd, sub_params, pred,
              coef):
    """``_fit_node`` on the attributes the node's unpruned subtree tests (none at a
    leaf or when ``constant``): read in place where ``x`` is arranged with the
    node's rows from column ``lo``, else (``lo`` < 0) gathered into a block."""
    cols = np.nonzero(tested)[0] if not (leaf or constant) else np.zeros(0, np.int64)
    if lo >= 0:
        return _fit_node(x, cols, lo, cols, y, w, seg, leaf, prune, global_sd, sub_params,
                         pred, coef)
    xb = np.empty((len(cols), len(seg)))
    for c in range(len(cols)):
        for i in range(len(seg)):
            xb[c, i] = x[cols[c], seg[i]]
    return _fit_node(xb, np.arange(len(cols)), np.int64(0), cols, y, w, seg, leaf, prune,
                     global_sd, sub_params, pred, coef)  # (np.int64: see jit)


@njit(cache=True, error_model="numpy")
def _subtree(x, y, w, rows, min_leaf, min_sd, global_sd, prune, constant, pred, halt):
    """Grow, fit and prune the subtree on ``rows`` (its root's rows in the order
    they reach it, left in its model's order) depth first, each node's model
    fitted once its children's are: only the rows of the nodes on the path are
    held, and a pruned node's subtree is dropped as soon as it is pruned (a node's
    descendants are numbered after it, so they are the nodes after its children's
    first). Returns the node table (local numbers, the root 0), split values,
    coefficients, intercepts, rms, parameters and the attributes the root's
    unpruned subtree tests; writes its rows' predictions into ``pred``."""
    p = x.shape[0]
    cap = np.int64(64)
    nodes, split, coef, intercept, rms, params = _node_arrays(cap, p)
    tested = np.zeros((cap, p), np.bool_)
    nodes[0, COUNT] = len(rows)
    nodes[0, DEPTH] = 0
    n_nodes = 1
    m0 = max(len(rows), 1)
    vals = np.empty(m0)
    ys = np.empty(m0)
    segs = List()  # the rows of each node on the stack
    segs.append(rows)
    at = np.zeros(64, np.int64)  # the stack: node, and whether its children are done
    done = np.zeros(64, np.bool_)
    top = 0
    while top >= 0 and not halted(halt):
        u = at[top]
        seg = segs[top]
        m = len(seg)
        if not done[top]:
            a, v = _search(x, y, seg, vals[:m], ys[:m], min_leaf, min_sd, halt)
            if a >= 0:
                if n_nodes + 2 > len(nodes):
                    cap = 2 * len(nodes)
                    nodes, split, coef = _room(nodes, cap, -1), _room(split, cap, 0), \
                        _room(coef, cap, 0)
                    intercept, rms = _room(intercept, cap, 0), _room(rms, cap, 0)
                    params, tested = _room(params, cap, 0), _room(tested, cap, False)
                if top + 2 >= len(at):
                    at, done = _room(at, 2 * len(at), 0), _room(done, 2 * len(at), False)
                left, right = _halves(x, seg, a, v)
                nodes[u, ATTR] = a
                nodes[u, LEAF] = 0
                nodes[u, LEFT] = n_nodes
                nodes[u, RIGHT] = n_nodes + 1
                split[u] = v
                tested[u, a] = True
                done[top] = True
                for c, part in ((n_nodes + 1, right), (n_nodes, left)):
                    nodes[c] = -1  # the numbers of a pruned subtree are taken again
                    coef[c] = 0.0
                    tested[c] = False
                    nodes[c, COUNT] = len(part)
                    nodes[c, PARENT] = u
                    nodes[c, DEPTH] = nodes[u, DEPTH] + 1
                    top += 1
                    at[top] = c
                    done[top] = False
                    segs.append(part)
                n_nodes += 2
                continue
            nodes[u, LEAF] = 1
        leaf = nodes[u, LEAF] == 1
        sub_params = 0
        if not leaf:
            for c in (nodes[u, LEFT], nodes[u, RIGHT]):
                sub_params += params[c]
                for j in range(p):
                    if tested[c, j]:
                        tested[u, j] = True
            sub_params += 1
        intercept[u], rms[u], params[u], final = _fit_here(  # (np.int64: see jit)
            x, y, w, seg, np.int64(-1), tested[u], leaf, prune, constant, global_sd,
            sub_params, pred, coef[u])
        if final and not leaf:  # pruned: its subtree goes
            n_nodes = nodes[u, LEFT]
            nodes[u, LEAF] = 1
            nodes[u, LEFT] = -1
            nodes[u, RIGHT] = -1
        segs.pop()
        top -= 1
    return (nodes[:n_nodes].copy(), split[:n_nodes].copy(), coef[:n_nodes].copy(),
            intercept[:n_nodes].copy(), rms[:n_nodes].copy(), params[:n_nodes].copy(),
            tested[0].copy())


@njit(cache=True)
def _arranged(x, idx, tmp):
    """Each attribute's values moved to the columns ``idx`` gives: x[a, i] becomes
    x[a, idx[i]]."""
    for a in range(x.shape[0]):
        for i in range(len(idx)):
            tmp[i] = x[a, idx[i]]
        x[a, :] = tmp


@njit(cache=True)
def _completed(first, n):
    """The rows ``first`` followed by every other row of ``n``, in order."""
    out = np.empty(n, np.int32)
    taken = np.zeros(n, np.bool_)
    for i in range(len(first)):
        out[i] = first[i]
        taken[first[i]] = True
    k = len(first)
    for r in range(n):
        if not taken[r]:
            out[k] = r
            k += 1
    return out


@njit(cache=True)
def _inverse(order):
    out = np.empty(len(order), np.int32)
    for i in range(len(order)):
        out[order[i]] = i
    return out


class _Layout:
    """Where ``x``'s columns are: the top nodes' blocks are as large as the table,
    so instead of gathering a copy, ``x`` itself is arranged with each node's rows
    side by side in the order its sums run, and put back afterwards."""

    def __init__(self, x):
        self.x = x
        self.now = None  # the row at each column; None: the rows' own order

    def arrange(self, first):
        """Arrange ``x`` with the rows ``first`` in its first columns, in that
        order, the others after them; None puts every row back."""
        if first is None and self.now is None:
            return
        goal = None if first is None else _completed(first, self.x.shape[1])
        if self.now is None:
            idx = goal
        else:
            idx = _inverse(self.now)  # the column holding each row
            if goal is not None:
                idx = idx[goal]
        _arranged(self.x, idx, np.empty(self.x.shape[1]))
        self.now = goal


def _top(x, y, w, order, min_leaf, min_sd, halt, wide):
    """Grow the nodes of more than ``wide`` rows a depth at a time, each depth's
    on two threads. Returns the nodes (a list of [attribute, split, parent, count,
    depth, left, right]), each top node's rows in its model's order, and the
    narrower nodes under them: (node, rows in the order they reach it)."""
    nodes = [[-1, 0.0, -1, len(order), 0, -1, -1]]
    rows = {}
    below = []
    frontier = [(0, order)]
    while frontier and not halted(halt):
        wide_ones = [(u, seg) for u, seg in frontier if len(seg) > wide]
        below += [(u, seg) for u, seg in frontier if len(seg) <= wide]
        done = stop.each(lambda item: _split(x, y, item[1], min_leaf, min_sd, halt),
                         wide_ones, threads=2)
        frontier = []
        for (u, seg), (a, v, left, right) in zip(wide_ones, done):
            rows[u] = seg
            if a < 0:
                continue
            nodes[u][0:2] = [int(a), float(v)]
            nodes[u][5:7] = [len(nodes), len(nodes) + 1]
            for part in (left, right):
                frontier.append((len(nodes), part))
                nodes.append([-1, 0.0, u, len(part), nodes[u][4] + 1, -1, -1])
    return nodes, rows, below


SUBTREE_ROWS = 20_000  # a node of at most this many rows (or an eighth of the tree's)
#                        is grown, fitted and pruned as a subtree of its own


def build_tree(x, y, w, order, options):
    """Grow, fit (and prune) and smooth a tree on the rows ``order`` of ``x`` (32-bit
    numbers, left in the order of the root's model: ``Built.root_rows``).

    The nodes wider than an eighth of the rows (the top) are grown first, a depth
    at a time. Under them, each narrower node is the root of a subtree grown,
    fitted and pruned depth first (``_subtree``), two subtrees at a time, the
    largest first. Then the top nodes' models are fitted, deepest first, each
    depth's nodes on two threads, reading ``x`` arranged so that each node's rows
    are side by side (``_Layout``) where their blocks would be large. A node's
    model depends on its own rows alone, so the tree is the one a single pass would
    build."""
    y = frozen(y)
    global_sd = std_dev(y, order)
    halt = stop.flag()
    min_leaf, min_sd, prune = float(options.min_leaf), global_sd * 0.05, options.pruned
    constant = options.regression_tree
    wide = max(len(order) // 8, SUBTREE_ROWS)
    top, top_rows, below = _top(x, y, w, order, min_leaf, min_sd, halt, wide)
    stop.check(halt)
    pred = np.zeros(len(y))  # each row's prediction by the subtree holding it

    def subtree(item):
        return _subtree(x, y, w, item[1], min_leaf, min_sd, global_sd, prune, constant,
                        pred, halt)

    largest = sorted(range(len(below)), key=lambda i: -len(below[i][1]))
    grown = dict(zip(largest, stop.each(subtree, [below[i] for i in largest], threads=2)))
    stop.check(halt)
    root_rows = top_rows[0] if 0 in top_rows else below[0][1]
    nodes, split, coef, intercept, rms, params, tested = _joined(
        top, [(below[i][0], grown[i]) for i in range(len(below))], x.shape[0])
    del grown
    memory.give_back(len(y))
    _fit_top(x, y, w, nodes, top_rows, tested, coef, intercept, rms, params, pred,
             prune, constant, global_sd, halt)
    stop.check(halt)
    leaf = nodes[:, LEAF] == 1
    if options.smoothed:
        smooth(nodes, leaf, coef, intercept, SMOOTHING)
    return Built(nodes, split, leaf, coef, intercept, rms, root_rows, global_sd)


def _joined(top, subtrees, p):
    """The node arrays of the ``top`` nodes and of ``subtrees`` ((node, what
    ``_subtree`` gave) each): a subtree's root fills its node, its other nodes follow
    the top's, numbered on in order. Also the attributes tested under each top node
    and subtree root (a dict by node)."""
    n_top = len(top)
    total = n_top + sum(len(s[0]) - 1 for _, s in subtrees)
    nodes, split, coef, intercept, rms, params = _node_arrays(total, p)
    for u, (a, v, parent, count, depth, left, right) in enumerate(top):
        nodes[u, [ATTR, PARENT, COUNT, DEPTH, LEFT, RIGHT]] = a, parent, count, depth, \
            left, right
        nodes[u, LEAF] = int(a < 0)
        split[u] = v
    tested = {}
    at = n_top
    for u, (s_nodes, s_split, s_coef, s_icpt, s_rms, s_params, s_tested) in subtrees:
        k = len(s_nodes) - 1
        new = np.concatenate([[u], np.arange(at, at + k)])  # local number -> global
        s_nodes = s_nodes.copy()
        for c in (LEFT, RIGHT, PARENT):
            linked = s_nodes[:, c] >= 0
            s_nodes[linked, c] = new[s_nodes[linked, c]]
        s_nodes[0, PARENT] = top[u][2]
        s_nodes[:, DEPTH] += top[u][4]
        for dst, src in ((nodes, s_nodes), (split, s_split), (coef, s_coef),
                         (intercept, s_icpt), (rms, s_rms), (params, s_params)):
            dst[u] = src[0]
            dst[at:at + k] = src[1:]
        tested[u] = s_tested
        at += k
    return nodes, split, coef, intercept, rms, params, tested


def _fit_top(x, y, w, nodes, top_rows, tested, coef, intercept, rms, params, pred, prune,
             constant, global_sd, halt):
    """Fit the top nodes' models, deepest first, each depth's on two threads. Where
    a depth's nodes hold a quarter of the table's rows or more, ``x`` is arranged so
    that each node's block is its own columns (and put back at the end); smaller
    blocks (a later tree of M5 rules) are gathered rather than the table moved."""
    layout = _Layout(x)
    depth = {u: int(nodes[u, DEPTH]) for u in top_rows}
    try:
        for d in sorted(set(depth.values()), reverse=True):
            if halted(halt):
                break
            level = [u for u in top_rows if depth[u] == d]
            for u in level:
                leaf = nodes[u, LEAF] == 1
                seen = np.zeros(x.shape[0], np.bool_)
                if not leaf:
                    seen[nodes[u, ATTR]] = True
                    for c in (nodes[u, LEFT], nodes[u, RIGHT]):
                        seen |= tested[c]
                tested[u] = seen
            sizes = [len(top_rows[u]) for u in level]
            if sum(sizes) * 4 >= x.shape[1]:
                layout.arrange(np.concatenate([top_rows[u] for u in level]))
                starts = dict(zip(level, np.cumsum([0] + sizes).tolist()))
            else:
                layout.arrange(None)  # gathered from the rows' own order
                starts = dict.fromkeys(level, -1)

            def one(u, starts=starts):
                leaf = bool(nodes[u, LEAF] == 1)
                sub = 0 if leaf else int(params[nodes[u, LEFT]] + params[nodes[u, RIGHT]] + 1)
                return _fit_here(x, y, w, top_rows[u], starts[u], tested[u], leaf, prune,
                                 constant, global_sd, sub, pred, coef[u])

            for u, (b, r, k, final) in zip(level, stop.each(one, level, threads=2)):
                intercept[u], rms[u], params[u] = b, r, k
                if final:
                    nodes[u, LEAF] = 1
    finally:
        layout.arrange(None)


@njit(cache=True, error_model="numpy")
def smooth(nodes, leaf, coef, intercept, k):
    """Each final leaf's model with the models on its path folded in, in place (a
    path's other nodes are not leaves, so no leaf reads another's result)."""
    for u in range(len(nodes)):
        if not leaf[u] or not _reachable(nodes, leaf, u):
            continue
        c = coef[u].copy()
        b = intercept[u]
        cur = u
        while nodes[cur, PARENT] >= 0:
            n = float(nodes[cur, COUNT])
            par = nodes[cur, PARENT]
            for j in range(len(c)):
                c[j] = (c[j] * n) / (n + k)
            b = (b * n) / (n + k)
            for j in range(len(c)):
                c[j] += (k * coef[par, j]) / (n + k)
            b += (k * intercept[par]) / (n + k)
            cur = par
        coef[u] = c
        intercept[u] = b


@njit(cache=True)
def _reachable(nodes, leaf, u):
    """Whether no ancestor of ``u`` became a leaf by pruning."""
    cur = nodes[u, PARENT]
    while cur >= 0:
        if leaf[cur]:
            return False
        cur = nodes[cur, PARENT]
    return True


# ------------------------------------------------------------------ the whole build

@dataclass
class Built:
    """A grown, fitted tree: node table, split values, final leaves, models (leaf
    models smoothed when asked), each node's rms, the root's rows in the order its
    model summed them, and the target's standard deviation over the rows it was
    grown on."""
    nodes: np.ndarray
    split: np.ndarray
    leaf: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    rms: np.ndarray
    root_rows: np.ndarray
    global_sd: float

    def preorder(self):
        """Reachable nodes, parents first, left subtrees before right ones."""
        out, stack = [], [0]
        while stack:
            u = stack.pop()
            out.append(u)
            if not self.leaf[u]:
                stack.extend((int(self.nodes[u, RIGHT]), int(self.nodes[u, LEFT])))
        return out


def shuffled(n):
    """The row order of the reference's randomize with seed 1 (32-bit numbers, as
    ``build_tree`` takes them)."""
    return randomize(np.arange(n, dtype=np.int32), JavaRandom(1))
