"""C4.5 grown a level at a time, for a table that no one machine holds
(``spark/trees.py``): the engine-free pieces.

``grow.fit`` grows J48's tree depth-first from all the rows at once. Here the
tree grows level by level: the rows are routed down the partial tree (``route``)
to its open nodes, each (open node, attribute) pair's rows meet in one place, and
``best_split`` scores that attribute there, with ``grow``'s own kernels; the
driver then picks each node's split as ``grow.chosen`` picks it. A numeric
threshold moves down onto a value of the whole table as J48 moves it
(``snapped``, from the two largest values at most 1e-6 above the cut's midpoint;
where those lie within 1e-6 of each other J48 walks the table's rows in order,
which ``walk_steps`` does part by part and ``walked`` composes; where the walk
sends a row of the node the other way than the midpoint, the tree grows again,
walking at each level before its rows are routed on, ``Crossing``). Subtree raising
passes a node's rows down another subtree (``through``).

The same tree as ``grow.fit``'s: each node sees the same rows with the same
weights and runs the same kernels. Its sums run in another order (a node's rows
ordered by a hash of their values, not the table's order), which is exact while
weights are whole numbers; a row spread over branches by a missing value carries
a fraction, and then a sum can differ in its last bits, which changes a choice
only where two candidates tie to those bits.
"""

import math

import numpy as np

from ..classes import class_codes
from ..dataset import row_numbers
from ..jit import frozen, njit
from .grow import (
    ATTR,
    BAGS,
    CHILD,
    KIND,
    NO_TABLE,
    SMALL,
    VALUE,
    binary_nominal_split,
    class_weights,
    lf_table,
    nominal_split,
    numeric_split,
    spread,
)

OPEN = -2  # ATTR of a node not grown yet


class Crossing(ValueError):
    """A threshold J48 walks to sends a row of its node to the other branch than
    the midpoint did (``walked``): the tree grows again, walking at each level."""


def route(X, w, cols, nodes, thresholds, fracs):
    """(rows, nodes, weights) of the rows of ``X`` (a column per attribute of the
    table) that reach open nodes of the partial tree: a row whose tested value is
    missing goes down every branch whose share of the node's weight (``fracs``) is
    above 1e-6, its weight scaled by that share, as ``grow.branch_data`` sends it.
    ``cols[a]``: the column of the tree's attribute ``a``."""
    rows = np.arange(len(X))
    at = np.zeros(len(X), np.int64)
    wt = np.asarray(w, np.float64)
    out_rows, out_at, out_w = [rows[:0]], [at[:0]], [wt[:0]]
    while len(rows):
        a = nodes[at, ATTR]
        here = a == OPEN
        out_rows.append(rows[here])
        out_at.append(at[here])
        out_w.append(wt[here])
        inner = a >= 0
        rows, at, wt, a = rows[inner], at[inner], wt[inner], a[inner]
        b = _branches(X[rows, cols[a]], nodes, thresholds, at)
        known = b >= 0
        next_rows, next_at, next_w = [rows[known]], [nodes[at[known], CHILD] +
                                                     b[known]], [wt[known]]
        if not known.all():
            m_rows, m_at, m_w = rows[~known], at[~known], wt[~known]
            for node in np.unique(m_at):
                these = m_at == node
                _spread(nodes, node, fracs[node], m_rows[these], m_w[these], next_rows,
                        next_at, next_w)
        rows, at, wt = (np.concatenate(x) for x in (next_rows, next_at, next_w))
    return (np.concatenate(out_rows), np.concatenate(out_at).astype(np.int64),
            np.concatenate(out_w))


def _branches(v, nodes, thresholds, at):
    """The branch of each value ``v`` at node ``at`` (``grow.branch``); -1 missing."""
    b = np.full(len(v), -1, np.int64)
    known = ~np.isnan(v)
    kind = nodes[at, KIND]
    k0 = (kind == 0) & known
    b[k0] = np.where(v[k0] - thresholds[at[k0]] < SMALL, 0, 1)
    k1 = (kind == 1) & known
    b[k1] = v[k1].astype(np.int64)
    k2 = (kind == 2) & known
    b[k2] = np.where(v[k2].astype(np.int64) == nodes[at[k2], VALUE], 0, 1)
    return b


def _spread(nodes, node, share, rows, w, out_rows, out_at, out_w, extra=()):
    """Rows missing the value ``node`` tests, sent down each branch of share above
    1e-6 with their weights scaled by it (``grow.branch_data``)."""
    for br in range(nodes[node, BAGS]):
        if share[br] > 1e-6:
            out_rows.append(rows)
            out_at.append(np.full(len(rows), nodes[node, CHILD] + br))
            out_w.append(w * share[br])
            for out, x in extra:
                out.append(x)


def through(X, y, cols, nodes, thresholds, rows, ask, at, wt, shares, k, got):
    """Rows of asked nodes (``ask``) passed down another subtree from node ``at``,
    adding into ``got[(ask, node)]`` each node's class weights: ``leaf`` at a leaf;
    ``known`` (per branch) and ``missing`` where the tree splits. A row missing the
    tested value goes on where ``shares[(ask, node)]`` gives the branches' shares
    (J48 spreads it by the shares the passed rows give them) and waits otherwise."""
    while len(rows):
        a = nodes[at, ATTR]
        leaf = a < 0
        cls = y[rows]
        for (i, s), c, w in _groups(ask[leaf], at[leaf], cls[leaf], wt[leaf]):
            added(got, (i, s), "leaf", exact_cells(c, w, k))
        inner = ~leaf
        rows, ask, at, wt, a, cls = (x[inner] for x in (rows, ask, at, wt, a, cls))
        b = _branches(X[rows, cols[a]], nodes, thresholds, at)
        known = b >= 0
        for (i, s), c, w, bb in _groups(ask[known], at[known], cls[known], wt[known],
                                        b[known]):
            sums = exact_cells(bb * k + c, w, nodes[s, BAGS] * k)
            added(got, (i, s), "known", sums.reshape(nodes[s, BAGS], k, -1))
        next_rows, next_ask = [rows[known]], [ask[known]]
        next_at, next_w = [nodes[at[known], CHILD] + b[known]], [wt[known]]
        for (i, s), c, w, r in _groups(ask[~known], at[~known], cls[~known], wt[~known],
                                       rows[~known]):
            added(got, (i, s), "missing", exact_cells(c, w, k))
            added(got, (i, s), "known", np.zeros((nodes[s, BAGS], k, 1)))
            if (i, s) in shares:
                _spread(nodes, s, shares[(i, s)], r, w, next_rows, next_at, next_w,
                        [(next_ask, np.full(len(r), i))])
        rows, ask, at, wt = (np.concatenate(x) for x in (next_rows, next_ask, next_at,
                                                         next_w))
    for stat in got.values():
        if "known" in stat and "missing" not in stat:
            stat["missing"] = np.zeros((k, 1))


def _groups(ask, at, *cols):
    """Per distinct (ask, node): that pair and its rows of ``cols``."""
    if not len(ask):
        return
    key = np.stack([ask, at], axis=1)
    pairs, inverse = np.unique(key, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(pairs) + 1))
    for g, (i, s) in enumerate(pairs):
        sel = order[bounds[g]:bounds[g + 1]]
        yield (int(i), int(s)), *(c[sel] for c in cols)


PARTIALS = 48  # a sum of doubles is never more non-overlapping partials than this


@njit(cache=True)
def exact_cells(cell, w, n_cells):
    """Each cell's sum of the weights ``w`` of its rows (``cell``), held exactly as
    non-overlapping partials (Shewchuk's), a row of them per cell, padded with zeros.
    Rows spread by a missing value weigh fractions, whose plain sums depend on the
    order they are added in, and so on how Spark split the table; partials from any
    parts add up exactly (``added``) and round once (``totals``)."""
    parts = np.zeros((n_cells, PARTIALS))
    count = np.zeros(n_cells, np.int64)
    for r in range(w.shape[0]):
        c = cell[r]
        x = w[r]
        used = 0
        for j in range(count[c]):
            y = parts[c, j]
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                parts[c, used] = lo
                used += 1
            x = hi
        parts[c, used] = x
        for j in range(used + 1, count[c]):
            parts[c, j] = 0.0
        count[c] = used + 1
    width = max(1, count.max()) if n_cells else 1
    return parts[:, :width].copy()


def added(got, key, name, v):
    """``v`` (sums as ``exact_cells``' partials, on the last axis) added exactly
    into ``got[key][name]``: the sums of one (asked node, node)."""
    stat = got.setdefault(key, {})
    if name in stat:
        both = np.concatenate([stat[name], v], axis=-1)
        flat = both.reshape(-1, both.shape[-1])
        cell = np.repeat(np.arange(len(flat)), flat.shape[1])
        v = exact_cells(cell, flat.ravel(), len(flat)).reshape(both.shape[:-1] + (-1,))
    stat[name] = v


def totals(stat):
    """``added``'s sums, each rounded once from its exact value: the same however
    the rows were split into parts and ordered."""
    return {name: np.array([math.fsum(p) for p in v.reshape(-1, v.shape[-1])]
                           ).reshape(v.shape[:-1]) for name, v in stat.items()}


def best_split(value, cls, weight, n_values, k, min_obj, mdl, binary, whole):
    """One attribute's best split at one node, from all the node's rows in a fixed
    order (``value`` NaN where missing; class codes; weights, ``whole`` if all are
    whole numbers): a dict of its gain
    (-1: none), gain ratio, threshold midpoint, value of a binary split, the node's
    class weights, the split's class weights per branch (None without a split),
    and for a threshold the node's least and greatest values, its largest value
    left of the cut (``snapped`` and ``walked`` check the threshold against them)
    and how many of its rows miss the value."""
    idx = row_numbers(len(value))
    cls = class_codes(cls, k)
    per_class = class_weights(cls, idx, weight, k)
    total = per_class.sum()
    mid, val = 0.0, -1
    known = ~np.isnan(value)
    out = {"per_class": per_class, "dist": None, "tot": None, "low": 0.0, "high": 0.0, "left": 0.0,
           "missing": int(len(value) - known.sum())}
    if n_values == 0:  # ties in the given order where sums of fractions need one
        order = np.argsort(value, kind="quicksort" if whole else "stable")[
            :int(known.sum())]
        whole = whole and total < 1e8
        gain, ratio, mid = numeric_split(value[order], cls[order],
                                         weight[order], k, min_obj, total, mdl,
                                         frozen(lf_table(int(total)) if whole else NO_TABLE))
        kind, nb = 0, 2
        if gain >= 0:
            v = value[order]
            out.update(low=v[0], high=v[-1], left=v[v <= mid][-1])
    elif binary:
        gain, ratio, val = binary_nominal_split(value, cls, idx, weight, n_values, k,
                                                min_obj, total)
        kind, nb = 2, 2
    else:
        gain, ratio = nominal_split(value, cls, idx, weight, n_values, k, min_obj, total)
        kind, nb = 1, n_values
    out.update(gain=gain, ratio=ratio, mid=mid, val=val)
    if gain < 0:
        return out
    out["dist"], out["tot"] = spread(np.ascontiguousarray(value).reshape(1, -1), cls, 0,
                                     kind, mid, int(val), nb, idx,
                                     np.ascontiguousarray(weight), k, True)[1:]
    return out


def snapped(top, second):
    """(the threshold J48 moves a cut's midpoint to, ``grow.split_point``, whether it
    must still be walked): from the largest value of the whole table at most 1e-6
    above the midpoint (``top``) and the largest value below that (``second``, None
    for none). Where ``second`` lies within 1e-6 of ``top``, J48 walks the table's
    rows in their order (``walked``); until then the split sends the node's rows
    where ``top`` does."""
    return top, not (second is None or top - second > SMALL)


@njit(cache=True)
def walk_steps(s):
    """The walk of ``grow.split_point`` over values ``s`` (those below the midpoint
    plus 1e-6, in the table's order) as a function of the value kept before them:
    f(x) = ``results[r]`` for the first ``r`` with ``bounds[r] - x > 1e-6``, else x.
    So the table's parts, walked side by side, compose in order.

    The first value to exceed x by 1e-6 is a running maximum of ``s``; from each
    value, the walk's end (``chain``) is found right to left with a stack of the
    running maxima to its right, in which the next value kept is a binary search."""
    m = s.shape[0]
    chain = np.empty(m)
    stack = np.empty(m, np.int64)
    top = 0
    for j in range(m - 1, -1, -1):
        lo, hi = 0, top  # the stack's values fall from bottom (0) to top
        while lo < hi:
            h = (lo + hi) // 2
            if s[stack[h]] - s[j] > SMALL:
                lo = h + 1
            else:
                hi = h
        chain[j] = chain[stack[lo - 1]] if lo > 0 else s[j]
        while top > 0 and s[stack[top - 1]] <= s[j]:
            top -= 1
        stack[top] = j
        top += 1
    bounds = np.empty(m)
    results = np.empty(m)
    n = 0
    best = -np.inf
    for j in range(m):
        if s[j] > best:
            best = s[j]
            if n > 0 and results[n - 1] == chain[j]:
                bounds[n - 1] = s[j]  # one run: its largest bound
            else:
                bounds[n] = s[j]
                results[n] = chain[j]
                n += 1
    return bounds[:n], results[:n]


def walked(steps, left, low, high, top, across=False, run=False):
    """The threshold ``grow.split_point`` keeps, and whether it sends every row of
    the node with a value one way: the walk over the table's parts in order
    (``walk_steps`` of each), if it leaves the node's rows on both sides (``low``,
    ``high``: the node's least and greatest values) or ``run`` (rows of the node
    miss the value, and the split may be one more of a run); ``top`` otherwise.
    Unless ``across`` (the node's rows are not routed yet), ``Crossing`` where the
    walk sends the node's largest value left of the cut (``left``) to the right,
    or makes such a split."""
    kept = -1.7976931348623157e308
    for bounds, results in steps:
        for b, r in zip(bounds, results):
            if b - kept > SMALL:
                kept = r
                break
    one_way = not (low - kept < SMALL and not high - kept < SMALL)
    if one_way and not run:
        return top, False
    if not (across or (left - kept < SMALL and not one_way)):
        raise Crossing("a threshold J48 places by the order of the rows sends some of "
                       "its node's rows to the other branch than they were grown down")
    return kept, one_way
