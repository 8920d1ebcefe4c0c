"""model_to_sql for M5' model trees and M5 rules: one scalar expression giving the
number ``predict_value`` gives::

    (SELECT CASE WHEN "_dm_CHMIN" <= 7.5e0 THEN <c * "_dm_MYCT" + ... + b> ELSE ... END
     FROM (SELECT <coded attribute> AS "_dm_MYCT", ...) AS "_dm_row")

The inner FROM-less SELECT reads the outer row and codes each attribute the model
uses exactly as its filters do, named ``_dm_`` and the coded attribute's name (as
model_text prints it): a missing number (NULL or NaN) becomes the
training mean, and a nominal attribute becomes its 0/1 columns "value ranks at or
above r", a missing or unseen value counting as the training mode. The CASE
follows the tree (a rule list: the first rule whose tests all hold) and each
formula sums its terms in the model's order, so DuckDB gives the same double.
"""

import sys

from sqlglot import exp

from ..sqlgen import _as, _case, _from, _is_in, _number, _select, _sum, _var


class LinearSql:
    """The SQL expression of one M5Model or M5RulesModel."""

    def __init__(self, model):
        self.model = model
        self.filters = model.filters

    def coded(self, j):
        a, r = self.filters.columns[j]
        attribute = self.model.attributes[a]
        col = exp.column(attribute.name, quoted=True)
        fill = self.filters.fill[a]
        if r == 0:
            finite = exp.LTE(this=col, expression=_number(sys.float_info.max, double=True))
            return _case([(finite, col.copy())], _number(fill, double=True))
        rank = self.filters.ranks[a]
        ones = [v for v, k in zip(attribute.values, rank) if k >= r]
        zeros = [v for v, k in zip(attribute.values, rank) if k < r]
        if rank[int(fill)] >= r:
            return _case([(_is_in(col, zeros), exp.Literal.number(0))],
                         exp.Literal.number(1))
        return _case([(_is_in(col, ones), exp.Literal.number(1))], exp.Literal.number(0))

    def formula(self, lm):
        terms = [exp.Mul(this=_number(c, double=True), expression=self.var(j))
                 for j, c in lm.terms]
        return _sum(terms + [_number(lm.intercept, double=True)])

    def test(self, j, value, left):
        op = exp.LTE if left else exp.GT
        return op(this=self.var(j), expression=_number(value, double=True))

    def var(self, j):
        return _var(self.name(j))

    def name(self, j):
        return "_dm_" + self.filters.names[j]

    def body(self):
        m = self.model
        if m.learner == "m5p":
            t = m.tree

            def node(u):
                if t["attr"][u] < 0:
                    return self.formula(m.models[u])
                return _case([(self.test(t["attr"][u], t["split"][u], True),
                               node(t["left"][u]))], node(t["right"][u]))
            return node(0)
        pairs = []
        for r, lm in zip(m.rules, m.models):
            if not r["conditions"]:
                return _case(pairs, self.formula(lm)) if pairs else self.formula(lm)
            tests = [self.test(*c) for c in r["conditions"]]
            pairs.append((exp.and_(*tests) if len(tests) > 1 else tests[0],
                          self.formula(lm)))
        return _case(pairs)

    def expression(self):
        needed = sorted({j for j in self._columns()})
        if not needed:
            return self.body()
        row = _select([_as(self.coded(j), self.name(j)) for j in needed])
        return exp.Subquery(this=_select([self.body()], _from(row, "_dm_row")))

    def _columns(self):
        m = self.model
        for lm in m.models:
            if lm is not None:
                yield from (j for j, _ in lm.terms)
        if m.learner == "m5p":
            yield from (a for a in m.tree["attr"] if a >= 0)
        else:
            yield from (c[0] for r in m.rules for c in r["conditions"])


def expression(model, dialect):
    return LinearSql(model).expression()
