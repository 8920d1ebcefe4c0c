"""Start-up: how long ``import duckmine; duckmine.load(con)`` and a first query take
in a fresh process once the kernels are cached on disk (the first run compiles and
caches them; the figures are of the runs after it).

    python -m duckmine.benchmarks.startup [--repeat 5]
"""

import argparse
import statistics
import subprocess
import sys

QUERY = "SELECT count(*) FROM fp_growth('(SELECT [''a'', ''b''] AS items)', 1)"
CODE = ("import time; t = time.perf_counter(); import duckdb; t0 = time.perf_counter(); "
        "import duckmine; con = duckdb.connect(); duckmine.load(con); "
        "t1 = time.perf_counter(); "
        f"con.execute(\"{QUERY}\").fetchall(); "
        "print(t0 - t, t1 - t0, time.perf_counter() - t1)")


def run():
    out = subprocess.run([sys.executable, "-c", CODE], check=True, capture_output=True,
                         text=True).stdout.split()
    return tuple(map(float, out))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    run()  # compile and cache the kernels
    runs = [run() for _ in range(args.repeat)]
    duck, load, query = (statistics.median(r[i] for r in runs) for i in range(3))
    print(f"import duckdb: {duck:.3f} s; import duckmine + load(con): {load:.3f} s "
          f"(target < 0.5 s); first FP-growth query: {query:.3f} s "
          f"(medians of {args.repeat} fresh processes)")


if __name__ == "__main__":
    main()
