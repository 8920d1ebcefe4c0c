"""model_to_sql for M5' model trees and M5 rules: one scalar expression giving the
number ``predict_value`` gives::

    (SELECT CASE WHEN "_dm_x4" <= 7.5e0 THEN <c * "_dm_x0" + ... + b> ELSE ... END
     FROM (<the filters' SELECT>) AS "_dm_row")

The inner SELECT is the model's filters written as SQL (``filters.Pipeline``): it
reads the outer row and codes each attribute the model uses exactly as scoring
does (a missing number becomes the training mean; a nominal attribute becomes
its 0/1 columns "value ranks at or above r", a missing or unseen value counting
as the training mode). The CASE
follows the tree (a rule list: the first rule whose tests all hold) and each
formula sums its terms in the model's order, so DuckDB gives the same double. For a
parser with a small stack (SQLite's) a tree deeper than ``SHALLOW_CASE`` is walked
a few levels per SELECT instead (``walked``).
"""

from sqlglot import exp

from ..filters import output_name
from ..sqlgen import (
    SHALLOW_CASE,
    SHALLOW_SPAN,
    _case,
    _from,
    _number,
    _select,
    _sum,
    _var,
    depths,
    shallow,
)


class LinearSql:
    """The SQL expression of one M5Model or M5RulesModel."""

    def __init__(self, model, dialect="duckdb"):
        self.model = model
        self.filters = model.filters
        self.shallow = shallow(dialect)

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
        return output_name(self.filters.keep[j])

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
        f = self.filters
        row = f.pipeline.select({f.keep[j] for j in needed})
        if self.shallow and self.model.learner == "m5p":
            t = self.model.tree
            if max(depths([[t["left"][u], t["right"][u]] if a >= 0 else []
                           for u, a in enumerate(t["attr"])])) > SHALLOW_CASE:
                return self.walked(row, needed)
        return exp.Subquery(this=_select([self.body()], _from(row, "_dm_row")))

    def walked(self, row, needed):
        """The tree for a parser with a small stack (SQLite's), which a CASE nested as
        deep as the tree overflows: each SELECT moves the row's node (``_dm_n``)
        ``SHALLOW_SPAN`` levels down its path, and the last gives its leaf's
        formula. The SELECTs read flat as a WITH list there."""
        t = self.model.tree
        carried = [self.var(j) for j in needed]

        def down(u, left):  # the node ``left`` levels below ``u`` on the row's path
            if t["attr"][u] < 0 or left == 0:
                return exp.Literal.number(u)
            return _case([(self.test(t["attr"][u], t["split"][u], True),
                           down(t["left"][u], left - 1))], down(t["right"][u], left - 1))

        def below(u, left):  # the splits ``left`` levels below ``u``
            if t["attr"][u] < 0:
                return []
            if left == 0:
                return [u]
            return below(t["left"][u], left - 1) + below(t["right"][u], left - 1)

        query, node, heads, level = row, _var("_dm_n"), [0], 0  # coded: "_dm_x<j>"
        while heads:
            moved = down(0, SHALLOW_SPAN) if level == 0 else _case(
                [(exp.EQ(this=node.copy(), expression=exp.Literal.number(u)),
                  down(u, SHALLOW_SPAN)) for u in heads], node.copy())
            query = _select([c.copy() for c in carried] + [exp.alias_(moved, "_dm_n", quoted=True)],
                            _from(query, f"_dm_l{level}"))
            heads = [v for u in heads for v in below(u, SHALLOW_SPAN)]
            level += 1
        leaves = [u for u in range(len(t["attr"])) if t["attr"][u] < 0]
        answer = _case([(exp.EQ(this=node.copy(), expression=exp.Literal.number(u)),
                         self.formula(self.model.models[u])) for u in leaves[:-1]],
                       self.formula(self.model.models[leaves[-1]]))
        return exp.Subquery(this=_select([answer], _from(query, "_dm_leaf")))

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
    return LinearSql(model, dialect).expression()
