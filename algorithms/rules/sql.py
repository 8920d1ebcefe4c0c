"""model_to_sql for the rule learners. ZeroR: a constant. 1R: one CASE over the
rule's attribute (a missing, NaN or unseen value takes the missing branch's class,
or the first class when training had no missing value, as scoring does).

PART: the decision list in rule order, as scoring reads it::

    (SELECT <label of the first best> FROM
      (SELECT "_dm_p0_<g>" + "_dm_t<i>" * p ...,        -- the group before's sums
              <the part rule i takes> AS "_dm_t<i>", ...,  -- this group's takes
              <the share rule j covers> AS "_dm_c<j>", ... -- the next group's covers
          FROM ... (SELECT <group 0's covers>, 1.0 AS "_dm_l0") AS "_dm_g0"))

A rule covers 1 or 0 of a row whose tested values are known, and where a tested
value is missing the share of the training weight its branch holds; each rule in
turn takes that part of what the rules before it left (when both are above 1e-6)
and adds it, times its leaf's class probabilities, to the row's (once less than
1e-6 is left, nothing more is added). Rules go ``GROUP`` at a time, one SELECT a
group: it works out what each rule of the group takes, adds the group before's
parts to the class sums and the share each rule of the next group covers, so no
expression is repeated per class. Each SELECT hands on only what the next one reads
(at most 2 ``GROUP`` + k + 1 columns, where SQLite allows 2,000); a rule's take
repeats the shares left by the rules before it in its group, so the text grows with
the rules times ``GROUP``. For SQLite the SELECTs are one WITH list
(``sqlgen.with_lists``), which its parser reads flat however many there are.
Without missing values this is the first rule whose conditions all hold.
"""

import sys

import numpy as np
from sqlglot import exp

from ..c45 import grow as c45
from ..sqlgen import (
    _as,
    _below,
    _case,
    _from,
    _greatest_convention,
    _number,
    _select,
    _var,
    dialect_of,
    first_best,
)

MARGIN = 1e-6  # the shares the reference ignores


def zero_r(model, dialect):
    if model.classes is None:
        return _number(model.mean, double=True)
    return exp.Literal.string(model.classes[model.best])


def one_r(model, dialect):
    label = [exp.Literal.string(c) for c in model.classes]
    attribute = model.attributes[model.attribute]
    col = exp.column(attribute.name, quoted=True)
    missing = label[max(model.missing_class, 0)]
    if model.breakpoints is None:
        return _case([(exp.EQ(this=col.copy(), expression=exp.Literal.string(v)), label[c])
                      for v, c in zip(attribute.values, model.rule_classes)], missing)
    # NULL and NaN fail every comparison (NaN sorts above every number)
    pairs = [(exp.LT(this=col.copy(), expression=_number(b, double=True)), label[c])
             for b, c in zip(model.breakpoints, model.rule_classes)]
    known = exp.LTE(this=col.copy(), expression=_number(sys.float_info.max, double=True))
    return _case(pairs + [(known, label[model.rule_classes[-1]])], missing)


def _condition_share(model, condition):
    a, kind, threshold, value, branch, frac = condition
    attribute = model.attributes[a]
    col = exp.column(attribute.name, quoted=True)
    if attribute.nominal:
        values = attribute.values
        if kind == c45.NOMINAL_SPLIT:
            hit = exp.EQ(this=col.copy(), expression=exp.Literal.string(values[branch]))
        else:
            test = exp.EQ(this=col.copy(), expression=exp.Literal.string(values[value]))
            hit = test if branch == 0 else exp.Not(this=test)
        known = exp.In(this=col.copy(), expressions=[exp.Literal.string(v) for v in values])
    else:
        known = exp.LTE(this=col.copy(), expression=_number(sys.float_info.max, double=True))
        hit = _below(col.copy(), threshold, left=branch == 0)
    # NULL, NaN or an unseen value: missing, the branch's share
    return _case([(known, _case([(hit, exp.Literal.number(1))], exp.Literal.number(0)))],
                 _number(frac, double=True))


GROUP = 16  # rules per SELECT: few nested SELECTs, short expressions


def part(model, dialect):
    k = len(model.classes)
    rules = model.rules
    probs = model.leaf_probs()

    def covers(group):  # the share of the row each rule of ``group`` covers
        out = []
        for i in group:
            share = exp.Literal.number(1)
            for c in rules[i]["conditions"]:
                share = exp.Mul(this=share, expression=_condition_share(model, c))
            out.append(_as(share, f"_dm_c{i}"))
        return out

    starts = list(range(0, len(rules), GROUP))
    query = _select(covers(range(min(GROUP, len(rules))))
                    + [_as(_number(1.0, double=True), "_dm_l0")])
    previous = None  # the group whose takes the next SELECT adds to the class sums
    for g, start in enumerate(starts + [len(rules)]):
        columns = []
        if previous is not None:  # each rule adds its share times its leaf's probabilities
            sums = [_var(f"_dm_p{c}_{previous.start}") if previous.start
                    else _number(0.0, double=True) for c in range(k)]
            for i in previous:
                for c in range(k):
                    if probs[i, c] != 0.0:  # adding nothing changes no sum
                        sums[c] = exp.Add(this=sums[c], expression=exp.Mul(
                            this=_var(f"_dm_t{i}"), expression=_number(probs[i, c],
                                                                       double=True)))
            columns += [_as(x, f"_dm_p{c}_{previous.stop}") for c, x in enumerate(sums)]
        if start < len(rules):
            group = range(start, min(start + GROUP, len(rules)))
            left = _var(f"_dm_l{start}")  # what the rules before the group left
            for i in group:
                cover = _var(f"_dm_c{i}")
                columns.append(_as(_case([(exp.and_(
                    exp.GT(this=left.copy(), expression=_number(MARGIN)),
                    exp.GT(this=cover.copy(), expression=_number(MARGIN))),
                    exp.Mul(this=left.copy(), expression=cover.copy()))],
                    exp.Literal.number(0)), f"_dm_t{i}"))
                rest = _case([(exp.GT(this=cover.copy(), expression=_number(MARGIN)),
                               exp.Sub(this=exp.Literal.number(1), expression=cover.copy()))],
                             exp.Literal.number(1))
                left = exp.Mul(this=left, expression=rest)  # a share past the rule's
            columns.append(_as(left, f"_dm_l{group.stop}"))
            columns += covers(range(group.stop, min(group.stop + GROUP, len(rules))))
            previous = group
        query = _select(columns, _from(query, f"_dm_g{g}"))
    query = _select([_as(_var(f"_dm_p{c}_{len(rules)}"), f"_dm_p{c}") for c in range(k)],
                    _from(query, "_dm_sums"))
    return first_best(query, k, lambda c: exp.Literal.string(model.classes[c]),
                      _greatest_convention(dialect_of(dialect)))


def _ripper_condition(model, a, value, split):
    """A condition of a RIPPER rule; a missing (NULL, NaN) or unseen value
    satisfies none."""
    attribute = model.attributes[a]
    col = exp.column(attribute.name, quoted=True)
    if attribute.nominal:
        return exp.EQ(this=col, expression=exp.Literal.string(attribute.values[int(value)]))
    known = exp.LTE(this=col.copy(), expression=_number(sys.float_info.max, double=True))
    op = exp.LTE if value == 0 else exp.GTE
    return exp.and_(known, op(this=col, expression=_number(split, double=True)))


def ripper(model, dialect):
    """The decision list as one CASE: the class of the first rule that covers the
    row (the most probable of its distribution), else the default rule's."""
    probs = model.probs()
    label = [exp.Literal.string(model.classes[int(np.argmax(p))]) for p in probs]
    pairs = [(exp.and_(*[_ripper_condition(model, *a) for a in rule["antds"]])
              if rule["antds"] else exp.true(), label[i])
             for i, rule in enumerate(model.rules[:-1])]
    return _case(pairs, label[-1]) if pairs else label[-1]


def _ridor_condition(model, a, nominal, value, split):
    """A condition of a Ridor rule; a missing (NULL, NaN) value satisfies none."""
    attribute = model.attributes[a]
    col = exp.column(attribute.name, quoted=True)
    if nominal:
        return exp.EQ(this=col, expression=exp.Literal.string(attribute.values[int(value)]))
    known = exp.LTE(this=col.copy(), expression=_number(sys.float_info.max, double=True))
    diff = exp.Paren(this=exp.Sub(this=col, expression=_number(split, double=True)))
    if abs(value) < MARGIN:  # the reference's tolerance, on the difference
        return exp.and_(known, exp.LT(this=diff, expression=_number(MARGIN)))
    return exp.and_(known, exp.GT(this=diff, expression=_number(MARGIN)))


def ridor(model, dialect):
    """Ridor's exceptions as nested CASEs: at each node the first rule that covers
    the row hands it to its exception node, else the node's default class."""
    def node(n):
        default = exp.Literal.string(model.classes[n["default"]])
        pairs = [(exp.and_(*[_ridor_condition(model, *c) for c in rule["antds"]])
                  if rule["antds"] else exp.true(), node(sub))  # no test: every row
                 for rule, sub in zip(n["rules"] or [], n["excepts"] or [])]
        return _case(pairs, default) if pairs else default
    return node(model.root)
