"""Preprocessing filters, computed as the reference's attribute filters compute them,
shared by every learner that transforms its attributes before it learns.

A filter is fitted on training columns (``fit``) and then codes any rows the same
way (``apply``); it is stored inside a model (``to_json``/``from_json``) and written
as SQL (``sql``), so an exported model codes rows exactly as scoring does. Filters
compose into a ``Pipeline``, each fitted on the output of the one before.

Columns are float64 arrays, one per attribute, NaN for a missing value, nominal
values as codes (``dataset``). The class is never among a filter's columns: a
supervised filter gets it apart, as ``y``.

In SQL a filter maps one expression per input attribute to one per output
attribute: a number (DOUBLE) for a numeric attribute, the value's code (INTEGER)
for a nominal one, and NULL for a missing value of either (``inputs`` codes the
raw columns of a row that way).
"""

import sys

import numpy as np
from sqlglot import exp

from . import discretize, stop
from .dataset import NUMERIC, Attribute, whole_weights
from .javautil import weka_order
from .jit import by_columns, frozen, njit, prange
from .models import check_array
from .sqlgen import _as, _case, _from, _number, _select, _var

SMALL = 1e-10  # a weight below this counts as none (the ranking of values)


def _null(e):
    return exp.Is(this=e.copy(), expression=exp.Null())


def _guard(e, value):
    """``value`` where ``e`` is known, NULL where it is missing."""
    return _case([(_null(e), exp.Null())], value)


def _int(v):
    return exp.Literal.number(int(v))


class Filter:
    """What every filter has: its input and output attributes, and a JSON tag."""

    tag = ""

    def __init__(self, inputs):
        self.inputs = list(inputs)
        self.outputs = list(inputs)

    def to_json(self):
        return {"filter": self.tag, **self.state()}

    def state(self):
        return {}

    def validate(self):
        """Raise ValueError unless the stored state fits the inputs (a forged or
        damaged model value)."""


def _per_input(f, values, where, nominal_codes=False, low=None, nan=False):
    """``values`` as one finite number per input of ``f`` (NaN allowed where
    ``nan``); with ``nominal_codes``, a nominal input's a code of its values."""
    x = np.asarray(values, np.float64) if isinstance(values, (list, np.ndarray)) else None
    if x is None or x.shape != (len(f.inputs),):
        raise ValueError(f"its {f.tag} filter's {where} are not one number per attribute")
    check_array(x[~np.isnan(x)] if nan else x, f"its {f.tag} filter's {where}", low=low)
    if nominal_codes:
        for a, v in zip(f.inputs, x):
            if a.nominal and a.values and not (v == int(v) and 0 <= v < len(a.values)):
                raise ValueError(f"its {f.tag} filter fills {a.name!r} with no value of it")
    return x


class ReplaceMissing(Filter):
    """ReplaceMissingValues: a missing value becomes the training rows' weighted
    mean (numeric; 0 without any value) or weighted mode (nominal)."""

    tag = "replace_missing"

    def __init__(self, inputs, fill=None):
        super().__init__(inputs)
        self.fill = None if fill is None else np.asarray(fill, np.float64)

    def fit(self, columns, w, y=None):
        fill = [fill_values(frozen(col).reshape(1, -1), w, np.array([a.nominal]),
                            np.array([len(a.values)], np.int64))[0]
                for a, col in zip(self.inputs, columns)]
        self.fill = np.nan_to_num(np.array(fill, np.float64))  # no values: 0
        return self

    def apply(self, columns):
        out = []
        for c, f in zip(columns, self.fill):
            missing = np.isnan(c)
            out.append(np.where(missing, f, c) if missing.any() else c)  # no copy
        return out

    def fill_in(self, X):
        """Fill the missing cells of the matrix ``X`` (a column per input) in place
        (one look for the rows a scoring chunk gives each of many models)."""
        rows, cols = np.nonzero(np.isnan(X))
        if len(rows):
            X[rows, cols] = self.fill[cols]
        return X

    def state(self):
        return {"fill": self.fill.tolist()}

    def validate(self):
        _per_input(self, self.fill, "fill values", nominal_codes=True)

    def sql(self, inputs):
        return [exp.Coalesce(this=e, expressions=[
            _int(f) if a.nominal else _number(f, double=True)])
            for e, a, f in zip(inputs, self.inputs, self.fill)]


class NominalToBinary(Filter):
    """NominalToBinary. Unsupervised (``ranks`` None): a nominal attribute of more
    than two values becomes one 0/1 attribute per value (``name=value``), one of
    at most two values its code. Ranked (a numeric class): the values are ranked by
    the class mean and a k-valued attribute becomes k-1 attributes "rank >= r",
    named by the values they hold. A missing value stays missing."""

    tag = "nominal_to_binary"

    def __init__(self, inputs, ranks=None, ranked=False):
        super().__init__(inputs)
        self.ranked = bool(ranked)
        self.ranks = ranks
        if not ranked or ranks is not None:
            self._layout()

    def _layout(self):
        # (source attribute, level): level -1 copies the attribute, level v >= 0
        # is "value v" (unsupervised) or "rank >= v" (ranked)
        self.columns = []
        outputs = []
        for j, a in enumerate(self.inputs):
            if not a.nominal:
                self.columns.append((j, -1))
                outputs.append(a)
            elif self.ranked:
                order = sorted(range(len(a.values)), key=lambda v: self.ranks[j][v])
                for r in range(1, len(a.values)):
                    self.columns.append((j, r))
                    outputs.append(Attribute(
                        a.name + "=" + ",".join(a.values[v] for v in order[r:]), NUMERIC))
            elif len(a.values) <= 2:
                self.columns.append((j, -1))
                outputs.append(Attribute(a.name, NUMERIC))
            else:
                for v, name in enumerate(a.values):
                    self.columns.append((j, v))
                    outputs.append(Attribute(f"{a.name}={name}", NUMERIC))
        self.outputs = outputs

    def fit(self, columns, w, y=None):
        if self.ranked:
            self.ranks = []
            for a, col in zip(self.inputs, columns):
                if not a.nominal:
                    self.ranks.append(None)
                    continue
                order = weka_order(_value_means(frozen(col), frozen(y), frozen(w),  # (see jit)
                                                len(a.values)))
                rank = np.empty(len(a.values), np.int64)
                rank[order] = np.arange(len(a.values))
                self.ranks.append(rank.tolist())
            self._layout()
        return self

    def _ones(self, j, level):
        """The codes of attribute ``j`` that give 1 at ``level``."""
        if self.ranked:
            return [v for v, k in enumerate(self.ranks[j]) if k >= level]
        return [level]

    def apply(self, columns):
        out = []
        for j, level in self.columns:
            col = columns[j]
            if level < 0:
                out.append(col)
                continue
            hit = np.isin(col, self._ones(j, level)).astype(np.float64)
            hit[np.isnan(col)] = np.nan
            out.append(hit)
        return out

    def state(self):
        return {"ranked": self.ranked, "ranks": self.ranks}

    def validate(self):
        if not self.ranked:
            return
        if not isinstance(self.ranks, list) or len(self.ranks) != len(self.inputs):
            raise ValueError("its nominal_to_binary filter's ranks are not one per attribute")
        for a, r in zip(self.inputs, self.ranks):
            if (r is None) != (not a.nominal) or a.nominal and (
                    not isinstance(r, list) or sorted(r) != list(range(len(a.values)))):
                raise ValueError(f"its nominal_to_binary filter does not rank the values "
                                 f"of {a.name!r}")

    def sql(self, inputs):
        out = []
        for j, level in self.columns:
            e = inputs[j]
            if level < 0:
                out.append(e.copy())
                continue
            ones = self._ones(j, level)
            test = exp.In(this=e.copy(), expressions=[_int(v) for v in ones]) \
                if len(ones) > 1 else exp.EQ(this=e.copy(), expression=_int(ones[0]))
            out.append(_case([(_null(e), exp.Null()), (test, _number(1.0, double=True))],
                             _number(0.0, double=True)))
        return out


class Normalize(Filter):
    """Normalize: a numeric value becomes ``(x - min) / (max - min)`` over the
    training values; 0 when they are all equal or all missing."""

    tag = "normalize"

    def __init__(self, inputs, low=None, high=None):
        super().__init__(inputs)
        self.low = None if low is None else np.asarray(low, np.float64)
        self.high = None if high is None else np.asarray(high, np.float64)

    def fit(self, columns, w, y=None):
        self.low = np.full(len(self.inputs), np.nan)
        self.high = np.full(len(self.inputs), np.nan)
        for j, (a, col) in enumerate(zip(self.inputs, columns)):
            known = col[~np.isnan(col)]
            if not a.nominal and len(known):
                self.low[j], self.high[j] = known.min(), known.max()
        return self

    def _flat(self, j):
        return np.isnan(self.low[j]) or self.low[j] == self.high[j]

    def apply(self, columns):
        out = []
        for j, (a, col) in enumerate(zip(self.inputs, columns)):
            if a.nominal:
                out.append(col)
            elif self._flat(j):
                out.append(np.where(np.isnan(col), np.nan, 0.0))
            else:
                out.append((col - self.low[j]) / (self.high[j] - self.low[j]))
        return out

    def state(self):
        return {"low": _floats(self.low), "high": _floats(self.high)}

    def validate(self):
        _per_input(self, self.low, "minima", nan=True)
        _per_input(self, self.high, "maxima", nan=True)

    def sql(self, inputs):
        out = []
        for j, (a, e) in enumerate(zip(self.inputs, inputs)):
            if a.nominal:
                out.append(e.copy())
            elif self._flat(j):
                out.append(_guard(e, _number(0.0, double=True)))
            else:
                out.append(exp.Div(
                    this=exp.Paren(this=exp.Sub(this=e.copy(),
                                                expression=_number(self.low[j], double=True))),
                    expression=_number(self.high[j] - self.low[j], double=True)))
        return out


class Standardize(Filter):
    """Standardize: a numeric value becomes ``(x - mean) / sd`` with the training
    rows' weighted mean and sample standard deviation; ``x - mean`` when the
    deviation is 0."""

    tag = "standardize"

    def __init__(self, inputs, mean=None, sd=None):
        super().__init__(inputs)
        self.mean = None if mean is None else np.asarray(mean, np.float64)
        self.sd = None if sd is None else np.asarray(sd, np.float64)

    def fit(self, columns, w, y=None):
        self.mean = np.zeros(len(self.inputs))
        self.sd = np.zeros(len(self.inputs))
        for j, (a, col) in enumerate(zip(self.inputs, columns)):
            if not a.nominal:
                self.mean[j], self.sd[j] = _moments(frozen(col), frozen(w))
        return self

    def apply(self, columns):
        out = []
        for j, (a, col) in enumerate(zip(self.inputs, columns)):
            if a.nominal:
                out.append(col)
            else:
                x = col - self.mean[j]
                out.append(x / self.sd[j] if self.sd[j] > 0 else x)
        return out

    def state(self):
        return {"mean": self.mean.tolist(), "sd": self.sd.tolist()}

    def validate(self):
        _per_input(self, self.mean, "means")
        _per_input(self, self.sd, "deviations", low=0)

    def sql(self, inputs):
        out = []
        for j, (a, e) in enumerate(zip(self.inputs, inputs)):
            if a.nominal:
                out.append(e.copy())
                continue
            x = exp.Sub(this=e.copy(), expression=_number(self.mean[j], double=True))
            out.append(exp.Div(this=exp.Paren(this=x),
                               expression=_number(self.sd[j], double=True))
                       if self.sd[j] > 0 else x)
        return out


class Discretize(Filter):
    """Discretize: a numeric attribute becomes a nominal one whose values are
    intervals. Supervised (the default): cut points by the MDL criterion of Fayyad
    & Irani against the class. Unsupervised (``bins`` given): ``bins`` intervals of
    equal width between the training minimum and maximum. A value on a cut point
    belongs to the interval it closes."""

    tag = "discretize"

    def __init__(self, inputs, cuts=None, bins=None):
        super().__init__(inputs)
        self.bins = bins
        self.cuts = cuts
        if cuts is not None:
            self._layout()

    def _layout(self):
        self.cuts = [None if c is None else np.asarray(c, np.float64) for c in self.cuts]
        self.outputs = [a if c is None else Attribute(a.name, "nominal", discretize.labels(c))
                        for a, c in zip(self.inputs, self.cuts)]

    def fit(self, columns, w, y=None):
        k = int(y.max()) + 1 if y is not None and len(y) else 1
        exact = whole_weights(w)

        def cut(a_col):  # attributes side by side: the sort and the kernel release the GIL
            a, col = a_col
            if a.nominal:
                return None
            if self.bins is None:
                return discretize.cut_points(col, y, w, k, exact)
            return _equal_width(col, self.bins)

        self.cuts = stop.each(cut, list(zip(self.inputs, columns)), rows=len(w))
        self._layout()
        return self

    def apply(self, columns):
        return [col if c is None else discretize.bins(col, c)
                for col, c in zip(columns, self.cuts)]

    def state(self):
        return {"bins": self.bins,
                "cuts": [None if c is None else c.tolist() for c in self.cuts]}

    def validate(self):
        if len(self.cuts) != len(self.inputs):
            raise ValueError("its discretize filter's cut points are not one list per "
                             "attribute")
        for a, c in zip(self.inputs, self.cuts):
            if c is None:
                continue
            if a.nominal or c.ndim != 1:
                raise ValueError(f"its discretize filter cuts {a.name!r}, which is not "
                                 "numeric")
            check_array(c, f"the cut points of {a.name!r}")
            if (np.diff(c) <= 0).any():
                raise ValueError(f"the cut points of {a.name!r} do not ascend")
        if self.bins is not None and (type(self.bins) is not int or self.bins < 1):
            raise ValueError("its discretize filter's bins are not a whole number >= 1")

    def sql(self, inputs):
        out = []
        for e, c in zip(inputs, self.cuts):
            if c is None:
                out.append(e.copy())
                continue
            tests = [(_null(e), exp.Null())] + [
                (exp.LTE(this=e.copy(), expression=_number(x, double=True)), _int(i))
                for i, x in enumerate(c)]
            out.append(_case(tests, _int(len(c))))
        return out


FILTERS = {f.tag: f for f in (ReplaceMissing, NominalToBinary, Normalize, Standardize,
                              Discretize)}


class Pipeline:
    """Filters applied in turn, each fitted on the output of the one before."""

    def __init__(self, inputs, filters):
        self.inputs = list(inputs)
        self.filters = list(filters)

    @property
    def outputs(self):
        return self.filters[-1].outputs if self.filters else self.inputs

    @classmethod
    def fitted(cls, inputs, steps, columns, w, y=None):
        """(the pipeline of ``steps``, each a callable ``attributes -> Filter``,
        fitted on ``columns``; the training columns it gives)."""
        filters = []
        first = inputs
        for step in steps:
            f = step(inputs).fit(columns, w, y)
            columns = f.apply(columns)
            filters.append(f)
            inputs = f.outputs
        return cls(first, filters), columns

    def apply(self, columns):
        for f in self.filters:
            columns = f.apply(columns)
        return columns

    def to_json(self):
        return [f.to_json() for f in self.filters]

    def validate(self):
        """Raise ValueError unless every filter's stored state fits its inputs."""
        for f in self.filters:
            f.validate()

    @classmethod
    def from_json(cls, inputs, states):
        filters = []
        first = inputs
        for d in states:
            d = dict(d)
            f = FILTERS[d.pop("filter")](inputs, **d)
            filters.append(f)
            inputs = f.outputs
        return cls(first, filters)

    def select(self, wanted=None):
        """A FROM-less SELECT that reads the outer row's columns of the inputs, runs
        the filters, and names output ``j`` ``"_dm_x<j>"`` (only those in
        ``wanted``, if given); one nested SELECT per filter."""
        inputs = self.inputs
        names = [f"_dm_i{j}" if self.filters else output_name(j) for j in range(len(inputs))]
        query = _select([_as(e, n) for e, n in zip(raw(inputs), names)] or
                        [_as(exp.Literal.number(0), "_dm_none")])
        for level, f in enumerate(self.filters):
            last = level == len(self.filters) - 1
            exprs = f.sql([_var(n) for n in names])
            names = [f"_dm_{'x' if last else f'f{level}_'}{j}" for j in range(len(exprs))]
            keep = [j for j in range(len(exprs)) if not last or wanted is None or j in wanted]
            query = _select([_as(exprs[j], names[j]) for j in keep] or
                            [_as(exp.Literal.number(0), "_dm_none")],
                            _from(query, f"_dm_f{level}"))
        return query


def output_name(j):
    """The SQL name of output ``j`` of ``Pipeline.select``."""
    return f"_dm_x{j}"


def raw(attributes):
    """The SQL form of the outer row's columns ``attributes``: a nominal value's
    code, a number, NULL for a missing value (NULL, NaN, an unseen value)."""
    out = []
    for a in attributes:
        col = exp.column(a.name, quoted=True)
        if a.nominal:
            out.append(exp.Case(this=col, ifs=[
                exp.If(this=exp.Literal.string(v), true=_int(i))
                for i, v in enumerate(a.values)]) if a.values else exp.Null())
        else:
            finite = exp.LTE(this=col, expression=_number(sys.float_info.max, double=True))
            out.append(_case([(finite, col.copy())], exp.Null()))
    return out


def _floats(a):
    return [None if np.isnan(x) else float(x) for x in a]


def _equal_width(col, bins):
    """The reference's equal-width cut points: ``bins - 1`` of them between the
    minimum and the maximum, none when these are equal."""
    known = col[~np.isnan(col)]
    if bins < 2 or len(known) == 0:
        return np.zeros(0)
    low, high = known.min(), known.max()
    width = (high - low) / bins
    if not width > 0:
        return np.zeros(0)
    return np.array([low + width * i for i in range(1, bins)])


@njit(cache=True)
def _moments(x, w):
    """The reference's weighted mean (0 without weight) and sample standard
    deviation (0 for a total weight of 1 or less), summed row by row."""
    s = 0.0
    s2 = 0.0
    sw = 0.0
    for i in range(len(x)):
        if not np.isnan(x[i]):
            s += w[i] * x[i]
            s2 += w[i] * x[i] * x[i]
            sw += w[i]
    mean = s / sw if sw > 0 else 0.0
    if sw <= 1:
        return mean, 0.0
    var = (s2 - s * s / sw) / (sw - 1)
    return mean, np.sqrt(var) if var > 0 else 0.0


@njit(cache=True)
def _value_means(codes, y, w, k):
    """The weighted mean of the class per nominal value (the overall mean for a
    value never seen)."""
    s = np.zeros(k)
    c = np.zeros(k)
    for i in range(len(codes)):
        v = codes[i]
        if not np.isnan(v):
            c[int(v)] += w[i]
            s[int(v)] += w[i] * y[i]
    ts = 0.0
    tc = 0.0
    for v in range(k):
        ts += s[v]
        tc += c[v]
    out = s.copy()
    if tc > SMALL:
        for v in range(k):
            out[v] = s[v] / c[v] if c[v] > SMALL else ts / tc
    return out


def _fill_values(cols, w, nominal, nvals):
    """ReplaceMissingValues fitted on the rows of ``cols`` (an attribute a row, read
    only: ``jit.frozen``): per attribute the weighted mean (0 when the non-missing
    weight is at most 1e-6) or the weighted mode (first of equal counts; NaN for a
    nominal attribute without values). Each attribute summed in row order."""
    p, n = cols.shape
    sumw = 0.0
    for i in range(n):
        sumw += w[i]
    fill = np.empty(p)
    for j in prange(p):
        fill[j] = _fill_value(cols[j], w, sumw, nominal[j], nvals[j])
    return fill


fill_values = by_columns(_fill_values)  # the attributes side by side on large tables


@njit(cache=True)
def _fill_value(x, w, sumw, nominal, nv):
    """``fill_values`` of one attribute's values ``x``."""
    if nominal:
        if nv == 0:
            return np.nan
        counts = np.zeros(nv)
        counts[0] = sumw
        for i in range(len(x)):
            if not np.isnan(x[i]):
                counts[int(x[i])] += w[i]
            counts[0] -= w[i]
        return float(_first_max(counts))
    count = sumw
    total = 0.0
    for i in range(len(x)):
        if np.isnan(x[i]):
            count -= w[i]
        else:
            total += w[i] * x[i]
    return total / count if count > 1e-6 else 0.0


@njit(cache=True)
def _first_max(a):
    """The index of the first largest value."""
    best = 0.0
    idx = 0
    for i in range(len(a)):
        if i == 0 or a[i] > best:
            best = a[i]
            idx = i
    return idx
