"""M5' model trees (the book's section 6.6) built as the reference's M5P builds them.

The pipeline: rows with a missing target are dropped; missing values are replaced
by the training mean or mode; each nominal attribute becomes k-1 binary attributes
ordered by the target's mean per value; constant attributes are removed; the rows
are shuffled with the reference's generator (seed 1). Then the tree is grown, its
linear models fitted and pruned, and the leaf models smoothed (k = 15).

Growth (``grow``): a node with fewer than ``min_leaf`` rows, or whose target
standard deviation is below 5% of the whole data's, is a leaf. Otherwise each
attribute in turn sorts the node's rows (the reference's quicksort, which is not
stable: the row order it leaves fixes every later sum, so it is reproduced) and
the cut maximising ``va^(1/5) - nl/n vl^(1/5) - nr/n vr^(1/5)`` is kept, each side
holding at least a fifth of the rows. Each node keeps its row order for its linear
model; children take their rows in that order.

Pruning (``prune``), bottom-up: a node's model is fitted on the attributes tested
in its unpruned subtree; it replaces the subtree when its RMSE times
``(n + 2v)/(n - v)`` is no worse than the subtree's. Smoothing folds the path's
models into each leaf: ``(n·below + 15·parent)/(n + 15)`` going up.
"""

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
from numba.typed import List

from .. import linear, memory, stop
from ..filters import NominalToBinary, Pipeline, ReplaceMissing
from ..halt import halted
from ..javautil import JavaRandom, _qsort, randomize
from ..jit import frozen, njit, prange

SMOOTHING = 15.0
SMALL = 1e-10   # the reference's tolerance once its split search has run

# node columns of the int table: ROWS is where the node's rows start in its depth's
# array of rows, DEPTH that depth
ATTR, LEFT, RIGHT, PARENT, COUNT, ROWS, LEAF, DEPTH = range(8)


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

    STEPS = (ReplaceMissing, partial(NominalToBinary, ranked=True))

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
        and weights ``w``; those columns coded)."""
        pipeline, coded = Pipeline.fitted(attributes, cls.STEPS, columns, w, y)
        keep = [c for c, col in enumerate(coded) if _varies(col)]
        return cls(attributes, pipeline, keep), _rows(coded, keep, len(y))

    def apply(self, columns, n):
        """The coded attribute-major matrix of raw ``columns`` (one per attribute)."""
        return _rows(self.pipeline.apply(columns), self.keep, n)

    def to_json(self):
        return {"pipeline": self.pipeline.to_json(), "keep": self.keep}

    @classmethod
    def from_json(cls, attributes, d):
        return cls(attributes, Pipeline.from_json(attributes, d["pipeline"]), d["keep"])


def _varies(col):
    return len(col) > 0 and bool((col != col[0]).any())


def _rows(coded, keep, n):
    out = np.empty((len(keep), n))
    for r, c in enumerate(keep):
        out[r] = coded[c]
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
def _partition(x, seg, tmp, attr, value):
    """Rows going left (``<= value``) first, each side in its order; the left count."""
    m = len(seg)
    nl = 0
    for i in range(m):
        if x[attr, seg[i]] <= value:
            tmp[nl] = seg[i]
            nl += 1
    k = nl
    for i in range(m):
        if not x[attr, seg[i]] <= value:
            tmp[k] = seg[i]
            k += 1
    seg[:] = tmp
    return nl


@njit(cache=False, parallel=True, error_model="numpy")  # called from grow (jit)
def _level(x, y, perm, vals, ys, tmp, rows, offsets, frontier, lo_of, count, attr, value,
           left, min_leaf, min_sd, halt):
    """Search and partition the nodes of one depth; each owns a slice of ``perm``
    (and of the buffers), so they run in parallel. Each node's rows, in the order
    its search leaves them, go to ``rows`` (the depth's) from ``offsets[i]``."""
    for i in prange(len(frontier)):
        u = frontier[i]
        lo = lo_of[u]
        hi = lo + count[u]
        seg = perm[lo:hi]
        a, v = _search(x, y, seg, vals[lo:hi], ys[lo:hi], min_leaf, min_sd, halt)
        attr[i] = a
        value[i] = v
        rows[offsets[i]:offsets[i + 1]] = seg
        if a >= 0:
            left[i] = _partition(x, seg, tmp[lo:hi], a, v)


@njit(cache=True, error_model="numpy")
def grow(x, y, order, min_leaf, global_sd, halt):
    """Grow a tree on the rows ``order`` (in that order) of ``x`` (attribute-major).

    Returns the node table (columns ATTR .. DEPTH; ATTR -1 at a leaf), the split
    values, and every node's rows in the order its model sums them: a 32-bit array
    per depth (a typed list), the node's from ``ROWS``, ``COUNT`` long. A tree of
    depth d holds about d times the rows; fitting frees each depth's once done
    with. Children are numbered after their parent. The nodes of one depth own
    disjoint slices of the row permutation, so they are searched in parallel. Once
    ``halt[0]`` is set the tree is left unfinished."""
    n = len(order)
    cap = 64  # grown as needed: a tree has far fewer nodes than rows
    nodes = np.full((cap, 8), -1, np.int64)
    split = np.zeros(cap)
    levels = List()
    perm = order.copy()
    vals = np.empty(max(n, 1))
    ys = np.empty(max(n, 1))
    tmp = np.empty(max(n, 1), np.int64)
    lo_of = np.zeros(cap, np.int64)
    nodes[0, COUNT] = n
    nodes[0, DEPTH] = 0
    frontier = np.zeros(1, np.int64)
    n_nodes = 1
    min_sd = global_sd * 0.05
    while len(frontier) > 0 and not halted(halt):
        f = len(frontier)
        offsets = np.empty(f + 1, np.int64)
        offsets[0] = 0
        for i in range(f):
            offsets[i + 1] = offsets[i] + nodes[frontier[i], COUNT]
        rows = np.empty(offsets[f], np.int32)
        levels.append(rows)
        attr = np.empty(f, np.int64)
        value = np.empty(f)
        left = np.zeros(f, np.int64)
        _level(x, y, perm, vals, ys, tmp, rows, offsets, frontier, lo_of, nodes[:, COUNT],
               attr, value, left, min_leaf, min_sd, halt)
        n_split = 0
        for i in range(f):
            if attr[i] >= 0:
                n_split += 1
        if n_nodes + 2 * n_split > len(nodes):
            cap = max(n_nodes + 2 * n_split, 2 * len(nodes))
            nodes, split, lo_of = _room(nodes, cap, -1), _room(split, cap, 0), \
                _room(lo_of, cap, 0)
        nxt = np.empty(2 * n_split, np.int64)
        k = 0
        for i in range(f):
            u = frontier[i]
            nodes[u, ROWS] = offsets[i]
            if attr[i] < 0:
                nodes[u, LEAF] = 1
                continue
            nodes[u, LEAF] = 0
            nodes[u, ATTR] = attr[i]
            split[u] = value[i]
            m = nodes[u, COUNT]
            for c, start, cnt in ((n_nodes, lo_of[u], left[i]),
                                  (n_nodes + 1, lo_of[u] + left[i], m - left[i])):
                nodes[c, COUNT] = cnt
                nodes[c, PARENT] = u
                nodes[c, DEPTH] = nodes[u, DEPTH] + 1
                lo_of[c] = start
            nodes[u, LEFT] = n_nodes
            nodes[u, RIGHT] = n_nodes + 1
            nxt[k] = n_nodes
            nxt[k + 1] = n_nodes + 1
            k += 2
            n_nodes += 2
        frontier = nxt
    return nodes[:n_nodes].copy(), split[:n_nodes].copy(), levels


@njit(cache=True)
def _room(a, cap, fill):
    """``a`` with room for ``cap`` rows, the new ones ``fill``."""
    out = np.full((cap,) + a.shape[1:], fill, a.dtype)
    out[:len(a)] = a
    return out


@njit(cache=True)
def tested_below(nodes, p):
    """Per node, which attributes its (unpruned) subtree tests."""
    n_nodes = len(nodes)
    tested = np.zeros((n_nodes, p), np.bool_)
    for u in range(n_nodes - 1, -1, -1):
        if nodes[u, LEAF] == 0:
            tested[u, nodes[u, ATTR]] = True
            for c in (nodes[u, LEFT], nodes[u, RIGHT]):
                for j in range(p):
                    if tested[c, j]:
                        tested[u, j] = True
    return tested


# ------------------------------------------------------------------ models, pruning

@njit(cache=True, error_model="numpy")
def _rmse(pred, y, w):
    s = 0.0
    sw = 0.0
    for i in range(len(y)):
        d = pred[i] - y[i]
        s += w[i] * (d * d)
        sw += w[i]
    return math.sqrt(s / sw)


@njit(cache=True, error_model="numpy")
def _rmse_at(pred, at, y, w):
    """``_rmse`` of ``pred[at]``, read in place."""
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
def _fit_one(x, y, w, nodes, levels, tested, global_sd, prune, constant, u, coef,
             intercept, rms, params, leaf, pred):
    """Fit node ``u``'s model and, when pruning, decide whether it replaces the
    subtree (whose rows' predictions ``pred`` holds). The node's rows are gathered
    once into a contiguous block, in the order the sums run."""
    m = nodes[u, COUNT]
    node_rows = levels[nodes[u, DEPTH]][nodes[u, ROWS]:nodes[u, ROWS] + m]
    cols = np.nonzero(tested[u])[0] if not (leaf[u] or constant) else np.zeros(0, np.int64)
    k = len(cols)
    xb = np.empty((m, k))
    yb = np.empty(m)
    wb = np.empty(m)
    for i in range(m):
        r = node_rows[i]
        yb[i] = y[r]
        wb[i] = w[r]
        for c in range(k):
            xb[i, c] = x[cols[c], r]
    sub = np.zeros(k)
    intercept[u] = linear.fit(xb, yb, wb, sub)
    nz = 0
    for c in range(k):
        coef[u, cols[c]] = sub[c]
        if sub[c] != 0.0:
            nz += 1
    out = np.empty(m)
    for i in range(m):  # the model's prediction: terms in attribute order
        s = 0.0
        for c in range(k):
            if sub[c] != 0.0:
                s += sub[c] * xb[i, c]
        out[i] = s + intercept[u]
    rms_model = _rmse(out, yb, wb)
    if leaf[u]:
        params[u] = 1
        rms[u] = rms_model
    elif not prune:
        rms[u] = rms_model
        return
    else:
        rms_sub = _rmse_at(pred, node_rows, yb, wb)
        sub_params = params[nodes[u, LEFT]] + params[nodes[u, RIGHT]] + 1
        adj_model = rms_model * _factor(m, nz + 1)
        adj_sub = rms_sub * _factor(m, sub_params)
        if adj_model <= adj_sub or adj_model < global_sd * 1e-5:
            leaf[u] = True
            params[u] = nz + 1
            rms[u] = rms_model
        else:
            params[u] = sub_params
            rms[u] = rms_sub
            return
    for i in range(m):
        pred[node_rows[i]] = out[i]


@njit(cache=True, parallel=True, error_model="numpy")
def _fit_depth(x, y, w, nodes, levels, tested, global_sd, prune, constant, level, d, coef,
               intercept, rms, params, leaf, pred):
    """Fit the nodes ``level`` of depth ``d`` in parallel (they hold disjoint rows),
    then free that depth's rows unless it is the root's."""
    for i in prange(len(level)):
        _fit_one(x, y, w, nodes, levels, tested, global_sd, prune, constant, level[i],
                 coef, intercept, rms, params, leaf, pred)
    if d > 0:
        levels[d] = np.empty(0, np.int32)


def fit_models(x, y, w, nodes, levels, tested, global_sd, prune, constant, halt):
    """Linear models of every node, bottom-up, pruning when ``prune``.

    Returns (coefficients, intercepts, rms, leaf flags after pruning). A node that
    never split gets the constant mean; ``constant`` gives every node one. The
    depths are fitted deepest first. Each depth's rows (``levels``, from ``grow``)
    but the root's are freed once fitted, and given back to the system before the
    two shallowest depths, whose nodes gather blocks as large as the table: so
    those blocks do not come on top of every depth's rows. Once ``halt[0]`` is set
    the models are left unfinished."""
    n_nodes, p = len(nodes), x.shape[0]
    coef = np.zeros((n_nodes, p))
    intercept = np.zeros(n_nodes)
    rms = np.zeros(n_nodes)
    params = np.zeros(n_nodes, np.int64)
    leaf = nodes[:, LEAF] == 1
    pred = np.zeros(len(y))  # each row's prediction by the subtree holding it
    depth = nodes[:, DEPTH]
    by_depth = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(depth.max() + 2))
    for d in range(int(depth.max()), -1, -1):
        if halted(halt):
            break
        if d <= 1:
            memory.give_back()
        _fit_depth(x, y, w, nodes, levels, tested, global_sd, prune, constant,
                   by_depth[bounds[d]:bounds[d + 1]], d, coef, intercept, rms, params, leaf,
                   pred)
    return coef, intercept, rms, leaf


@njit(cache=True, error_model="numpy")
def smooth(nodes, leaf, coef, intercept, k):
    """Each final leaf's model with the models on its path folded in."""
    out_c = coef.copy()
    out_b = intercept.copy()
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
        out_c[u] = c
        out_b[u] = b
    return out_c, out_b


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


def build_tree(x, y, w, order, options):
    """Grow, fit (and prune) and smooth a tree on the rows ``order`` of ``x``."""
    y = frozen(y)
    global_sd = std_dev(y, order)
    halt = stop.flag()
    nodes, split, levels = grow(x, y, order, float(options.min_leaf), global_sd, halt)
    stop.check(halt)
    tested = tested_below(nodes, x.shape[0])
    coef, intercept, rms, leaf = fit_models(x, y, w, nodes, levels, tested, global_sd,
                                            options.pruned, options.regression_tree, halt)
    stop.check(halt)
    if options.smoothed:
        coef, intercept = smooth(nodes, leaf, coef, intercept, SMOOTHING)
    return Built(nodes, split, leaf, coef, intercept, rms, _root(levels), global_sd)


@njit(cache=True)
def _root(levels):
    """The root's rows (read in a kernel: Python's reading of a typed list compiles
    in every process)."""
    return levels[0]


def shuffled(n):
    """The row order of the reference's randomize with seed 1."""
    return randomize(np.arange(n, dtype=np.int64), JavaRandom(1))
