"""The groups of a fit grouped by a column (``fit_groups``): each group's rows as a
Dataset of their own, in the relation's order, whose text columns know only the
values the group holds, as the group's rows read alone (``fit`` on them) would."""

import numpy as np

from ..algorithms.dataset import Attribute, Dataset, gathered
from .table import kept_values

DIFFERENT = ("fit_groups: column {by!r} groups the rows otherwise as text than in "
             "DuckDB (values equal in SQL but not as text, such as 0.0 and -0.0); cast "
             "it to VARCHAR")


def parts(rows, data, by, firsts, counts):
    """(each group's Dataset, its value as text) in the order of ``firsts``: the
    groups DuckDB made, each known by the number of its first row (from 1) and its
    number of rows; ``rows`` are the ``Rows`` read, with each row's group code."""
    codes, values = rows.groups
    # NULL: a group of its own; 16-bit codes where they fit, which numpy sorts by radix
    key = np.where(np.isnan(codes), -1, codes).astype(
        np.int16 if len(values) < 2**15 else np.int64)
    order = np.argsort(key, kind="stable")  # each group's rows together, in their order
    ranked = key[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    spans = {int(ranked[a]): (a, b) for a, b in zip(starts, np.r_[starts[1:], len(key)])}
    if len(spans) != len(firsts):
        raise ValueError(DIFFERENT.format(by=by))
    text = [getattr(r, "declared", ()) is None for r in rows.readers]
    for first, count in zip(firsts, counts):
        g = int(key[first - 1])
        a, b = spans[g]
        if b - a != count or order[a] != first - 1:
            raise ValueError(DIFFERENT.format(by=by))
        yield _part(data, order[a:b], text), "NULL" if g < 0 else repr(values[g])


def _part(data, rows, text):
    """The Dataset of ``rows`` of ``data``; ``text[i]``: attribute i is nominal with
    the values seen (not declared), which are then only those of these rows."""
    attributes, columns = [], gathered(data.columns, rows)
    for a, x, seen in zip(data.attributes, columns, text):
        if a.nominal and seen:
            a = Attribute(a.name, a.kind, kept_values(x, a.values))
        x.flags.writeable = False  # as columns read from the table are
        attributes.append(a)
    return Dataset(attributes, columns, data.weights[rows])
