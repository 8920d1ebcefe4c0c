"""Supervised discretisation by the minimum description length principle (Fayyad
& Irani 1993), as the reference's supervised Discretize filter does it with its
default options: a numeric attribute becomes a nominal one whose values are the
intervals between the accepted cut points.

Per attribute the rows with a value are sorted by it; a candidate cut lies midway
between two neighbouring distinct values. The cut of least class entropy (the
first of equal ones) is kept if its information gain passes the MDL test, and the
two halves are split again in the same way. Counts are updated row by row in
sorted order, as the reference updates them, so weighted sums come out the same.
"""

import math

import numpy as np

from .javafmt import double_to_string
from .jit import frozen, njit

LOG2 = math.log(2.0)


@njit(cache=True)
def _xlogx(x):
    return 0.0 if x < 1e-6 else x * math.log(x)


@njit(cache=True)
def _entropy(counts):
    """The entropy (bits) of a vector of weights."""
    total = 0.0
    s = 0.0
    for c in counts:
        s -= _xlogx(c)
        total += c
    if abs(total) < 1e-6:
        return 0.0
    return (s + _xlogx(total)) / (total * LOG2)


@njit(cache=True)
def _conditional_entropy(left, right):
    """The class entropy (bits) given the side of the cut."""
    s = 0.0
    total = 0.0
    for row in (left, right):
        rs = 0.0
        for c in row:
            s += _xlogx(c)
            rs += c
        s -= _xlogx(rs)
        total += rs
    if abs(total) < 1e-6:
        return 0.0
    return -s / (total * LOG2)


@njit(cache=True)
def _accept(prior, left, right, n_cuts):
    """The Fayyad & Irani MDL test of the best cut of a subset."""
    total = prior.sum()
    prior_e = _entropy(prior)
    gain = prior_e - _conditional_entropy(left, right)
    k = 0
    k1 = 0
    k2 = 0
    for c in range(len(prior)):
        k += prior[c] > 0
        k1 += left[c] > 0
        k2 += right[c] > 0
    delta = math.log(3.0 ** k - 2.0) / LOG2 - (
        k * prior_e - k1 * _entropy(left) - k2 * _entropy(right))
    return gain > (math.log(n_cuts) / LOG2 + delta) / total


def cut_points(x, y, w, n_classes, exact):
    """The accepted cut points (increasing) of the numeric values ``x`` (NaN =
    missing) for the class codes ``y``. The rows are sorted by value once; the order
    of equal values only orders the sums of their weights, so a stable sort is
    needed only where weights are not whole (``exact``: they are whole,
    ``dataset.whole_weights``)."""
    order = np.argsort(x, kind="quicksort" if exact else "stable")  # NaN last
    return _cut_points(order[:len(x) - int(np.isnan(x).sum())], frozen(x), y, w, n_classes,
                       np.empty(0, np.int64))


def counted_cut_points(x, y, w, count, n_classes):
    """``cut_points`` of rows counted rather than held: ``count[i]`` rows of value
    ``x[i]`` and class ``y[i]`` weigh ``w[i]`` together (no value missing), as a
    distributed pass adds them up. The same cuts as of the rows themselves when
    their weights are whole: every sum is then of whole numbers, exact in any
    order, and the MDL test counts rows."""
    order = np.argsort(x, kind="stable")
    first = np.concatenate(([0], np.cumsum(np.asarray(count, np.int64)[order])))
    return _cut_points(order, frozen(x), y, w, n_classes, first)


@njit(cache=True)
def _cut_points(order, x, y, w, n_classes, first_row):
    """``cut_points`` on the entries ``order``, the known values in increasing order;
    ``first_row[i]``: how many rows come before sorted entry ``i`` (empty: one row
    an entry)."""
    xs = x[order]
    ys = y[order]
    ws = w[order]
    m = len(xs)
    counted = len(first_row) > 0
    cuts = np.empty(m, np.float64)
    n_found = 0
    # a stack of subsets [first, last_plus_one) still to split
    s_first = np.empty(m + 1, np.int64)
    s_last = np.empty(m + 1, np.int64)
    s_first[0] = 0
    s_last[0] = m
    top = 1
    left = np.zeros(n_classes)
    right = np.zeros(n_classes)
    best_left = np.zeros(n_classes)
    best_right = np.zeros(n_classes)
    while top > 0:
        top -= 1
        first = s_first[top]
        last = s_last[top]
        rows = first_row[last] - first_row[first] if counted else last - first
        if rows < 2:
            continue
        left[:] = 0.0
        right[:] = 0.0
        for i in range(first, last):
            right[ys[i]] += ws[i]
        prior = right.copy()
        prior_e = _entropy(prior)
        best_e = prior_e
        best_i = -1
        best_cut = 0.0
        for i in range(first, last - 1):
            left[ys[i]] += ws[i]
            right[ys[i]] -= ws[i]
            if xs[i] < xs[i + 1]:
                e = _conditional_entropy(left, right)
                if e < best_e:
                    best_e = e
                    best_i = i
                    best_cut = (xs[i] + xs[i + 1]) / 2.0
                    best_left[:] = left
                    best_right[:] = right
        if best_i < 0 or prior_e - best_e <= 0:
            continue
        if not _accept(prior, best_left, best_right, rows - 1):
            continue
        cuts[n_found] = best_cut
        n_found += 1
        s_first[top] = best_i + 1
        s_last[top] = last
        s_first[top + 1] = first
        s_last[top + 1] = best_i + 1
        top += 2
    return np.sort(cuts[:n_found])


def bins(x, cuts):
    """The interval index of each value (a value on a cut point belongs to the
    interval it closes); NaN stays NaN."""
    out = np.searchsorted(cuts, x, side="left").astype(np.float64)
    out[np.isnan(x)] = np.nan
    return out


def labels(cuts):
    """The interval names, as the reference names them: ``'All'`` without a cut,
    else ``(-inf-c1]``, ``(c1-c2]``, ..., ``(ck-inf)``."""
    if len(cuts) == 0:
        return ("All",)
    text = [double_to_string(float(c), 6) for c in cuts]
    return (f"(-inf-{text[0]}]", *(f"({a}-{b}]" for a, b in zip(text, text[1:])),
            f"({text[-1]}-inf)")
