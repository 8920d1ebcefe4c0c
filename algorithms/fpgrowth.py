"""FP-growth (Han, Pei & Yin), as the book's section 6.3 describes it.

Transactions arrive as integer item codes with a map from code to rank by descending
global support (rank 0 is the most frequent item; -1 drops an infrequent item): the
book's first pass has been done. An FP-tree is a
set of flat arrays: per node its parent and item packed in one integer (a walk to
the root touches one array), its count, and the node link that threads all nodes of
one item from the header table. While a tree is built, an open-addressing table
keyed by (parent, item) finds a node's children.

Mining builds conditional FP-trees with no candidate generation. The conditional
trees live in one arena used as a stack: a tree is built on top of its parent and
dropped when its items are done, so memory stays proportional to the trees and the
recursion is an explicit loop (numba cannot cache recursive functions).

Frequent itemsets come out as *records* ``(parent record, item, count)``: the
itemset of a record is its item plus the itemset of its parent. A record's item is
more frequent (a smaller code) than every item of its parent, so the records form
a trie of itemsets keyed by descending codes; ``itemsets.py`` looks subsets up in it.
"""

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np

from . import stop
from .buffers import grow
from .halt import halted
from .jit import frozen, njit

STATUS_OK = 0
STATUS_LIMIT = 1
STATUS_STOPPED = 2
ITEM_MASK = np.int64(0xFFFFFFFF)
SHARES = 8  # shares of the items to mine per thread


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
def build_part(offsets, codes, rank, n_items, first, owner, part):
    """The part of the first FP-tree below the root items that ``owner`` gives to
    ``part``: the transactions whose most frequent item is one of them. Parts
    share no node, so they can be built at once and then concatenated.

    Returns its nodes (packed parent and item, count, node link) and header
    (first and last node and count of each item)."""
    cap = 16
    for t in range(offsets.shape[0] - 1):
        if first[t] >= 0 and owner[first[t]] == part:
            cap += offsets[t + 1] - offsets[t]
    up = np.empty(cap, np.int64)
    count = np.empty(cap, np.int64)
    next_link = np.empty(cap, np.int32)
    slot = np.empty(cap, np.int32)
    table = np.full(1 << 12, -1, np.int32)
    head = np.full(n_items, -1, np.int32)
    item_count = np.zeros(n_items, np.int64)
    path = np.empty(n_items + 1, np.int32)
    top = 0
    for t in range(offsets.shape[0] - 1):
        if first[t] < 0 or owner[first[t]] != part:
            continue
        plen = _sorted_unique(codes, offsets[t], offsets[t + 1], rank, path)
        top, table = _insert(path, np.int64(plen), np.int64(1), np.int64(0), up, count,
                             next_link, slot, head, item_count, table, np.int64(0),
                             np.int64(top))
    tail = np.full(n_items, -1, np.int32)  # chains were built by prepending
    for c in range(top):
        it = up[c] & ITEM_MASK
        if tail[it] == -1:
            tail[it] = c
    return (up[:top].copy(), count[:top].copy(), next_link[:top].copy(), head, tail,
            item_count)


@njit(cache=True)
def _pattern_base(node, up, count, next_link, scratch, touched, n_touched, pbuf, pend,
                  pcnt):
    """Copy the prefix paths of the nodes linked from ``node`` (leaf to root) to
    ``pbuf``, each ending at ``pend`` with count ``pcnt``, while counting their
    items in ``scratch`` (``touched`` lists the items counted)."""
    n_paths = 0
    used = 0
    while node != -1:
        c = count[node]
        p = (up[node] >> 32) - 1
        while p != -1:
            key = up[p]
            it = key & ITEM_MASK
            if scratch[it] == 0:
                touched[n_touched] = it
                n_touched += 1
            scratch[it] += c
            if used == pbuf.shape[0]:
                pbuf = grow(pbuf, used + 1)
            pbuf[used] = it
            used += 1
            p = (key >> 32) - 1
        if n_paths == pend.shape[0]:
            pend = grow(pend, n_paths + 1)
            pcnt = grow(pcnt, n_paths + 1)
        pend[n_paths] = used
        pcnt[n_paths] = c
        n_paths += 1
        node = next_link[node]
    return pbuf, pend, pcnt, n_paths, used, n_touched


@njit(cache=True)
def mine(g_up, g_count, g_next_link, g_head, g_item_count, items, n_items, min_count,
         max_len, limit, halt):
    """Every frequent itemset of at most ``max_len`` items whose least frequent item
    is one of ``items``, mined from the first FP-tree (the ``g_`` arrays, only read,
    so that several threads can mine disjoint ``items`` at once).

    Returns the records ``(parent, item, count)`` and a status: ``STATUS_LIMIT``
    when there are more than ``limit`` itemsets (then ``limit`` records are kept),
    ``STATUS_STOPPED`` when the stop flag ``halt`` was set.
    """
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

        # the conditional pattern base of item i
        if L == 0:
            pbuf, pend, pcnt, n_paths, used, n_touched = _pattern_base(
                g_head[i], g_up, g_count, g_next_link, scratch, touched, 0, pbuf, pend,
                pcnt)
        else:
            pbuf, pend, pcnt, n_paths, used, n_touched = _pattern_base(
                head[ib + i], up, count, next_link, scratch, touched, 0, pbuf, pend, pcnt)
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
        start = 0
        for q in range(n_paths):
            plen = 0
            for j in range(pend[q] - 1, start - 1, -1):  # root first
                li = local[pbuf[j]]
                if li >= 0:
                    path[plen] = li
                    plen += 1
            start = pend[q]
            top, table = _insert(path, np.int64(plen), np.int64(pcnt[q]), np.int64(nib),
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
    """Split ``items`` into ``threads`` shares of about equal total weight."""
    loads = np.zeros(threads)
    shares = [[] for _ in range(threads)]
    for i in items[np.argsort(-weights[items], kind="stable")]:
        j = int(np.argmin(loads))
        shares[j].append(i)
        loads[j] += weights[i]
    return [np.sort(np.array(s, np.int32)) for s in shares]


def build_tree(offsets, codes, rank, n_items, pool=None, threads=1):
    """The first FP-tree (the book's second pass) over the items ranked by ``rank``
    (raw code -> rank, -1 = infrequent): built in ``threads`` parts that share no
    node, then concatenated. Returns nodes and header as ``mine`` takes them."""
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
    up, count, next_link, head, tail, item_count = parts[0]
    ups, counts, links = [up], [count], [next_link]
    shift = len(up)
    for p_up, p_count, p_link, p_head, p_tail, p_item_count in parts[1:]:
        # renumber the part's nodes after those before
        ups.append((_shifted((p_up >> 32) - 1, shift) + 1 << 32) | (p_up & 0xFFFFFFFF))
        counts.append(p_count)
        links.append(_shifted(p_link, shift))
        p_head, p_tail = _shifted(p_head, shift), _shifted(p_tail, shift)
        both = (head >= 0) & (p_head >= 0)  # chain the part's node links on
        links[0][tail[both]] = p_head[both]
        head = np.where(head >= 0, head, p_head)
        tail = np.where(p_tail >= 0, p_tail, tail)
        item_count = item_count + p_item_count
        shift += len(p_up)
    return (np.concatenate(ups), np.concatenate(counts), np.concatenate(links), head,
            item_count)


def fp_growth(offsets, codes, rank, n_items, min_count, max_len, limit, threads=2):
    """All itemsets with support >= ``min_count`` and at most ``max_len`` items, as
    records ``(parent, item, count)`` over ranked items, and a status (see
    ``mine``). ``rank`` maps raw codes to ranks 0..n_items-1 (or -1).

    The first tree is built in parts and its items are mined on ``threads``
    threads (the kernels release the GIL), each with about equal work.
    """
    big = len(codes) >= 200_000 and threads >= 2
    halt = stop.flag()  # the caller's, also read by the pool's threads
    with ThreadPoolExecutor(threads) if big else nullcontext() as pool:
        tree = build_tree(offsets, codes, rank, n_items, pool, threads)
        frequent = np.flatnonzero(tree[4] >= min_count).astype(np.int32)
        if not big or len(frequent) < 2:
            parts = [mine(*tree, frequent, n_items, min_count, max_len, limit, halt)]
        else:
            # the work of an item grows with its number of nodes; shares of about
            # equal work, more than threads, are taken by whichever thread is free
            # (an estimate evens out over several), and come back in their order
            nodes = np.bincount((tree[0] & 0xFFFFFFFF).astype(np.int64),
                                minlength=n_items)
            parts = list(pool.map(
                lambda share: mine(*tree, share, n_items, min_count, max_len, limit, halt),
                _deal(nodes, frequent, SHARES * threads)))
    stop.check(halt)
    starts = np.cumsum([0] + [len(p[0]) for p in parts])
    # renumber each part's parents after the parts before it
    rec_parent = np.concatenate([_shifted(p[0], s) for p, s in zip(parts, starts)])
    rec_item = np.concatenate([p[1] for p in parts])
    rec_count = np.concatenate([p[2] for p in parts])
    status = max(p[3] for p in parts)
    if len(rec_parent) > limit:
        status = STATUS_LIMIT
    return rec_parent[:limit], rec_item[:limit], rec_count[:limit], status
