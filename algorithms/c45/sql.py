"""model_to_sql: a model as one SQL scalar expression, in any SQL dialect sqlglot
writes. This module writes C4.5 trees (``m5_sql`` writes the numeric models,
``bayes_sql`` Bayesian networks).

The expression reads the model's attributes as columns of the row it is evaluated
on (quoted identifiers) and yields the label ``predict`` gives, as the scoring
kernel ``model._proba`` and ``labels`` compute it::

    COALESCE(
      CASE WHEN "a" > <largest double> THEN NULL                 -- NaN
           WHEN "a" <= 2.5 THEN 'bad' WHEN "a" > 2.5 THEN CASE ... END END,
      (SELECT <label> FROM (SELECT <probabilities> FROM (SELECT <cleaned row>))))

The nested CASE follows the row's path and is NULL as soon as a value it tests is
missing: NULL, a nominal value the model never saw, or NaN (missing to the model,
but DuckDB and PostgreSQL sort NaN above every number, hence the first WHEN). A
branch to an empty leaf gives the label of its fallback distribution.

Only such rows need the scalar subquery. Its innermost SELECT has no FROM: it reads
the outer row and maps each tested attribute to NULL where the model sees it as
missing. The next computes the class probabilities the kernel computes, as nested
sums in which every subtree appears once::

    P(node) = sum over the branches b of weight_b * P(child_b)
    weight_b = CASE WHEN <the value goes down b> THEN 1
                    WHEN <it is missing> THEN fraction_b ELSE 0 END

An empty branch adds its fallback probabilities when the value goes down it and
nothing when it is missing, as in the kernel; zero terms are left out and a leaf's
probabilities are folded into its branch weight. Two classes need one sum, of the
differences ``P1 - P0``.

The label is that of ``labels``: the first class whose probability exceeds the best
so far by more than 1e-6; with two classes, ``P1 - P0 > 1e-6``. With more, the
probabilities are columns of a SELECT, and the SELECTs around it carry the best
probability so far without naming it twice per class (see ``first_best``): an
argmax over unnamed sums (with GREATEST, say) would repeat every class's sum once
per class, and engines that substitute a derived table's columns into the query
around it (SQLite, PostgreSQL) would evaluate a twice-named best-so-far
exponentially often. The nesting stays shallow, for parsers with a small stack
(SQLite's).
"""

import sys

from sqlglot import exp

from ..classes import labels
from ..sqlgen import (
    _as,
    _below,
    _case,
    _from,
    _greatest_convention,
    _is_in,
    _number,
    _paren,
    _select,
    _sum,
    _var,
    _weight,
    _wins,
    dialect_of,
    first_best,
)
from .model import NOMINAL_SPLIT, NUMERIC_SPLIT


class TreeSql:
    """The SQL expression of one C4.5 model."""

    def __init__(self, model, dialect="duckdb"):
        self.model = model
        self.ignore_nulls = _greatest_convention(dialect_of(dialect))
        (self.attr, self.kind, self.threshold, self.value, self.start, self.flat,
         self.frac, self.fallback, self.leaf_prob, self.empty) = model.tree.arrays()
        self.leaf_label = labels(self.leaf_prob)
        self.fallback_label = labels(self.fallback)
        self.used = model.used
        self.k = len(model.classes)

    def label(self, c):
        return exp.Literal.string(self.model.classes[int(c)])

    def values(self, node):
        return self.model.attributes[self.attr[node]].values

    def branches(self, node):
        """(branch index into the children arrays, child) of a split node."""
        return [(j, self.flat[j]) for j in range(self.start[node], self.start[node + 1])]

    # the path of known values

    def column(self, a):
        return exp.column(self.model.attributes[a].name, quoted=True)

    def test(self, node, b, col):
        """The test of branch ``b`` of ``node`` on ``col``; a missing value (NULL, or
        a nominal value the model never saw) passes none of them, and a NaN passes
        ``x > t`` (see ``nan_guard``)."""
        kind = self.kind[node]
        if kind == NUMERIC_SPLIT:
            return _below(col, self.threshold[node], left=b == 0)
        values = self.values(node)
        if kind == NOMINAL_SPLIT:
            return exp.EQ(this=col, expression=exp.Literal.string(values[b]))
        v = self.value[node]
        if b == 0:
            return exp.EQ(this=col, expression=exp.Literal.string(values[v]))
        others = [x for i, x in enumerate(values) if i != v]
        return _is_in(col, others) if others else exp.false()

    def known_path(self, node=0):
        """Nested CASE: the label of a row whose path meets no missing value, else
        NULL."""
        if self.attr[node] < 0:
            return self.label(self.leaf_label[node])
        pairs = []
        if node == 0:
            pairs += self.nan_guard()
        for b, (j, child) in enumerate(self.branches(node)):
            then = self.label(self.fallback_label[j]) if self.empty[child] \
                else self.known_path(child)
            pairs.append((self.test(node, b, self.column(self.attr[node])), then))
        return _case(pairs)

    def nan_guard(self):
        """A first WHEN sending rows with a NaN (or infinite) tested number to the
        missing-value path: NaN is missing to the model, but DuckDB and PostgreSQL
        order it above every number, so it would pass a test ``x > t``."""
        numeric = [a for a in self.used if not self.model.attributes[a].nominal]
        if not numeric:
            return []
        top = _number(sys.float_info.max)
        tests = [exp.GT(this=self.column(a), expression=top.copy()) for a in numeric]
        return [(exp.or_(*tests) if len(tests) > 1 else tests[0], exp.Null())]

    # rows with missing values

    def clean(self, a):
        """Attribute ``a`` of the outer row, NULL where the model sees a missing
        value (NULL, NaN or a nominal value it never saw)."""
        col = self.column(a)
        attribute = self.model.attributes[a]
        if attribute.nominal:
            known = _is_in(col, attribute.values)
        else:
            known = exp.LTE(this=col, expression=_number(sys.float_info.max))
        return _case([(known, col.copy())])

    def rows(self):
        """FROM-less SELECT of the cleaned attributes the tree tests."""
        return _select([_as(self.clean(a), f"_dm_a{a}") for a in self.used])

    def weight(self, node, b, taken, other, missing):
        """CASE on the cleaned attribute of ``node``: ``taken`` where the value goes
        down branch ``b``, ``missing`` where it is missing, else ``other``."""
        col = _var(f"_dm_a{self.attr[node]}")
        pairs = [(self.test(node, b, col), _weight(taken))]
        if missing != other:
            pairs.append((exp.Is(this=col.copy(), expression=exp.Null()), _weight(missing)))
        return _case(pairs, _weight(other))

    def mass(self, value, node=0):
        """The kernel's sum, for a row, of ``value`` of the class probabilities
        (a linear function of them) below ``node``: a float where it does not depend
        on the row, None where it is zero."""
        if self.attr[node] < 0:
            return value(self.leaf_prob[node]) or None
        terms = []
        for b, (j, child) in enumerate(self.branches(node)):
            if self.empty[child]:
                v = value(self.fallback[j])
                if v:
                    terms.append(self.weight(node, b, v, 0, 0))
                continue
            below = self.mass(value, child)
            f = float(self.frac[j])
            if isinstance(below, float):
                terms.append(self.weight(node, b, below, 0, f * below))
            elif below is not None:
                terms.append(exp.Mul(this=self.weight(node, b, 1, 0, f),
                                     expression=_paren(below)))
        return _sum(terms) if terms else None

    def mass_sql(self, value):
        m = self.mass(value)
        return _weight(0.0 if m is None else m) if not isinstance(m, exp.Expression) else m

    def missing_path(self):
        """Scalar subquery: the label of any row, as the kernel computes it."""
        rows = _from(self.rows(), "_dm_row")
        if self.k == 2:
            p1_minus_p0 = self.mass_sql(lambda p: float(p[1] - p[0]))
            label = _case([(_wins(p1_minus_p0), self.label(1))], self.label(0))
            return exp.Subquery(this=_select([label], rows))
        probs = [_as(self.mass_sql(lambda p, c=c: float(p[c])), f"_dm_p{c}")
                 for c in range(self.k)]
        return self.first_best(_select(probs, rows))

    def first_best(self, query):
        return first_best(query, self.k, self.label, self.ignore_nulls)

    def expression(self):
        if self.attr[0] < 0:
            return self.label(self.leaf_label[0])
        return exp.Coalesce(this=self.known_path(), expressions=[self.missing_path()])


def expression(model, dialect):
    return TreeSql(model, dialect).expression()
