"""All-dimensions trees (Moore & Lee 1998): every count of a conjunction of
nominal values, cached once so that counting costs no scan of the data.

The tree is stored in flat arrays, no object per node:

* an *AD node* stands for a conjunction (the path to it) and holds its ``count``;
  it expands the attributes from ``start`` on (higher than the last one on its
  path), one *vary node* each, at ``vary[node] + (a - start[node])``;
* a vary node of attribute ``a`` holds the most common value ``mcv`` among the
  node's rows and, at ``child[off[v] + value]``, the AD node of each other value
  (-1 for the most common one, whose counts are derived by subtraction, and for a
  value no row has);
* a node with fewer rows than ``leaf_list_cutoff`` keeps the indices of its rows
  (``rows[lstart[node]:lstart[node] + count[node]]``) instead of vary nodes, and
  counts under it are made by looking at those rows.

Missing values are one more value of each attribute (the last code), so a row with
a missing value keeps its place in every count above it; no query asks for it.

``contingency`` answers every query, from one conjunctive count to a full table,
by the subtraction recursion: the count of ``a = mcv`` and the rest equals the
count of the rest minus that of each other value of ``a`` and the rest.
"""

import base64
import threading
from dataclasses import dataclass

import numpy as np

from .. import pictures, stop
from ..buffers import grow
from ..dataset import Attribute, find_name
from ..halt import halted
from ..jit import njit

MAX_DRAWN = 2_000  # nodes (AD and vary) of the largest AD-tree drawn
STATUS_OK = 0
STATUS_MEMORY = 1
STATUS_STOPPED = 2  # halt[0] was set (algorithms.stop)
SPLIT_ROWS = 50_000  # from this many rows, the root's subtrees are built in parallel


@njit(cache=True)
def build(codes, cols, card, cutoff, max_depth, max_bytes, rows0, start0, depth0, halt):
    """The (sub)tree of ``codes`` ((n, p) int, value ``card[j] - 1`` = missing;
    ``cols`` the same column by column)
    whose root holds the rows ``rows0`` (increasing), expands the attributes from
    ``start0`` on and lies at depth ``depth0``; no vary nodes below depth
    ``max_depth`` (queries of at most that many attributes never go deeper).

    Returns (status, count, start, vary, lstart, mcv, off, child, rows, sizes):
    ``sizes`` = (nodes, vary nodes, children, leaf rows); status STATUS_MEMORY when
    the arrays would pass ``max_bytes``.
    """
    p = codes.shape[1]
    n = len(rows0)
    maxcard = 1
    for j in range(p):
        maxcard = max(maxcard, card[j])
    count = np.empty(1024, np.int64)
    start = np.empty(1024, np.int32)
    vary = np.empty(1024, np.int64)
    lstart = np.empty(1024, np.int64)
    mcv = np.empty(1024, np.int32)
    off = np.empty(1024, np.int64)
    child = np.empty(4096, np.int64)
    rows = np.empty(1024, np.int32)
    nn = nv = nc = nr = 0
    buf = np.empty(3 * n + 1, np.int32)  # node rows, then each depth's partition
    for i in range(n):
        buf[i] = rows0[i]
    # one frame per depth of the walk: the node, its rows, the attribute and value
    # being expanded, where its partition starts, and the partition's offsets
    f_node = np.empty(p + 1, np.int64)
    f_lo = np.empty(p + 1, np.int64)
    f_hi = np.empty(p + 1, np.int64)
    f_attr = np.empty(p + 1, np.int64)
    f_val = np.empty(p + 1, np.int64)
    f_base = np.empty(p + 1, np.int64)
    f_vary = np.empty(p + 1, np.int64)
    f_offs = np.empty((p + 1, maxcard + 1), np.int64)
    status = STATUS_OK
    # the root
    count[0] = n
    start[0] = start0
    nn = 1
    vary[0] = -1
    lstart[0] = -1
    if n < cutoff:
        rows = grow(rows, n)
        for i in range(n):
            rows[i] = rows0[i]
        lstart[0] = 0
        nr = n
    if n < cutoff or start0 == p or depth0 == max_depth:
        return (status, count[:nn], start[:nn], vary[:nn], lstart[:nn], mcv[:nv],
                off[:nv], child[:nc], rows[:nr], np.array([nn, nv, nc, nr], np.int64))
    vary[0] = 0
    nv = p - start0
    mcv = grow(mcv, nv)
    off = grow(off, nv)
    d = 0
    f_node[0] = 0
    f_lo[0] = 0
    f_hi[0] = n
    f_attr[0] = start0 - 1
    f_val[0] = card[start0 - 1] if start0 > 0 else 0  # go on with attribute start0
    f_base[0] = n
    while d >= 0:
        if halted(halt):
            status = STATUS_STOPPED
            break
        a = f_attr[d]
        if a >= 0 and f_val[d] < card[a]:
            v = f_val[d]
            f_val[d] += 1
            lo = f_base[d] + f_offs[d, v]
            hi = f_base[d] + f_offs[d, v + 1]
            if v == mcv[f_vary[d]] or hi == lo:
                continue
            c = nn
            nn += 1
            if nn > len(count):
                count = grow(count, nn)
                start = grow(start, nn)
                vary = grow(vary, nn)
                lstart = grow(lstart, nn)
            child[off[f_vary[d]] + v] = c
            count[c] = hi - lo
            start[c] = a + 1
            if hi - lo < cutoff or a + 1 == p or depth0 + d + 1 == max_depth:
                vary[c] = -1
                if hi - lo < cutoff:
                    lstart[c] = nr
                    rows = grow(rows, nr + hi - lo)
                    for i in range(lo, hi):
                        rows[nr] = buf[i]
                        nr += 1
                else:
                    lstart[c] = -1
            else:
                lstart[c] = -1
                vary[c] = nv
                nv += p - a - 1
                mcv = grow(mcv, nv)
                off = grow(off, nv)
                d += 1
                f_node[d] = c
                f_lo[d] = lo
                f_hi[d] = hi
                f_attr[d] = a
                f_val[d] = card[a]  # nothing left of ``a``: move to a + 1
                f_base[d] = f_base[d - 1] + (f_hi[d - 1] - f_lo[d - 1])
            if (nn * 28 + nv * 12 + nc * 8 + nr * 4) > max_bytes:
                status = STATUS_MEMORY
                break
            continue
        # the next attribute of this frame's node
        a += 1
        node = f_node[d]
        if a == p:
            d -= 1
            continue
        f_attr[d] = a
        f_val[d] = 0
        lo = f_lo[d]
        hi = f_hi[d]
        base = f_base[d]
        k = card[a]
        for v in range(k + 1):
            f_offs[d, v] = 0
        for i in range(lo, hi):
            f_offs[d, cols[a, buf[i]] + 1] += 1
        best = 0
        for v in range(1, k):
            if f_offs[d, v + 1] > f_offs[d, best + 1]:
                best = v
        for v in range(k):
            f_offs[d, v + 1] += f_offs[d, v]
        if cutoff > 0 or (depth0 + d + 1 < max_depth and a + 1 < p):  # children need rows
            pos = f_offs[d, :k].copy()
            for i in range(lo, hi):
                r = buf[i]
                v = cols[a, r]
                buf[base + pos[v]] = r
                pos[v] += 1
        vi = vary[node] + a - start[node]
        f_vary[d] = vi
        mcv[vi] = best
        off[vi] = nc
        nc += k
        child = grow(child, nc)
        for v in range(k):
            child[off[vi] + v] = -1
    return (status, count[:nn], start[:nn], vary[:nn], lstart[:nn], mcv[:nv],
            off[:nv], child[:nc], rows[:nr], np.array([nn, nv, nc, nr], np.int64))


@njit(cache=True)
def contingency(codes, card, count, start, vary, lstart, mcv, off, child, rows,
                attrs, fixed, strides, tops, out):
    """Add to ``out`` the counts of the attributes ``attrs`` (increasing), each
    fixed to ``fixed[k]`` or, at -1, varied over its codes below ``tops[k]`` (its
    declared values, or those and missing) with cell offset ``value * strides[k]``."""
    m = len(attrs)
    cap = 256
    s_node = np.empty(cap, np.int64)
    s_k = np.empty(cap, np.int64)
    s_off = np.empty(cap, np.int64)
    s_sign = np.empty(cap, np.int64)
    s_node[0] = 0
    s_k[0] = 0
    s_off[0] = 0
    s_sign[0] = 1
    top = 1
    while top > 0:
        top -= 1
        node = s_node[top]
        k = s_k[top]
        o = s_off[top]
        sign = s_sign[top]
        if k == m:
            out[o] += sign * count[node]
            continue
        if lstart[node] >= 0:  # a leaf list: look at its rows
            for i in range(lstart[node], lstart[node] + count[node]):
                cell = _cell(codes, np.int64(rows[i]), card, attrs, fixed, strides, tops, k)
                if cell >= 0:
                    out[o + cell] += sign
            continue
        a = attrs[k]
        vi = vary[node] + a - start[node]
        best = mcv[vi]
        base = off[vi]
        ka = card[a]
        if top + 2 * ka + 2 > cap:
            cap = 2 * cap + 2 * ka + 2
            s_node = grow(s_node, cap)
            s_k = grow(s_k, cap)
            s_off = grow(s_off, cap)
            s_sign = grow(s_sign, cap)
        lo_v = 0 if fixed[k] < 0 else fixed[k]
        hi_v = tops[k] if fixed[k] < 0 else fixed[k] + 1
        for v in range(lo_v, hi_v):
            ov = o if fixed[k] >= 0 else o + v * strides[k]
            if v == best:
                s_node[top] = node
                s_k[top] = k + 1
                s_off[top] = ov
                s_sign[top] = sign
                top += 1
                for u in range(ka):
                    c = child[base + u]
                    if c >= 0:
                        s_node[top] = c
                        s_k[top] = k + 1
                        s_off[top] = ov
                        s_sign[top] = -sign
                        top += 1
            else:
                c = child[base + v]
                if c >= 0:
                    s_node[top] = c
                    s_k[top] = k + 1
                    s_off[top] = ov
                    s_sign[top] = sign
                    top += 1


@njit(cache=True)
def queries(codes, card, count, start, vary, lstart, mcv, off, child, rows,
            q_off, q_attr, q_val):
    """The count of each conjunctive query ``q`` (attributes increasing, each with
    its value at ``q_off[q]:q_off[q + 1]``)."""
    nq = len(q_off) - 1
    out = np.zeros(nq, np.int64)
    one = np.zeros(1, np.int64)
    strides = np.zeros(len(q_attr), np.int64)
    tops = np.zeros(len(q_attr), np.int64)  # every attribute fixed
    for q in range(nq):
        one[0] = 0
        lo, hi = q_off[q], q_off[q + 1]
        contingency(codes, card, count, start, vary, lstart, mcv, off, child, rows,
                    q_attr[lo:hi], q_val[lo:hi], strides[lo:hi], tops[lo:hi], one)
        out[q] = one[0]
    return out


@njit(cache=True)
def scan(codes, card, attrs, fixed, strides, tops, out):
    """``contingency`` by one pass over the rows, without a tree."""
    n = codes.shape[0]
    for r in range(n):
        cell = _cell(codes, r, card, attrs, fixed, strides, tops, np.int64(0))  # (see jit)
        if cell >= 0:
            out[cell] += 1


@njit(cache=True)
def _cell(codes, r, card, attrs, fixed, strides, tops, k):
    """The cell of row ``r`` over the attributes from ``attrs[k]`` on, or -1 if it
    has a value there that is not counted (missing, unless ``tops`` counts it) or
    differs from a fixed one."""
    cell = 0
    for q in range(k, len(attrs)):
        v = codes[r, attrs[q]]
        if (fixed[q] < 0 and v >= tops[q]) or (fixed[q] >= 0 and v != fixed[q]):
            return -1
        if fixed[q] < 0:
            cell += v * strides[q]
    return cell


# what a forged tree can break, as ``structure_fault`` names it
FAULTS = ("", "its root does not expand every attribute",
          "a node's count or attribute is out of range",
          "a node's leaf list lies outside its rows",
          "a node's vary nodes lie outside the arrays",
          "a vary node's most common value or children lie outside the arrays",
          "a child is not a later node that expands the attributes after its own",
          "a node is reached twice",
          "a vary node's children count more rows than their node",
          "a node that a query of max_depth conditions reaches does not expand")


@njit(cache=True)
def structure_fault(count, start, vary, lstart, mcv, off, child, rows, card, max_depth,
                    n_codes):
    """0 when the arrays are a tree every count query can walk safely (an index into
    ``FAULTS`` otherwise): each node reached once from the root, by a child link to
    a later node, expanding the attributes after the one it fixes, its vary nodes,
    children and leaf rows within the arrays, children counting no more rows than
    their node (the most common value's, left out, is their difference), and a node
    that a query of ``max_depth`` conditions reaches either a leaf list or
    expanded. A walk over a tree that passes ends, and reads inside its arrays."""
    p = len(card)
    nn, nv, nc, nr = len(count), len(mcv), len(child), len(rows)
    if nn == 0 or start[0] != 0:
        return 1
    seen = np.zeros(nn, np.bool_)
    depth = np.zeros(nn, np.int64)
    stack = np.empty(nn, np.int64)
    stack[0] = 0
    seen[0] = True
    top = 1
    while top > 0:
        top -= 1
        u = stack[top]
        if count[u] < 0 or not 0 <= start[u] <= p:
            return 2
        if lstart[u] >= 0:
            if vary[u] >= 0 or lstart[u] + count[u] > nr:
                return 3
            for i in range(lstart[u], lstart[u] + count[u]):
                if not 0 <= rows[i] < n_codes:
                    return 3
            continue
        if vary[u] < 0:
            if start[u] < p and depth[u] < max_depth:
                return 9
            continue
        if vary[u] + p - start[u] > nv:
            return 4
        for a in range(start[u], p):
            vi = vary[u] + a - start[u]
            k = card[a]
            if not (0 <= mcv[vi] < k and 0 <= off[vi] and off[vi] + k <= nc) \
                    or child[off[vi] + mcv[vi]] != -1:
                return 5
            total = 0
            for v in range(k):
                c = child[off[vi] + v]
                if c == -1:
                    continue
                if not u < c < nn or start[c] != a + 1:
                    return 6
                if seen[c]:
                    return 7
                seen[c] = True
                depth[c] = depth[u] + 1
                total += count[c]
                stack[top] = c
                top += 1
            if total > count[u]:
                return 8
    return 0


@dataclass
class ADTree:
    """An AD-tree over coded nominal data (``codes[:, j]`` in 0..card[j]-1, the
    last code of each attribute meaning missing)."""

    codes: np.ndarray
    card: np.ndarray
    cutoff: int
    max_depth: int
    count: np.ndarray
    start: np.ndarray
    vary: np.ndarray
    lstart: np.ndarray
    mcv: np.ndarray
    off: np.ndarray
    child: np.ndarray
    rows: np.ndarray

    ARRAYS = ("count", "start", "vary", "lstart", "mcv", "off", "child", "rows")

    @classmethod
    def of(cls, codes, card, cutoff=0, max_bytes=4 << 30, max_depth=None):
        """The tree of ``codes``; ``max_depth`` limits it to queries of that many
        attributes at most (None: any query)."""
        codes = np.ascontiguousarray(codes, code_type(card))
        card = np.asarray(card, np.int64)
        n, p = codes.shape
        depth = p if max_depth is None else min(int(max_depth), p)  # no deeper query
        cutoff, max_bytes = int(cutoff), int(max_bytes)
        if n < SPLIT_ROWS or n < cutoff or depth < 2:
            halt = stop.flag()
            status, *arrays, _ = build(codes, np.ascontiguousarray(codes.T), card, cutoff,
                                       depth, max_bytes, np.arange(n, dtype=np.int32), 0, 0,
                                       halt)
            stop.check(halt)
            if status == STATUS_MEMORY:
                raise MemoryError(max_bytes)
        else:
            arrays = _build_split(codes, card, cutoff, depth, max_bytes)
        if len(arrays[-1]) == 0:  # no leaf lists: the rows are never looked at again
            codes = np.empty((0, p), codes.dtype)
        return cls(codes, card, cutoff, depth, *arrays)

    @property
    def nbytes(self):
        return sum(getattr(self, a).nbytes for a in self.ARRAYS) + self.codes.nbytes

    def table(self, attrs, fixed=None, missing=None):
        """Counts of ``attrs`` (any order, no repeats) as an int64 array of shape
        (declared values of each, and one more, the missing value's, where
        ``missing`` is true); ``fixed`` pins some of them to one value (-1:
        varied), their axis then of length 1."""
        if len(attrs) > self.max_depth:
            raise ValueError(f"the tree answers queries of at most {self.max_depth} "
                             f"attributes, not {len(attrs)}")
        attrs, fixed, strides, tops, out, shape = _layout(self.card, attrs, fixed, missing)
        contingency(self.codes, self.card, self.count, self.start, self.vary, self.lstart,
                    self.mcv, self.off, self.child, self.rows, attrs, fixed, strides, tops,
                    out)
        return _whole_counts(out).reshape(shape)

    def counts(self, q_off, q_attr, q_val):
        """``queries`` on this tree."""
        return _whole_counts(queries(self.codes, self.card, self.count, self.start,
                                     self.vary, self.lstart, self.mcv, self.off, self.child,
                                     self.rows, q_off, q_attr, q_val))


def _whole_counts(out):
    """``out``, unless a count came out below zero: the counts of a tree that passed
    ``structure_fault`` but was edited contradict each other there."""
    if (out < 0).any():
        raise ValueError("the model value is corrupt: its tree's counts contradict each "
                         "other")
    return out


def _build_split(codes, card, cutoff, depth, max_bytes):
    """``build`` with the subtrees under the root's children made on several
    threads (largest first), then joined into one set of arrays."""
    n, p = codes.shape
    mcv = np.zeros(p, np.int32)
    off = np.concatenate([[0], np.cumsum(card)[:-1]]).astype(np.int64)
    child = np.full(int(card.sum()), -1, np.int64)
    tasks = []
    for a in range(p):
        counts = np.bincount(codes[:, a], minlength=card[a])
        mcv[a] = int(np.argmax(counts))  # the first of the most common
        for v in np.flatnonzero(counts):
            if v != mcv[a]:
                tasks.append((int(counts[v]) * (p - a), a, int(v)))
    tasks.sort(reverse=True)
    cols = np.ascontiguousarray(codes.T)  # one attribute's codes close together
    used = [0]  # bytes of the subtrees built so far: each gets what is left
    lock = threading.Lock()
    halt = stop.flag()

    def one(task):
        _, a, v = task
        with lock:
            left = max_bytes - used[0]
        if left <= 0:
            return None
        rows0 = np.flatnonzero(cols[a] == v).astype(np.int32)
        part = build(codes, cols, card, cutoff, depth, left, rows0, a + 1, 1, halt)
        nn, nv, nc, nr = part[-1]
        with lock:
            used[0] += int(nn * 28 + nv * 12 + nc * 8 + nr * 4)
        return part

    parts = stop.each(one, tasks)  # on numba's threads, acting for the job
    count, start, vary, lstart = [np.array([n])], [np.array([0], np.int32)], \
        [np.array([0])], [np.array([-1])]
    mcvs, offs, children, rows = [mcv], [off], [child], []
    nn, nv, nc, nr = 1, p, len(child), 0
    stop.check(halt)
    if any(part is None or part[0] == STATUS_MEMORY for part in parts):
        raise MemoryError(max_bytes)
    for (_, a, v), (_, c, s, vr, ls, m, o, ch, r, _) in zip(tasks, parts):
        child[off[a] + v] = nn
        count.append(c)
        start.append(s)
        vary.append(np.where(vr >= 0, vr + nv, -1))
        lstart.append(np.where(ls >= 0, ls + nr, -1))
        mcvs.append(m)
        offs.append(o + nc)
        children.append(np.where(ch >= 0, ch + nn, -1))
        rows.append(r)
        nn, nv, nc, nr = nn + len(c), nv + len(m), nc + len(ch), nr + len(r)
    if nn * 28 + nv * 12 + nc * 8 + nr * 4 > max_bytes:
        raise MemoryError(max_bytes)
    return (np.concatenate(count).astype(np.int64), np.concatenate(start).astype(np.int32),
            np.concatenate(vary).astype(np.int64), np.concatenate(lstart).astype(np.int64),
            np.concatenate(mcvs).astype(np.int32), np.concatenate(offs).astype(np.int64),
            np.concatenate(children).astype(np.int64),
            np.concatenate(rows or [np.zeros(0, np.int32)]).astype(np.int32))


def scan_table(codes, card, attrs, fixed=None):
    """``ADTree.table`` by a scan of the coded rows."""
    card = np.asarray(card, np.int64)
    attrs, fixed, strides, tops, out, shape = _layout(card, attrs, fixed)
    scan(np.ascontiguousarray(codes, code_type(card)), card, attrs, fixed, strides, tops,
         out)
    return out.reshape(shape)


def code_type(card):
    return np.int8 if max(card, default=1) <= 127 else np.int32


def _layout(card, attrs, fixed, missing=None):
    """What the counting kernels take for a table of ``attrs`` (``fixed`` and
    ``missing`` as in ``ADTree.table``): the attributes in increasing order with
    their fixed values, cell strides (the cells laid out in the order asked) and
    codes counted, a zeroed cell array, and the table's shape."""
    attrs = np.asarray(attrs, np.int64)
    m = len(attrs)
    fixed = np.full(m, -1, np.int64) if fixed is None else np.asarray(fixed, np.int64)
    tops = card[attrs] - (1 if missing is None else 1 - np.asarray(missing, np.int64))
    shape = np.where(fixed < 0, tops, 1)
    strides = np.ones(m, np.int64)
    for q in range(m - 2, -1, -1):
        strides[q] = strides[q + 1] * shape[q + 1]
    order = np.argsort(attrs, kind="stable")
    out = np.zeros(int(np.prod(shape)), np.int64)
    return (attrs[order], fixed[order], strides[order], tops[order], out,
            tuple(int(x) for x in shape))


def _pack(a):
    return {"dtype": a.dtype.str, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def _unpack(d):
    a = np.frombuffer(base64.b64decode(d["data"]), np.dtype(d["dtype"]))
    return a.reshape(d["shape"]).copy()


class ADTreeModel:
    """An AD-tree as a model value: the nominal attributes it counts and the tree."""

    learner = "ad_tree"

    def __init__(self, attributes, tree):
        self.attributes = list(attributes)
        self.tree = tree
        self.used = list(range(len(self.attributes)))
        self.instances = int(tree.count[0]) if len(tree.count) else 0
        self.options = {"leaf_list_cutoff": int(tree.cutoff),
                        "max_depth": int(tree.max_depth)}

    @classmethod
    def fit(cls, attributes, columns, cutoff, max_bytes, max_depth=None):
        """The tree of nominal ``columns`` (codes, NaN = missing); ``max_depth``:
        the most conditions a query will have (None: any number)."""
        card = np.array([len(a.values) + 1 for a in attributes], np.int64)
        n = len(columns[0]) if columns else 0
        codes = np.empty((n, len(columns)), code_type(card))
        for j, col in enumerate(columns):
            codes[:, j] = np.where(np.isnan(col), card[j] - 1, np.nan_to_num(col))
        return cls(attributes, ADTree.of(codes, card, cutoff, max_bytes, max_depth))

    def validate(self):
        """Nominal attributes, one slot more each for a missing value (``card``), the
        rows' codes within them, and whole-number node arrays (a root at least)."""
        t = self.tree
        p = len(self.attributes)
        want = [len(a.values) + 1 for a in self.attributes if a.nominal]
        if len(want) != p or t.card.tolist() != want:
            raise ValueError("its attributes are not nominal ones with the counts it holds")
        if t.cutoff < 0 or not 0 <= t.max_depth <= max(p, 1):
            raise ValueError("its leaf list cutoff or depth is out of range")
        for name in ("codes",) + ADTree.ARRAYS:
            a = getattr(t, name)
            if a.dtype.kind not in "iu":
                raise ValueError(f"its {name} are not whole numbers")
        if t.codes.ndim != 2 or t.codes.shape[1] != p or len(t.count) == 0 or \
                (t.codes.size and ((t.codes < 0) | (t.codes >= t.card)).any()):
            raise ValueError("its rows' codes do not fit its attributes")
        arrays = [np.ascontiguousarray(getattr(t, a), np.int64) for a in ADTree.ARRAYS]
        if len({len(arrays[i]) for i in range(4)}) != 1 or len(arrays[4]) != len(arrays[5]):
            raise ValueError("its node arrays differ in length")
        fault = structure_fault(*arrays, np.asarray(t.card, np.int64), int(t.max_depth),
                                int(t.codes.shape[0]))
        if fault:
            raise ValueError(f"its tree is not one: {FAULTS[fault]}")

    def index(self, name):
        """The attribute called ``name`` (exact, else ignoring case), or None."""
        return find_name([a.name for a in self.attributes], name)

    def text(self):
        t = self.tree
        leaves = int((t.lstart >= 0).sum())
        return (f"AD-tree of {int(t.count[0]):,} rows over {len(self.attributes)} "
                f"attributes ({', '.join(a.name for a in self.attributes)})\n"
                f"leaf_list_cutoff={t.cutoff}"
                + (f", max_depth={t.max_depth}" if t.max_depth < len(self.attributes) else "")
                + f": {len(t.count):,} AD nodes "
                f"({leaves:,} with a leaf list of {len(t.rows):,} rows in all), "
                f"{len(t.mcv):,} vary nodes, {t.nbytes / 2**20:.1f} MiB\n")

    def picture(self):
        """The tree as Moore and Lee draw it: an AD node (a box) holds the count of
        the conjunction on its path; under it a vary node (an ellipse) per
        attribute it expands, naming that attribute's most common value there,
        whose count is not stored; under that an AD node per other value any row
        has. A node with a leaf list says so. Small trees only."""
        t, names = self.tree, [a.name for a in self.attributes]
        nodes = len(t.count) + sum(max(0, len(names) - int(t.start[u]))
                                   for u in range(len(t.count)) if t.vary[u] >= 0)
        if nodes > MAX_DRAWN:
            raise ValueError(f"an ad_tree of {nodes:,} nodes is too large to draw (at most "
                             f"{MAX_DRAWN:,}); fit one on fewer columns, or with "
                             "max_depth or leaf_list_cutoff")

        def value(a, v):
            values = self.attributes[a].values
            return "?" if v == len(values) else values[v]

        out = pictures.Picture("ad_tree")
        for u in range(len(t.count)):
            listed = " (leaf list)" if t.lstart[u] >= 0 else ""
            out.nodes.append((f"N{u}", f"{int(t.count[u]):,}{listed}", "box"))
            if t.vary[u] < 0:
                continue
            for a in range(int(t.start[u]), len(names)):
                vi = int(t.vary[u] + a - t.start[u])
                out.nodes.append((f"V{vi}", f"Vary {names[a]}\nmcv: "
                                  f"{value(a, int(t.mcv[vi]))}", "ellipse"))
                out.edges.append((f"N{u}", f"V{vi}", None))
                for v in range(int(t.card[a])):
                    c = int(t.child[t.off[vi] + v])
                    if c >= 0:
                        out.edges.append((f"V{vi}", f"N{c}", f"= {value(a, v)}"))
        return out

    def to_json(self):
        t = self.tree
        return {"attributes": [a.to_json() for a in self.attributes],
                "cutoff": t.cutoff, "max_depth": t.max_depth, "card": t.card.tolist(),
                **{k: _pack(getattr(t, k)) for k in ("codes",) + ADTree.ARRAYS}}

    @classmethod
    def from_json(cls, d):
        arrays = {k: _unpack(d[k]) for k in ("codes",) + ADTree.ARRAYS}
        tree = ADTree(card=np.array(d["card"], np.int64), cutoff=int(d["cutoff"]),
                      max_depth=int(d["max_depth"]), **arrays)
        return cls([Attribute.from_json(a) for a in d["attributes"]], tree)


DEFAULT_MAX_MB = 1024  # a tree kept as a value travels as base64 text in one VARCHAR
MAX_VALUE_BYTES = 2**31 - 2**20  # the longest Arrow string, less the value's other fields


def memory_limit(settings, default_mb):
    """The bytes an AD-tree may take: ``settings['ad_tree_max_mb']`` (the SQL
    variable duckmine_ad_tree_max_mb), else ``default_mb``."""
    mb = settings.get("ad_tree_max_mb")
    if mb is not None and not mb > 0:
        raise ValueError(f"duckmine_ad_tree_max_mb must be positive, got {mb}")
    return int(float(default_mb if mb is None else mb) * 2**20)


def fit(data, target, options, settings):
    """The contract's fit: the AD-tree of every (nominal) column, or a clear error
    when it would not fit in ``settings['ad_tree_max_mb']`` (1 GiB by default) or
    be too large to keep as a value."""
    for a in data.attributes:
        if not a.nominal:
            raise ValueError(f"column {a.name!r} is numeric; an AD-tree counts nominal "
                             "values (cast it to VARCHAR or leave it out)")
    limit = memory_limit(settings, DEFAULT_MAX_MB)
    cutoff = options["leaf_list_cutoff"]
    try:
        model = ADTreeModel.fit(data.attributes, data.columns, cutoff, limit,
                                options["max_depth"])
    except MemoryError:
        raise ValueError(
            f"the AD-tree would take more than {limit / 2**20:,.0f} MiB with "
            f"leaf_list_cutoff={cutoff}; give a larger leaf_list_cutoff (rows of nodes "
            "smaller than it are kept as lists, not expanded) or a max_depth (the most "
            "conditions a query will have), or SET VARIABLE duckmine_ad_tree_max_mb"
        ) from None
    if model.tree.nbytes * 4 / 3 > MAX_VALUE_BYTES:
        raise ValueError(f"the AD-tree ({model.tree.nbytes / 2**20:,.0f} MiB) is too "
                         "large to keep as a value (its text must stay under 2 GiB); "
                         "give a larger leaf_list_cutoff or a max_depth")
    return model
