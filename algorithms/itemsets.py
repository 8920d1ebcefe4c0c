"""What is derived from frequent itemsets: closed and maximal ones, association
rules, and the sorted item lists that users see.

Itemsets are the records of ``fpgrowth.fp_growth``: ``(parent, item, count)``,
a trie keyed by descending item codes. A hash table on ``(parent, item)`` finds
the record of any frequent itemset in as many probes as it has items.
"""

import numpy as np

from .fpgrowth import STATUS_LIMIT, STATUS_OK, find_slot, fp_growth, pack_key
from .halt import halted
from .jit import njit

TARGETS = ("all", "closed", "maximal")


class TooManyItemsets(Exception):
    """More frequent itemsets (or rules) than the configured limit."""

    def __init__(self, found):
        super().__init__(found)
        self.found = found


@njit(cache=True)
def build_index(rec_parent, rec_item):
    """The packed ``(parent, item)`` key of every record, and an open-addressing
    table from key to record (the FP-tree's own child table, see ``find_slot``)."""
    n = rec_parent.shape[0]
    keys = np.empty(n, np.int64)
    size = 2
    while size < 2 * n + 2:
        size *= 2
    table = np.full(size, -1, np.int32)
    for r in range(n):
        keys[r] = pack_key(np.int64(rec_parent[r]), rec_item[r])
        table[find_slot(table, keys[r], keys)] = r
    return keys, table


@njit(cache=True)
def _lookup(keys, table, items, n):
    """Record of the itemset ``items[:n]`` given in descending code order, or -1."""
    r = -1
    for q in range(n):
        r = table[find_slot(table, pack_key(np.int64(r), items[q]), keys)]
        if r == -1:
            return -1
    return r


@njit(cache=True)
def _chain(rec_parent, rec_item, r, buf):
    """Items of record ``r`` in descending code order (root first); returns length."""
    n = 0
    p = r
    while p != -1:
        n += 1
        p = rec_parent[p]
    p = r
    for q in range(n - 1, -1, -1):
        buf[q] = rec_item[p]
        p = rec_parent[p]
    return n


@njit(cache=True)
def lengths(rec_parent):
    """Number of items of every record (parents always precede children)."""
    n = rec_parent.shape[0]
    out = np.empty(n, np.int32)
    for r in range(n):
        p = rec_parent[r]
        out[r] = 1 if p == -1 else out[p] + 1
    return out


@njit(cache=True)
def closed_maximal(rec_parent, rec_item, rec_count):
    """Flags ``(closed, maximal)`` for every record.

    An itemset is closed when no frequent itemset with one more item has the same
    support, and maximal when none is frequent at all: checking immediate
    supersets suffices, since support only falls as items are added. Flags are
    right for the records whose supersets of one more item were mined too.
    """
    n = rec_parent.shape[0]
    closed = np.ones(n, np.bool_)
    maximal = np.ones(n, np.bool_)
    keys, table = build_index(rec_parent, rec_item)
    longest = lengths(rec_parent).max() if n else 0
    buf = np.empty(longest, np.int32)
    sub = np.empty(longest, np.int32)
    for r in range(n):
        L = _chain(rec_parent, rec_item, r, buf)
        if L < 2:
            continue
        for drop in range(L):
            m = 0
            for q in range(L):
                if q != drop:
                    sub[m] = buf[q]
                    m += 1
            s = _lookup(keys, table, sub, np.int64(m))
            maximal[s] = False
            if rec_count[s] == rec_count[r]:
                closed[s] = False
    return closed, maximal


@njit(cache=True)
def rules(rec_parent, rec_item, rec_count, min_conf, max_consequent, limit, halt):
    """Every rule ``X -> Y`` with ``X ∪ Y`` a frequent itemset, X and Y non-empty,
    ``|Y| <= max_consequent`` and confidence ``supp(X ∪ Y) / supp(X) >= min_conf``.

    Returns, per rule, the records of the whole itemset, of X and of Y, and the
    number of rules found (``limit + 1`` when there are more than ``limit``); it
    returns early, with what it has, once the stop flag ``halt`` is set.
    """
    keys, table = build_index(rec_parent, rec_item)
    buf = np.empty(64, np.int32)
    ant = np.empty(64, np.int32)
    con = np.empty(64, np.int32)
    cap = 1024
    out_all = np.empty(cap, np.int64)
    out_ant = np.empty(cap, np.int64)
    out_con = np.empty(cap, np.int64)
    n_out = 0
    for r in range(rec_parent.shape[0]):
        if rec_parent[r] == -1:
            continue
        if halted(halt):
            break
        L = _chain(rec_parent, rec_item, r, buf)
        for mask in range(1, (1 << L) - 1):
            na = 0
            nc = 0
            for q in range(L):
                if (mask >> q) & 1:
                    con[nc] = buf[q]
                    nc += 1
                else:
                    ant[na] = buf[q]
                    na += 1
            if nc > max_consequent:
                continue
            a = _lookup(keys, table, ant, np.int64(na))
            if rec_count[r] / rec_count[a] < min_conf:
                continue
            if n_out >= limit:
                return out_all[:n_out], out_ant[:n_out], out_con[:n_out], n_out + 1
            if n_out == out_all.shape[0]:
                out_all = np.concatenate((out_all, np.empty(n_out, np.int64)))
                out_ant = np.concatenate((out_ant, np.empty(n_out, np.int64)))
                out_con = np.concatenate((out_con, np.empty(n_out, np.int64)))
            out_all[n_out] = r
            out_ant[n_out] = a
            out_con[n_out] = _lookup(keys, table, con, np.int64(nc))
            n_out += 1
    return out_all[:n_out], out_ant[:n_out], out_con[:n_out], n_out


@njit(cache=True)
def expand(rec_parent, rec_item, records, name_rank):
    """CSR of the item codes of ``records``, each list sorted by ``name_rank``."""
    lens = lengths(rec_parent)
    offsets = np.zeros(records.shape[0] + 1, np.int64)
    for q in range(records.shape[0]):
        offsets[q + 1] = offsets[q] + lens[records[q]]
    flat = np.empty(offsets[-1], np.int32)
    for q in range(records.shape[0]):
        lo = offsets[q]
        hi = offsets[q + 1]
        p = records[q]
        for j in range(lo, hi):
            v = rec_item[p]
            k = j  # insertion sort by name rank
            while k > lo and name_rank[flat[k - 1]] > name_rank[v]:
                flat[k] = flat[k - 1]
                k -= 1
            flat[k] = v
            p = rec_parent[p]
    return offsets, flat


def frequent_itemsets(offsets, codes, rank, n_items, min_count, max_len, target, limit):
    """Records ``(parent, item, count)`` and the selected record indices.

    ``rank`` maps the raw ``codes`` to items ranked by descending support
    (0..n_items-1; -1 drops an item). For the
    ``closed`` and ``maximal`` targets one more level is mined so that itemsets
    of exactly ``max_len`` items are judged against their true supersets.
    """
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}")
    depth = max_len if target == "all" else min(max_len + 1, n_items + 1)
    rec_parent, rec_item, rec_count, status = fp_growth(
        offsets, codes, rank, n_items, min_count, depth, limit)
    if status == STATUS_LIMIT:
        raise TooManyItemsets(limit)
    assert status == STATUS_OK
    selected = np.arange(rec_parent.shape[0], dtype=np.int64)
    if target != "all":
        closed, maximal = closed_maximal(rec_parent, rec_item, rec_count)
        keep = closed if target == "closed" else maximal
        keep &= lengths(rec_parent) <= max_len
        selected = selected[keep]
    return rec_parent, rec_item, rec_count, selected
