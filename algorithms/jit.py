"""numba's decorators for the kernels, with their cache keyed on every source file
of the package (``kernel_cache``) rather than each kernel's own file."""

from numba import njit, prange

from . import kernel_cache

kernel_cache.install()

__all__ = ["njit", "prange"]
