"""The rows of an aggregate form (``c45_fit(t, ...)``), held once for their groups.

An aggregate sees its rows in no order and in any number of groups. Gathering
each group's rows into a DuckDB list held them three times over (the aggregate's
buffers, the finished list and its Arrow copy). Instead, ``_dm_stash`` reads every
chunk of rows into a store's columns as DuckDB scans them and gives each row its
place, and the aggregate gathers only the places (``list(_dm_stash(...))``, 32 bits
a row) beside what finds their store. The fit of a group then takes its rows from
the store by their places (``taken``): as a Dataset of their own, whose text columns
know only the values the group holds, in an order of their values, exactly as the
group's rows read alone would be.

A store holds the rows of one learner's aggregates over one row type in one query
(its connection's transaction): the fit finds it by that key (``store_key``). Two
fits in one query each stash their own rows, at places of their own. A key's
places are never given twice in a transaction (a key's next store starts where its
last ended), so a place outlives no store. Each row is taken once, and a store
whose rows are all taken is dropped; a group that is the whole store takes its
columns without a copy. A row in more than one group (GROUPING SETS, ROLLUP, CUBE)
is refused, as its rows are gone by its second group. A store its query left (a
failed or interrupted one) is dropped when its connection next stashes rows or
opens a job in another transaction, as a job is (``feed``), or when the connection
goes.
"""

import hashlib
import sys
import threading

import numpy as np
import pyarrow as pa

from ..algorithms import contract, memory
from ..algorithms.dataset import Dataset, gathered
from .registry import column, list_csr, udf
from .table import DEFAULT_MAX_VALUES, Rows, _pick, _read_only, in_value_order

_STORES = {}  # store key -> its store
_NEXT = {}  # store key -> the first place of its next store
_LOCK = threading.RLock()  # (drop_stale is called with it held)
PLACES = 1 << 32  # a place is 32 bits (UINTEGER)


def store_key(decl, weight, connection, transaction, row_type):
    """What finds the store of a learner's aggregate over a row type (DuckDB's
    ``typeof(r)``) in a transaction, for the stash and the fit alike."""
    return (connection, transaction, decl.name, weight if decl.weights else None,
            row_type)


class _Store:
    def __init__(self, key, rows, limit, start):
        self.key, self.rows, self.limit = key, rows, limit
        self.start = start  # the place of its first row
        self.taken = 0  # rows given to groups so far
        self.lock = threading.Lock()
        self.ended = False  # dropped: rows stashed meanwhile go to a new store

    def add(self, rows):
        """Read ``rows`` (a StructArray) after those before; their places."""
        with self.lock:
            if self.ended:
                return None
            at = self.rows.n
            if self.start + at + len(rows) > PLACES:
                raise ValueError(f"{self.rows.fn}: more than {PLACES:,} rows in the "
                                 "aggregates of one query; fit a sample or one model per "
                                 "group")
            if pa.types.is_struct(rows.type):  # (a column's values are refused by add)
                # the rows held for the groups alone, before any group's fit
                memory.check(self.rows.fn, 0.0, at + len(rows), rows.type.num_fields,
                             self.limit, so_far=True, advice=memory.ADVICE_GROUP,
                             per_row=memory.HELD)
            self.rows.add(rows)
            at += self.start
            return np.arange(at, at + len(rows), dtype=np.uint32)


def drop_stale(connection, transaction=None):
    """Drop the stores and models ``connection`` left in other transactions than
    ``transaction`` (None: in every one, as the connection goes)."""
    def stale(owner):
        return owner[0] == connection and (transaction is None or owner[1] != transaction)

    with _LOCK:
        for store in [s for s in _STORES.values() if stale(s.key)]:
            _end(store)
        for kept in (_NEXT, _FITTED):
            for key in [k for k in kept if stale(k)]:
                del kept[key]


# A group's fit may be called more than once in a query (a macro that names its
# model argument twice, as the scoring functions do), the second time on rows
# already taken: its model is kept, by its rows and its fit's arguments, for the
# rest of the query (the last FITTED_BYTES of models of each transaction).
_FITTED = {}  # (connection, transaction) -> _Kept
FITTED_BYTES = 64 << 20


class _Kept(dict):
    """A transaction's models by key ({key: (value, bytes)}, oldest first), and
    their bytes in all."""
    size = 0


def groups_of(stashed):
    """Each group's store (``(connection, transaction, row type)``) and places
    (uint32) from the StructArray of an aggregate's groups; a group of no rows has
    no places. Converted once for all the groups: Arrow's calls on each group's
    list cost more than a small group's fit."""
    fields = dict(zip((f.name for f in stashed.type), stashed.flatten()))
    offsets, flat = list_csr(fields["places"])
    flat = flat.to_numpy(zero_copy_only=False)
    where = zip(*(fields[f].to_pylist() for f in ("connection", "transaction", "type")))
    return [(w, flat[a:b]) for w, a, b in zip(where, offsets[:-1].tolist(),
                                               offsets[1:].tolist())]


def fitted_key(key, places, *arguments):
    """What tells one fit of a group's rows from another: its store's ``key``, every
    place, in the list's order (a fit called again is called on the same list), and
    the fit's arguments (``repr``-able). Kept by the key's transaction."""
    h = hashlib.blake2b(places.tobytes(), digest_size=16)
    h.update(repr((key[2:], arguments)).encode())
    return key[:2], h.digest()


def fitted(key):
    """The model a fit keyed ``key`` already gave in this query, or None."""
    with _LOCK:
        hit = _FITTED.get(key[0], {}).get(key[1])
        return None if hit is None else hit[0]


def keep(key, model, size):
    """Keep ``model`` (``size`` bytes) as the fit keyed ``key`` gave it."""
    with _LOCK:
        kept = _FITTED.setdefault(key[0], _Kept())
        if key[1] in kept:
            return
        kept[key[1]] = (model, size)
        kept.size += size
        while kept.size > FITTED_BYTES and len(kept) > 1:
            kept.size -= kept.pop(next(iter(kept)))[1]


def _end(store):
    """Drop ``store`` (with ``_LOCK`` held)."""
    store.ended = True
    if _STORES.get(store.key) is store:
        del _STORES[store.key]
        _NEXT[store.key] = store.start + store.rows.n


@udf("_dm_stash", None, "UINTEGER", side_effects=True)
def stash(rows, learner, weight, settings, connection, transaction, row_type, given):
    """Read a chunk of rows into the store of ``learner``'s aggregate over rows of
    ``row_type`` in this transaction; each row's place. (``given``, the hash of the
    fit's arguments, is read by no one: it makes two fits' lists differ in SQL.)"""
    rows = column(rows)
    # the same in every row (constants of the query): the first row's alone, as a
    # whole chunk's values cost more to convert than its rows to read
    name, w, s, conn, txn, typ = (column(a)[0].as_py() for a in (
        learner, weight, settings, connection, transaction, row_type))
    decl = contract.get("_fit", name)
    key = store_key(decl, w, conn, txn, typ)
    while True:
        with _LOCK:
            store = _STORES.get(key)
            if store is None:
                drop_stale(conn, txn)
                limit = (s or {}).get("memory_limit")
                if limit is not None:
                    limit = memory.parse_size(limit, f"{decl.name}: duckmine_memory_limit")
                # text columns take any number of values here; each group's are
                # counted against the limit as it is taken
                store = _STORES[key] = _Store(key, Rows(decl.name, sys.maxsize, key[3]),
                                              limit, _NEXT.get(key, 0))
        places = store.add(rows)
        if places is not None:
            return pa.array(places)


GONE = ("{fn}: the rows of this group are gone: each row goes to one group's fit, "
        "and a row that is in more than one group (GROUPING SETS, ROLLUP, CUBE), or "
        "a group of two fits that differ only in a model option, is gone by its "
        "second; fit each in a query of its own (UNION ALL), or use fit_groups(...)")


def taken(fn, key, places, settings, per_cell, only=None, ordered=True):
    """The Dataset of a group's rows, by their ``places`` (uint32) in the store
    ``key`` names: in an order of their values (``ordered`` false: as stored, for a
    fit that reads counts alone), with only the columns ``only`` and the weights
    where ``only`` names some; refused first where a fit of ``per_cell`` bytes a
    cell of them would pass the memory limit. The rows are then gone from their
    store."""
    with _LOCK:
        store = _STORES.get(key)
    # (a store's places follow those of every earlier store of its key)
    if store is None or int(places.min()) < store.start:
        raise ValueError(GONE.format(fn=fn))
    max_values = settings["max_values"]
    max_values = DEFAULT_MAX_VALUES if max_values is None else int(max_values)
    with store.lock:
        rows = store.rows
        if (store.ended or store.taken + len(places) > rows.n
                or int(places.max()) >= store.start + rows.n):
            raise ValueError(GONE.format(fn=fn))
        # the places among the store's readers of the columns the fit reads
        k = len(rows.readers) - rows.weighted
        picked = range(k) if only is None else \
            _pick(fn, [r.name for r in rows.readers[:k]], only)
        memory.check(fn, per_cell, len(places), len(picked) + rows.weighted,
                     settings["memory_limit"], advice=memory.ADVICE_GROUP,
                     per_row=memory.HELD)
        store.taken += len(places)
        if store.taken == rows.n:
            with _LOCK:
                _end(store)
        if len(places) == rows.n:  # the whole store: its own columns, in place
            return _whole(rows, picked, max_values, ordered)
        rows._flush()
        places = np.sort(places).astype(np.intp)
        places -= store.start
        return _part(rows, picked, places, max_values, ordered)


def _whole(rows, picked, max_values, ordered):
    """The Dataset of every row of the store, made of its own matrix."""
    data = rows.dataset(ordered)
    for j in picked:
        if data.attributes[j].nominal:
            rows.readers[j]._count(len(data.attributes[j].values), max_values)
    return Dataset([data.attributes[j] for j in picked], [data.columns[j] for j in picked],
                   data.weights)


def _part(rows, picked, places, max_values, ordered):
    """The Dataset of the rows at ``places`` of the store's ``rows``, each text
    column holding the values of these rows alone."""
    fn = rows.fn
    k = len(rows.readers) - rows.weighted
    columns = gathered([rows.matrix[j] for j in picked], places)
    attributes = [rows.readers[j].part(x, max_values) for j, x in zip(picked, columns)]
    if rows.weighted:
        weights = rows.matrix[k][places]
        rows.readers[k].check(rows.readers[k].name, weights, fn)
    else:
        weights = np.ones(len(places))
    if ordered:
        in_value_order(attributes, columns, weights)
    return Dataset(attributes, [_read_only(x) for x in columns], weights)
