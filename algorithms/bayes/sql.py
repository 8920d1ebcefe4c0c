"""model_to_sql for Bayesian network classifiers: one scalar expression giving the
class ``predict`` gives::

    (SELECT <label of the first best> FROM
      (SELECT EXP("_dm_s0" - "_dm_max") / <sum of the EXPs> AS "_dm_p0", ... FROM
        (SELECT <score of class 0> AS "_dm_s0", ..., GREATEST(...) AS "_dm_max" FROM
          (<the filters' SELECT>) AS "_dm_row")))

The innermost SELECT is the network's filters written as SQL
(``filters.Pipeline``): it reads the outer row and codes each attribute as the
network does: a nominal value as its index, a number as the index of its
interval, and a missing or unseen value as the training mode. The score of a class
is the sum of the log probabilities of the nodes whose table involves the class
(the class and its children; the other nodes add the same to every class), each a
CASE over the cell of the node's table the row falls in.
"""

import math

from sqlglot import exp

from ..filters import output_name
from ..sqlgen import (
    _as,
    _from,
    _greatest_convention,
    _number,
    _select,
    _sum,
    _var,
    dialect_of,
    first_best,
)


class NetworkSql:
    def __init__(self, model, dialect):
        self.model = model
        self.coding = model.coding
        self.k = len(model.classes)
        self.ignore_nulls = _greatest_convention(dialect_of(dialect))

    def label(self, c):
        return exp.Literal.string(self.model.classes[int(c)])

    def term(self, node, c):
        """ln P(node | parents) for class ``c``."""
        m = self.model
        card = [len(v) for v in self.coding.values]
        cell, constant = exp.Literal.number(0), True
        for q in [*m.parents[node], node]:
            v = exp.Literal.number(c) if q == m.class_index else \
                _var(output_name(self.coding.used.index(q)))
            constant &= q == m.class_index
            cell = exp.Add(this=exp.Mul(this=exp.Paren(this=cell),
                                        expression=exp.Literal.number(card[q])),
                           expression=v)
        # a zero probability (alpha 0) as a finite stand-in for ln 0
        logs = [math.log(p) if p > 0 else -1e300 for p in m.cpts[node].ravel()]
        if constant:
            index = 0
            for q in [*m.parents[node], node]:
                index = index * card[q] + c
            return _number(logs[index], double=True)
        return exp.Case(this=cell, ifs=[exp.If(this=exp.Literal.number(i),
                                               true=_number(x, double=True))
                                        for i, x in enumerate(logs)])

    def expression(self):
        m = self.model
        nodes = [i for i, ps in enumerate(m.parents) if i == m.class_index or m.class_index in ps]
        used = sorted({q for i in nodes for q in (*m.parents[i], i) if q != m.class_index})
        coding = self.coding
        row = coding.pipeline.select({coding.used.index(j) for j in used})
        scores = [_as(_sum([self.term(i, c) for i in nodes]), f"_dm_s{c}")
                  for c in range(self.k)]
        top = exp.Greatest(this=_var("_dm_s0"), expressions=[
            _var(f"_dm_s{c}") for c in range(1, self.k)], ignore_nulls=self.ignore_nulls)
        scored = _select(scores, _from(row, "_dm_row"))
        ranked = _select([*[_var(f"_dm_s{c}") for c in range(self.k)], _as(top, "_dm_max")],
                         _from(scored, "_dm_scores"))
        exps = [exp.Exp(this=exp.Sub(this=_var(f"_dm_s{c}"), expression=_var("_dm_max")))
                for c in range(self.k)]
        total = exp.Paren(this=_sum([e.copy() for e in exps]))
        probs = _select([_as(exp.Div(this=e, expression=total.copy()), f"_dm_p{c}")
                         for c, e in enumerate(exps)], _from(ranked, "_dm_ranked"))
        return first_best(probs, self.k, self.label, self.ignore_nulls)


def expression(model, dialect):
    return NetworkSql(model, dialect).expression()
