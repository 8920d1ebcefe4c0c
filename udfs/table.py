"""The shared data layer: any relation, as Arrow, becomes a ``Dataset``.

The SQL side hands over rows as a STRUCT per row, received by UDFs registered
without parameter types, so one mechanism serves every schema: to a fit, chunks of
``{n, row}`` as DuckDB scans a relation (``udfs/feed.py``: ``n`` numbers the rows in
the relation's order) or a group's list of rows (an aggregate form: a group has no
order); to scoring, the row itself. ``Rows`` reads either into a ``Dataset``.
Column kinds follow the Arrow type:

- nominal: ENUM (a dictionary array whose dictionary is the declared value order),
  VARCHAR (values sorted), BOOLEAN (false, true);
- numeric: every integer, decimal and floating type;
- anything else is refused by name.

NULL and NaN are missing; an infinite value is an error.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms import memory, stop
from ..algorithms.dataset import (
    NOMINAL,
    NUMERIC,
    Attribute,
    Dataset,
    canonical_order,
    find_name,
)
from ..algorithms.stop import checkpoint
from .registry import column

DEFAULT_MAX_VALUES = 10_000


def _float64(arr, out=None):
    """An Arrow array (or chunked array) as float64 with NaN for NULL, written to
    ``out`` when given; integers past 2^53 (ids, nanosecond times) with the
    precision a double has. A chunk at a time, straight from its buffers where it
    holds integers or floats: converting a whole column in Arrow first would leave
    Arrow's allocator holding a column's worth of memory it does not give back."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else (arr,)
    if out is None:
        out = np.empty(len(arr))
    at = 0
    for chunk in chunks:
        t = chunk.type
        if not (pa.types.is_integer(t) or pa.types.is_float32(t) or pa.types.is_float64(t)):
            chunk = pc.cast(chunk, pa.float64(), safe=False)
        # NULL reads as NaN (integers with NULLs come as float64)
        out[at:at + len(chunk)] = chunk.to_numpy(zero_copy_only=False)
        at += len(chunk)
    return out


MAX_MAGNITUDE = 1e150  # beyond it, squares and sums of squares overflow a double


def _numeric(name, arr, fn, out=None):
    values = _float64(arr, out)
    # the extremes, NaN left out (reductions: no temporary arrays)
    high, low = np.fmax.reduce(values, initial=-np.inf), np.fmin.reduce(values, initial=np.inf)
    _refuse_extremes(name, fn, high == np.inf or low == -np.inf,
                     low <= high and max(high, -low) > MAX_MAGNITUDE)
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


class _Numbers:
    """A numeric column (or the weights: ``read`` is ``_weights``): its Arrow chunks
    as they come, read as float64 once at the end (a conversion per chunk of a
    scan cost more than the rest of a k-means fit)."""

    def __init__(self, name, fn, read=None):
        self.name, self.fn, self.read, self.chunks = name, fn, read or _numeric, []

    def add(self, arr):
        self.chunks.append(arr)

    def finish(self, out=None):
        """(the attribute, its values), written to ``out`` when given."""
        chunks, self.chunks = self.chunks, []  # one per add: never none
        return Attribute(self.name, NUMERIC), self.read(
            self.name, pa.chunked_array(chunks), self.fn, out)


class _Codes:
    """A nominal column, as int32 codes (-1: missing) of its values. An ENUM's
    values are its declared ones, in order, and a BOOLEAN's false and true; text
    values are coded in the order they are first seen, and recoded in sorted order
    at the end, when all are known."""

    def __init__(self, name, fn, max_values):
        self.name, self.fn, self.max_values, self.chunks = name, fn, max_values, []
        self.declared, self.dictionary, self.seen = None, None, {}

    def _count(self, n):
        if n > self.max_values:
            raise ValueError(
                f"{self.fn}: column {self.name!r} has {n:,} distinct values, more "
                f"than the limit of {self.max_values:,} for a nominal attribute; cast it "
                "to a number, leave it out, or SET VARIABLE duckmine_max_nominal_values")

    def add(self, arr):  # read into codes at once: no chunk kept
        if pa.types.is_dictionary(arr.type):  # an ENUM: its declared values, in order
            dictionary = _strings(arr.dictionary)
            if self.dictionary is None:
                self._count(len(dictionary))
                self.dictionary, self.declared = dictionary, tuple(dictionary.to_pylist())
            indices = arr.indices
            if not dictionary.equals(self.dictionary):  # not seen from DuckDB; kept right
                indices = pc.index_in(dictionary, value_set=self.dictionary).take(indices)
            codes = _int32(indices)
        elif pa.types.is_boolean(arr.type):
            self.declared = ("false", "true")
            codes = _int32(pc.cast(arr, pa.int8()))
        else:
            encoded = pc.dictionary_encode(_strings(arr))
            # each local value's code among those seen so far; a missing one's is -1
            known = [self.seen.setdefault(v, len(self.seen))
                     for v in encoded.dictionary.to_pylist()]
            self._count(len(self.seen))
            codes = np.array(known + [-1], np.int32)[_int32(encoded.indices)]
        self.chunks.append(codes)

    def finish(self, out=None):
        codes, self.chunks = _concatenate(self.chunks, np.int32), []
        if self.declared is not None:
            values, rank = self.declared, None
        else:
            values = tuple(sorted(self.seen))
            rank = np.empty(len(values), np.float64)
            rank[[self.seen[v] for v in values]] = np.arange(len(values))
        if out is None:
            out = np.empty(len(codes))
        out[:] = np.nan
        known = codes >= 0
        out[known] = codes[known] if rank is None else rank[codes[known]]
        return Attribute(self.name, NOMINAL, values), out


def _read_only(row):
    """A column of the matrix as columns read from Arrow always were: read-only, so
    that kernels meet the one array type they were compiled for (the matrix itself,
    which ``dataset.stacked`` hands them, is writable, as a stacked copy was)."""
    view = row.view()
    view.flags.writeable = False
    return view


def _int32(indices):
    """Arrow indices (an integer array) as int32, -1 where missing: read from its
    buffers, since Arrow's compute calls cost more than the work itself on the short
    chunks of a small group."""
    n, at = len(indices), indices.offset
    bitmap, data = indices.buffers()[:2]
    if data is None:  # no values at all
        return np.full(n, -1, np.int32)
    out = np.frombuffer(data, np.dtype(indices.type.to_pandas_dtype()))[at:at + n] \
        .astype(np.int32)
    if indices.null_count:
        valid = np.unpackbits(np.frombuffer(bitmap, np.uint8), count=at + n,
                              bitorder="little")[at:].view(np.bool_)
        out[~valid] = -1
    return out


# a scan's chunks are read a batch of about this many bytes at a time: Arrow's calls
# on each column of each chunk of 2,048 rows cost twice what DuckDB takes to hand
# the chunk over
BATCH_BYTES = 8 << 20

THREADED_ROWS = 100_000  # rows from which a column put in order on its own thread pays


def _numbering(numbers):
    """A fed chunk's row numbers as kept: (first, count) where they run on by one,
    as a scan's chunk's do, else a copy of them (a view would keep DuckDB's whole
    chunk, every column, alive)."""
    n = np.asarray(numbers.to_numpy(zero_copy_only=False), np.int64)
    if len(n) and n[-1] - n[0] == len(n) - 1 and (len(n) < 2 or (np.diff(n) == 1).all()):
        return int(n[0]), len(n)
    return n.copy()


def _relation_order(numbering):
    """The order that puts fed chunks' rows in their relation's order (None: they
    came in it), from each chunk's ``_numbering``. Runs cost nothing a row unless
    they came out of order."""
    if all(isinstance(c, tuple) for c in numbering):
        starts = np.array([c[0] for c in numbering], np.int64)
        if (starts[1:] > starts[:-1]).all():
            return None
        at = np.concatenate(([0], np.cumsum([c[1] for c in numbering])))
        return _concatenate([np.arange(at[b], at[b + 1]) for b in
                             np.argsort(starts, kind="stable")], np.int64)
    numbers = _concatenate([np.arange(c[0], c[0] + c[1]) if isinstance(c, tuple) else c
                            for c in numbering], np.int64)
    order = np.argsort(numbers, kind="stable")  # linear when in order
    return None if (order[1:] > order[:-1]).all() else order


def _concatenate(chunks, dtype):
    if len(chunks) == 1:
        return chunks[0]
    return np.concatenate(chunks) if chunks else np.empty(0, dtype)


class Rows:
    """A relation's rows read into columns as they arrive: whole (a group's list) or
    a chunk at a time (fed as DuckDB scans them, ``udfs/feed.py``), so that no chunk
    is kept once read. ``dataset`` then puts the rows in order: that of their
    numbers (their relation's order), or without numbers an order of their values
    alone (``canonical_order``: numeric columns first, then nominal codes, then
    weights), so that the same rows give the same model whatever order a parallel
    scan delivered them in."""

    def __init__(self, fn, max_values=None, weight=None, names=None):
        max_values = DEFAULT_MAX_VALUES if max_values is None else int(max_values)
        if max_values < 2:
            raise ValueError(f"{fn}: duckmine_max_nominal_values must be >= 2, got "
                             f"{max_values}")
        self.fn, self.max_values, self.weight, self.names = fn, max_values, weight, names
        self.readers, self.picked, self.numbers, self.n = None, None, [], 0
        self.weight_at = None  # the weight column's reader
        self.pending, self.pending_bytes = [], 0  # a scan's chunks not read yet

    def _start(self, fields):
        """The readers of ``fields``."""
        fn, readers = self.fn, []
        if self.names is not None:  # only these columns, in this order
            self.picked = _pick(fn, [f.name for f in fields], self.names)
            fields = [fields[j] for j in self.picked]
        for f in fields:
            if self.weight is not None and f.name == self.weight:
                self.weight_at = len(readers)
                readers.append(_Numbers(f.name, fn, _weights))
            elif kind_of(f.name, f.type, fn) == NOMINAL:
                readers.append(_Codes(f.name, fn, self.max_values))
            else:
                readers.append(_Numbers(f.name, fn))
        if self.weight is not None and self.weight_at is None:
            raise ValueError(f"{fn}: weight column {self.weight!r} is not in the table")
        self.readers = readers

    def add(self, rows, numbers=None):
        """Read ``rows`` (a StructArray), numbered by ``numbers`` (an Arrow array of
        their places in the relation: a chunk of a scan) or not (None: a group's
        list, or a batch of its own)."""
        rows = column(rows)
        if not pa.types.is_struct(rows.type):
            raise ValueError(
                f"{self.fn}: expected the rows of a table (its alias, as t in SELECT "
                f"...(t, ...) FROM tbl t), got one column's values ({rows.type}); when "
                "the alias is also a column name, SQL passes the column: choose an "
                "alias no column has")
        if self.readers is None:
            self._start(list(rows.type))
        arrays = rows.flatten()  # folds in NULL rows
        if self.picked is not None:
            arrays = [arrays[j] for j in self.picked]
        self.n += len(rows)
        if numbers is None:
            self._read(arrays)
            return
        self.pending.append(arrays)
        self.numbers.append(_numbering(numbers))
        self.pending_bytes += rows.nbytes
        if self.pending_bytes >= BATCH_BYTES:
            self._flush()

    def _flush(self):
        """Read the scan's chunks waiting, each column as one copy of its own:
        DuckDB's chunk holds every column in one allocation, which a column kept as
        a slice would keep alive (and Arrow's default allocator keeps what is freed,
        where the system's gives it back)."""
        if self.pending:
            pending, self.pending, self.pending_bytes = self.pending, [], 0
            self._read([pa.concat_arrays([chunk[j] for chunk in pending],
                                         memory_pool=pa.system_memory_pool())
                        for j in range(len(self.readers))])

    def _read(self, arrays):
        for reader, arr in zip(self.readers, arrays):
            checkpoint()
            reader.add(column(arr))

    def dataset(self, ordered=True):
        """The Dataset of every row added, in order (``ordered`` false: as they came,
        for a fit that reads counts alone); the readers are emptied column by
        column, so that the rows are held once."""
        self._flush()
        if self.readers is None or self.n == 0:
            raise ValueError(f"{self.fn}: the table is empty")
        attributes, weights = [], None
        # the columns are the rows of one matrix, which kernels read whole
        # (dataset.stacked) rather than stacking a copy of their own
        matrix = np.empty((len(self.readers) - (self.weight_at is not None), self.n))
        for i, reader in enumerate(self.readers):
            checkpoint()
            if i == self.weight_at:
                weights = reader.finish()[1]
            else:  # read straight into its row
                attributes.append(reader.finish(matrix[len(attributes)])[0])
            memory.give_back(self.n)  # this column's chunks, before the next row fills
        if weights is None:
            weights = np.ones(self.n)
        if self.numbers:
            order, self.numbers = _relation_order(self.numbers), []
        elif ordered:
            keys = sorted(range(len(attributes)), key=lambda i: attributes[i].nominal)
            order = canonical_order([matrix[i] for i in keys] + [weights])
        else:
            order = None
        if order is not None:
            def put(row):  # in place, a column at a time, two side by side
                row[:] = row[order]

            # two threads where the columns are long enough to repay starting them
            stop.each(put, list(matrix), threads=2 if self.n >= THREADED_ROWS else 1)
            weights = weights[order]
        return Dataset(attributes, [_read_only(row) for row in matrix], weights)


def _pick(fn, fields, names):
    """The places in ``fields`` of the columns ``names`` (see ``find_name``)."""
    picked = []
    for name in names:
        if name is None:
            raise ValueError(f"{fn}: columns holds a NULL")
        j = find_name(fields, name)
        if j is None:
            raise ValueError(f"{fn}: column {name!r} is not in the table (its columns: "
                             f"{', '.join(fields)})")
        if j in picked:
            raise ValueError(f"{fn}: column {name!r} is named twice")
        picked.append(j)
    return picked


def dataset(rows, fn, max_values=None, weight=None, names=None, ordered=True):
    """A Dataset of a group's StructArray of rows, put in an order of their values
    (see ``Rows``; ``ordered`` false: as they came); ``weight`` names a weight
    column, ``names`` the only columns read."""
    read = Rows(fn, max_values, weight, names)
    read.add(rows)
    return read.dataset(ordered)


def _weights(name, arr, fn, out=None):
    if kind_of(name, arr.type, fn) != NUMERIC:
        raise ValueError(f"{fn}: weight column {name!r} must be numeric")
    w = _float64(arr, out)
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
