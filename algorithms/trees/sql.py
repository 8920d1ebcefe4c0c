"""model_to_sql for REPTree and CART: one scalar expression giving what ``predict`` (a class)
or ``predict_value`` (a number) gives::

    (SELECT <label of the first best> FROM
      (SELECT <sum over leaves of weight * probability> AS "_dm_p0", ... FROM
        (SELECT <the weight the row gives leaf j> AS "_dm_l<j>", ... FROM
          (SELECT <branch of node i, NULL when missing> AS "_dm_r<i>", ...) AS "_dm_row")))

The innermost FROM-less SELECT reads the outer row and gives, per split, the branch
the row takes (NULL when the tested value is missing, NaN or unseen). A leaf's
weight is the product, along its path, of 1 or 0 (the row's branch or another) or,
where the branch is NULL, the branch's share of the training weight, as scoring
spreads a missing value. A leaf that no training row reached adds nothing on a
spread path and answers with its parent's probabilities on a known one.
"""

import sys
from types import SimpleNamespace

from sqlglot import exp

from ..sqlgen import (
    _as,
    _case,
    _from,
    _greatest_convention,
    _number,
    _select,
    _sum,
    _var,
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
    r = _var(f"_dm_r{node}")
    missing = _number(prop, double=True) if spread else exp.Literal.number(0)
    return _case([(exp.Is(this=r, expression=exp.Null()), missing),
                  (exp.EQ(this=r.copy(), expression=exp.Literal.number(branch)),
                   exp.Literal.number(1))], exp.Literal.number(0))


def expression(model, dialect):
    nd = model.nodes
    width = 1 if model.classes is None else len(model.classes)
    leaves = []  # (the path's edges, for _factor, and the probabilities it answers with)
    stack = [(0, [])]
    while stack:
        i, path = stack.pop()
        if nd["attr"][i] < 0:
            leaves.append((path, nd["probs"][i]))
            continue
        for b, child in enumerate(nd["children"][i]):
            prop = nd["props"][i][b]
            if nd["attr"][child] < 0 and nd["probs"][child] is None:
                leaves.append((path + [(i, b, prop, False)], nd["probs"][i]))
            else:
                stack.append((child, path + [(i, b, prop, True)]))
    splits = [i for i, a in enumerate(nd["attr"]) if a >= 0]
    lefts = nd.get("lefts") or [None] * len(nd["attr"])
    row = _select([_as(_route(model.attributes[nd["attr"][i]], nd["cut"][i], lefts[i]),
                       f"_dm_r{i}") for i in splits]
                  or [_as(exp.Literal.number(0), "_dm_none")])
    weights = _select([_as(_product(path), f"_dm_l{j}") for j, (path, _) in enumerate(leaves)],
                      _from(row, "_dm_row"))
    sums = []
    for c in range(width):  # a zero probability adds nothing
        terms = [exp.Mul(this=_var(f"_dm_l{j}"), expression=_number(probs[c], double=True))
                 for j, (_, probs) in enumerate(leaves)
                 if probs is not None and probs[c] != 0.0]  # None: no weight reached it
        sums.append(_sum(terms) if terms else _number(0.0, double=True))
    if model.classes is None:
        return exp.Subquery(this=_select([sums[0]], _from(weights, "_dm_leaf")))
    probs = _select([_as(s, f"_dm_p{c}") for c, s in enumerate(sums)],
                    _from(weights, "_dm_leaf"))
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


def _product(edges):
    """The weight a row gives a leaf: its path's factors multiplied in order (each
    built afresh: paths share edges, and a sqlglot node has one parent)."""
    out = _number(1.0, double=True)
    for edge in edges:
        out = exp.Mul(this=out, expression=_factor(*edge))
    return out
