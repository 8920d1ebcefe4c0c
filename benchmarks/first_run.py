"""The first run: ``duckmine demo`` on an empty kernel cache, as after an install,
with the seconds numba spends compiling each kernel in the demo's process (a kernel
that calls another counts the callee's time too) and how many signatures it
compiles, and when the compile it starts in the background is done.

    python -m duckmine.benchmarks.first_run [--top 30]

The demo runs in a fresh process whose kernel cache (``DUCKMINE_CACHE_DIR``) is an
empty directory.
"""

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time


def child(db, top):
    """In the fresh process: the demo, under a listener of numba's compile events."""
    from numba.core import event

    from duckmine.extension import cli

    seconds, signatures, started = collections.defaultdict(float), collections.Counter(), {}

    class Compiles(event.Listener):
        def on_start(self, ev):
            started[id(ev.data["dispatcher"]), str(ev.data["args"])] = time.perf_counter()

        def on_end(self, ev):
            d = ev.data["dispatcher"]
            key = (id(d), str(ev.data["args"]))
            name = f"{d.py_func.__module__.replace('duckmine.algorithms.', '')}." \
                   f"{d.py_func.__name__}"
            seconds[name] += time.perf_counter() - started.pop(key, time.perf_counter())
            signatures[name] += 1

    event.register("numba:compile", Compiles())
    start = time.perf_counter()
    with open(os.devnull, "w") as quiet:
        out, sys.stdout = sys.stdout, quiet
        try:
            helper = cli.demo(db)
        finally:
            sys.stdout = out
    total = time.perf_counter() - start
    print(f"duckmine demo on an empty kernel cache: {total:.0f} s (target 90 s)")
    print(f"the {top} longest compiles (a caller's time includes its callees'):")
    for name, s in sorted(seconds.items(), key=lambda x: -x[1])[:top]:
        print(f"  {s:6.1f} s  {signatures[name]:3d} signature(s)  {name}")
    if helper is not None:
        helper.wait()
        print(f"the demo's kernels compiled in the background: done "
              f"{time.perf_counter() - start:.0f} s after the start")
        start = time.perf_counter()
        with open(os.devnull, "w") as quiet:
            out, sys.stdout = sys.stdout, quiet
            try:
                cli.demo(db + ".again")
            finally:
                sys.stdout = out
        print(f"the demo again: {time.perf_counter() - start:.0f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, args.top)
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, DUCKMINE_CACHE_DIR=os.path.join(tmp, "cache"))
        subprocess.run([sys.executable, "-m", "duckmine.benchmarks.first_run", "--child",
                        os.path.join(tmp, "demo.duckdb"), "--top", str(args.top)],
                       env=env, check=True)


if __name__ == "__main__":
    main()
