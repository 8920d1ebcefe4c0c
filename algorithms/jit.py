"""numba's decorators for the kernels, with their cache keyed on every source file
of the package (``kernel_cache``) rather than each kernel's own file.

Every kernel releases the GIL (``nogil``): a fit runs on a thread of its own, and
the thread that waits for it must be able to run, to notice an interrupt and stop
the fit (``algorithms.stop``). Kernels touch no Python objects, so this is safe.
A stopped fit compiles no further kernel.

A kernel that passes a constant number to another kernel writes it as
``np.int64(0)``: numba compiles the callee once more for each constant it is
called with from a kernel (as a ``Literal[int]``), and from Python with a variable,
and a large callee takes seconds to compile each time. Likewise an array reaches a
kernel in one layout and one mutability: numba types an array with a dimension of
one as C-ordered even where its callers' arrays are F-ordered (k-means and EM take
their rows as the C-ordered matrix of columns for this reason), a prange index is
unsigned (``np.int64(a)`` where it is passed on), and an array that is read-only
from some callers is made read-only for all (``frozen``).
"""

import contextlib
import functools
import threading
import types

import numba
import numpy as np
from numba import prange
from numba.core.compiler_lock import global_compiler_lock
from numba.core.cpu import ParallelOptions
from numba.typed import List

from . import kernel_cache, threading_layer

kernel_cache.install()


def njit(*args, python=True, **options):
    """``numba.njit`` with ``nogil=True`` unless a kernel says otherwise. A parallel
    kernel is compiled from a copy of its function named ``<name>_parallel``: numba
    keys a kernel's cache by the function's name and code alone, not by how it is
    compiled, so the serial and parallel kernels of one function (``select_split``
    and ``select_split_wide``) would load each other's code. ``python=False``: never
    run as Python (``interpreting``), for a kernel whose work is large even on
    small data (EM's and k-means' iterations) or that Python cannot run (an
    intrinsic). Where only numba's workqueue layer would load, no kernel is parallel
    (``threading_layer``)."""
    options.setdefault("nogil", True)
    if args and callable(args[0]):
        return njit(python=python, **options)(args[0])
    if not threading_layer.PARALLEL:  # the workqueue would abort on concurrent launches
        options["parallel"] = False

    def make(fn):
        if options.get("parallel"):
            fn = _renamed(fn, fn.__qualname__ + "_parallel")
        kernel = numba.njit(*args, **options)(fn)
        return _stoppable(kernel_cache.one_compile_at_a_time(kernel), python)
    return make


def _renamed(fn, qualname):
    """A copy of the function ``fn`` under another qualified name."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__qualname__ = qualname
    copy.__module__, copy.__doc__ = fn.__module__, fn.__doc__
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def _stoppable(dispatcher, python):
    """A kernel that, when a stopped job calls it with types it has not been
    compiled for, raises ``Stopped`` instead of compiling: a compilation cannot be
    stopped, and on a first run one may take many seconds. While ``interpreting``,
    such a call loads the kernel from the cache, or else runs its Python."""
    compile_for_args = dispatcher._compile_for_args

    def compile_unless_stopped(*args, **kws):  # what numba then calls with ``args``
        kernel_cache.checkpoint()
        if python and _interpreting.on and not _loaded(dispatcher, args):
            return _as_python(dispatcher)
        return compile_for_args(*args, **kws)

    dispatcher._compile_for_args = compile_unless_stopped
    dispatcher.python = python
    return dispatcher


class _Interpreting:
    on = False    # kernels not in the cache run as Python
    cache = True  # ... and those in it are loaded (False: every kernel runs as Python)


_interpreting = _Interpreting()
_plain = {}     # kernel: its function as Python
_runs = {}      # kernel: that function as a call from Python (``_as_python``)
_missing = set()  # (kernel, argument types) not in the cache
_lock = threading.Lock()


@contextlib.contextmanager
def interpreting(cache=True):
    """While the block runs, in this process, a kernel called from Python with
    types that are neither compiled nor in the cache runs as Python, and so do the
    kernels it calls, rather than being compiled (or every kernel does,
    ``cache=False``), except those made with ``python=False``.

    For ``duckmine demo``, whose sample tables are small: their kernels take
    minutes to compile on a first run, and run in moments as Python. The results
    are the same (``tests/test_demo_python.py``); on large data Python is a hundred
    times slower, so nothing else runs kernels this way."""
    before = _interpreting.on, _interpreting.cache
    _interpreting.on, _interpreting.cache = True, cache
    try:
        yield
    finally:
        _interpreting.on, _interpreting.cache = before
        _missing.clear()


def _loaded(dispatcher, args):
    """Whether the kernel is compiled for ``args``' types, or was in the cache and
    is now loaded."""
    if not _interpreting.cache:
        return False
    key = (dispatcher, tuple(dispatcher.typeof_pyval(a) for a in args))
    if key[1] in dispatcher.overloads:
        return True
    if key in _missing:
        return False
    with global_compiler_lock:
        found = dispatcher._cache.load_overload(key[1], dispatcher.targetctx)
        if found is None:
            _missing.add(key)
        else:  # as numba's own compile keeps a kernel it loaded: a kernel compiled
            # later that calls this one needs its code in the target context too
            dispatcher.targetctx.insert_user_function(found.entry_point, found.fndesc,
                                                      [found.library])
            dispatcher.add_overload(found)
    return found is not None


def _as_python(dispatcher):
    """The kernel run as Python, with numpy's warnings off (a kernel's integers
    wrap, and its floats reach inf and nan, without a word when compiled); made
    once per kernel."""
    with _lock:
        run = _runs.get(dispatcher)
        if run is None:
            plain = _python(dispatcher)

            def run(*args, **kws):
                with np.errstate(all="ignore"):
                    return plain(*args, **kws)
            _runs[dispatcher] = run
    return run


def _python(dispatcher):
    """The kernel's function with the kernels it calls as Python too (those that
    may be), and numba's typed list as Python's list."""
    plain = _plain.get(dispatcher)
    if plain is None:
        fn = dispatcher.py_func
        names = {}
        plain = types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__,
                                   fn.__closure__)
        plain.__kwdefaults__ = fn.__kwdefaults__
        _plain[dispatcher] = plain
        for name, value in fn.__globals__.items():
            if value is List:
                value = list
            elif getattr(value, "python", False) is True and hasattr(value, "py_func"):
                value = _python(value)
            names[name] = value
    return plain


COLUMN_PASS_CELLS = 1 << 18  # a table's cells from which its columns' passes pay for threads


def by_columns(fn):
    """``fn``, a kernel called from Python whose ``prange`` loop runs over the rows of
    its first argument (a table's columns, one a row), compiled twice: a column to
    a thread on tables of ``COLUMN_PASS_CELLS`` cells or more, and one column after
    another below, where starting the threads costs more than it saves (35 us a
    call on a table of 10 x 100). The two kernels are ``.serial`` and ``.wide``;
    being a Python function, it cannot be called from a kernel (see
    ``PRANGE_ONLY``)."""
    serial = njit(cache=True)(fn)
    wide = njit(cache=True, parallel=PRANGE_ONLY)(fn) if threading_layer.PARALLEL else serial

    def run(table, *args):
        return (wide if table.size >= COLUMN_PASS_CELLS and table.shape[0] > 1 else serial)(
            table, *args)

    functools.update_wrapper(run, fn)
    run.serial, run.wide = serial, wide
    return run


def threads(wide):
    """The ``threads`` argument of a kernel that may call parallel kernels and that
    a first demo compiles (``python=False``: EM's and k-means' iterations): None
    unless ``wide`` (then numba compiles it without them), else True. A kernel that
    the demo runs as Python (REPTree's growth, RIPPER's, Ridor's rule sets) takes a
    plain bool instead: one signature holds both paths, compiled once rather than
    twice."""
    return True if wide else None


__all__ = ["PRANGE_ONLY", "COLUMN_PASS_CELLS", "by_columns", "frozen", "interpreting", "njit",
           "prange", "threads"]

# ``parallel=PRANGE_ONLY``: threads for the kernel's prange loops only, not for every
# array expression (a small ``np.zeros`` made parallel costs more than it saves).
# A kernel compiled with it may be cached only if no other kernel calls it: numba
# crashes a cached kernel that links parallel code loaded from the cache (a caller
# compiled while its parallel callee came from the cache segfaults when it is
# itself loaded from the cache, numba issue 8578). So a parallel kernel that other
# kernels call is made with ``cache=False``; it is compiled into each caller, and
# kept in the cache as part of it (``tests/test_kernel_cache.py`` checks the rule).
PRANGE_ONLY = ParallelOptions({"comprehension": False, "reduction": False,
                               "inplace_binop": False, "setitem": False, "numpy": False,
                               "stencil": False, "fusion": False, "prange": True})


def frozen(a):
    """A read-only, C-ordered view (a copy only when ``a`` is not C-ordered): numba
    compiles a kernel once per array type, and an array from Arrow is read-only
    while a computed one is not, so a kernel that reads an array of either kind
    would be compiled twice (tens of seconds on a first run)."""
    view = np.ascontiguousarray(a).view()
    view.flags.writeable = False
    return view

