"""Whether numba's threads may be entered from several threads at once.

numba runs a parallel kernel's loop on the first threading layer it can load, in
``NUMBA_THREADING_LAYER_PRIORITY`` order (TBB, OpenMP, then its own workqueue). The
workqueue is its last resort where neither library is installed (a slim container
image has no libgomp), and it aborts the whole process when two threads launch
parallel code at once: DuckDB's threads fitting side by side, or one fit's own two
threads (CART's growers each scoring a large node). duckmine calls kernels from
many threads, so where only the workqueue would load, its kernels are compiled
without parallel loops (``jit.njit``), under a cache directory of their own
(``kernel_cache.kernel_dir``): slower on large data, never aborted.
"""

import importlib

import numba

SAFE = {"tbb": "tbbpool", "omp": "omppool"}  # the layers that threads may share


def _loads(layer):
    """Whether numba can load the layer ``layer`` (its library is installed)."""
    try:
        importlib.import_module(f"numba.np.ufunc.{SAFE[layer]}")
        if layer == "tbb":
            from numba.np.ufunc.parallel import _check_tbb_version_compatible

            _check_tbb_version_compatible()
    except (ImportError, OSError):
        return False
    return True


def threadsafe():
    """Whether the layer numba will use is one that threads may share."""
    asked = numba.config.THREADING_LAYER
    if asked in SAFE:
        return True  # (numba refuses to run parallel code where it does not load)
    if asked == "workqueue":
        return False
    order = {"safe": ["tbb"], "threadsafe": ["tbb", "omp"], "forksafe": ["tbb"]}.get(
        asked, numba.config.THREADING_LAYER_PRIORITY)
    for layer in order:
        if layer not in SAFE:
            return False  # numba would take the workqueue before any safe layer
        if _loads(layer):
            return True
    return False


PARALLEL = threadsafe()
