"""The one registration mechanism: Arrow UDFs declared with ``@udf`` (and, per
learner, generated from its declaration), installed with the SQL macros on a
connection by ``extension.loader.load``. Nothing here is particular to DuckDB.

Every UDF sees NULLs (``null_handling='special'``): NULL is a missing value and
each algorithm decides what it means. A UDF declared with ``params=None`` takes
arguments of any type: that is how rows of any schema (a table alias is a STRUCT)
reach the learners.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass(frozen=True)
class Udf:
    name: str
    fn: Callable
    params: tuple | None
    returns: str
    side_effects: bool = False


UDFS: list[Udf] = []


def udf(name, params, returns, side_effects=False):
    """Declare ``fn`` as the Arrow UDF ``name(params) -> returns``; ``params`` None
    accepts any argument types. ``side_effects`` keeps DuckDB from folding calls."""

    def declare(fn):
        UDFS.append(Udf(name, fn, None if params is None else tuple(params), returns,
                        side_effects))
        return fn

    return declare


SCALARS = {"INTEGER": pa.int32(), "BIGINT": pa.int64(), "DOUBLE": pa.float64(),
           "VARCHAR": pa.string(), "BOOLEAN": pa.bool_()}


def _split(text):
    """The top-level comma-separated parts of ``text``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def arrow_type(sql):
    """The Arrow type of a SQL type written as UDFs declare their results: a scalar
    (INTEGER, BIGINT, DOUBLE, VARCHAR, BOOLEAN), ``X[]``, ``MAP(X, Y)`` or
    ``STRUCT(name X, "name" Y, ...)``; so each row type is written once, in SQL."""
    sql = sql.strip()
    if sql.endswith("[]"):
        return pa.list_(arrow_type(sql[:-2]))
    head, _, body = sql.partition("(")
    head = head.strip().upper()
    if head == "MAP":
        key, item = _split(body[:-1])
        return pa.map_(arrow_type(key), arrow_type(item))
    if head == "STRUCT":
        fields = []
        for part in _split(body[:-1]):
            name, typ = part.split(None, 1)
            fields.append((name.strip('"'), arrow_type(typ)))
        return pa.struct(fields)
    return SCALARS[sql.upper()]


def column(x):
    """A UDF argument as one contiguous Arrow array."""
    return x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x


def scalars(x):
    """A UDF argument as a list of Python values, one per row."""
    return column(x).to_pylist()


def list_csr(lists):
    """A ListArray as CSR: int64 offsets and the flat values (a NULL list is empty)."""
    lengths = np.asarray(pc.list_value_length(lists).fill_null(0), np.int64)
    offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, lists.flatten()
