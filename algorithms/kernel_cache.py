"""Where numba keeps the compiled kernels, and when it may reuse them.

numba stamps a cached kernel with the content of its own source file only. A kernel
that calls one from another file (``javautil.sorted_by``, ``reptree._sum``) is then
loaded from the cache after that other file changed, with the old callee compiled
in or linked against it: wrong results or a crash (a segfault was seen after an
edit). Here every kernel of this package is stamped with the content of all of the
package's source files, so that any change compiles them all again. The cache stays
where numba keeps it (``NUMBA_CACHE_DIR`` when set, else ``__pycache__`` beside the
source, else the user's cache directory).
"""

import hashlib
from pathlib import Path

from numba.core import caching

ROOT = Path(__file__).resolve().parent


def _package_stamp():
    digest = hashlib.sha256()
    for path in sorted(ROOT.rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.digest()


STAMP = _package_stamp()


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


class InTreeLocator(_PackageStamp, caching.InTreeCacheLocator):
    """Beside the source, stamped with the whole package."""


class UserProvidedLocator(_PackageStamp, caching.UserProvidedCacheLocator):
    """In ``NUMBA_CACHE_DIR``, when it is set, stamped likewise."""


class UserWideLocator(_PackageStamp, caching.UserWideCacheLocator):
    """In the user's cache directory (a read-only install), stamped likewise."""


def install():
    """Put the three locators first, in numba's order, once; numba asks them about
    every cached kernel, and they answer only for this package's."""
    classes = caching.CacheImpl._locator_classes
    for cls in (UserWideLocator, InTreeLocator, UserProvidedLocator):
        if cls not in classes:
            classes.insert(0, cls)
