"""The eigenvalues and eigenvectors of a symmetric matrix, step for step as the
reference's matrix package computes them (Householder reduction to tridiagonal
form, then the QL method), since results that order values by a principal
component depend on its last digits and on the signs of its vectors."""

import math

import numpy as np

from .jit import njit


@njit(cache=True)
def _hypot(a, b):
    if abs(a) > abs(b):
        r = b / a
        return abs(a) * math.sqrt(1 + r * r)
    if b != 0:
        r = a / b
        return abs(b) * math.sqrt(1 + r * r)
    return 0.0


def symmetric_eigen(a):
    """Eigenvalues (ascending) and eigenvectors (columns) of the symmetric matrix
    ``a`` by Householder tridiagonalisation and the QL method, step for step as the
    reference's matrix package computes them (whose digits the nominal ordering
    depends on)."""
    v = np.array(a, np.float64)
    d = np.zeros(len(v))
    _eigen(v, d, np.zeros(len(v)))
    return d, v


@njit(cache=True)
def _eigen(v, d, e):
    """``symmetric_eigen`` in place: ``v`` the matrix, then its vectors; ``d`` the
    values."""
    n = len(d)
    # Householder reduction to tridiagonal form
    d[:] = v[n - 1, :]
    for i in range(n - 1, 0, -1):
        scale = 0.0
        h = 0.0
        for k in range(i):
            scale = scale + abs(d[k])
        if scale == 0.0:
            e[i] = d[i - 1]
            for j in range(i):
                d[j] = v[i - 1, j]
                v[i, j] = 0.0
                v[j, i] = 0.0
        else:
            for k in range(i):
                d[k] /= scale
                h += d[k] * d[k]
            f = d[i - 1]
            g = math.sqrt(h)
            if f > 0:
                g = -g
            e[i] = scale * g
            h = h - f * g
            d[i - 1] = f - g
            for j in range(i):
                e[j] = 0.0
            for j in range(i):
                f = d[j]
                v[j, i] = f
                g = e[j] + v[j, j] * f
                for k in range(j + 1, i):
                    g += v[k, j] * d[k]
                    e[k] += v[k, j] * f
                e[j] = g
            f = 0.0
            for j in range(i):
                e[j] /= h
                f += e[j] * d[j]
            hh = f / (h + h)
            for j in range(i):
                e[j] -= hh * d[j]
            for j in range(i):
                f = d[j]
                g = e[j]
                for k in range(j, i):
                    v[k, j] -= (f * e[k] + g * d[k])
                d[j] = v[i - 1, j]
                v[i, j] = 0.0
        d[i] = h
    for i in range(n - 1):
        v[n - 1, i] = v[i, i]
        v[i, i] = 1.0
        h = d[i + 1]
        if h != 0.0:
            for k in range(i + 1):
                d[k] = v[k, i + 1] / h
            for j in range(i + 1):
                g = 0.0
                for k in range(i + 1):
                    g += v[k, i + 1] * v[k, j]
                for k in range(i + 1):
                    v[k, j] -= g * d[k]
        for k in range(i + 1):
            v[k, i + 1] = 0.0
    for j in range(n):
        d[j] = v[n - 1, j]
        v[n - 1, j] = 0.0
    v[n - 1, n - 1] = 1.0
    e[0] = 0.0
    # QL iterations on the tridiagonal form
    for i in range(1, n):
        e[i - 1] = e[i]
    e[n - 1] = 0.0
    f = 0.0
    tst1 = 0.0
    eps = 2.0 ** -52
    for low in range(n):
        tst1 = max(tst1, abs(d[low]) + abs(e[low]))
        m = low
        while m < n:
            if abs(e[m]) <= eps * tst1:
                break
            m += 1
        if m > low:
            while True:
                g = d[low]
                p = (d[low + 1] - g) / (2.0 * e[low])
                r = _hypot(p, 1.0)
                if p < 0:
                    r = -r
                d[low] = e[low] / (p + r)
                d[low + 1] = e[low] * (p + r)
                dl1 = d[low + 1]
                h = g - d[low]
                for i in range(low + 2, n):
                    d[i] -= h
                f = f + h
                p = d[m]
                c = c2 = c3 = 1.0
                el1 = e[low + 1]
                s = s2 = 0.0
                for i in range(m - 1, low - 1, -1):
                    c3 = c2
                    c2 = c
                    s2 = s
                    g = c * e[i]
                    h = c * p
                    r = _hypot(p, e[i])
                    e[i + 1] = s * r
                    s = e[i] / r
                    c = p / r
                    p = c * d[i] - s * g
                    d[i + 1] = h + s * (c * g + s * d[i])
                    for k in range(n):
                        h = v[k, i + 1]
                        v[k, i + 1] = s * v[k, i] + c * h
                        v[k, i] = c * v[k, i] - s * h
                p = -s * s2 * c3 * el1 * e[low] / dl1
                e[low] = s * p
                d[low] = c * p
                if not abs(e[low]) > eps * tst1:
                    break
        d[low] = d[low] + f
        e[low] = 0.0
    for i in range(n - 1):  # sort ascending
        k = i
        p = d[i]
        for j in range(i + 1, n):
            if d[j] < p:
                k = j
                p = d[j]
        if k != i:
            d[k] = d[i]
            d[i] = p
            for j in range(n):
                v[j, i], v[j, k] = v[j, k], v[j, i]
