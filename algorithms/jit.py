"""numba's decorators for the kernels, with their cache keyed on every source file
of the package (``kernel_cache``) rather than each kernel's own file.

Every kernel releases the GIL (``nogil``): a fit runs on a thread of its own, and
the thread that waits for it must be able to run, to notice an interrupt and stop
the fit (``algorithms.stop``). Kernels touch no Python objects, so this is safe.
A stopped fit compiles no further kernel.
"""

import numba
import numpy as np
from numba import prange

from . import kernel_cache

kernel_cache.install()


def njit(*args, **options):
    """``numba.njit`` with ``nogil=True`` unless a kernel says otherwise."""
    options.setdefault("nogil", True)
    if args and callable(args[0]):
        return _stoppable(numba.njit(**options)(args[0]))
    return lambda fn: _stoppable(numba.njit(*args, **options)(fn))


def _stoppable(dispatcher):
    """A kernel that, when a stopped job calls it with types it has not been
    compiled for, raises ``Stopped`` instead of compiling: a compilation cannot be
    stopped, and on a first run one may take many seconds."""
    compile_for_args = dispatcher._compile_for_args

    def compile_unless_stopped(*args, **kws):
        from .stop import checkpoint  # stop's own kernel is made with njit
        checkpoint()
        return compile_for_args(*args, **kws)

    dispatcher._compile_for_args = compile_unless_stopped
    return dispatcher


__all__ = ["frozen", "njit", "prange"]


def frozen(a):
    """A read-only, C-ordered view (a copy only when ``a`` is not C-ordered): numba
    compiles a kernel once per array type, and an array from Arrow is read-only
    while a computed one is not, so a kernel that reads an array of either kind
    would be compiled twice (tens of seconds on a first run)."""
    view = np.ascontiguousarray(a).view()
    view.flags.writeable = False
    return view

