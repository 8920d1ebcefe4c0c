"""The reference's ReplaceMissingValues, shared by every learner that fills in
missing values before it learns (M5', EM, k-means): fitted on the training rows,
a missing value becomes the attribute's weighted mean or its weighted mode, and
rows to score are filled with the same values."""

import numpy as np
from numba import njit


@njit(cache=True)
def fill_values(X, w, nominal, nvals):
    """ReplaceMissingValues fitted on ``X``: per attribute the weighted mean
    (0 when the non-missing weight is at most 1e-6) or the weighted mode (first
    of equal counts; NaN for a nominal attribute without values)."""
    n, p = X.shape
    sumw = 0.0
    for i in range(n):
        sumw += w[i]
    fill = np.empty(p)
    for j in range(p):
        if nominal[j]:
            nv = nvals[j]
            if nv == 0:
                fill[j] = np.nan
                continue
            counts = np.zeros(nv)
            counts[0] = sumw
            for i in range(n):
                x = X[i, j]
                if not np.isnan(x):
                    counts[int(x)] += w[i]
                counts[0] -= w[i]
            fill[j] = _first_max(counts)
        else:
            count = sumw
            total = 0.0
            for i in range(n):
                x = X[i, j]
                if np.isnan(x):
                    count -= w[i]
                else:
                    total += w[i] * x
            fill[j] = total / count if count > 1e-6 else 0.0
    return fill


@njit(cache=True)
def _first_max(a):
    """The index of the first largest value."""
    best = 0.0
    idx = 0
    for i in range(len(a)):
        if i == 0 or a[i] > best:
            best = a[i]
            idx = i
    return idx


def replace_missing(X, fill, nominal, nvals):
    """A copy of ``X`` with missing cells (and nominal codes that are not a valid
    value) replaced by ``fill``."""
    X = np.asarray(X, dtype=np.float64)
    bad = np.isnan(X)
    if nominal.any():
        codes = X[:, nominal]
        with np.errstate(invalid="ignore"):
            bad[:, nominal] |= (codes < 0) | (codes >= nvals[nominal]) | (codes != np.floor(codes))
    out = np.array(X, dtype=np.float64, order="C")
    if bad.any():
        out[bad] = np.broadcast_to(fill, X.shape)[bad]
    return out
