"""``fp_growth`` and ``association_rules`` as Spark table functions over a whole
table (``TABLE(t) WITH SINGLE PARTITION``), mined by the same kernels as DuckDB's.

DuckDB groups a relation's rows into transactions in SQL (``_dm_baskets``); here
the rows arrive as Arrow batches and are grouped the same way in Arrow, for the
layout read from the schema by the same rule (``udfs/transactions.layout``): long
(transaction id, item), one LIST column, or wide nominal columns whose cells are
the items ``column=value`` (a BOOLEAN column is the item ``column`` where true).
NULL items are dropped; a transaction without items still counts.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..udfs import itemsets
from ..udfs.transactions import LAYOUT, layout
from . import calls


def _type_name(t):
    """An Arrow type as the SQL type name ``layout`` reads."""
    if pa.types.is_integer(t):
        return "BIGINT"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "VARCHAR"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _type_name(t.value_type) + "[]"
    return str(t).upper()


def _lists(offsets, items, keep):
    """A ListArray of ``items`` split at ``offsets``, without the items not ``keep``."""
    kept = np.concatenate([[0], np.cumsum(keep)])[offsets]
    return pa.ListArray.from_arrays(pa.array(kept.astype(np.int32)),
                                    pc.filter(items, pa.array(keep)))


def baskets(fn, table, requested):
    """The transactions of ``table``: a ListArray of item-name lists."""
    names, types = table.schema.names, [_type_name(f.type) for f in table.schema]
    try:
        kind, at = layout(names, types, requested)
    except ValueError as err:
        raise ValueError(f"{fn}: {err}") from None
    if kind == "long":
        tid, item = table.column(0).combine_chunks(), table.column(1).combine_chunks()
        known = tid.is_valid()
        tid, item = tid.filter(known), pc.cast(item.filter(known), pa.string())
        codes = np.asarray(pc.dictionary_encode(tid).indices, np.int64)
        order = np.argsort(codes, kind="stable")
        offsets = np.concatenate([[0], np.cumsum(np.bincount(codes))])
        item = item.take(pa.array(order))
        return _lists(offsets, item, np.asarray(item.is_valid()))
    if kind == "list":
        col = pc.cast(table.column(at - 1).combine_chunks(), pa.list_(pa.string()))
        offsets, flat = itemsets.list_csr(col)
        return _lists(offsets, flat, np.asarray(flat.is_valid()))
    cells = []
    for name, f in zip(names, table.schema):
        col = table.column(name).combine_chunks()
        if pa.types.is_boolean(f.type):
            cells.append(pc.if_else(col.fill_null(False), name, None).cast(pa.string()))
        else:
            cells.append(pc.binary_join_element_wise(name, pc.cast(col, pa.string()), "="))
    n, k = table.num_rows, len(cells)
    flat = pa.concat_arrays([c for c in cells]) if cells else pa.array([], pa.string())
    # row-major: the cells of row i are at i, n + i, 2n + i, ...
    flat = flat.take(pa.array(((np.arange(k) * n)[None, :] + np.arange(n)[:, None]).ravel()))
    offsets = np.arange(n + 1, dtype=np.int64) * k
    return _lists(offsets, flat, np.asarray(flat.is_valid()))


class _Mining(calls.TableFunction):
    mine = None

    def start(self, call):
        LAYOUT.check(self.fn, call.get("layout") or "auto")
        self.batches = []

    def add(self, batch):
        self.batches.append(batch)

    def finish(self):
        call = dict(self.call)
        table = pa.Table.from_batches(self.batches)
        self.batches = []
        tx = baskets(self.fn, table, call.pop("layout", None) or "auto")
        one = pa.ListArray.from_arrays(pa.array([0, len(tx)], pa.int32()), tx)
        out = type(self).mine(one, **{k: pa.array([v]) for k, v in call.items()})
        yield pa.Table.from_struct_array(out.flatten())


def _fp_growth(tx, min_support, max_length, target, limit):
    return itemsets._itemsets("fp_growth", tx, None, min_support, max_length, target, limit)


def _rules(tx, min_support, min_confidence, max_length, max_consequent, limit):
    return itemsets._rules("association_rules", tx, None, min_support, min_confidence,
                           max_length, max_consequent, limit)


DEFAULTS = {"fp_growth": {"max_length": None, "target": "all"},
            "association_rules": {"min_confidence": 0.9, "max_length": None,
                                  "max_consequent": None}}


def table_functions(settings):
    from pyspark.sql.pandas.types import from_arrow_type

    out = []
    for fn, mine, row in (("fp_growth", _fp_growth, itemsets.ITEMSET),
                          ("association_rules", _rules, itemsets.RULE)):
        limit = settings.get("max_itemsets")

        def bound(tx, _mine=mine, _fn=fn, _limit=limit, **given):
            values = {**{k: pa.array([v]) for k, v in DEFAULTS[_fn].items()}, **given}
            return _mine(tx, limit=pa.array([_limit], pa.int64()), **values)

        out.append((fn, calls.udtf(_Mining, fn, ["row", "min_support"],
                                   [*DEFAULTS[fn], "layout"], from_arrow_type(row),
                                   mine=staticmethod(bound))))
    return out
