"""Arrow adapters for frequent itemsets and association rules.

The table macros hand over a whole relation as one value: item codes per
transaction (``INTEGER[][]``) and the item names by code. The aggregate forms hand
over one group per row as item lists (``VARCHAR[][]``), encoded here by Arrow.
Either way the numba kernels in ``algorithms`` count, rank and mine the codes, and
the results are decoded back to names.
"""

import math
import numbers
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms import memory, stop
from ..algorithms.contract import ContractError, choice, literal, number, whole
from .registry import arrow_type, column, list_csr, scalars, udf

DEFAULT_MAX_ITEMSETS = 20_000_000
MAX_LIMIT = 1_000_000_000  # results are Arrow lists with 32-bit offsets
MAX_RULE_ITEMSET = 24  # a rule search enumerates 2**n splits of an n-itemset

# the options besides min_support, checked for type and range as a learner's are
OPTIONS = {p.name: p for p in (
    whole("max_length", None, "the most items in an itemset (NULL: no limit)", low=1,
          nullable=True),
    choice("target", "all", ("all", "closed", "maximal"), "which itemsets to give"),
    number("min_confidence", 0.9, "the least confidence of a rule", low=0, high=1),
    whole("max_consequent", None, "the most items in a rule's consequent (NULL: no "
          "limit)", low=1, nullable=True),
)}

ITEMSET_SQL = "STRUCT(itemset VARCHAR[], support_count BIGINT, support DOUBLE)[]"
RULE_SQL = ("STRUCT(antecedent VARCHAR[], consequent VARCHAR[], support_count BIGINT, "
            "support DOUBLE, confidence DOUBLE, lift DOUBLE, leverage DOUBLE, "
            "conviction DOUBLE)[]")
ITEMSET = arrow_type(ITEMSET_SQL).value_type
RULE = arrow_type(RULE_SQL).value_type


def _core():
    """The mining kernels, imported on first use (they compile with numba)."""
    from ..algorithms import itemsets

    return itemsets


def min_count(fn, min_support, n):
    """The absolute support threshold for ``n`` transactions.

    An integer ``min_support`` is a count. Any other number is a fraction when it
    is at most 1, and a count when it is a whole number above 1.
    """
    if min_support is None:
        raise ContractError(f"{fn}: min_support must not be NULL")
    if isinstance(min_support, bool) or not isinstance(min_support, (numbers.Real,
                                                                     Decimal)):
        raise ContractError(f"{fn}: min_support must be a fraction in (0, 1] or a count "
                            f">= 1, got {literal(min_support)}")
    if not math.isfinite(min_support) or min_support <= 0:
        raise ContractError(f"{fn}: min_support must be a fraction in (0, 1] or a count "
                            f">= 1, got {min_support}")
    if isinstance(min_support, numbers.Integral):
        return int(min_support)
    min_support = float(min_support)
    if min_support <= 1:
        # the least count whose share of n reaches the fraction
        return max(1, math.ceil(min_support * n - 1e-9 * max(1, n)))
    if min_support != int(min_support):
        raise ContractError(f"{fn}: min_support {min_support} is above 1 but not a whole "
                            "count; give a fraction in (0, 1] or a count")
    return int(min_support)


UNBOUNDED = np.iinfo(np.int32).max
# bytes a search holds at its peak per occurrence of a frequent item, and per
# transaction, beyond its input: the transactions' sorted paths (4), the first tree,
# made at its largest size and then cut (16 + 16), and its prefix paths, copied in
# rounds of at most the tree's bytes (16); per transaction its path's offset, first
# item, and place and key in the sort with their spares (44). Measured: 23 to 34 bytes
# an item on the benchmark's baskets, where the tree shares many nodes.
ITEM_BYTES = 56
TRANSACTION_BYTES = 48
ADVICE = ("raise min_support, mine a sample (FROM t USING SAMPLE 10%), one set per group "
          "(fp_growth_agg with GROUP BY), or on Spark (duckmine.spark.fp_growth); "
          + memory.LIMIT)


def check_options(fn, options, limit):
    """``options`` (name: value) checked against OPTIONS, and the session's itemset
    limit; the unbounded NULLs made numbers."""
    out = {name: OPTIONS[name].check(fn, v) for name, v in options.items()}
    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        raise ContractError(f"{fn}: duckmine_max_itemsets must be in [1, {MAX_LIMIT:,}], "
                            f"got {limit}")
    for name in ("max_length", "max_consequent"):
        if name in out and out[name] is None:
            out[name] = UNBOUNDED
    out["limit"] = DEFAULT_MAX_ITEMSETS if limit is None else int(limit)
    return out


class Transactions:
    """One transaction set: CSR item codes, their ranks by descending support (-1
    for infrequent items), the frequent item names in rank order, and each one's
    position in name order (itemsets are shown sorted by name)."""

    def __init__(self, offsets, codes, names, fn, min_support, memory_limit=None):
        """``codes`` index ``names``; -1 is a missing item. A search that would hold
        more than ``memory_limit`` (a size, or None) is refused before it starts."""
        self.n = len(offsets) - 1
        self.threshold = min_count(fn, min_support, self.n)
        self.offsets = offsets
        from ..algorithms.fpgrowth import item_supports

        support = item_supports(offsets, codes, len(names))
        frequent = np.flatnonzero(support >= self.threshold)
        found = int(support[frequent].sum())
        memory.refuse(fn, "search", ITEM_BYTES * found + TRANSACTION_BYTES * self.n,
                      f"{found:,} frequent items in {self.n:,} transactions", memory_limit,
                      advice=ADVICE)
        by_name = np.asarray(pc.array_sort_indices(names))
        name_pos = np.empty(len(names), np.int64)
        name_pos[by_name] = np.arange(len(names))
        ranked = frequent[np.lexsort((name_pos[frequent], -support[frequent]))]
        self.rank = np.full(len(names), -1, np.int32)
        self.rank[ranked] = np.arange(len(ranked))
        self.codes = codes
        self.names = names.take(pa.array(ranked))
        self.name_rank = name_pos[ranked]

    @classmethod
    def from_codes(cls, tx, names, *args):
        """From DuckDB's encoding: ``tx`` a ListArray of INTEGER code lists."""
        offsets, flat = list_csr(tx)
        codes = np.asarray(flat.fill_null(-1) if flat.null_count else flat, np.int32)
        return cls(offsets, codes, names, *args)

    @classmethod
    def from_items(cls, tx, *args):
        """From item lists: ``tx`` a ListArray of VARCHAR lists."""
        return cls(*encoded_items(tx), *args)

    def itemsets(self, max_len, target, limit):
        return _core().frequent_itemsets(self.offsets, self.codes, self.rank, len(self.names),
                                      self.threshold, max_len, target, limit)

    def lists(self, rec_parent, rec_item, records):
        """Sorted item-name lists of ``records``."""
        offsets, flat = _core().expand(rec_parent, rec_item, records, self.name_rank)
        return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)),
                                        self.names.take(pa.array(flat)))


def encoded_items(tx):
    """Item lists (a ListArray of VARCHAR lists) as CSR offsets, int32 codes (-1
    for a NULL item) and the item names the codes index."""
    offsets, flat = list_csr(tx)
    encoded = pc.dictionary_encode(flat.cast(pa.string()))
    return offsets, np.asarray(encoded.indices.fill_null(-1), np.int32), encoded.dictionary


def _too_many(fn, err, limit):
    return ValueError(
        f"{fn}: stopped after finding more than {err.found:,} frequent itemsets "
        f"(the limit is {limit:,}); raise min_support, set max_length, or raise the "
        "limit with SET VARIABLE duckmine_max_itemsets = N")


def _rows(fn, tx, names, min_support, limit, memory_limit, **options):
    """Per row (one transaction set each): its Transactions and its checked options
    (``check_options``). ``names`` is None when ``tx`` holds item lists;
    ``memory_limit`` (a size per row, or None) bounds each search."""
    tx = column(tx)
    names = None if names is None else column(names)
    values = {k: scalars(v) for k, v in options.items()}
    empty = pa.array([], pa.list_(pa.int32() if names is not None else pa.string()))
    bounds = scalars(memory_limit) if memory_limit is not None else [None] * len(tx)
    for i, (support, lim, bound) in enumerate(zip(scalars(min_support), scalars(limit),
                                                  bounds)):
        opts = check_options(fn, {k: v[i] for k, v in values.items()}, lim)
        group = tx[i].values if tx[i].is_valid else empty
        if names is None:
            t = Transactions.from_items(group, fn, support, bound)
        else:
            t = Transactions.from_codes(group, names[i].values, fn, support, bound)
        yield t, opts


def _wrap(parts, value_type):
    """One list value per row from per-row Arrow arrays."""
    offsets = np.zeros(len(parts) + 1, np.int32)
    offsets[1:] = np.cumsum([len(p) for p in parts])
    values = pa.concat_arrays(parts) if parts else pa.array([], value_type)
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def _itemsets(fn, tx, names, min_support, max_length, target, limit, memory_limit=None):
    parts = []
    for t, o in _rows(fn, tx, names, min_support, limit, memory_limit,
                      max_length=max_length, target=target):
        lim = o["limit"]
        try:
            rec_parent, rec_item, rec_count, sel = t.itemsets(o["max_length"],
                                                              o["target"], lim)
        except _core().TooManyItemsets as err:
            raise _too_many(fn, err, lim) from None
        counts = rec_count[sel]
        parts.append(pa.StructArray.from_arrays(
            [t.lists(rec_parent, rec_item, sel), pa.array(counts),
             pa.array(counts / max(t.n, 1))], fields=list(ITEMSET)))
    return _wrap(parts, ITEMSET)


def _rules(fn, tx, names, min_support, min_confidence, max_length, max_consequent,
           limit, memory_limit=None):
    parts = []
    for t, o in _rows(fn, tx, names, min_support, limit, memory_limit,
                      min_confidence=min_confidence, max_length=max_length,
                      max_consequent=max_consequent):
        lim = o["limit"]
        try:
            rec_parent, rec_item, rec_count, _ = t.itemsets(o["max_length"], "all", lim)
        except _core().TooManyItemsets as err:
            raise _too_many(fn, err, lim) from None
        longest = int(_core().lengths(rec_parent).max()) if len(rec_parent) else 0
        if longest > MAX_RULE_ITEMSET:
            raise ValueError(f"{fn}: a frequent itemset has {longest} items; rules "
                             f"are searched for itemsets of at most {MAX_RULE_ITEMSET}: "
                             "set max_length or raise min_support")
        halt = stop.flag()
        whole, ant, con, n_rules = _core().rules(rec_parent, rec_item, rec_count,
                                                 o["min_confidence"], o["max_consequent"],
                                                 lim, halt)
        stop.check(halt)
        if n_rules > lim:
            raise ValueError(f"{fn}: stopped after finding more than {lim:,} rules; "
                             "raise min_support or min_confidence, set max_length, or "
                             "SET VARIABLE duckmine_max_itemsets = N")
        parts.append(rule_columns(t, rec_parent, rec_item, rec_count, whole, ant, con))
    return _wrap(parts, RULE)


# the options arrive as given (no parameter types), to be checked by name here
@udf("_dm_itemsets", None, ITEMSET_SQL, stoppable=True)
def itemsets(tx, names, min_support, max_length, target, limit, memory_limit):
    return _itemsets("fp_growth", tx, names, min_support, max_length, target, limit,
                     memory_limit)


@udf("_dm_rules", None, RULE_SQL, stoppable=True)
def rules(tx, names, min_support, min_confidence, max_length, max_consequent, limit,
          memory_limit):
    return _rules("association_rules", tx, names, min_support, min_confidence, max_length,
                  max_consequent, limit, memory_limit)


@udf("_dm_itemsets_agg", None, ITEMSET_SQL, stoppable=True)
def itemsets_agg(tx, min_support, max_length, target, limit, memory_limit):
    return _itemsets("fp_growth_agg", tx, None, min_support, max_length, target, limit,
                     memory_limit)


@udf("_dm_rules_agg", None, RULE_SQL, stoppable=True)
def rules_agg(tx, min_support, min_confidence, max_length, max_consequent, limit,
              memory_limit):
    return _rules("association_rules_agg", tx, None, min_support, min_confidence,
                  max_length, max_consequent, limit, memory_limit)


def rule_columns(t, rec_parent, rec_item, rec_count, whole, ant, con):
    """Rule measures as Weka's FPGrowth defines them (DefaultAssociationRule)."""
    n = float(t.n)
    total = rec_count[whole].astype(np.float64)
    premise = rec_count[ant].astype(np.float64)
    consequence = rec_count[con].astype(np.float64)
    confidence = total / premise
    lift = confidence / (consequence / n)
    leverage = total / n - (premise / n) * (consequence / n)
    conviction = premise * (n - consequence) / n / (premise - total + 1)
    cols = [t.lists(rec_parent, rec_item, ant), t.lists(rec_parent, rec_item, con),
            pa.array(rec_count[whole]), pa.array(total / n), pa.array(confidence),
            pa.array(lift), pa.array(leverage), pa.array(conviction)]
    return pa.StructArray.from_arrays(cols, fields=list(RULE))
