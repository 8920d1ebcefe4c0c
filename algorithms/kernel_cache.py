"""Where numba keeps the compiled kernels, and when it may reuse them.

numba stamps a cached kernel with the content of its own source file only. A kernel
that calls one from another file (``javautil.sorted_by``, ``reptree._sum``) is then
loaded from the cache after that other file changed, with the old callee compiled
in or linked against it: wrong results or a crash (a segfault was seen after an
edit). Here every kernel of this package is stamped with the content of all of the
package's source files, so that any change compiles them all again.

The kernels live in ``NUMBA_CACHE_DIR`` when it is set, else in the user's cache
directory under the package stamp and numba's version
(``~/.cache/duckmine/kernels/numba-<version>/<stamp>/``, or ``$DUCKMINE_CACHE_DIR``
or ``$XDG_CACHE_HOME/duckmine``): every install of the same duckmine and numba, in
any clone or virtual environment, compiles each kernel once. Where that directory
cannot be written, they go beside the source, as numba keeps them. A stamp
directory unused for ``KEEP_DAYS`` is removed.

Processes share the directory, and numba's own saving is not safe for that: a
kernel's index maps each compiled signature to a data file numbered by the entries
the index held when it was read, so two processes compiling two signatures at once
both write file 1, and the index that survives can name the other signature's code
(seen: a segfault on the next run). So a kernel of this package names its data
file by a digest of its signature, and its index is read, extended and written
under a lock (``_save``).

Two processes that need one kernel at once (the test suite's workers, the demo and
the process that compiles ahead of it) would each compile it. A kernel's compile
therefore holds a lock of its own across processes (``one_compile_at_a_time``): the
second process waits, then loads what the first saved.
"""

import contextlib
import hashlib
import os
import pickle
import shutil
import sys
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: names by digest still keep signatures apart
    fcntl = None

import numba
from numba.core import caching, sigutils
from numba.core.compiler_lock import global_compiler_lock

from .threading_layer import PARALLEL

ROOT = Path(__file__).resolve().parent
KEEP_DAYS = 30


def _package_stamp():
    digest = hashlib.sha256()
    for path in sorted(ROOT.rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.digest()


STAMP = _package_stamp()


def cache_root():
    """The user's duckmine cache directory."""
    if os.environ.get("DUCKMINE_CACHE_DIR"):
        return Path(os.environ["DUCKMINE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "duckmine"


def kernel_dir():
    """Where this duckmine's kernels are kept for this numba and Python."""
    version = f"numba-{numba.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
    return cache_root() / "kernels" / version / (STAMP.hex()[:20] + ("" if PARALLEL
                                                                      else "-serial"))


def _kept():
    """Where the kernels are kept: ``NUMBA_CACHE_DIR`` when it is set, else
    ``kernel_dir``."""
    where = os.environ.get("NUMBA_CACHE_DIR")
    return Path(where) if where else kernel_dir()


def cached():
    """How many kernels are compiled and kept for this source."""
    try:
        return sum(1 for _ in _kept().rglob("*.nbi"))
    except OSError:
        return 0


def marked(name):
    """Whether the mark ``name`` is beside the kernels (``mark``)."""
    return (_kept() / name).exists()


def mark(name):
    """Leave the mark ``name`` beside the kernels: it goes when they go."""
    with contextlib.suppress(OSError):
        (_kept() / name).touch()


@contextlib.contextmanager
def holding(name):
    """Whether this process now holds the lock ``name`` beside the kernels, held
    while the block runs; False where another process holds it. Without locks, or
    where the directory cannot be written, True."""
    try:
        _kept().mkdir(parents=True, exist_ok=True)
        f = open(_kept() / name, "ab")
    except OSError:
        f = None
    if fcntl is None or f is None:
        yield True
        return
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _ours(py_file):
    try:
        return Path(py_file).resolve().is_relative_to(ROOT)
    except (OSError, ValueError):
        return False


class _PackageStamp:
    def get_source_stamp(self):
        return STAMP

    @classmethod
    def from_function(cls, py_func, py_file):
        if not _ours(py_file):
            return None
        return super().from_function(py_func, py_file)


class SharedLocator(_PackageStamp, caching._CacheLocator):
    """In the user's cache directory, by the package stamp: shared by every copy of
    the same source (``kernel_dir``)."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        here = Path(py_file).resolve().parent.relative_to(ROOT)
        self._cache_path = str(kernel_dir() / here)

    def get_cache_path(self):
        return self._cache_path

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        if not _ours(py_file):
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:  # not writable: the next locator's place
            return None
        return self


class InTreeLocator(_PackageStamp, caching.InTreeCacheLocator):
    """Beside the source, stamped with the whole package."""


class UserProvidedLocator(_PackageStamp, caching.UserProvidedCacheLocator):
    """In ``NUMBA_CACHE_DIR``, when it is set, stamped likewise."""


class UserWideLocator(_PackageStamp, caching.UserWideCacheLocator):
    """In the user's cache directory (a read-only install), stamped likewise."""


@contextlib.contextmanager
def _locked(path, wait=None, poll=None):
    """An exclusive lock on ``path`` (created) while the block runs, across
    processes. With ``wait`` (seconds) the lock is polled, and the block runs
    without it once that has passed (a process that never lets go), or when
    ``path`` cannot be made (a cache that cannot be written); ``poll`` is called
    at every try, and may raise to give up."""
    if fcntl is None:
        yield
        return
    try:
        f = open(path, "ab")
    except OSError:
        if wait is None:
            raise
        yield
        return
    with f:
        held = wait is None
        if held:
            fcntl.flock(f, fcntl.LOCK_EX)
        deadline = time.monotonic() + (wait or 0.0)
        while not held and time.monotonic() <= deadline:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
            except OSError:
                if poll is not None:
                    poll()
                time.sleep(0.05)
        try:
            yield
        finally:
            if held:
                fcntl.flock(f, fcntl.LOCK_UN)


COMPILE_WAIT = 600.0  # seconds; then compile anyway (a process stopped mid-compile)
_compiling = set()  # the compile locks this process holds (under numba's own lock)


def one_compile_at_a_time(dispatcher):
    """``dispatcher`` (a cached kernel of this package) compiled by one process at a
    time: a process that finds it compiling elsewhere waits, and then numba's own
    compile finds it in the cache. numba's in-process lock is taken first, so that
    a process's threads wait on it and never on each other's file locks; callers
    lock before callees, and kernels' calls form no cycle, so two processes never
    wait on each other (a kernel that calls itself does not lock again)."""
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if cache_file is None or cache_file._source_stamp != STAMP:
        return dispatcher
    path = cache_file._index_path + ".compiling"
    compile_sig = dispatcher.compile

    def compile(sig):
        if tuple(sigutils.normalize_signature(sig)[0]) in dispatcher.overloads:
            return compile_sig(sig)  # compiled or loaded here already
        with global_compiler_lock:
            if path in _compiling:
                return compile_sig(sig)
            with _locked(path, COMPILE_WAIT, checkpoint):
                _compiling.add(path)
                try:
                    return compile_sig(sig)
                finally:
                    _compiling.discard(path)

    dispatcher.compile = compile
    return dispatcher


def checkpoint():
    """``stop.checkpoint``, imported when first called (stop's own kernel is made
    with njit): a stopped job compiles no kernel (``jit``), and waits no longer for
    another process's compile, which may take a minute."""
    from . import stop

    stop.checkpoint()


def data_name(cache_file, key):
    """The data file of the signature ``key``: named by its digest, so that no two
    signatures ever share one."""
    digest = hashlib.sha256(pickle.dumps(key, protocol=4)).hexdigest()[:20]
    return cache_file._data_name_pattern.replace("{number:d}", digest)


_numba_save = caching.IndexDataCacheFile.save


def _save(self, key, data):
    """numba's ``IndexDataCacheFile.save`` for this package's kernels: the data file
    named by the key, the index extended under a lock. Other kernels as numba does."""
    if self._source_stamp != STAMP:
        return _numba_save(self, key, data)
    name = data_name(self, key)
    self._save_data(name, data)  # before the index names it
    with _locked(self._index_path + ".lock"):
        overloads = self._load_index()
        if overloads.get(key) != name:
            overloads[key] = name
            self._save_index(overloads)


def install():
    """Put the locators first, once: ``NUMBA_CACHE_DIR``, the shared directory,
    beside the source, numba's user directory. numba asks them about every cached
    kernel, and they answer only for this package's."""
    classes = caching.CacheImpl._locator_classes
    for cls in (UserWideLocator, InTreeLocator, SharedLocator, UserProvidedLocator):
        if cls not in classes:
            classes.insert(0, cls)
    caching.IndexDataCacheFile.save = _save
    _forget_old()


def _forget_old():
    """Mark this stamp's directory used, and remove those unused for KEEP_DAYS (an
    older duckmine's kernels). Never an error: a cache is only a cache."""
    here = kernel_dir()
    try:
        if here.exists():
            os.utime(here)
        for version in here.parent.parent.iterdir():
            for stamp in version.iterdir():
                if stamp != here and time.time() - stamp.stat().st_mtime > KEEP_DAYS * 86400:
                    shutil.rmtree(stamp, ignore_errors=True)
    except OSError:
        pass
