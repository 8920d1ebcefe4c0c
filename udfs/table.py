"""The shared data layer: any relation, as Arrow, becomes a ``Dataset``.

The SQL side hands over rows as a STRUCT per row, received by UDFs registered
without parameter types, so one mechanism serves every schema: to a fit, chunks of
``{n, row}`` as DuckDB scans a relation (``udfs/feed.py``: ``n`` numbers the rows in
the relation's order) or the chunks of an aggregate form's rows, held for its
groups (``udfs/stash.py``: a group has no order); to scoring, the row itself.
``Rows`` reads either into a ``Dataset``.
Column kinds follow the Arrow type:

- nominal: ENUM (a dictionary array whose dictionary is the declared value order),
  VARCHAR (values sorted), BOOLEAN (false, true);
- numeric: every integer, decimal and floating type;
- anything else is refused by name.

NULL and NaN are missing; an infinite value is an error.
"""

import sys

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
    return _finite(name, _float64(arr, out), fn)


def _finite(name, values, fn):
    """``values``, once they are known to hold no infinite or huge number."""
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
    """A numeric column (or the weights: ``check`` is ``_valid_weights``), written as float64
    straight into its row of the matrix, at its rows' places; checked once whole."""

    def __init__(self, name, fn, check=None):
        self.name, self.fn, self.check = name, fn, check or _finite

    def put(self, arr, row, at):
        if isinstance(at, slice):  # a run of places: converted in place
            _float64(arr, row[at])
        else:
            row[at] = _float64(arr)

    def finish(self, row):
        """The attribute, once ``row`` holds every value."""
        self.check(self.name, row, self.fn)
        return Attribute(self.name, NUMERIC)

    def part(self, values, max_values):
        """The attribute of a part of the rows (``values``, a copy of theirs), as
        ``finish`` makes it of them alone."""
        return self.finish(values)


RECODED = 1 << 20  # codes recoded at a time, so that the temporaries stay small


class _Codes:
    """A nominal column, written into its row as codes (NaN: missing). An ENUM's
    values are its declared ones, in order, and a BOOLEAN's false and true; text
    values are coded in the order they are first seen, and recoded in sorted order
    at the end, when all are known."""

    def __init__(self, name, fn, max_values):
        self.name, self.fn, self.max_values = name, fn, max_values
        self.declared, self.dictionary, self.seen = None, None, {}
        self._ranked = None  # (``_sorted``)

    def _count(self, n, limit=None):
        limit = self.max_values if limit is None else limit
        if n > limit:
            raise ValueError(
                f"{self.fn}: column {self.name!r} has {n:,} distinct values, more "
                f"than the limit of {limit:,} for a nominal attribute; cast it "
                "to a number, leave it out, or SET VARIABLE duckmine_max_nominal_values")

    def put(self, arr, row, at):
        row[at] = self._codes(arr)

    def _codes(self, arr):
        """``arr``'s codes as float64, NaN where missing."""
        if pa.types.is_dictionary(arr.type):  # an ENUM: its declared values, in order
            dictionary = _strings(arr.dictionary)
            if self.dictionary is None:
                self._count(len(dictionary))
                self.dictionary, self.declared = dictionary, tuple(dictionary.to_pylist())
            indices = arr.indices
            if not dictionary.equals(self.dictionary):  # not seen from DuckDB; kept right
                indices = pc.index_in(dictionary, value_set=self.dictionary).take(indices)
            known, codes = np.arange(len(self.dictionary)), _int32(indices)
        elif pa.types.is_boolean(arr.type):
            self.declared = ("false", "true")
            known, codes = np.arange(2), _int32(pc.cast(arr, pa.int8()))
        else:
            encoded = pc.dictionary_encode(_strings(arr))
            # each local value's code among those seen so far; a missing one's is -1
            known = [self.seen.setdefault(v, len(self.seen))
                     for v in encoded.dictionary.to_pylist()]
            self._count(len(self.seen))
            codes = _int32(encoded.indices)
        return np.append(np.asarray(known, np.float64), np.nan)[codes]  # -1: the NaN

    def _sorted(self):
        """The values seen, sorted, and each first-seen code's rank among them (None
        where the first seen are in order); kept while no value is added."""
        if self._ranked is None or len(self._ranked[0]) != len(self.seen):
            values = tuple(sorted(self.seen))
            rank = None
            if values != tuple(self.seen):
                rank = np.empty(len(values))
                rank[[self.seen[v] for v in values]] = np.arange(len(values))
            self._ranked = values, rank
        return self._ranked

    def finish(self, row):
        """The attribute, once ``row`` holds every code (recoded in place)."""
        if self.declared is not None:
            return Attribute(self.name, NOMINAL, self.declared)
        values, rank = self._sorted()
        if rank is not None:  # first seen is not sorted: recode
            for at in range(0, len(row), RECODED):  # a slice at a time: small temporaries
                part = row[at:at + RECODED]
                known = ~np.isnan(part)
                part[known] = rank[part[known].astype(np.intp)]
        return Attribute(self.name, NOMINAL, values)

    def part(self, codes, max_values):
        """The attribute of a part of the rows, whose ``codes`` (a copy of theirs,
        recoded in place) are then those ``finish`` gives them alone: the values
        the part holds, sorted, at most ``max_values`` of them."""
        if self.declared is not None:
            self._count(len(self.declared), max_values)
            return Attribute(self.name, NOMINAL, self.declared)
        values, rank = self._sorted()
        if rank is not None:
            known = ~np.isnan(codes)
            codes[known] = rank[codes[known].astype(np.intp)]
        values = kept_values(codes, values)
        self._count(len(values), max_values)
        return Attribute(self.name, NOMINAL, values)


def kept_values(codes, values):
    """Of ``codes`` (float64, NaN where missing), which rank ``values`` (sorted), the
    values present, recoding them in place to rank those alone: a part of the
    rows' column, as its rows read alone would code it."""
    known = ~np.isnan(codes)
    present = np.unique(codes[known])  # codes rank the values: in sorted order
    codes[known] = np.searchsorted(present, codes[known])
    return tuple(values[int(c)] for c in present)


class _Groups(_Codes):
    """The column a fit is grouped by: its values coded as a nominal column's are,
    of any type that has a text form, as many as come."""

    def _codes(self, arr):
        if pa.types.is_floating(arr.type):  # -0.0 is 0.0's group, as in SQL
            arr = pc.add(arr, pa.scalar(0.0, arr.type))
        try:
            return super()._codes(arr)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
            raise ValueError(f"fit_groups: group_by column {self.name!r} has type "
                             f"{arr.type}, which cannot name a group; cast it (to "
                             "VARCHAR)") from None


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


def _places(numbers):
    """A fed chunk's places in its relation (the first is 0), from its row numbers
    (which count from 1): (first, count) where they run on by one, as a scan's
    chunk's do, else an array of them."""
    n = numbers.to_numpy(zero_copy_only=False)  # DuckDB's buffer: BIGINT, no NULL
    if len(n) and n[-1] - n[0] == len(n) - 1 and (len(n) < 2 or (n[1:] - n[:-1] == 1).all()):
        return int(n[0]) - 1, len(n)
    return n.astype(np.int64) - 1


def _where(places):
    """Where the rows of chunks at ``places`` (see ``_places``) go, the chunks in
    the order given: a slice where they run on, else an array of places; and one
    past the last."""
    if all(isinstance(p, tuple) for p in places):
        first = end = places[0][0]
        for at, m in places:
            if at != end:
                break
            end += m
        else:
            return slice(first, end), end
    at = np.concatenate([np.arange(p[0], p[0] + p[1]) if isinstance(p, tuple) else p
                         for p in places])
    return at, int(at.max()) + 1 if len(at) else 0


def _moved(old, used, room):
    """A matrix of ``room`` columns holding ``old``'s first ``used`` columns; each
    row of ``old`` goes back to the system once copied, so that the two are never
    both held whole."""
    new = np.empty((old.shape[0], room))
    for i in range(old.shape[0]):
        new[i, :used] = old[i, :used]
        memory.give_back_columns(old[i:i + 1], 0)
    return new


class Rows:
    """A relation's rows written into one matrix as they arrive, each column into a
    row of it, so that the rows are held once: a chunk at a time, fed as DuckDB
    scans them (``udfs/feed.py``, ``udfs/stash.py``), or whole. A fed chunk's rows go to
    their places in the relation (their numbers), so they need no sorting after;
    where the relation's row count is known before its rows (``expected``), the
    matrix is made that size at once, and otherwise grows. Rows that came without
    numbers are put, at the end, in an order of their values alone
    (``canonical_order``: numeric columns first, then nominal codes, then weights),
    so that the same rows give the same model whatever order a parallel scan
    delivered them in."""

    def __init__(self, fn, max_values=None, weight=None, names=None, expected=None,
                 group=None):
        max_values = DEFAULT_MAX_VALUES if max_values is None else int(max_values)
        if max_values < 2:
            raise ValueError(f"{fn}: duckmine_max_nominal_values must be >= 2, got "
                             f"{max_values}")
        self.fn, self.max_values, self.weight, self.names = fn, max_values, weight, names
        self.expected = expected  # the relation's row count, where known before its rows
        self.readers, self.picked, self.n = None, None, 0
        self.weighted = False  # the reader before the group's (or the last) reads the weights
        # ``group``: a column read as the rows' groups, not as an attribute (after the
        # weights; ``groups`` once read: each row's group code and the groups' values)
        self.group, self.groups = group, None
        self.matrix = None  # (readers, room): each reader's column, at its rows' places
        self.numbered = False  # the rows came with their places in the relation
        self.pending, self.places, self.pending_bytes = [], [], 0  # chunks not read yet

    def _start(self, fields):
        """The readers of ``fields``, in the order of the matrix's rows: the columns
        read (``picked``: their places among the fields), the weights last."""
        fn, names = self.fn, [f.name for f in fields]
        picked = list(range(len(fields))) if self.names is None else \
            _pick(fn, names, self.names)  # only these columns, in this order
        group = None
        if self.group is not None:
            group = find_name(names, self.group)
            if group is None:
                raise ValueError(f"fit_groups: group_by column {self.group!r} is not in the "
                                 f"table (its columns: {', '.join(names)})")
            if self.weight is not None and find_name([names[group]], self.weight) == 0:
                raise ValueError(f"fit_groups: group_by must not be the weight column "
                                 f"({self.weight!r})")
            if group in picked:
                picked.remove(group)
        if self.weight is not None:
            read = [names[j] for j in picked]
            if self.weight not in read:
                raise ValueError(f"{fn}: weight column {self.weight!r} is not in the table")
            w = picked.pop(read.index(self.weight))
            _weight_kind(names[w], fields[w].type, fn)
            picked.append(w)
        self.weighted, self.readers = self.weight is not None, []
        for i, j in enumerate(picked):
            name, typ = names[j], fields[j].type
            if self.weighted and i == len(picked) - 1:
                self.readers.append(_Numbers(name, fn, _valid_weights))
            elif kind_of(name, typ, fn) == NOMINAL:
                self.readers.append(_Codes(name, fn, self.max_values))
            else:
                self.readers.append(_Numbers(name, fn))
        if group is not None:  # any type its text can be made of; as many values as come
            picked.append(group)
            self.readers.append(_Groups(names[group], "fit_groups", sys.maxsize))
        self.picked = picked

    def add(self, rows, numbers=None):
        """Read ``rows`` (a StructArray), numbered by ``numbers`` (an Arrow array of
        their places in the relation, from 1: a chunk of a scan) or not (None: placed
        after the rows before them)."""
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
        arrays = [arrays[j] for j in self.picked]
        if numbers is None:
            place = (self.n, len(rows))
        else:
            place, self.numbered = _places(numbers), True
        self.n += len(rows)
        self.pending.append(arrays)
        self.places.append(place)
        self.pending_bytes += rows.nbytes
        if self.pending_bytes >= BATCH_BYTES:
            self._flush()

    def _flush(self):
        """Write the chunks waiting into the matrix, a column at a time (the chunks
        are DuckDB's or Arrow's, and no slice of them is kept)."""
        if not self.pending:
            return
        pending, places = self.pending, self.places
        self.pending, self.places, self.pending_bytes = [], [], 0
        if all(isinstance(p, tuple) for p in places):  # a scan's chunks, in their order
            ranked = sorted(range(len(places)), key=lambda i: places[i][0])
            pending, places = [pending[i] for i in ranked], [places[i] for i in ranked]
        at, end = _where(places)
        if self.matrix is None:
            self.matrix = np.empty((len(self.readers), max(end, self.expected or 0)))
        elif end > self.matrix.shape[1]:  # more rows than counted: room for twice as many
            self.matrix = _moved(self.matrix, self.matrix.shape[1],
                                 max(end, 2 * self.matrix.shape[1]))
        for j, reader in enumerate(self.readers):
            checkpoint()
            # one Arrow call a column for the batch's chunks: per chunk of a scan,
            # the calls cost more than the reading itself
            chunks = [chunk[j] for chunk in pending]
            reader.put(chunks[0] if len(chunks) == 1 else pa.concat_arrays(chunks),
                       self.matrix[j], at)

    def dataset(self, ordered=True):
        """The Dataset of every row added: in their relation's order where they came
        numbered, else in an order of their values (``ordered`` false: as they came,
        for a fit that reads counts alone). Its columns are rows of the matrix."""
        self._flush()
        if self.readers is None or self.n == 0:
            raise ValueError(f"{self.fn}: the table is empty")
        matrix, self.matrix = self.matrix, None
        if matrix.shape[1] != self.n:  # counted more rows than came, or grown past them
            matrix = _moved(matrix, self.n, self.n)
        attributes = []
        for reader, row in zip(self.readers, matrix):
            checkpoint()
            attributes.append(reader.finish(row))
        if self.group is not None:  # the groups' codes, apart from the columns
            self.groups = (matrix[-1].copy(), attributes.pop().values)
            memory.give_back_columns(matrix[-1:], 0)
            matrix = matrix[:-1]
        k = len(attributes) - self.weighted
        weights = np.ones(self.n)
        if self.weighted:  # an array of their own, which a fit that lets the
            weights[:] = matrix[k]  # columns go keeps without the matrix
            memory.give_back_columns(matrix[k:], 0)
        columns = list(matrix[:k])
        if ordered and not self.numbered:
            in_value_order(attributes[:k], columns, weights)
        memory.give_back(self.n)
        return Dataset(attributes[:k], [_read_only(row) for row in columns], weights)


def in_value_order(attributes, columns, weights):
    """Put the rows of ``columns`` and ``weights`` (in place) in an order of their
    values alone (``canonical_order``: numeric columns first, then nominal codes,
    then weights), the order of a group's rows, which have none in SQL."""
    keys = sorted(range(len(columns)), key=lambda i: attributes[i].nominal)
    order = canonical_order([columns[i] for i in keys] + [weights])

    def put(row):  # in place, a column at a time, two side by side
        row[:] = row[order]

    # two threads where the columns are long enough to repay starting them
    stop.each(put, columns + [weights], threads=2 if len(order) >= THREADED_ROWS else 1)


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
    _weight_kind(name, arr.type, fn)
    return _valid_weights(name, _float64(arr, out), fn)


def _weight_kind(name, typ, fn):
    if kind_of(name, typ, fn) != NUMERIC:
        raise ValueError(f"{fn}: weight column {name!r} must be numeric")


def _valid_weights(name, w, fn):
    """``w``, once known to be weights: finite, non-negative and never missing."""
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
