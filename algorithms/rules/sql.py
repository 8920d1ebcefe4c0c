"""model_to_sql for ZeroR and 1R: a constant, and one CASE over the rule's
attribute (a missing, NaN or unseen value takes the missing branch's class, or the
first class when training had no missing value, as scoring does)."""

import sys

from sqlglot import exp

from ..sqlgen import _case, _number


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
