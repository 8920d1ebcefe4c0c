"""Parallel FP-growth (Li, Wang, Zhang, Zhang & Chang, 2008): the engine-free
pieces of mining frequent itemsets on many machines at once.

The frequent items are ranked by descending support and cut into ``G`` groups
of consecutive ranks (``groups_of``). A
transaction, as the sorted ranks of its frequent items, becomes one
*group-dependent transaction* per group it holds an item of: its prefix up to
that group's last item. Every itemset whose least frequent item is in group
``g`` occurs, with all of its transactions, in group ``g``'s shard, so mining the
shard's FP-tree for the itemsets that end in ``g``'s items (``fpgrowth.mine``)
gives exactly the global itemsets and supports, and the groups are mined
independently.
"""

import math

import numpy as np

from . import fpgrowth, stop
from .jit import njit


def groups_of(counts, n, groups):
    """Each rank's group (``counts``: the ranked items' supports in ``n``
    transactions): ``groups`` runs of consecutive ranks whose shards should be of
    about equal size, were items independent. A transaction sends group
    ``[a, b)`` its items below ``b`` if it holds one of the group's, so the shard's
    expected size is ``P(holds one) * E(items below a) + E(items in [a, b))``.
    Consecutive ranks keep a shard's prefixes short where its items are frequent:
    dealing ranks round-robin made every group's shard hold nearly every
    transaction whole."""
    p = np.minimum(np.asarray(counts, np.float64) / max(n, 1), 1.0)
    below = np.concatenate([[0.0], np.cumsum(p)])  # E(items below r)
    log_miss = np.concatenate([[0.0], np.cumsum(np.log1p(-np.minimum(p, 1 - 1e-12)))])
    starts = np.empty(len(p), np.int64)
    lo, hi = 0.0, _size(below, log_miss, 0, len(p))
    for _ in range(50):  # the least largest shard that needs no more than ``groups``
        mid = (lo + hi) / 2
        if _runs(below, log_miss, mid, starts) <= groups:
            hi = mid
        else:
            lo = mid
    m = _runs(below, log_miss, hi, starts)
    return np.searchsorted(starts[1:m], np.arange(len(p)), side="right").astype(np.int64)


@njit(cache=True, inline="always")
def _size(below, log_miss, a, b):
    """The expected shard of ranks ``a .. b - 1`` in one transaction (``groups_of``)."""
    return -math.expm1(log_miss[b] - log_miss[a]) * below[a] + below[b] - below[a]


@njit(cache=True)
def _runs(below, log_miss, most, starts):
    """The fewest runs of consecutive ranks whose expected shards are at most
    ``most`` each (a rank alone may be more), taken greedily: their first ranks
    into ``starts``; returns their number."""
    n = below.shape[0] - 1
    m = 0
    a = 0
    while a < n:
        starts[m] = a
        m += 1
        b = a + 1
        while b < n and _size(below, log_miss, a, b + 1) <= most:
            b += 1
        a = b
    return m


@njit(cache=True)
def ranked(offsets, codes):
    """Each transaction's ranks (``codes``, -1 for an infrequent item, skipped)
    sorted and distinct: (CSR offsets, ranks)."""
    n = offsets.shape[0] - 1
    out_offsets = np.zeros(n + 1, np.int64)
    out = np.empty(codes.shape[0], np.int32)
    longest = 0
    for t in range(n):
        longest = max(longest, offsets[t + 1] - offsets[t])
    path = np.empty(longest + 1, np.int32)
    identity = np.arange(max(codes.max() + 1, 1) if codes.shape[0] else 1, dtype=np.int32)
    at = 0
    for t in range(n):
        m = fpgrowth._sorted_unique(codes, offsets[t], offsets[t + 1], identity, path)
        out[at:at + m] = path[:m]
        at += m
        out_offsets[t + 1] = at
    return out_offsets, out[:at]


@njit(cache=True)
def _ends(ranks, lo, hi, group_of, last, ends):
    """The places in ``ranks[lo:hi]`` of each group's last item, in order, into
    ``ends`` (``group_of``: each rank's group); returns their number (``last`` is
    left all -1, as it came)."""
    for j in range(lo, hi):
        last[group_of[ranks[j]]] = j
    m = 0
    for j in range(lo, hi):
        if last[group_of[ranks[j]]] == j:
            ends[m] = j
            m += 1
    for j in range(lo, hi):
        last[group_of[ranks[j]]] = -1
    return m


@njit(cache=True)
def shards(offsets, ranks, group_of, groups):
    """The group-dependent transactions of the transactions ``ranks[offsets[t]:
    offsets[t + 1]]`` (frequent item ranks, each list sorted and distinct; ``group_of``:
    each rank's group of ``groups``), laid
    out a group after another, each group's in the order of their transactions:
    (their number per group, their ranks' number per group, the length of each,
    the ranks). One pass counts, the next writes each at its group's place, so
    that a group's shard is one slice of each array."""
    n = offsets.shape[0] - 1
    last = np.full(groups, -1, np.int64)
    longest = 0
    for t in range(n):
        longest = max(longest, offsets[t + 1] - offsets[t])
    ends = np.empty(longest, np.int64)
    count = np.zeros(groups, np.int64)
    size = np.zeros(groups, np.int64)
    for t in range(n):  # first the sizes
        m = _ends(ranks, offsets[t], offsets[t + 1], group_of, last, ends)
        for e in range(m):
            g = group_of[ranks[ends[e]]]
            count[g] += 1
            size[g] += ends[e] - offsets[t] + 1
    next_one = np.zeros(groups, np.int64)  # where each group's next one goes
    next_rank = np.zeros(groups, np.int64)
    for g in range(1, groups):
        next_one[g] = next_one[g - 1] + count[g - 1]
        next_rank[g] = next_rank[g - 1] + size[g - 1]
    lengths = np.empty(count.sum(), np.int32)
    out = np.empty(size.sum(), np.int32)
    for t in range(n):
        lo = offsets[t]
        m = _ends(ranks, lo, offsets[t + 1], group_of, last, ends)
        for e in range(m):
            g = group_of[ranks[ends[e]]]
            k = ends[e] - lo + 1
            lengths[next_one[g]] = k
            next_one[g] += 1
            at = next_rank[g]
            for i in range(k):
                out[at + i] = ranks[lo + i]
            next_rank[g] = at + k
    return count, size, lengths, out


def mine_group(offsets, ranks, n_items, group, group_of, min_count, max_len, limit):
    """The records ``(parent, item, count)`` of every itemset of at most
    ``max_len`` items whose least frequent item is in ``group``, from the group's
    shard (items are ranks, ``n_items`` in all); raises ``TooManyItemsets``."""
    from .itemsets import TooManyItemsets

    identity = np.arange(n_items, dtype=np.int32)
    up, count, item_count, bounds = fpgrowth.build_tree(offsets, ranks, identity, n_items)
    mine = np.flatnonzero((item_count >= min_count)
                          & (group_of == group)).astype(np.int32)
    halt = stop.flag()
    parent, item, count, status = fpgrowth.mine_tree(up, count, item_count, bounds, mine,
                                                     n_items, min_count, max_len, limit,
                                                     halt)
    stop.check(halt)
    if status == fpgrowth.STATUS_LIMIT:
        raise TooManyItemsets(limit)
    return parent, item, count
