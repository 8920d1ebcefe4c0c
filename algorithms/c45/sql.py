"""model_to_sql: a model as one SQL scalar expression, in any SQL dialect sqlglot
writes. This module writes C4.5 trees (``m5_sql`` writes the numeric models,
``bayes_sql`` Bayesian networks).

The expression reads the model's attributes as columns of the row it is evaluated
on (quoted identifiers) and yields the label ``predict`` gives, as the scoring
kernel ``model._proba`` and ``labels`` compute it::

    COALESCE(
      CASE WHEN "a" > <largest double> THEN NULL                 -- NaN
           WHEN "a" <= 2.5 THEN 'bad' WHEN "a" > 2.5 THEN CASE ... END END,
      (SELECT <label> FROM (SELECT <probabilities> FROM
        (SELECT <sums of level L> ... FROM (SELECT <branch weights> FROM
          (SELECT <cleaned row>))))))

The nested CASE follows the row's path and is NULL as soon as a value it tests is
missing: NULL, a nominal value the model never saw, or NaN (missing to the model,
but DuckDB and PostgreSQL sort NaN above every number, hence the first WHEN). A
branch to an empty leaf gives the label of its fallback distribution.

Only such rows need the scalar subquery. Its innermost SELECT has no FROM: it reads
the outer row and maps each tested attribute to NULL where the model sees it as
missing. The next gives each branch's weight once, and the ones around it compute
the class probabilities the kernel computes, as nested sums in which every subtree
appears once::

    P(node) = sum over the branches b of weight_b * P(child_b)
    weight_b = CASE WHEN <the value goes down b> THEN 1
                    WHEN <it is missing> THEN fraction_b ELSE 0 END

An empty branch adds its fallback probabilities when the value goes down it and
nothing when it is missing, as in the kernel; zero terms are left out. Two classes
need one sum, of the differences ``P1 - P0``. The sums are split into levels
(``LEVELS`` at most, as the REPTree and CART export is): a level's columns are the
sums below the nodes at its depth, read by the level around it. A sum nests no
deeper than a level's span of depths, so planners whose time grows faster than the
nesting (DuckDB's common-subexpression pass) plan a tree hundreds of levels deep in
seconds, and the doubles are the ones nested sums give.

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

import numpy as np
from sqlglot import exp

from ..classes import labels
from ..sqlgen import (
    LEVELS,
    SHALLOW_CASE,
    SHALLOW_SPAN,
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
    depths,
    dialect_of,
    first_best,
    shallow,
)
from .model import NOMINAL_SPLIT, NUMERIC_SPLIT


class TreeSql:
    """The SQL expression of one C4.5 model."""

    def __init__(self, model, dialect="duckdb"):
        self.model = model
        self.ignore_nulls = _greatest_convention(dialect_of(dialect))
        self.shallow = shallow(dialect)
        (self.attr, self.kind, self.threshold, self.value, self.start, self.flat,
         self.frac, self.fallback, self.leaf_prob, self.empty) = model.tree.arrays()
        self.depth = np.array(depths([self.flat[self.start[i]:self.start[i + 1]]
                                      for i in range(len(self.attr))]))
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

    def factor(self, node, b, spread, level):
        """The column of the weight that branch ``b`` of ``node`` gives a row, read
        by ``level``: 1 where the row goes down it, 0 where it goes down another,
        and where the value is missing the branch's share (``spread``) or 0. A term
        ``weight * x`` is then the kernel's ``x``, ``share * x`` or zero, in the same
        doubles. ``self.factors`` keeps each column once, with the outermost level
        that reads it."""
        name = f"_dm_{'w' if spread else 'z'}{node}_{b}"
        if name not in self.factors:
            col = _var(f"_dm_a{self.attr[node]}")
            missing = float(self.frac[self.start[node] + b]) if spread else 0.0
            pairs = [(self.test(node, b, col), _weight(1))]
            if missing:
                pairs.append((exp.Is(this=col.copy(), expression=exp.Null()),
                              _weight(missing)))
            self.factors[name] = [_case(pairs, _weight(0)), level]
        self.factors[name][1] = max(self.factors[name][1], level)
        return _var(name)

    def mass(self, value, node, level, name):
        """The kernel's sum, for a row, of ``value`` of the class probabilities
        (a linear function of them) below ``node``, written in ``level``'s SELECT: a
        float where it does not depend on the row, None where it is zero, else an
        expression. Below a node at a cut depth (``self.cut``: its level, else -1)
        the sum is that level's column ``name(node)`` (in ``self.sums``); the
        operations are the kernel's either way, in its order."""
        if self.attr[node] < 0:
            return value(self.leaf_prob[node]) or None
        terms = []
        for b, (j, child) in enumerate(self.branches(node)):
            if self.empty[child]:  # its fallback where the value goes down it
                v = value(self.fallback[j])
                if v:
                    terms.append(exp.Mul(this=self.factor(node, b, False, level),
                                         expression=_weight(v)))
                continue
            below = self.mass(value, child, level if self.cut[child] < 0
                              else self.cut[child], name)
            if below is not None:
                terms.append(exp.Mul(this=self.factor(node, b, True, level), expression=(
                    _weight(below) if isinstance(below, float) else _paren(below))))
        if not terms:
            return None
        if self.cut[node] < 0:
            return _sum(terms)
        self.sums[level].append(_as(_sum(terms), name(node)))
        return _var(name(node))

    def missing_path(self):
        """Scalar subquery: the label of any row, as the kernel computes it. Around
        the cleaned row, one SELECT gives the branches' weights, and up to ``LEVELS``
        more add up the sums: each gives the sums below the nodes at its depth from
        those of the level inside it, so that no expression nests deeper than a
        level's span of depths. Each SELECT names only what the ones around it
        read."""
        depth = self.depth
        step = max(1, -(-int(depth.max()) // LEVELS))
        if self.shallow:  # as many levels as it takes: they are a flat WITH list there
            step = min(step, SHALLOW_SPAN)
        levels = -(-int(depth.max()) // step)  # the probabilities' SELECT is the last
        self.cut = np.where((depth % step == 0) & (depth > 0) & (self.attr >= 0),
                            levels - depth // step, -1)
        self.sums, self.factors = [[] for _ in range(levels + 1)], {}
        if self.k == 2:
            sums = [self.mass(lambda p: float(p[1] - p[0]), 0, levels, lambda i: f"_dm_m{i}")]
        else:
            sums = [self.mass(lambda p, c=c: float(p[c]), 0, levels,
                              lambda i, c=c: f"_dm_m{i}_{c}") for c in range(self.k)]
        sums = [m if isinstance(m, exp.Expression) else _weight(0.0 if m is None else m)
                for m in sums]
        query = _select([_as(e, name) for name, (e, _) in self.factors.items()] or
                        [_as(_weight(0), "_dm_none")], _from(self.rows(), "_dm_row"))
        for level in range(levels):
            if self.sums[level]:
                read = [_var(name) for name, (_, last) in self.factors.items() if last > level]
                query = _select(read + self.sums[level], _from(query, f"_dm_l{level}"))
        rows = _from(query, "_dm_sums")
        if self.k == 2:
            label = _case([(_wins(sums[0]), self.label(1))], self.label(0))
            return exp.Subquery(this=_select([label], rows))
        probs = [_as(m, f"_dm_p{c}") for c, m in enumerate(sums)]
        return self.first_best(_select(probs, rows))

    def first_best(self, query):
        return first_best(query, self.k, self.label, self.ignore_nulls)

    def expression(self):
        if self.attr[0] < 0:
            return self.label(self.leaf_label[0])
        if self.shallow and self.depth.max() > SHALLOW_CASE:  # the sums label every row
            return self.missing_path()
        return exp.Coalesce(this=self.known_path(), expressions=[self.missing_path()])


def expression(model, dialect):
    return TreeSql(model, dialect).expression()
