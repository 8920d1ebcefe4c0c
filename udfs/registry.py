"""The one registration mechanism: Arrow UDFs declared with ``@udf`` (and, per
learner, generated from its declaration), installed with the SQL macros on a
connection by ``extension.loader.load``. Nothing here is particular to DuckDB.

Every UDF sees NULLs (``null_handling='special'``): NULL is a missing value and
each algorithm decides what it means. A UDF declared with ``params=None`` takes
arguments of any type: that is how rows of any schema (a table alias is a STRUCT)
reach the learners.
"""

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms import stop


@dataclass(frozen=True)
class Udf:
    name: str
    fn: Callable
    params: tuple | None
    returns: str
    side_effects: bool = False
    stoppable: bool = False

    @property
    def signature(self):
        """The SQL argument types (None: any); a stoppable UDF takes one more, last:
        the connection's key (``getvariable('duckmine_connection')``, set by load)."""
        if self.params is None or not self.stoppable:
            return self.params
        return (*self.params, "VARCHAR")

    @cached_property
    def call(self):
        """What the engine calls: ``fn``, or for a stoppable UDF ``fn`` as a job that
        an interrupt of its connection stops (``algorithms.stop``). Made once and
        kept here: a database's connections share its UDFs, which must outlive the
        connection that registered them (closing it releases its reference)."""
        if not self.stoppable:
            return self.fn
        fn = self.fn

        def job(*args):
            tag = next((v for v in scalars(args[-1]) if v is not None), None)
            try:
                return stop.run(fn, *args[:-1], tag=tag)
            except (stop.Stopped, KeyboardInterrupt):
                raise KeyboardInterrupt(INTERRUPTED) from None

        # the engine counts a UDF's parameters: fn's, and the connection's key
        own = inspect.signature(fn)
        job.__signature__ = own.replace(parameters=[
            *own.parameters.values(),
            inspect.Parameter("connection", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
        return job


INTERRUPTED = "interrupted; the query stopped and stored nothing"

UDFS: list[Udf] = []


def udf(name, params, returns, side_effects=False, stoppable=False):
    """Declare ``fn`` as the Arrow UDF ``name(params) -> returns``; ``params`` None
    accepts any argument types. ``side_effects`` keeps DuckDB from folding calls.
    A ``stoppable`` UDF (a fit or a search that may run long) takes the connection's
    key as a last argument and can be interrupted."""

    def declare(fn):
        UDFS.append(Udf(name, fn, None if params is None else tuple(params), returns,
                        side_effects, stoppable))
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
    """A UDF argument as one contiguous Arrow array: DuckDB's own buffers where it
    hands over one chunk (combining copies even one, into memory that Arrow's
    allocator keeps once freed)."""
    if not isinstance(x, pa.ChunkedArray):
        return x
    return x.chunk(0) if x.num_chunks == 1 else x.combine_chunks()


def scalars(x):
    """A UDF argument as a list of Python values, one per row."""
    return column(x).to_pylist()


def list_csr(lists):
    """A ListArray as CSR: int64 offsets and the flat values (a NULL list is empty)."""
    lengths = np.asarray(pc.list_value_length(lists).fill_null(0), np.int64)
    offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, lists.flatten()
