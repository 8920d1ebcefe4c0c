"""Start-up: how long ``import duckmine; duckmine.load(con)`` and a first query take
in a fresh process once the kernels are cached on disk (the first run compiles and
caches them; the figures are of the runs after it), and the whole command
``duckmine sql "SELECT 1"`` (target under 1 s).

    python -m duckmine.benchmarks.startup [--repeat 5]
"""

import argparse
import statistics
import subprocess
import sys
import time

QUERY = "SELECT count(*) FROM fp_growth('(SELECT [''a'', ''b''] AS items)', 1)"
CODE = ("import time; t = time.perf_counter(); import duckdb; t0 = time.perf_counter(); "
        "import duckmine; con = duckdb.connect(); duckmine.load(con); "
        "t1 = time.perf_counter(); con.execute('SET enable_progress_bar = false'); "
        f"con.execute(\"{QUERY}\").fetchall(); "
        "print(t0 - t, t1 - t0, time.perf_counter() - t1)")


def run():
    out = subprocess.run([sys.executable, "-c", CODE], check=True, capture_output=True,
                         text=True).stdout.split()
    return tuple(map(float, out))


def command():
    """Seconds of ``duckmine sql "SELECT 1"`` in memory, as a shell runs it."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "duckmine", "sql", "SELECT 1", "--db", ":memory:"],
                   check=True, capture_output=True)
    return time.perf_counter() - start


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
    sql = statistics.median(command() for _ in range(args.repeat))
    print(f"duckmine sql \"SELECT 1\": {sql:.3f} s (target < 1 s; median of {args.repeat})")


if __name__ == "__main__":
    main()
