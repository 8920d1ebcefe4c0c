"""FP-growth (Han, Pei & Yin), as the book's section 6.3 describes it.

Transactions arrive as integer item codes with a map from code to rank by descending
global support (rank 0 is the most frequent item; -1 drops an infrequent item): the
book's first pass has been done. An FP-tree is a set of flat arrays: per node its
parent and item packed in one integer, and its count.

The first tree is built from the transactions sorted as item sequences: each shares
the nodes of its common prefix with the one before it, so nodes need no lookup and
come in depth-first order. Its prefix paths (the conditional pattern bases of the
items) are then read in one sequential pass with the path from the root on a stack,
rather than by walking up from every node through memory at random.

Mining builds conditional FP-trees with no candidate generation. A conditional tree
also threads the nodes of each item with a node link from its header, and an
open-addressing table keyed by (parent, item) finds a node's children while it is
built. The conditional trees live in one arena used as a stack: a tree is built on
top of its parent and dropped when its items are done, so memory stays proportional
to the trees and the recursion is an explicit loop (numba cannot cache recursive
functions).

Frequent itemsets come out as *records* ``(parent record, item, count)``: the
itemset of a record is its item plus the itemset of its parent. A record's item is
more frequent (a smaller code) than every item of its parent, so the records form
a trie of itemsets keyed by descending codes; ``itemsets.py`` looks subsets up in it.
"""

import heapq
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np

from . import stop
from .buffers import grow
from .halt import halted
from .jit import frozen, njit
from .sorting import sort_run

STATUS_OK = 0
STATUS_LIMIT = 1
STATUS_STOPPED = 2
ITEM_MASK = np.int64(0xFFFFFFFF)
SHARES = 8  # shares of the items to mine per thread
BASES_BYTES = 64 << 20  # the least bytes of prefix paths to copy at once


@njit(cache=True)
def pack_key(parent_node, it):
    """A (parent, item) pair as one integer: the key of a node or record."""
    return (np.int64(parent_node + 1) << 32) | it


@njit(cache=True)
def find_slot(table, key, up):
    """Slot of the node whose packed (parent, item) is ``key`` in the open-addressing
    table of the tree under construction, or of the empty slot where it belongs."""
    mask = table.shape[0] - 1
    h = key * np.int64(-7046029254386353131)
    h = (h ^ (h >> 29)) & mask
    while True:
        c = table[h]
        if c == -1 or up[c] == key:
            return h
        h = (h + 1) & mask


@njit(cache=True)
def _rehash(table, base, top, up, slot):
    """Double the child table; it holds the nodes ``base..top`` of one tree."""
    new = np.full(2 * table.shape[0], -1, np.int32)
    for c in range(base, top):
        h = find_slot(new, up[c], up)
        new[h] = c
        slot[c] = h
    return new


@njit(cache=True)
def _insert(path, plen, cnt, ib, up, count, next_link, slot, head, item_count, table,
            base, top):
    """Insert a path of item indices (ascending) with weight ``cnt`` into the tree
    whose nodes start at ``base`` and header at ``ib``; new nodes go at ``top``.
    Returns the new top and table."""
    node = -1
    for t in range(plen):
        it = path[t]
        item_count[ib + it] += cnt
        key = pack_key(np.int64(node), it)
        h = find_slot(table, key, up)
        c = table[h]
        if c == -1:
            if 2 * (top - base + 1) > table.shape[0]:
                table = _rehash(table, np.int64(base), np.int64(top), up, slot)
                h = find_slot(table, key, up)
            c = top
            top += 1
            up[c] = key
            count[c] = 0
            next_link[c] = head[ib + it]
            head[ib + it] = c
            table[h] = c
            slot[c] = h
        count[c] += cnt
        node = c
    return top, table


@njit(cache=True)
def item_supports(offsets, codes, n_items):
    """The book's first pass: the number of transactions holding each item
    (repeats count once; codes -1 are skipped)."""
    support = np.zeros(n_items, np.int64)
    last = np.full(n_items, -1, np.int64)
    for t in range(offsets.shape[0] - 1):
        for j in range(offsets[t], offsets[t + 1]):
            v = codes[j]
            if v >= 0 and last[v] != t:
                last[v] = t
                support[v] += 1
    return support


@njit(cache=True)
def _sorted_unique(codes, lo, hi, rank, path):
    """The ranks of the items ``codes[lo:hi]`` (``rank[c]``, -1 for infrequent
    items, skipped, as are codes -1), sorted and de-duplicated into ``path``;
    returns their number."""
    plen = 0
    for j in range(lo, hi):
        c = codes[j]
        if c < 0:
            continue
        v = rank[c]
        if v < 0:
            continue
        k = plen  # insertion sort: transactions are short
        while k > 0 and path[k - 1] > v:
            k -= 1
        if k > 0 and path[k - 1] == v:
            continue
        for q in range(plen, k, -1):
            path[q] = path[q - 1]
        path[k] = v
        plen += 1
    return plen


@njit(cache=True)
def first_items(offsets, codes, rank):
    """The most frequent (lowest ranked) item of each transaction, -1 if none."""
    n = offsets.shape[0] - 1
    out = np.full(n, -1, np.int32)
    for t in range(n):
        best = -1
        for j in range(offsets[t], offsets[t + 1]):
            c = codes[j]
            if c >= 0:
                v = rank[c]
                if v >= 0 and (best < 0 or v < best):
                    best = v
        out[t] = best
    return out


@njit(cache=True)
def _part_paths(offsets, codes, rank, n_items, first, owner, part):
    """The paths of the transactions that ``owner`` gives to ``part`` (those whose
    most frequent item it owns): each one's ranks sorted and de-duplicated, as CSR
    offsets and items."""
    n = offsets.shape[0] - 1
    cap = 0
    m = 0
    for t in range(n):
        if first[t] >= 0 and owner[first[t]] == part:
            cap += offsets[t + 1] - offsets[t]
            m += 1
    poff = np.empty(m + 1, np.int64)
    pitems = np.empty(cap, np.int32)
    path = np.empty(n_items + 1, np.int32)
    poff[0] = 0
    k = 0
    used = 0
    for t in range(n):
        if first[t] < 0 or owner[first[t]] != part:
            continue
        plen = _sorted_unique(codes, offsets[t], offsets[t + 1], rank, path)
        pitems[used:used + plen] = path[:plen]
        used += plen
        k += 1
        poff[k] = used
    return poff, pitems[:used]


@njit(cache=True)
def _chunk_keys(poff, pitems, order, a, b, depth, per, bits, keys):
    """For the paths ``order[a:b]``, their items ``depth .. depth + per - 1`` packed
    into ``keys`` (each as rank + 1 in ``bits`` bits, 0 past a path's end, so that
    a shorter path comes first). Returns whether a path goes on past them."""
    longer = False
    for q in range(a, b):
        t = order[q]
        lo = poff[t] + depth
        hi = poff[t + 1]
        key = np.int64(0)
        for j in range(per):
            key <<= bits
            if lo + j < hi:
                key |= np.int64(pitems[lo + j] + 1)
        longer |= lo + per < hi
        keys[q] = key
    return longer


@njit(cache=True)
def _lexicographic(poff, pitems, n_items):
    """The order of the paths sorted as item sequences: one sort of 64-bit keys of
    their first items, then each run of equal keys sorted by its next items (an
    explicit stack of runs)."""
    m = poff.shape[0] - 1
    bits = 1
    while (np.int64(1) << bits) <= n_items + 1:
        bits += 1
    per = max(1, 63 // bits)
    last = (np.int64(1) << bits) - 1  # the key's last item: 0 when a path ended
    order = np.arange(m)
    keys = np.empty(m, np.int64)
    spare_keys = np.empty(m, np.int64)
    spare_order = np.empty(m, np.int64)
    runs = np.empty(48, np.int64)  # (first, end, depth) of each run to sort
    runs[0], runs[1], runs[2] = 0, m, 0
    sp = 1
    while sp > 0:
        sp -= 1
        a, b, depth = runs[3 * sp], runs[3 * sp + 1], runs[3 * sp + 2]
        longer = _chunk_keys(poff, pitems, order, a, b, depth, per, bits, keys)
        sort_run(keys, order, a, b, per * bits, spare_keys, spare_order)
        if not longer:
            continue
        q = a
        while q < b:
            r = q + 1
            while r < b and keys[r] == keys[q]:
                r += 1
            if r - q > 1 and keys[q] & last != 0:
                runs = grow(runs, 3 * sp + 3)
                runs[3 * sp], runs[3 * sp + 1], runs[3 * sp + 2] = q, r, depth + per
                sp += 1
            q = r
    return order


@njit(cache=True)
def _trie(poff, pitems, order, n_items):
    """The FP-tree of the paths taken in lexicographic ``order``: a path shares the
    nodes of its common prefix with the path before it and adds the rest, so nodes
    are made in depth-first order with no lookup. Each path counts at its last
    node, and counts are summed up the tree in one backward pass (a node's
    children come after it)."""
    cap = pitems.shape[0] + 1
    up = np.empty(cap, np.int64)
    count = np.zeros(cap, np.int64)
    item_count = np.zeros(n_items, np.int64)
    stack = np.empty(n_items + 1, np.int64)  # the nodes of the path before
    prev_lo = 0
    prev_n = 0
    top = 0
    for q in range(order.shape[0]):
        lo = poff[order[q]]
        n = poff[order[q] + 1] - lo
        shared = 0
        while (shared < min(n, prev_n)
               and pitems[prev_lo + shared] == pitems[lo + shared]):
            shared += 1
        parent = stack[shared - 1] if shared > 0 else -1
        for j in range(shared, n):
            up[top] = pack_key(parent, pitems[lo + j])
            stack[j] = top
            parent = top
            top += 1
        if n > 0:
            count[stack[n - 1]] += 1
        prev_lo = lo
        prev_n = n
    for c in range(top - 1, -1, -1):
        key = up[c]
        p = (key >> 32) - 1
        if p >= 0:
            count[p] += count[c]
        item_count[key & ITEM_MASK] += count[c]
    return up[:top].copy(), count[:top].copy(), item_count


@njit(cache=True)
def build_part(offsets, codes, rank, n_items, first, owner, part):
    """The part of the first FP-tree below the root items that ``owner`` gives to
    ``part``: the transactions whose most frequent item is one of them. Parts
    share no node, so they can be built at once and then concatenated.

    Returns its nodes (packed parent and item, and count) in depth-first order,
    and the count of each item."""
    poff, pitems = _part_paths(offsets, codes, rank, n_items, first, owner, part)
    return _trie(poff, pitems, _lexicographic(poff, pitems, n_items), n_items)


@njit(cache=True)
def _pattern_base(node, up, count, next_link, pbuf, pend, pcnt):
    """Copy the prefix paths of the nodes linked from ``node`` (leaf to root) to
    ``pbuf``, each ending at ``pend`` with count ``pcnt``. Returns the buffers (grown
    as needed) and the number of paths."""
    n_paths = 0
    used = 0
    while node != -1:
        p = (up[node] >> 32) - 1
        while p != -1:
            key = up[p]
            if used == pbuf.shape[0]:
                pbuf = grow(pbuf, used + 1)
            pbuf[used] = key & ITEM_MASK
            used += 1
            p = (key >> 32) - 1
        if n_paths == pend.shape[0]:
            pend = grow(pend, n_paths + 1)
            pcnt = grow(pcnt, n_paths + 1)
        pend[n_paths] = used
        pcnt[n_paths] = count[node]
        n_paths += 1
        node = next_link[node]
    return pbuf, pend, pcnt, n_paths


@njit(cache=True)
def _count_base(buf, ends, counts, first, n_paths, start, scratch, touched):
    """Count the items of the pattern base whose paths are ``first .. first +
    n_paths`` (items ``buf[start:ends[first + n_paths - 1]]``, each path's count
    ``counts``) into ``scratch``; ``touched`` gets the items counted. Returns their
    number."""
    n_touched = 0
    v = start
    for r in range(first, first + n_paths):
        c = counts[r]
        while v < ends[r]:
            it = buf[v]
            if scratch[it] == 0:
                touched[n_touched] = it
                n_touched += 1
            scratch[it] += c
            v += 1
    return n_touched


@njit(cache=True)
def _path_pass(up, count, lo, hi, pos, n_items, at, begin, pitems, end, weight, fill):
    """One pass over the nodes ``lo .. hi`` of the first tree (whole subtrees of the
    root, in depth-first order), with the path from the root on a stack. For each
    node whose item has a place ``q = pos[item]``: without ``fill``, count the path
    and its items into ``at[q + 1]`` and ``begin[q + 1]``; with ``fill``, copy them
    (leaf first) to ``begin[q]`` and path ``at[q]``, and move those cursors on."""
    nodes = np.empty(n_items + 1, np.int64)  # a path has distinct items
    stacked = np.empty(n_items + 1, np.int32)
    sp = 0
    for c in range(lo, hi):
        key = up[c]
        p = (key >> 32) - 1
        while sp > 0 and nodes[sp - 1] != p:
            sp -= 1
        it = key & ITEM_MASK
        q = pos[it]
        if q >= 0 and sp > 0:
            if fill:
                w = begin[q]
                for j in range(sp):
                    pitems[w + j] = stacked[sp - 1 - j]
                begin[q] = w + sp
                end[at[q]] = w + sp
                weight[at[q]] = count[c]
                at[q] += 1
            else:
                at[q + 1] += 1
                begin[q + 1] += sp
        nodes[sp] = c
        stacked[sp] = it
        sp += 1


def _ranges(bounds):
    return list(zip(bounds[:-1], bounds[1:]))


def _places(items, n_items):
    """Each item's place among ``items``, -1 for other items."""
    pos = np.full(n_items, -1, np.int64)
    pos[items] = np.arange(len(items))
    return pos


def path_sizes(up, count, bounds, items, n_items, run=map):
    """Per part of the tree (``bounds``) and item of ``items``: the number of its
    nodes' prefix paths and of their items, each an array (parts, items). The parts
    are read at once by ``run`` (a pool's ``map``)."""
    pos = _places(items, n_items)
    empty = (np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))

    def size(lo_hi):
        at, begin = np.zeros((2, len(items) + 1), np.int64)
        _path_pass(up, count, lo_hi[0], lo_hi[1], pos, n_items, at, begin, *empty, False)
        return at[1:], begin[1:]

    sizes = list(run(size, _ranges(bounds)))
    shape = (len(sizes), len(items))
    return (np.array([s[0] for s in sizes]).reshape(shape),
            np.array([s[1] for s in sizes]).reshape(shape))


def prefix_paths(up, count, bounds, items, n_items, sizes, run=map):
    """The prefix paths (conditional pattern bases) of every node of ``items`` in
    the first tree, grouped by item, copied in one pass over the nodes in
    depth-first order with the path from the root on a stack; ``sizes`` are
    ``path_sizes``' for ``items``, and each part of the tree is read on its own, at
    once by ``run``. Walking up from each node instead reads the tree at random,
    and that walk was nearly all of the mining's time.

    Returns, as ``mine`` takes them: the paths' items (leaf first, as
    ``_pattern_base`` gives them), each path's end and count, the first path and
    the first path item of each of ``items`` (with the ends of the last), and each
    item's place among ``items`` (-1 for other items)."""
    pos = _places(items, n_items)
    paths, lengths = sizes
    at = np.concatenate(([0], np.cumsum(paths.sum(axis=0))))
    begin = np.concatenate(([0], np.cumsum(lengths.sum(axis=0))))
    pitems = np.empty(begin[-1], np.int32)
    end = np.empty(at[-1], np.int64)
    weight = np.empty(at[-1], np.int64)
    before = np.cumsum(paths, axis=0) - paths  # each part's paths follow the earlier's
    items_before = np.cumsum(lengths, axis=0) - lengths
    ranges = _ranges(bounds)

    def fill(r):
        lo, hi = ranges[r]
        _path_pass(up, count, lo, hi, pos, n_items, at[:-1] + before[r],
                   begin[:-1] + items_before[r], pitems, end, weight, True)

    list(run(fill, range(len(ranges))))
    return pitems, end, weight, at, begin, pos


@njit(cache=True)
def mine(g_item_count, paths, items, n_items, min_count, max_len, limit, halt):
    """Every frequent itemset of at most ``max_len`` items whose least frequent item
    is one of ``items``, mined from the first FP-tree: its item counts and the
    prefix paths of its nodes (``prefix_paths``), only read, so that several
    threads can mine disjoint ``items`` at once.

    Returns the records ``(parent, item, count)`` and a status: ``STATUS_LIMIT``
    when there are more than ``limit`` itemsets (then ``limit`` records are kept),
    ``STATUS_STOPPED`` when the stop flag ``halt`` was set.
    """
    g_paths, g_ends, g_counts, g_at, g_begin, g_pos = paths
    # arena of the conditional trees: nodes, and per tree item its first node,
    # count and global code
    up = np.empty(1024, np.int64)
    count = np.empty(1024, np.int64)
    next_link = np.empty(1024, np.int32)
    slot = np.empty(1024, np.int32)
    table = np.full(1 << 12, -1, np.int32)  # children of the tree being built
    head = np.full(2 * n_items + 16, -1, np.int32)
    item_count = np.zeros(2 * n_items + 16, np.int64)
    gitem = np.empty(2 * n_items + 16, np.int32)
    path = np.empty(n_items + 1, np.int32)  # work arrays, restored after each use
    scratch = np.zeros(n_items + 1, np.int64)
    touched = np.empty(n_items + 1, np.int32)
    local = np.full(n_items + 1, -1, np.int32)
    pbuf = np.empty(1024, np.int32)
    pend = np.empty(1024, np.int64)
    pcnt = np.empty(1024, np.int64)
    out_parent = np.empty(1024, np.int32)
    out_item = np.empty(1024, np.int32)
    out_count = np.empty(1024, np.int64)
    n_out = 0
    # the explicit recursion stack: level 0 is the first tree, level L > 0 the
    # conditional tree of the itemset of record lvl_prefix[L]
    depth_cap = n_items + 2
    lvl_node = np.zeros(depth_cap, np.int64)   # first arena node of the level's tree
    lvl_ib = np.zeros(depth_cap, np.int64)     # first arena header entry
    lvl_i = np.zeros(depth_cap, np.int64)      # next item to mine (descending)
    lvl_prefix = np.zeros(depth_cap, np.int32)
    lvl_i[0] = items.shape[0] - 1
    lvl_prefix[0] = -1
    sp = 1 if max_len >= 1 else 0
    top = 0
    itop = 0
    while sp > 0:
        L = sp - 1
        if lvl_i[L] < 0:  # level done: drop its tree
            top = lvl_node[L]
            itop = lvl_ib[L]
            sp -= 1
            continue
        ib = lvl_ib[L]
        if L == 0:
            i = items[lvl_i[0]]
            support = g_item_count[i]
            code = i
        else:
            i = lvl_i[L]
            support = item_count[ib + i]
            code = gitem[ib + i]
        lvl_i[L] -= 1
        if support < min_count:
            continue
        if halted(halt):
            return out_parent[:n_out], out_item[:n_out], out_count[:n_out], STATUS_STOPPED
        if n_out >= limit:
            return out_parent[:n_out], out_item[:n_out], out_count[:n_out], STATUS_LIMIT
        out_parent = grow(out_parent, n_out + 1)
        out_item = grow(out_item, n_out + 1)
        out_count = grow(out_count, n_out + 1)
        rec = n_out
        out_parent[rec] = lvl_prefix[L]
        out_item[rec] = code
        out_count[rec] = support
        n_out += 1
        if L + 1 >= max_len or i == 0:
            continue

        # the conditional pattern base of item i: read in place from the first
        # tree's prefix paths, or copied from a conditional tree's
        if L == 0:
            q = g_pos[i]
            buf, ends, counts, first = g_paths, g_ends, g_counts, g_at[q]
            n_paths = g_at[q + 1] - first
            start = g_begin[q]
        else:
            pbuf, pend, pcnt, n_paths = _pattern_base(head[ib + i], up, count, next_link,
                                                      pbuf, pend, pcnt)
            buf, ends, counts, first, start = pbuf, pend, pcnt, 0, 0
        used = ends[first + n_paths - 1] - start if n_paths else 0
        n_touched = _count_base(buf, ends, counts, first, n_paths, start, scratch, touched)
        k = 0
        for q in range(n_touched):
            if scratch[touched[q]] >= min_count:
                path[k] = touched[q]
                k += 1
        for q in range(n_touched):
            scratch[touched[q]] = 0
        if k == 0:
            continue
        sel = np.sort(path[:k])  # keep the frequency order along paths
        nib = itop
        if nib + k > head.shape[0]:
            head = grow(head, nib + k)
            item_count = grow(item_count, nib + k)
            gitem = grow(gitem, nib + k)
        for q in range(k):
            local[sel[q]] = q
            head[nib + q] = -1
            item_count[nib + q] = 0
            gitem[nib + q] = sel[q] if L == 0 else gitem[ib + sel[q]]
        if top + used > up.shape[0]:
            need = top + used
            up = grow(up, need)
            count = grow(count, need)
            next_link = grow(next_link, need)
            slot = grow(slot, need)
        # the conditional FP-tree: each prefix path, filtered, with the node's count
        base = top
        for q in range(first, first + n_paths):
            plen = 0
            for j in range(ends[q] - 1, start - 1, -1):  # root first
                li = local[buf[j]]
                if li >= 0:
                    path[plen] = li
                    plen += 1
            start = ends[q]
            top, table = _insert(path, np.int64(plen), np.int64(counts[q]), np.int64(nib),
                                 up, count, next_link, slot, head, item_count, table,
                                 np.int64(base), np.int64(top))
        for c in range(base, top):
            table[slot[c]] = -1
        for q in range(k):
            local[sel[q]] = -1
        lvl_node[sp] = base
        lvl_ib[sp] = nib
        lvl_i[sp] = k - 1
        lvl_prefix[sp] = rec
        itop = nib + k
        sp += 1
    return out_parent[:n_out], out_item[:n_out], out_count[:n_out], STATUS_OK


def _shifted(index, shift):
    """Node or record indices moved ``shift`` places on; -1 (none) stays."""
    return np.where(index >= 0, index + shift, -1).astype(index.dtype)


def _deal(weights, items, threads):
    """Split ``items`` into ``threads`` shares of about equal total weight: the
    heaviest first, each to the lightest share; items of no weight go to the
    lightest share at the end."""
    heavy = items[weights[items] > 0]
    heavy = heavy[np.argsort(-weights[heavy], kind="stable")]
    shares = [[] for _ in range(threads)]
    loads = [(0, j) for j in range(threads)]
    for i in heavy.tolist():
        load, j = heapq.heappop(loads)
        shares[j].append(i)
        heapq.heappush(loads, (load + int(weights[i]), j))
    shares[min(loads)[1]].extend(items[weights[items] <= 0].tolist())
    return [np.sort(np.array(s, np.int32)) for s in shares]


def build_tree(offsets, codes, rank, n_items, pool=None, threads=1):
    """The first FP-tree (the book's second pass) over the items ranked by ``rank``
    (raw code -> rank, -1 = infrequent): built in ``threads`` parts that share no
    node, then concatenated. Returns its nodes (packed parent and item, and count)
    in depth-first order, each item's count, and where each part's nodes begin
    (with the end of the last)."""
    codes = frozen(codes)  # from a table or computed: one kernel for both
    first = first_items(offsets, codes, rank)
    owner = np.zeros(n_items, np.int32)
    if pool is None or threads < 2:
        parts = [build_part(offsets, codes, rank, n_items, first, owner, 0)]
    else:
        weights = np.bincount(first[first >= 0], minlength=n_items)
        for j, share in enumerate(_deal(weights, np.arange(n_items), threads)):
            owner[share] = j
        parts = list(pool.map(
            lambda j: build_part(offsets, codes, rank, n_items, first, owner, j),
            range(threads)))
    bounds = np.cumsum([0] + [len(p[0]) for p in parts])
    # renumber each part's nodes after those before
    up = np.concatenate([(_shifted((p[0] >> 32) - 1, shift) + 1 << 32) | (p[0] & ITEM_MASK)
                         for p, shift in zip(parts, bounds)])
    return (up, np.concatenate([p[1] for p in parts]), sum(p[2] for p in parts),
            bounds)


def _rounds(nbytes, budget):
    """``nbytes`` (per item, in order) cut into consecutive runs of at most
    ``budget`` bytes each, or of one item: slices."""
    out, first, total = [], 0, 0
    for q, b in enumerate(nbytes.tolist()):
        if q > first and total + b > budget:
            out.append(slice(first, q))
            first, total = q, 0
        total += b
    if first < len(nbytes):
        out.append(slice(first, len(nbytes)))
    return out


def mine_tree(up, count, item_count, bounds, items, n_items, min_count, max_len, limit,
              halt, pool=None, shares=1, budget=None):
    """The records (as ``mine``'s) of every itemset whose least frequent item is one
    of ``items``, from the first tree as ``build_tree`` returns it, and a status.

    The items' prefix paths can be many times the tree (a transaction of ``L``
    items gives up to ``L (L - 1) / 2`` path items), so they are copied and mined
    in rounds of items whose paths take at most ``budget`` bytes (by default as
    many as the tree, or ``BASES_BYTES``), or of one item. With a ``pool``, the
    tree's parts are read at once, and each round's items are mined in ``shares``
    shares of about equal work, taken by whichever thread is free (an estimate
    evens out over several).
    """
    run = map if pool is None else pool.map
    paths, lengths = path_sizes(up, count, bounds, items, n_items, run)
    n_paths, n_path_items = paths.sum(axis=0), lengths.sum(axis=0)
    work = n_paths + n_path_items
    nbytes = 16 * n_paths + 4 * n_path_items
    parts, found = [], 0
    if budget is None:
        budget = max(BASES_BYTES, up.nbytes + count.nbytes)
    for r in _rounds(nbytes, budget) or [slice(0, 0)]:
        sel = items[r]
        based = prefix_paths(up, count, bounds, sel, n_items,
                             (paths[:, r], lengths[:, r]), run)
        weights = np.zeros(n_items, np.int64)
        weights[sel] = work[r]
        for part in run(lambda share, based=based: mine(item_count, based, share, n_items,
                                                        min_count, max_len, limit, halt),
                        _deal(weights, sel, shares) if shares > 1 else [sel]):
            parts.append(part)
            found += len(part[0])
        del based  # before the next round's
        if found > limit or any(p[3] != STATUS_OK for p in parts):
            break
    starts = np.cumsum([0] + [len(p[0]) for p in parts])
    # renumber each part's parents after the parts before it
    rec_parent = np.concatenate([_shifted(p[0], s) for p, s in zip(parts, starts)])
    rec_item = np.concatenate([p[1] for p in parts])
    rec_count = np.concatenate([p[2] for p in parts])
    status = max(p[3] for p in parts)
    if len(rec_parent) > limit:
        status = STATUS_LIMIT
    return rec_parent[:limit], rec_item[:limit], rec_count[:limit], status


def fp_growth(offsets, codes, rank, n_items, min_count, max_len, limit, threads=2):
    """All itemsets with support >= ``min_count`` and at most ``max_len`` items, as
    records ``(parent, item, count)`` over ranked items, and a status (see
    ``mine``). ``rank`` maps raw codes to ranks 0..n_items-1 (or -1).

    The first tree is built, and its prefix paths read, in parts, and its items are
    mined on ``threads`` threads (the kernels release the GIL), each with about
    equal work.
    """
    big = len(codes) >= 200_000 and threads >= 2
    halt = stop.flag()  # the caller's, also read by the pool's threads
    with ThreadPoolExecutor(threads) if big else nullcontext() as pool:
        up, count, item_count, bounds = build_tree(offsets, codes, rank, n_items, pool,
                                                   threads)
        frequent = np.flatnonzero(item_count >= min_count).astype(np.int32)
        found = mine_tree(up, count, item_count, bounds, frequent, n_items, min_count,
                          max_len, limit, halt, pool, SHARES * threads if big else 1)
    stop.check(halt)
    return found
