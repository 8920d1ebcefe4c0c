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
# started in two processes that wait at a gate to call one kernel at one moment: a
# kernel that takes seconds to compile, so that both would compile it if let
TOGETHER = """
import json, os, sys, time
from pathlib import Path
import numpy as np
from duckmine.algorithms.rules.presorted import narrowed
gate = Path(sys.argv[1])
(gate / f"ready-{os.getpid()}").touch()
while not (gate / "go").exists():
    time.sleep(0.001)
rows = np.arange(4, dtype=np.int32)
narrowed(rows, np.array([0, 4]), np.zeros(4, np.int32), np.ones(4), rows, np.arange(2),
         np.zeros(4, np.bool_))
print(json.dumps({"hits": sum(narrowed.stats.cache_hits.values()),
                  "misses": sum(narrowed.stats.cache_misses.values())}))
"""

# a kernel loaded from the cache while interpreting (the demo), then a kernel that
# calls it compiled in the same process
CALLED_THEN_CALLER = """
import sys
import numpy as np
from duckmine.algorithms import jit
from duckmine.algorithms.c45 import grow
if sys.argv[1] == "callee":
    grow.branch(0.25, 0, 0.5, 0)
else:
    with jit.interpreting():
        assert grow.branch(0.25, 0, 0.5, 0) == 0
    assert grow.branch.signatures  # loaded from the cache, not run as Python
    col = np.array([0.25, 0.75, np.nan])
    print(grow.subsets(col, np.arange(3), 0, 0.5, 0).tolist())
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


def test_two_processes_that_need_one_kernel_at_once_compile_it_once(tmp_path):
    """The test suite's two workers, or the demo and the process that compiles
    ahead of it, often need the same kernel at the same moment. One compiles it;
    the other waits for it, then loads it from the cache."""
    import time

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(DUCKMINE_CACHE_DIR=str(tmp_path / "cache"))
    gate = tmp_path / "gate"
    gate.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", TOGETHER, str(gate)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    deadline = time.monotonic() + 120
    while len(list(gate.glob("ready-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    (gate / "go").touch()
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted((o["misses"], o["hits"]) for o in outs) == [(0, 1), (1, 0)]


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


def _kernels():
    """Every kernel of the package: {(module, name): (cached, parallel, calls)}, where
    calls are (module or None, name) of the names the kernel's body calls, from
    ``@njit(...)`` functions and ``name = njit(...)(function)``."""
    import ast

    def options(call):
        kw = {k.arg: k.value for k in call.keywords}
        cache = isinstance(kw.get("cache"), ast.Constant) and kw["cache"].value is True
        parallel = "parallel" in kw and not (isinstance(kw["parallel"], ast.Constant)
                                             and kw["parallel"].value is False)
        return cache, parallel

    def njit_call(node):
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "njit"

    def calls(fn, module, imported):
        found = set()
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Name):
                where, name = imported.get(f.id, (module, f.id))
                found.add((where, name))
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                    f.value.id in imported:
                where, name = imported[f.value.id]
                found.add((f"{where}.{name}", f.attr))
        return found

    out = {}
    for path in sorted((ROOT / "algorithms").rglob("*.py")):
        module = path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
        tree = ast.parse(path.read_text())
        imported = {}  # a name bound by import: the module it names or comes from
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = module.split(".")[:-node.level]
                where = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    imported[alias.asname or alias.name] = (where, alias.name)
        functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}

        for fn in functions.values():
            for d in fn.decorator_list:
                if njit_call(d):
                    out[(module, fn.name)] = (*options(d), calls(fn, module, imported))
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    njit_call(node.value.func) and node.value.args and \
                    isinstance(node.value.args[0], ast.Name) and \
                    node.value.args[0].id in functions:
                for target in node.targets:
                    out[(module, target.id)] = (*options(node.value.func),
                                                calls(functions[node.value.args[0].id], module,
                                                      imported))
    return out


def test_no_cached_kernel_links_parallel_code_from_the_cache():
    """numba crashes a cached kernel that, when it was compiled, linked parallel code
    that had itself been loaded from the cache (numba issue 8578; seen here as a
    segfault of C4.5's grow once a process had cached its parallel callee). So a
    kernel that holds parallel code, its own or a callee's, is either called from
    Python only, or not cached (then compiled into each caller)."""
    kernels = _kernels()
    assert len(kernels) > 200
    parallel = {k for k, (_, par, _) in kernels.items() if par}
    holds = set(parallel)
    while True:  # the kernels that hold parallel code, through their callees
        more = {k for k, (_, _, called) in kernels.items() if called & holds} - holds
        if not more:
            break
        holds |= more
    assert ("algorithms.trees.reptree", "_grow") in holds
    wrong = sorted(f"{caller[0]}.{caller[1]} calls {callee[0]}.{callee[1]}"
                   for caller, (_, _, called) in kernels.items()
                   for callee in called & holds if kernels[callee][0])
    assert not wrong, "cached kernels holding parallel code called from kernels: " + \
        "; ".join(wrong)


def test_a_kernel_loaded_while_interpreting_can_be_called_by_one_compiled_after(tmp_path):
    """The demo runs kernels that are not in the cache as Python and loads those
    that are; a kernel compiled later in the same process may call one it loaded
    (C4.5's ``subsets`` calls ``branch``), and numba must then find its code."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(DUCKMINE_CACHE_DIR=str(tmp_path / "cache"))
    for step in ("callee", "caller"):
        out = subprocess.run([sys.executable, "-c", CALLED_THEN_CALLER, step], env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[0, 1, -1]"
