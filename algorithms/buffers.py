"""Growable buffers for numba kernels that build arrays of unknown final size."""

import numpy as np

from .jit import njit


@njit(cache=True)
def grow(a, need):
    """``a``, or a copy at least twice as large when ``need`` exceeds it."""
    if need <= a.shape[0]:
        return a
    out = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    out[: a.shape[0]] = a
    return out
