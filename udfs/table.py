"""The shared data layer: any relation, as Arrow, becomes a ``Dataset``.

The SQL side hands over rows as a STRUCT per row (``list(t)`` of a table alias, or
the row itself when scoring), received by UDFs registered without parameter
types, so one mechanism serves every schema. Column kinds follow the Arrow type:

- nominal: ENUM (a dictionary array whose dictionary is the declared value order),
  VARCHAR (values sorted), BOOLEAN (false, true);
- numeric: every integer, decimal and floating type;
- anything else is refused by name.

NULL and NaN are missing; an infinite value is an error.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms.dataset import NOMINAL, NUMERIC, Attribute, Dataset
from ..algorithms.stop import checkpoint
from .registry import column

DEFAULT_MAX_VALUES = 10_000


def _float64(arr):
    """An Arrow array as float64 with NaN for NULL; integers past 2^53 (ids,
    nanosecond times) with the precision a double has."""
    return np.asarray(pc.cast(arr, pa.float64(), safe=False).fill_null(np.nan), np.float64)


MAX_MAGNITUDE = 1e150  # beyond it, squares and sums of squares overflow a double


def _numeric(name, arr, fn):
    values = _float64(arr)
    _refuse_extremes(name, fn, np.isinf(values).any(),
                     (np.abs(values) > MAX_MAGNITUDE).any())  # NaN compares false
    return values


def _refuse_extremes(name, fn, infinite, huge):
    if infinite:
        raise ValueError(f"{fn}: column {name!r} holds an infinite value; replace it "
                         "with NULL (missing) or a finite number")
    if huge:
        raise ValueError(f"{fn}: column {name!r} holds a value beyond ±{MAX_MAGNITUDE:g}, "
                         "whose square overflows a double; rescale it")


def _strings(arr):
    return pc.cast(arr, pa.string()) if not pa.types.is_string(arr.type) else arr


def kind_of(name, typ, fn):
    """NUMERIC or NOMINAL for an Arrow type; a clear error for anything else."""
    if pa.types.is_dictionary(typ) or pa.types.is_string(typ) or \
            pa.types.is_large_string(typ) or pa.types.is_string_view(typ) or \
            pa.types.is_boolean(typ):
        return NOMINAL
    if pa.types.is_integer(typ) or pa.types.is_floating(typ) or \
            pa.types.is_decimal(typ) or pa.types.is_null(typ):
        return NUMERIC
    raise ValueError(f"{fn}: column {name!r} has type {typ}, which is neither numeric "
                     "nor nominal; cast it (to DOUBLE or VARCHAR) or leave it out")


def _nominal(name, arr, fn, max_values):
    """(codes as float64 with NaN for missing, the values in code order)."""
    if pa.types.is_dictionary(arr.type):  # an ENUM: its declared values, in order
        values = arr.dictionary
        codes = arr.indices
    elif pa.types.is_boolean(arr.type):
        values = ("false", "true")
        codes = pc.cast(arr, pa.int8())
    else:
        strings = _strings(arr)
        values = pc.unique(strings.drop_null())
        codes = None
    if len(values) > max_values:
        raise ValueError(
            f"{fn}: column {name!r} has {len(values):,} distinct values, more "
            f"than the limit of {max_values:,} for a nominal attribute; cast it to "
            "a number, leave it out, or SET VARIABLE duckmine_max_nominal_values")
    if codes is None:
        values = tuple(sorted(values.to_pylist()))
        codes = pc.index_in(strings, value_set=pa.array(values, pa.string()))
    elif not isinstance(values, tuple):
        values = tuple(values.to_pylist())
    return _float64(codes), values


def dataset(rows, fn, max_values=None, weight=None):
    """A Dataset from a StructArray of rows; ``weight`` names a weight column."""
    rows = column(rows)
    if not pa.types.is_struct(rows.type):
        raise ValueError(
            f"{fn}: expected the rows of a table (its alias, as t in SELECT ...(t, ...) "
            f"FROM tbl t), got one column's values ({rows.type}); when the alias is also "
            "a column name, SQL passes the column: choose an alias no column has")
    max_values = DEFAULT_MAX_VALUES if max_values is None else int(max_values)
    if max_values < 2:
        raise ValueError(f"{fn}: duckmine_max_nominal_values must be >= 2, got {max_values}")
    attributes, columns, weights = [], [], None
    for f, arr in zip(rows.type, rows.flatten()):  # flatten folds in NULL rows
        checkpoint()
        arr = column(arr)
        if weight is not None and f.name == weight:
            weights = _weights(f.name, arr, fn)
            continue
        kind = kind_of(f.name, arr.type, fn)
        if kind == NOMINAL:
            codes, values = _nominal(f.name, arr, fn, max_values)
            attributes.append(Attribute(f.name, NOMINAL, values))
            columns.append(codes)
        else:
            attributes.append(Attribute(f.name, NUMERIC))
            columns.append(_numeric(f.name, arr, fn))
    if weight is not None and weights is None:
        raise ValueError(f"{fn}: weight column {weight!r} is not in the table")
    return Dataset(attributes, columns, weights)


def _weights(name, arr, fn):
    if kind_of(name, arr.type, fn) != NUMERIC:
        raise ValueError(f"{fn}: weight column {name!r} must be numeric")
    w = _float64(arr)
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise ValueError(f"{fn}: weight column {name!r} must hold finite, non-negative "
                         "numbers and no NULLs")
    return w


class Encoder:
    """A chunk of rows to score, read as trained models know their columns: each
    column once per way of coding it (a numeric column once, a nominal one once per
    list of values), however many models the chunk's rows go to. Nominal values are
    coded as the model knows them (a value it never saw is missing); extra columns
    are ignored; an infinite or huge number is refused where a model reads it."""

    def __init__(self, rows, fn):
        rows = column(rows)
        if not pa.types.is_struct(rows.type):
            raise ValueError(f"{fn}: the second argument must be a row (a table alias "
                             f"such as t in FROM tbl t), got {rows.type}")
        self.fn = fn
        self.by_name = {f.name: i for i, f in enumerate(rows.type)}
        self.by_lower = {f.name.lower(): i for i, f in enumerate(rows.type)}
        self.fields = rows.flatten()
        self.read = {}  # (name, kind, values) -> (column, (infinite, huge) or None)

    def columns(self, attributes, at=None):
        """The columns ``attributes`` of the rows ``at`` (None: all)."""
        out = []
        for a in attributes:
            key = (a.name, a.kind, a.values)
            if key not in self.read:
                self.read[key] = self._read(a)
            values, extremes = self.read[key]
            if extremes is not None:
                rows = slice(None) if at is None else at
                _refuse_extremes(a.name, self.fn, extremes[0][rows].any(),
                                 extremes[1][rows].any())
            out.append(values if at is None else values[at])
        return out

    def _read(self, a):
        fn = self.fn
        i = self.by_name.get(a.name, self.by_lower.get(a.name.lower()))
        if i is None:
            raise ValueError(f"{fn}: the row has no column {a.name!r}, which the model "
                             "needs")
        arr = self.fields[i]
        if a.kind == NOMINAL:
            kind_of(a.name, arr.type, fn)  # refuses types with no text form here
            known = pa.array(a.values, pa.string())
            if pa.types.is_dictionary(arr.type):  # map the dictionary once
                codes = pc.index_in(_strings(arr.dictionary), value_set=known).take(
                    arr.indices)
            elif pa.types.is_boolean(arr.type):
                codes = pc.index_in(pc.if_else(arr, "true", "false"), value_set=known)
            else:  # text, or numbers read as their text
                codes = pc.index_in(_strings(arr), value_set=known)
            return _float64(codes), None
        if kind_of(a.name, arr.type, fn) != NUMERIC:
            raise ValueError(f"{fn}: column {a.name!r} must be numeric for this "
                             f"model, got {arr.type}")
        values = _float64(arr)
        infinite, huge = np.isinf(values), np.abs(values) > MAX_MAGNITUDE
        return values, ((infinite, huge) if infinite.any() or huge.any() else None)
