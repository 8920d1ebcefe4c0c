"""The columnar form every learner trains on, independent of where the data lives.

A ``Dataset`` holds one float64 array per attribute: the value of a numeric
attribute, or the code of a nominal one (an index into its ``values``), with NaN
for a missing value. Instance weights travel with the rows, so fractional
instances and weighted data need nothing special.
"""

from dataclasses import dataclass, field

import numpy as np

from . import memory

NUMERIC = "numeric"
NOMINAL = "nominal"


def find_name(names, name):
    """The index of ``name`` in ``names``: the exact name, else the one name equal
    to it ignoring case; None if there is none (or several)."""
    if name in names:
        return names.index(name)
    folded = [i for i, n in enumerate(names) if n.lower() == str(name).lower()]
    return folded[0] if len(folded) == 1 else None


@dataclass(frozen=True)
class Attribute:
    name: str
    kind: str  # NUMERIC or NOMINAL
    values: tuple = ()  # nominal values, in code order

    @property
    def nominal(self):
        return self.kind == NOMINAL

    def to_json(self):
        out = {"name": self.name, "kind": self.kind}
        if self.nominal:
            out["values"] = list(self.values)
        return out

    @classmethod
    def from_json(cls, d):
        return cls(d["name"], d["kind"], tuple(d.get("values", ())))


@dataclass
class Dataset:
    attributes: list  # of Attribute
    columns: list  # one float64 array per attribute, NaN = missing
    weights: np.ndarray = field(default=None)
    # nothing reads the columns after the one fit they are handed to (the rows read
    # for that fit), so the fit may let them go (``release``) once it has its own form
    spare: bool = False

    def __post_init__(self):
        if self.weights is None:
            self.weights = np.ones(self.n, np.float64)

    @property
    def n(self):
        return len(self.columns[0]) if self.columns else 0

    def labelled(self, target, codes=None):
        """The rows whose ``target`` value is known: (their mask; at those rows, the
        other columns, the target and the weights), the arrays themselves when
        every row is known, so that a fit copies nothing it need not. ``codes``: the
        target's class codes (-1 missing) in its place, once its column is spent."""
        y = self.columns[target] if codes is None else codes
        keep = ~np.isnan(y) if codes is None else codes >= 0
        every = bool(keep.all())

        def take(a):
            return a if every else a[keep]

        others = [take(c) for i, c in enumerate(self.columns) if i != target]
        return keep, others, take(y), take(self.weights)

    def select(self, rows, spare=False):
        """The instances at ``rows`` (indices or a mask), as a new Dataset."""
        return Dataset(self.attributes, gathered(self.columns, rows), self.weights[rows],
                       spare)

    def own(self, a):
        """``a`` (a column, or what a fit took from one) as the fit may keep it past
        ``release``: a copy where it is a view of the spare columns."""
        return a.copy() if self.spare and a.base is not None else a

    def put_last(self, t):
        """Move column ``t`` after the others in the matrix the columns are rows of
        (they keep their order in ``columns``): a fit that reads the others stacked
        (``stacked``) then takes a view of the matrix, where a target between them
        made it copy them. Only ``spare`` columns move, which nothing else reads."""
        cols = self.columns
        if not self.spare or not 0 < t < len(cols) - 1:
            return
        rows = _block(cols, self.n)
        if rows is None or not rows.flags.writeable:
            return
        moved = rows[t].copy()
        for j in range(t, len(cols) - 1):  # a row at a time: no copy of them all
            rows[j] = rows[j + 1]
        rows[-1] = moved
        del moved
        placed = [rows[j if j < t else j - 1] for j in range(len(cols))]
        placed[t] = rows[-1]
        for c in placed:
            c.flags.writeable = False  # as the columns were
        cols[:] = placed

    def others(self, t):
        """The columns but the target ``t``, for a fit that reads them stacked: a
        spare Dataset's target is moved after them first (``put_last``), so that they
        stack as a view."""
        self.put_last(t)
        return [c for i, c in enumerate(self.columns) if i != t]

    def spend(self, t):
        """Hand column ``t``'s pages back to the system when the columns are
        ``spare``: a fit that has coded a column into a form of its own, and reads
        it no more, then holds the rest of its fit without it. Its values read as
        zeros after."""
        if self.spare:
            memory.give_back_columns(self.columns[t].reshape(1, -1), 0)

    def release(self):
        """Let the columns go when they are ``spare``: a fit that has coded them into
        a form of its own then builds without the table beside it."""
        if self.spare:
            self.columns.clear()  # the list itself, which a caller may be passing on


def rows_where(mask):
    """The rows where ``mask`` holds, as 32-bit numbers where the table's rows fit:
    the lists of rows a fit keeps (folds, rules' rows, a node's positions) then
    take half."""
    return np.flatnonzero(mask).astype(row_type(len(mask)))


def row_numbers(n):
    """0 to ``n - 1`` as ``rows_where`` gives rows (the kernels that take rows then
    compile once for both)."""
    return np.arange(n, dtype=row_type(n))


def row_type(n):
    """The integer type of rows of a table of ``n``: 32 bits where they fit."""
    return np.int32 if n <= np.iinfo(np.int32).max else np.int64


def gathered(columns, rows):
    """``columns`` at ``rows`` (indices or a mask), as the rows of one new matrix:
    a fit that reads them stacked (``stacked``) then takes a view of it, where
    arrays of their own would be copied into a matrix again."""
    rows = np.asarray(rows)
    if rows.dtype == np.bool_:
        rows = np.flatnonzero(rows)
    out = np.empty((len(columns), len(rows)))
    for i, c in enumerate(columns):
        np.take(c, rows, out=out[i])
    return list(out)


def canonical_order(keys):
    """An order of the rows that depends on their values alone, not on the order
    they came in: rows sorted by the bits of ``keys`` (float64 arrays, the first
    the most telling), equal rows being interchangeable. Sorting by bits is a total
    order that tells -0.0 from 0.0 and one NaN from another, which comparing does
    not. The rows are sorted by the first key, and only the rows it leaves tied are
    sorted by the others: one pass when the first key is a measurement. No sort
    need be stable: rows equal in every key may come in either order."""
    bits = [np.ascontiguousarray(k).view(np.int64) for k in keys]
    order = np.argsort(bits[0])
    if len(bits) == 1:
        return order
    first = bits[0][order]
    same = first[1:] == first[:-1]
    if not same.any():
        return order
    tied = np.zeros(len(order), bool)
    tied[1:] |= same
    tied[:-1] |= same
    at = np.flatnonzero(tied)
    if 2 * len(at) > len(order):
        return np.lexsort(bits[::-1])
    run = np.concatenate(([0], np.cumsum(~same)))[at]  # which run of ties
    rows = order[at]
    order[at] = rows[np.lexsort([b[rows] for b in bits[:0:-1]] + [run])]
    return order


def whole_weights(w):
    """Whether the weights are whole numbers whose sums are exact in any order, so
    that sums over rows need not follow the reference's order of them."""
    return bool(np.all(w == np.floor(w))) and float(w.sum()) < 2.0**52


def missing_in(X, rows):
    """Per row of the matrix ``X`` (an attribute each), whether any of ``rows``
    lacks its value (NaN). A column with no NaN at all is known without gathering
    its ``rows`` (a read in order: 20 times as fast)."""
    return np.array([bool(np.isnan(x).any()) and bool(np.isnan(x[rows]).any())
                     for x in X], np.bool_)


def stacked(columns, n):
    """``columns`` (of ``n`` rows) as one C-ordered matrix, a row each, as kernels
    read a table: a view where they are consecutive rows of the matrix a Dataset's
    columns are views of (every column, or all but a last target), else a copy.
    Writable, as a stacked copy always was, so that kernels meet one array type:
    compiled for two, by two processes into one kernel cache, one crashed."""
    if not columns:
        return np.empty((0, n))
    view = _block(columns, n)
    return np.vstack(columns) if view is None else view.view()


def _block(columns, n):
    """The rows of one C-ordered float64 matrix of ``n`` columns that ``columns``
    are, consecutive and in their order, or None where they are not."""
    base = columns[0].base
    if base is None or base.ndim != 2 or base.dtype != np.float64 or \
            not base.flags.c_contiguous or base.shape[1] != n or n == 0:
        return None
    start = (columns[0].ctypes.data - base.ctypes.data) // base.strides[0]
    if start + len(columns) > base.shape[0] or not all(
            c.base is base and c.ctypes.data == base[start + i].ctypes.data
            and c.shape == (n,) for i, c in enumerate(columns)):
        return None
    return base[start:start + len(columns)]
