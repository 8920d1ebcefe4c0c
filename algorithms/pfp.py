"""Parallel FP-growth (Li, Wang, Zhang, Zhang & Chang, 2008): the engine-free
pieces of mining frequent itemsets on many machines at once.

The frequent items are ranked by descending support and dealt to ``G`` groups
(rank ``r`` to group ``r % G``, which spreads the most frequent items). A
transaction, as the sorted ranks of its frequent items, becomes one
*group-dependent transaction* per group it holds an item of: its prefix up to
that group's last item. Every itemset whose least frequent item is in group
``g`` occurs, with all of its transactions, in group ``g``'s shard, so mining the
shard's FP-tree for the itemsets that end in ``g``'s items (``fpgrowth.mine``)
gives exactly the global itemsets and supports, and the groups are mined
independently.
"""

import numpy as np

from . import fpgrowth, stop
from .jit import njit


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
def shards(offsets, ranks, groups):
    """The group-dependent transactions of the transactions ``ranks[offsets[t]:
    offsets[t + 1]]`` (frequent item ranks, each list sorted and distinct), laid
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
    top = 0
    for j in range(ranks.shape[0]):
        top = max(top, ranks[j] + 1)
    group_of = np.arange(top) % groups  # a look-up, not a division an item
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


def mine_group(offsets, ranks, n_items, group, groups, min_count, max_len, limit):
    """The records ``(parent, item, count)`` of every itemset of at most
    ``max_len`` items whose least frequent item is in ``group``, from the group's
    shard (items are ranks, ``n_items`` in all); raises ``TooManyItemsets``."""
    from .itemsets import TooManyItemsets

    identity = np.arange(n_items, dtype=np.int32)
    up, count, item_count, bounds = fpgrowth.build_tree(offsets, ranks, identity, n_items)
    mine = np.flatnonzero((item_count >= min_count)
                          & (identity % groups == group)).astype(np.int32)
    halt = stop.flag()
    parent, item, count, status = fpgrowth.mine_tree(up, count, item_count, bounds, mine,
                                                     n_items, min_count, max_len, limit,
                                                     halt)
    stop.check(halt)
    if status == fpgrowth.STATUS_LIMIT:
        raise TooManyItemsets(limit)
    return parent, item, count
