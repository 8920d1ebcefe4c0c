"""Radix sorts for the kernels: of 64-bit keys, and of float64 values as numpy's
stable ``argsort`` orders them.

numba's ``argsort`` takes seconds to compile and sorts millions of keys several
times slower than a radix sort; numpy's releases the GIL but cannot run inside a
kernel, and its quicksort slows down on columns with many equal values (a column
that is half zeros took three times as long as one of distinct values).
"""

import numpy as np

from .jit import njit

SIGN = np.int64(-(2**63))  # the sign bit of a 64-bit key
LAST = np.int64(-1)  # the largest key read unsigned: NaN's, after every number
LONG_RUN = 4096  # keys from which a run is sorted by 11-bit digits


@njit(cache=True)
def sort_run(keys, order, a, b, width, spare_keys, spare_order):
    """``keys[a:b]`` sorted as unsigned numbers, and ``order[a:b]`` with them (a
    stable sort): a short run by insertion, a longer one by a radix sort of 8- or
    11-bit digits over the low ``width`` bits, skipping a digit every key shares.
    The last digit may reach past them, into bits that keys of ``width`` bits have
    as zeros and, past the 64th, into copies of the top bit: the order is the
    same. The spare arrays (at least ``b - a`` long) are the sort's scratch."""
    n = b - a
    if n <= 32:
        for i in range(a + 1, b):
            k = keys[i]
            o = order[i]
            j = i
            while j > a and keys[j - 1] ^ SIGN > k ^ SIGN:  # (unsigned)
                keys[j] = keys[j - 1]
                order[j] = order[j - 1]
                j -= 1
            keys[j] = k
            order[j] = o
        return
    from_keys, from_order = keys[a:b], order[a:b]
    to_keys, to_order = spare_keys[:n], spare_order[:n]
    # 11-bit digits on a long run (six passes over 64 bits rather than eight: a
    # third faster on 133,333 doubles); on a shorter one, adding up 2,048 counts a
    # digit would cost more than the passes saved
    bits = 11 if n >= LONG_RUN else 8
    mask = (1 << bits) - 1
    counts = np.empty(1 << bits, np.int64)
    moved = False
    for shift in range(0, width, bits):
        counts[:] = 0
        for i in range(n):
            counts[(from_keys[i] >> shift) & mask] += 1
        if counts.max() == n:
            continue
        at = 0
        for d in range(1 << bits):
            c = counts[d]
            counts[d] = at
            at += c
        for i in range(n):
            d = (from_keys[i] >> shift) & mask
            to_keys[counts[d]] = from_keys[i]
            to_order[counts[d]] = from_order[i]
            counts[d] += 1
        from_keys, to_keys = to_keys, from_keys
        from_order, to_order = to_order, from_order
        moved = not moved
    if moved:
        keys[a:b] = from_keys
        order[a:b] = from_order


@njit(cache=True, inline="always")
def float_key(x):
    """A 64-bit key whose unsigned order is numpy's order of float64 values: -0.0
    equal to 0.0, and every NaN equal and last."""
    if np.isnan(x):
        return LAST
    if x == 0.0:
        x = 0.0
    b = np.float64(x).view(np.int64)
    return ~b if b < 0 else b ^ SIGN


@njit(cache=True)
def value_order(X, t, rows):
    """The positions of ``rows`` in the order of their values in row ``t`` of
    ``X``: ``np.argsort(X[t][rows], kind='stable')``, NaN last, equal values in
    the order of ``rows``."""
    n = len(rows)
    keys = np.empty(n, np.int64)
    for i in range(n):
        keys[i] = float_key(X[t, rows[i]])
    order = np.arange(n)
    sort_run(keys, order, np.int64(0), n, np.int64(64), np.empty(n, np.int64),
             np.empty(n, np.int64))  # (np.int64: see jit)
    return order
