"""Synthetic market baskets in the style of the IBM Quest generator (Agrawal &
Srikant, 1994): transactions are built from weighted, partly corrupted
"potentially frequent" patterns, so they hold real co-occurrence structure."""

import numpy as np

from .jit import njit


@njit(cache=True)
def _generate(n_tx, n_items, avg_len, n_patterns, avg_pattern, seed):
    np.random.seed(seed)
    # patterns: sizes ~ Poisson, half their items shared with the previous one
    p_off = np.zeros(n_patterns + 1, np.int64)
    sizes = np.empty(n_patterns, np.int64)
    for p in range(n_patterns):
        sizes[p] = max(1, min(n_items, np.random.poisson(avg_pattern)))
        p_off[p + 1] = p_off[p] + sizes[p]
    p_items = np.empty(p_off[-1], np.int32)
    for p in range(n_patterns):
        lo = p_off[p]
        k = 0
        if p > 0:
            prev_lo = p_off[p - 1]
            share = min(sizes[p], sizes[p - 1], int(np.random.exponential(0.5) * sizes[p]))
            for q in range(share):
                p_items[lo + k] = p_items[prev_lo + q]
                k += 1
        while k < sizes[p]:
            v = np.random.randint(n_items)
            dup = False
            for q in range(k):
                if p_items[lo + q] == v:
                    dup = True
            if not dup:
                p_items[lo + k] = v
                k += 1
    weight = np.cumsum(np.random.exponential(1.0, n_patterns))
    weight /= weight[-1]
    corrupt = np.minimum(1.0, np.maximum(0.0, 0.5 + 0.1 * np.random.standard_normal(
        n_patterns)))
    offsets = np.zeros(n_tx + 1, np.int64)
    out = np.empty(max(1, int(n_tx * (avg_len + 4))), np.int32)
    n = 0
    for t in range(n_tx):
        target = max(1, np.random.poisson(avg_len))
        start = n
        while n - start < target:
            p = np.searchsorted(weight, np.random.random())
            for q in range(p_off[p], p_off[p + 1]):
                if np.random.random() < corrupt[p] * 0.5:
                    continue
                v = p_items[q]
                dup = False
                for j in range(start, n):
                    if out[j] == v:
                        dup = True
                        break
                if not dup:
                    if n == out.shape[0]:
                        out = np.concatenate((out, np.empty(out.shape[0], np.int32)))
                    out[n] = v
                    n += 1
        offsets[t + 1] = n
    return offsets, out[:n]


def quest_baskets(n_transactions, n_items=1000, avg_len=9, n_patterns=2000,
                  avg_pattern=4, seed=1):
    """CSR ``(offsets, items)`` of ``n_transactions`` baskets over ``n_items`` items."""
    if n_transactions < 0 or n_items < 1 or avg_len <= 0 or n_patterns < 1:
        raise ValueError("quest_baskets: sizes must be positive")
    return _generate(n_transactions, n_items, float(avg_len), n_patterns,
                     float(avg_pattern), seed)
