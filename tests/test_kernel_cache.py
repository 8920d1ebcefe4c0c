"""Compiled kernels are kept in the user's cache directory, shared by every copy of
the same source, and found again by a copy somewhere else."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# compiles (or loads) one small kernel, and says which it did and where it looked
PROBE = """
import json
import numpy as np
from duckmine.algorithms import kernel_cache
from duckmine.algorithms.halt import halted
halted(np.zeros(1, np.uint8))
print(json.dumps({"hits": sum(halted.stats.cache_hits.values()),
                  "misses": sum(halted.stats.cache_misses.values()),
                  "dir": str(kernel_cache.kernel_dir())}))
"""


def _copy(to):
    """The package's source at ``to``/duckmine, as a second clone would hold it."""
    shutil.copytree(ROOT, to / "duckmine", ignore=shutil.ignore_patterns(
        ".venv", ".git", "__pycache__", "tests", "benchmarks", "*.egg-info", "*.duckdb"))


def _probe(where, cache):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(DUCKMINE_CACHE_DIR=str(cache), PYTHONPATH=str(where))
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=where,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_copy_of_the_source_reuses_the_first_ones_kernels(tmp_path):
    cache = tmp_path / "cache"
    for name in ("a", "b"):
        _copy(tmp_path / name)
    first = _probe(tmp_path / "a", cache)
    assert first["misses"] == 1 and first["hits"] == 0
    assert first["dir"].startswith(str(cache / "kernels"))
    assert any(Path(first["dir"]).rglob("*.nbi"))
    second = _probe(tmp_path / "b", cache)
    assert second == {**first, "misses": 0, "hits": 1}
    # no kernel was written beside either copy's source
    assert not list((tmp_path / "a").rglob("*.nbi"))
    assert not list((tmp_path / "b").rglob("*.nbi"))


def test_an_edited_source_gets_its_own_directory(tmp_path):
    cache = tmp_path / "cache"
    _copy(tmp_path / "a")
    first = _probe(tmp_path / "a", cache)
    with open(tmp_path / "a" / "duckmine" / "algorithms" / "halt.py", "a") as f:
        f.write("\n# an edit\n")
    again = _probe(tmp_path / "a", cache)
    assert again["dir"] != first["dir"] and again["misses"] == 1


def test_two_signatures_saved_from_stale_indexes_keep_their_own_code(tmp_path):
    """Two processes that compile two signatures of one kernel at once both read the
    index before either writes it. numba would give both the data file ``.1``, and
    the index that survives could name the other signature's code (a segfault was
    seen). Here each signature's code goes to a file of its own, and no index entry
    ever names another signature's data."""
    from numba.core import caching

    from duckmine.algorithms import jit, kernel_cache  # jit installs the cache's rules

    assert jit.njit

    def cache_file():
        return caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311",
                                          kernel_cache.STAMP)

    stale = {}  # what both processes read before either wrote
    saved = {}
    for key, data in ((("int64",), b"code for int64"), (("float64",), b"code for float64")):
        f = cache_file()
        f._load_index = lambda: dict(stale)
        f.save(key, data)
        saved[key] = cache_file()._load_index()[key]
    assert len(set(saved.values())) == 2
    index = cache_file()._load_index()
    assert index  # the last writer's entry, at least
    for key in index:
        assert cache_file().load(key) == {("int64",): b"code for int64",
                                          ("float64",): b"code for float64"}[key]
    # and without stale reads, the lock keeps every entry
    for key, data in ((("a",), b"A"), (("b",), b"B")):
        cache_file().save(key, data)
    index = cache_file()._load_index()
    assert cache_file().load(("a",)) == b"A" and cache_file().load(("b",)) == b"B"
    assert ("a",) in index and ("b",) in index
