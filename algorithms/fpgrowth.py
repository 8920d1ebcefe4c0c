"""FP-growth (Han, Pei & Yin), as the book's section 6.3 describes it.

Items arrive as integer codes ranked by descending global frequency (code 0 is the
most frequent item); infrequent items are already gone (code -1). An FP-tree is a
set of flat arrays: node item, count, parent, first child and next sibling, and the
node link that threads all nodes of one item from the header table.

Mining builds conditional FP-trees with no candidate generation. The conditional
trees live in one arena used as a stack: a tree is built on top of its parent and
dropped when its items are done, so memory stays proportional to the trees and the
recursion is an explicit loop (numba cannot cache recursive functions).

Frequent itemsets come out as *records* ``(parent record, item, count)``: the
itemset of a record is its item plus the itemset of its parent. A record's item is
more frequent (a smaller code) than every item of its parent, so the records form
a trie of itemsets keyed by descending codes; ``itemsets.py`` looks subsets up in it.
"""

import numpy as np
from numba import njit

STATUS_OK = 0
STATUS_LIMIT = 1


@njit(cache=True, nogil=True)
def _grow(a, need):
    """``a``, or a copy at least twice as large when ``need`` exceeds it."""
    if need <= a.shape[0]:
        return a
    out = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(cache=True, nogil=True)
def _insert(path, plen, cnt, ib, item, count, parent, first_child, next_sib,
            next_link, head, root_child, item_count, top):
    """Insert a path of item indices (ascending) with weight ``cnt`` into the tree
    whose header starts at ``ib``; new nodes go at ``top``. Returns the new top."""
    node = -1
    for t in range(plen):
        it = path[t]
        item_count[ib + it] += cnt
        if node == -1:
            c = root_child[ib + it]
        else:
            c = first_child[node]
            while c != -1 and item[c] != it:
                c = next_sib[c]
        if c == -1:
            c = top
            top += 1
            item[c] = it
            count[c] = 0
            parent[c] = node
            first_child[c] = -1
            if node == -1:
                root_child[ib + it] = c
                next_sib[c] = -1
            else:
                next_sib[c] = first_child[node]
                first_child[node] = c
            next_link[c] = head[ib + it]
            head[ib + it] = c
        count[c] += cnt
        node = c
    return top


@njit(cache=True, nogil=True)
def fp_growth(offsets, codes, n_items, min_count, max_len, limit):
    """All itemsets with support >= ``min_count`` and at most ``max_len`` items,
    from transactions in CSR form (``offsets``, ``codes``; -1 = dropped item;
    repeated items count once).

    Returns the records ``(parent, item, count)`` and a status: ``STATUS_LIMIT``
    when there are more than ``limit`` itemsets (then ``limit`` records are kept).
    """
    # node arena
    cap = 16
    for v in codes:
        if v >= 0:
            cap += 1
    item = np.empty(cap, np.int32)
    count = np.empty(cap, np.int64)
    parent = np.empty(cap, np.int32)
    first_child = np.empty(cap, np.int32)
    next_sib = np.empty(cap, np.int32)
    next_link = np.empty(cap, np.int32)
    # header arena: per tree item, its first node, root child, count, global code
    icap = 2 * n_items + 16
    head = np.full(icap, -1, np.int32)
    root_child = np.full(icap, -1, np.int32)
    item_count = np.zeros(icap, np.int64)
    gitem = np.empty(icap, np.int32)
    gitem[:n_items] = np.arange(n_items)
    # work arrays, restored after each use
    path = np.empty(n_items + 1, np.int32)
    scratch = np.zeros(n_items + 1, np.int64)
    touched = np.empty(n_items + 1, np.int32)
    local = np.full(n_items + 1, -1, np.int32)

    # pass 2 of the book: the first FP-tree
    top = 0
    for t in range(offsets.shape[0] - 1):
        plen = 0
        for j in range(offsets[t], offsets[t + 1]):
            v = codes[j]
            if v < 0:
                continue
            dup = False
            for q in range(plen):
                if path[q] == v:
                    dup = True
                    break
            if dup:
                continue
            k = plen  # insertion sort: transactions are short
            while k > 0 and path[k - 1] > v:
                path[k] = path[k - 1]
                k -= 1
            path[k] = v
            plen += 1
        top = _insert(path, plen, 1, 0, item, count, parent, first_child, next_sib,
                      next_link, head, root_child, item_count, top)

    out_parent = np.empty(1024, np.int32)
    out_item = np.empty(1024, np.int32)
    out_count = np.empty(1024, np.int64)
    n_out = 0
    # the explicit recursion stack: one level per conditional tree
    depth_cap = n_items + 2
    lvl_node = np.zeros(depth_cap, np.int64)   # first node of the level's tree
    lvl_ib = np.zeros(depth_cap, np.int64)     # first header entry
    lvl_i = np.zeros(depth_cap, np.int64)      # next item to mine (descending)
    lvl_prefix = np.zeros(depth_cap, np.int32)  # record of the suffix itemset
    lvl_node[0] = 0
    lvl_ib[0] = 0
    lvl_i[0] = n_items - 1
    lvl_prefix[0] = -1
    sp = 1 if max_len >= 1 else 0
    itop = n_items
    while sp > 0:
        L = sp - 1
        i = lvl_i[L]
        if i < 0:  # level done: drop its tree
            top = lvl_node[L]
            itop = lvl_ib[L]
            sp -= 1
            continue
        lvl_i[L] = i - 1
        ib = lvl_ib[L]
        if item_count[ib + i] < min_count:
            continue
        if n_out >= limit:
            return out_parent[:n_out], out_item[:n_out], out_count[:n_out], STATUS_LIMIT
        out_parent = _grow(out_parent, n_out + 1)
        out_item = _grow(out_item, n_out + 1)
        out_count = _grow(out_count, n_out + 1)
        rec = n_out
        out_parent[rec] = lvl_prefix[L]
        out_item[rec] = gitem[ib + i]
        out_count[rec] = item_count[ib + i]
        n_out += 1
        if L + 1 >= max_len or i == 0:
            continue

        # conditional pattern base of item i: counts of the items on its paths
        n_touched = 0
        bound = 0
        node = head[ib + i]
        while node != -1:
            c = count[node]
            p = parent[node]
            while p != -1:
                it = item[p]
                if scratch[it] == 0:
                    touched[n_touched] = it
                    n_touched += 1
                scratch[it] += c
                bound += 1
                p = parent[p]
            node = next_link[node]
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
            head = _grow(head, nib + k)
            root_child = _grow(root_child, nib + k)
            item_count = _grow(item_count, nib + k)
            gitem = _grow(gitem, nib + k)
        for q in range(k):
            local[sel[q]] = q
            head[nib + q] = -1
            root_child[nib + q] = -1
            item_count[nib + q] = 0
            gitem[nib + q] = gitem[ib + sel[q]]
        if top + bound > item.shape[0]:
            need = top + bound
            item = _grow(item, need)
            count = _grow(count, need)
            parent = _grow(parent, need)
            first_child = _grow(first_child, need)
            next_sib = _grow(next_sib, need)
            next_link = _grow(next_link, need)
        # the conditional FP-tree: each prefix path, filtered, with the node's count
        base = top
        node = head[ib + i]
        while node != -1:
            c = count[node]
            plen = 0
            p = parent[node]
            while p != -1:
                li = local[item[p]]
                if li >= 0:
                    path[plen] = li
                    plen += 1
                p = parent[p]
            for q in range(plen // 2):  # walked leaf to root: reverse
                tmp = path[q]
                path[q] = path[plen - 1 - q]
                path[plen - 1 - q] = tmp
            top = _insert(path, plen, c, nib, item, count, parent, first_child,
                          next_sib, next_link, head, root_child, item_count, top)
            node = next_link[node]
        for q in range(k):
            local[sel[q]] = -1
        lvl_node[sp] = base
        lvl_ib[sp] = nib
        lvl_i[sp] = k - 1
        lvl_prefix[sp] = rec
        itop = nib + k
        sp += 1
    return out_parent[:n_out], out_item[:n_out], out_count[:n_out], STATUS_OK
