"""Where numba would fall back to its workqueue threading layer (no TBB, no OpenMP
runtime), kernels that threads call at once must not abort the process."""

import json
import os
import subprocess
import sys

# a parallel kernel made by duckmine's njit, called from four threads at once; then
# its sums, whether it was compiled parallel, and its cache directory
CONCURRENT = """
import json, threading
import numpy as np
from duckmine.algorithms import kernel_cache
from duckmine.algorithms.jit import njit, prange

@njit(cache=False, parallel=True)
def total(x):
    s = 0.0
    for i in prange(len(x)):
        s += x[i]
    return s

x = np.ones(200_000)
out = []
def run():
    for _ in range(200):
        out.append(total(x))
threads = [threading.Thread(target=run) for _ in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps({"sums": sorted(set(out)), "calls": len(out),
                  "parallel": bool(total.targetoptions.get("parallel")),
                  "dir": kernel_cache.kernel_dir().name}))
"""


def run(layer, tmp_path):
    env = {**os.environ, "NUMBA_THREADING_LAYER": layer,
           "DUCKMINE_CACHE_DIR": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", CONCURRENT], capture_output=True, text=True,
                          env=env, timeout=300)


def test_without_a_threadsafe_layer_kernels_run_serial_and_never_abort(tmp_path):
    """numba's workqueue aborts the process (SIGABRT) when two threads launch
    parallel code at once; duckmine then compiles its kernels serial, and keeps them
    apart from the parallel ones."""
    done = run("workqueue", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    assert got == {"sums": [200_000.0], "calls": 800, "parallel": False,
                   "dir": got["dir"]} and got["dir"].endswith("-serial")


def test_with_openmp_kernels_stay_parallel(tmp_path):
    done = run("omp", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    assert got["parallel"] and got["sums"] == [200_000.0]
    assert not got["dir"].endswith("-serial")
