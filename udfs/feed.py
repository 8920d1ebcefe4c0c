"""Rows handed to a fit a chunk at a time, as DuckDB scans them.

A table form, ``fit``, ``cross_validate`` and ``ad_counts`` read a relation whole.
Gathering it into one LIST for one call would hold it in DuckDB twice (the
aggregate's buffers and the finished list) and once more as Arrow; instead the
macro ``_dm_fed`` (``sql/transactions.sql``) opens a job (``_dm_job``), passes every
chunk of numbered rows to ``_dm_feed``, which reads its columns into the job's
``Rows`` at once, and hands the fit ``{job, rows}``: the fit runs after the count
of fed rows is known, so after every chunk has been read, and takes the job
(``take``). The rows are held once, written to their places in the matrix a
Dataset is made of; a table named is counted first, so that the matrix is made its
size at once and a fit too large for the memory limit is refused at its first
chunk.

A job the fit never takes (its query failed or was interrupted) is dropped when
its connection opens a job in another transaction: a connection runs one query at
a time, and a failed query ends its transaction. A connection is known by the key
``load`` gives it (``duckmine_connection``), as DuckDB's own numbers repeat across
databases.
"""

import itertools
import threading
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms import contract, memory
from . import stash
from .registry import column, scalars, udf
from .table import Rows

_JOBS = {}
_LOCK = threading.Lock()
_IDS = itertools.count(1)


@dataclass
class _Job:
    connection: str  # the connection's duckmine_connection key
    transaction: int
    rows: Rows
    per_cell: float  # the learner's bytes per cell, for the memory estimate
    limit: object  # duckmine_memory_limit in bytes, or None
    lock: threading.Lock = field(default_factory=threading.Lock)


COLUMNS = contract.names("columns", contract.REQUIRED, "the columns to read")


@udf("_dm_job", None, "BIGINT", side_effects=True)
def job(fn, learner, weight, columns, settings, connection, transaction, counted,
        group):
    """A new job for ``learner``'s rows (only ``columns``, when not NULL), of which
    ``counted`` are expected (0: not known), grouped by the column ``group`` (NULL:
    not grouped); the connection's jobs left from another transaction are dropped."""
    out = []
    for f, name, w, names, s, conn, txn, expected, by in zip(
            scalars(fn), scalars(learner), scalars(weight), scalars(columns),
            scalars(settings), scalars(connection), scalars(transaction),
            scalars(counted), scalars(group)):
        decl = contract.get(f, name)
        if f == "fit_groups" and by is None:  # before any row is read
            raise ValueError("fit_groups: group_by must name a column, got NULL")
        if f in ("fit", "fit_groups"):  # they speak as the learner
            f = decl.name
        if names is not None:
            names = COLUMNS.check(f, names)
            if not names:
                raise ValueError(f"{f}: columns must name at least one column")
        s = s or {}
        rows = Rows(f, s.get("max_values"), w if decl.weights else None, names,
                    expected or None, by)
        key = next(_IDS)
        limit = s.get("memory_limit")
        if limit is not None:  # read once, not at every chunk
            limit = memory.parse_size(limit, f"{f}: duckmine_memory_limit")
        _drop(conn, txn)
        with _LOCK:
            _JOBS[key] = _Job(conn, txn, rows, decl.memory, limit)
        out.append(key)
    return pa.array(out, pa.int64())


def _drop(connection, transaction=None):
    """Drop the jobs and stored rows ``connection`` left in other transactions than
    ``transaction`` (None: in every one)."""
    stash.drop_stale(connection, transaction)
    with _LOCK:
        for old in [k for k, j in _JOBS.items() if j.connection == connection
                    and (transaction is None or j.transaction != transaction)]:
            del _JOBS[old]


def forget(connection):
    """Drop every job and stored row of ``connection``, which is gone."""
    _drop(connection)


@udf("_dm_feed", None, "BOOLEAN", side_effects=True)
def feed(jobs, rows):
    """Read a chunk of ``{n, row}`` into its job's columns; true for every row."""
    jobs, rows = column(jobs), column(rows)
    ids = jobs.to_numpy(zero_copy_only=False)  # a scan's chunk holds one job
    keys = [int(ids[0])] if len(ids) and (ids == ids[0]).all() else np.unique(ids).tolist()
    for key in keys:
        part = rows if len(keys) == 1 else rows.filter(pc.equal(jobs, key))
        with _LOCK:
            j = _JOBS.get(key)
        if j is None:
            raise ValueError("the rows came for a fit that has already ended")
        numbers, part = part.flatten()
        with j.lock:  # chunks of one job may come from several threads
            n, expected = j.rows.n + len(part), j.rows.expected or 0
            # the count at the first chunk, then only rows past it
            if pa.types.is_struct(part.type) and (j.rows.n == 0 or n > expected):
                memory.check(j.rows.fn, j.per_cell, max(n, expected),
                             part.type.num_fields, j.limit, so_far=n > expected)
            j.rows.add(part, numbers)
    return _TRUE.slice(0, len(rows)) if len(rows) <= len(_TRUE) else _trues(len(rows))


def _trues(n):
    """A boolean array of ``n`` trues, made from its bits: ``pa.array`` of a numpy
    array would import pandas (a quarter of a second) where it is installed."""
    bits = np.packbits(np.ones(n, np.bool_), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(bits)])


_TRUE = _trues(2048)  # a scan's chunk: at most 2,048 rows


def take(fn, key, count):
    """The rows fed to job ``key``, which must be ``count``; the job ends."""
    with _LOCK:
        j = _JOBS.pop(key, None)
    if j is None:
        raise ValueError(f"{fn}: the rows of this fit are gone (its job {key!r} ended)")
    if j.rows.n != count:
        raise ValueError(f"{fn}: {count:,} rows were read but {j.rows.n:,} arrived")
    return j.rows


def open_jobs(connection):
    """How many jobs of ``connection`` (its ``duckmine_connection`` key) hold rows no
    fit has taken (for tests)."""
    with _LOCK:
        return sum(j.connection == connection for j in _JOBS.values())
