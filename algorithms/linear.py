"""Linear least squares as the reference's LinearRegression fits it at a model-tree
node: weighted standardised columns, a ridge of 1e-8 (multiplied by 10 while the
system is singular), colinear attributes dropped while a standardised coefficient
exceeds 1.5, then backward elimination by the Akaike criterion.

Every sum runs over the rows in the order given, left to right, and the solve is a
Doolittle LU with partial pivoting in the reference's operation order, so the
coefficients come out with the same bits as the reference's.
"""

import math

import numpy as np

from .jit import njit

RIDGE = 1e-8


@njit(cache=True, error_model="numpy")
def lu_solve(a, b, x):
    """Solve ``a x = b`` in place of ``x``; False when a pivot is exactly zero."""
    m = a.shape[0]
    lu = a.copy()
    piv = np.arange(m)
    col = np.empty(m)
    for j in range(m):
        for i in range(m):
            col[i] = lu[i, j]
        for i in range(m):
            s = 0.0
            for k in range(min(i, j)):
                s += lu[i, k] * col[k]
            col[i] -= s
            lu[i, j] = col[i]
        p = j
        for i in range(j + 1, m):
            if abs(col[i]) > abs(col[p]):
                p = i
        if p != j:
            for k in range(m):
                t = lu[p, k]
                lu[p, k] = lu[j, k]
                lu[j, k] = t
            t2 = piv[p]
            piv[p] = piv[j]
            piv[j] = t2
        if lu[j, j] != 0.0:
            for i in range(j + 1, m):
                lu[i, j] /= lu[j, j]
    for j in range(m):
        if lu[j, j] == 0.0:
            return False
    for i in range(m):
        x[i] = b[piv[i]]
    for k in range(m):
        for i in range(k + 1, m):
            x[i] -= x[k] * lu[i, k]
    for k in range(m - 1, -1, -1):
        x[k] /= lu[k, k]
        for i in range(k):
            x[i] -= x[k] * lu[i, k]
    return True


@njit(cache=True, error_model="numpy")
def _regress(sel, mean, sd, ymean, ss, sb, coef):
    """Coefficients (per column, 0 when not selected) and intercept of the fit on
    the selected columns; ``ss``/``sb`` are the normal equations of all columns."""
    k = 0
    for c in range(len(sel)):
        coef[c] = 0.0
        if sel[c]:
            k += 1
    intercept = ymean
    if k == 0:
        return intercept
    at = np.empty(k, np.int64)
    q = 0
    for c in range(len(sel)):
        if sel[c]:
            at[q] = c
            q += 1
    beta = np.empty(k)
    ridge = RIDGE
    while True:
        m = np.empty((k, k))
        rhs = np.empty(k)
        for i in range(k):
            rhs[i] = sb[at[i]]
            for j in range(k):
                m[i, j] = ss[at[i], at[j]]
            m[i, i] += ridge
        if lu_solve(m, rhs, beta):
            break
        ridge *= 10.0
    for i in range(k):
        coef[at[i]] = beta[i] / sd[at[i]]
    for i in range(k):
        intercept -= coef[at[i]] * mean[at[i]]
    return intercept


@njit(cache=True, error_model="numpy")
def _sse(x, cols, lo, y, sel, coef, intercept):
    """Unweighted sum of squared errors over the rows, in order."""
    total = 0.0
    for r in range(len(y)):
        p = 0.0
        for c in range(len(cols)):
            if sel[c]:
                p += coef[c] * x[cols[c], lo + r]
        p += intercept
        total += (p - y[r]) * (p - y[r])
    return total


@njit(cache=True, error_model="numpy")
def _weighted_moments(v, w):
    """(mean, standard deviation) of one column, as the reference weighs them."""
    s = 0.0
    s2 = 0.0
    sw = 0.0
    for r in range(len(v)):
        wv = w[r] * v[r]
        s += wv
        s2 += wv * v[r]
        sw += w[r]
    mean = s / sw if sw > 0 else 0.0
    var = 0.0
    if sw > 1:
        var = (s2 - s * s / sw) / (sw - 1)
        if var < 0:
            var = 0.0
    return mean, math.sqrt(var)


@njit(cache=True, error_model="numpy")
def fit(x, cols, lo, y, w, coef):
    """Fit ``y`` on the attributes ``cols`` of ``x`` (attribute-major: a row per
    attribute, whose columns from ``lo`` are the rows in the order the sums run)
    with weights ``w``. Writes the coefficient of each attribute, in the order of
    ``cols``, into ``coef`` (0 for a dropped one) and returns the intercept. The
    block is read where it lies, so the table itself can be one."""
    n, k = len(y), len(cols)
    mean = np.empty(k)
    sd = np.empty(k)
    for c in range(k):
        mean[c], sd[c] = _weighted_moments(x[cols[c], lo:lo + n], w)
    ymean, ysd = _weighted_moments(y, w)
    sel = np.empty(k, np.bool_)
    for c in range(k):
        sel[c] = sd[c] != 0.0
    # normal equations of every usable column, once: a subset's are a sub-block
    ss = np.zeros((k, k))
    sb = np.zeros(k)
    a = np.empty(k)
    for r in range(n):
        sw = math.sqrt(w[r])
        for c in range(k):
            a[c] = (x[cols[c], lo + r] - mean[c]) / sd[c] * sw if sel[c] else 0.0
        b = y[r] * sw
        for c1 in range(k):
            if sel[c1]:
                sb[c1] += a[c1] * b
                for c2 in range(c1, k):
                    if sel[c2]:
                        ss[c1, c2] += a[c1] * a[c2]
    for c1 in range(k):
        for c2 in range(c1 + 1, k):
            ss[c2, c1] = ss[c1, c2]
    intercept = _regress(sel, mean, sd, ymean, ss, sb, coef)
    while True:  # drop the most colinear attribute while one stands out
        top = 1.5
        drop = -1
        for c in range(k):
            if sel[c]:
                sc = abs(coef[c] * sd[c] / ysd)
                if sc > top:
                    top = sc
                    drop = c
        if drop < 0:
            break
        sel[drop] = False
        intercept = _regress(sel, mean, sd, ymean, ss, sb, coef)
    kk = 1
    for c in range(k):
        if sel[c]:
            kk += 1
    full = _sse(x, cols, lo, y, sel, coef, intercept)
    akaike = (n - kk) + 2.0 * kk
    cur_k = kk
    trial = np.empty(k)
    while True:  # backward elimination while the Akaike criterion improves
        improved = False
        cur_k -= 1
        low = 0.0
        drop = -1
        first = True
        for c in range(k):
            if sel[c]:
                sc = abs(coef[c] * sd[c] / ysd)
                if first or sc < low:
                    low = sc
                    drop = c
                first = False
        if drop >= 0:
            sel[drop] = False
            icpt = _regress(sel, mean, sd, ymean, ss, sb, trial)
            cur = _sse(x, cols, lo, y, sel, trial, icpt) / full * (n - kk) + 2.0 * cur_k
            if cur < akaike:
                improved = True
                akaike = cur
                intercept = icpt
                for c in range(k):
                    coef[c] = trial[c]
            else:
                sel[drop] = True
        if not improved:
            break
    return intercept
