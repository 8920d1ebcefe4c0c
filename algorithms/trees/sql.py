"""model_to_sql for REPTree and CART: one scalar expression giving what ``predict`` (a class)
or ``predict_value`` (a number) gives::

    (SELECT <label of the first best> FROM
      (SELECT <sum over leaves of weight * probability> AS "_dm_p0", ... FROM
        (SELECT "_dm_d<L>".*, <weights of level L's nodes> FROM ...
          (SELECT "_dm_d0".*, <weights of level 0's nodes> AS "_dm_w<j>", ... FROM
            (SELECT <branch of node i, NULL when missing> AS "_dm_r<i>", ...) AS "_dm_d0")
          ...)))

The innermost FROM-less SELECT reads the outer row and gives, per split, the branch
the row takes (NULL when the tested value is missing, NaN or unseen). Each level
around it (``LEVELS``, or more where one would span more than ``SPAN`` depths) adds
the weights the row gives the leaves and the nodes at its last depth: the weight of
the last level's node above, times, for each edge since, 1 or 0 (the row's branch or
another) or, where the branch is NULL, the branch's share of the training weight, as
scoring spreads a missing value. So the text grows with the nodes times the depths a
level spans, not times the depth. A leaf that no training row reached adds nothing
on a spread path and answers with its parent's probabilities on a known one. The
sums over many leaves go in runs (``_answer``).
"""

import math
import sys
from types import SimpleNamespace

from sqlglot import exp

from ..sqlgen import (
    LEVELS,
    SPAN,
    TERMS,
    _as,
    _case,
    _from,
    _greatest_convention,
    _number,
    _select,
    _sum,
    _var,
    _widened,
    depths,
    dialect_of,
    first_best,
)


def _route(attribute, cut, lefts=None):
    """The branch a row takes at a split on ``attribute`` (a nominal value's own
    branch, or with ``lefts`` 0 for the values that go left and 1 for the others);
    NULL when missing."""
    col = exp.column(attribute.name, quoted=True)
    if attribute.nominal:
        return exp.Case(this=col, ifs=[exp.If(this=exp.Literal.string(v), true=exp.Literal.number(
            b if lefts is None else (0 if lefts[b] else 1)))
            for b, v in enumerate(attribute.values)])
    known = exp.LTE(this=col.copy(), expression=_number(sys.float_info.max, double=True))
    below = exp.LT(this=col.copy(), expression=_number(cut, double=True))
    return _case([(below, exp.Literal.number(0)), (known, exp.Literal.number(1))],
                 exp.Null())


def _factor(node, branch, prop, spread):
    """The weight one edge gives: 1 or 0 on a known value, ``prop`` (or 0 when
    ``spread`` is false) on a missing one."""
    missing = _number(prop, double=True) if spread else exp.Literal.number(0)
    return _case([(exp.Is(this=_var(f"_dm_r{node}"), expression=exp.Null()), missing),
                  (exp.EQ(this=_var(f"_dm_r{node}"), expression=exp.Literal.number(branch)),
                   exp.Literal.number(1))], exp.Literal.number(0))


def expression(model, dialect):
    nd = model.nodes
    if nd["attr"][0] < 0:  # a single leaf, of weight 1
        return _answer(model, dialect, [(0, nd["probs"][0])],
                       _select([_as(_number(1.0, double=True), "_dm_w0")]))
    depth = max(depths([c if a >= 0 else [] for a, c in zip(nd["attr"], nd["children"])]))
    step = min(-(-depth // LEVELS), SPAN)  # the depths each level spans
    leaves = []  # (the node whose weight column it reads, the probabilities it answers with)
    levels = [[] for _ in range(-(-depth // step))]
    # a node, its depth, and its weight: the last level's column times the edges since
    stack = [(0, 0, None)]
    while stack:
        i, d, weight = stack.pop()
        for b, child in enumerate(nd["children"][i]):
            empty = nd["attr"][child] < 0 and nd["probs"][child] is None
            edge = _factor(i, b, nd["props"][i][b], not empty)
            w = edge if weight is None else exp.Mul(this=weight.copy(), expression=edge)
            if nd["attr"][child] < 0 or (d + 1) % step == 0:  # a column of its level
                levels[d // step].append(_as(w, f"_dm_w{child}"))
                w = _var(f"_dm_w{child}")
            if nd["attr"][child] >= 0:
                stack.append((child, d + 1, w))
            else:
                leaves.append((child, nd["probs"][i] if empty else nd["probs"][child]))
    splits = [i for i, a in enumerate(nd["attr"]) if a >= 0]
    lefts = nd.get("lefts") or [None] * len(nd["attr"])
    query = _select([_as(_route(model.attributes[nd["attr"][i]], nd["cut"][i], lefts[i]),
                         f"_dm_r{i}") for i in splits])
    for level, columns in enumerate(levels):
        query = _widened(query, columns, f"_dm_d{level}")
    return _answer(model, dialect, leaves, query)


def _answer(model, dialect, leaves, weights):
    """The class of the first best, or the number, from the leaves' weights: each
    leaf's probabilities times its weight column, summed. A long sum is added up in
    two steps: runs of at least ``TERMS`` leaves, then the runs' sums, so that no
    sum nests deeper than about the square root of the leaves (DuckDB plans a sum
    nested n deep in time growing as n cubed)."""
    width = 1 if model.classes is None else len(model.classes)
    terms = [[exp.Mul(this=_var(f"_dm_w{node}"), expression=_number(probs[c], double=True))
              for node, probs in leaves
              if probs is not None and probs[c] != 0.0]  # None: no weight reached it
             for c in range(width)]  # a zero probability adds nothing
    run = max(TERMS, math.isqrt(max(len(t) for t in terms)) + 1)
    alias = "_dm_leaf"
    if any(len(t) > run for t in terms):
        runs = [_as(_sum(t[j:j + run]), f"_dm_s{c}_{j}")
                for c, t in enumerate(terms) for j in range(0, len(t), run)]
        terms = [[_var(f"_dm_s{c}_{j}") for j in range(0, len(t), run)]
                 for c, t in enumerate(terms)]
        weights, alias = _select(runs, _from(weights, alias)), "_dm_runs"
    sums = [_sum(t) if t else _number(0.0, double=True) for t in terms]
    if model.classes is None:
        return exp.Subquery(this=_select([sums[0]], _from(weights, alias)))
    probs = _select([_as(s, f"_dm_p{c}") for c, s in enumerate(sums)],
                    _from(weights, alias))
    ignore_nulls = _greatest_convention(dialect_of(dialect))
    return first_best(probs, width, lambda c: exp.Literal.string(model.classes[c]),
                      ignore_nulls)


def cart(model, dialect):
    """CART's binary tree, in the form ``expression`` reads."""
    nodes = {key: [n[key] for n in model.nodes]
             for key in ("attr", "cut", "props", "children", "probs", "lefts")}
    nodes["children"] = [c or [] for c in nodes["children"]]
    return expression(SimpleNamespace(nodes=nodes, attributes=model.attributes,
                                      classes=model.classes), dialect)
