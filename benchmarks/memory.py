"""Memory per row: the peak resident memory of each learner's fit, over what the
process held before it, per row of the table, next to the bytes per row of the
columns it reads; for both ways rows reach a fit: fed from a scan (``fit(...)`` and
the table forms) and gathered into one list per group (the aggregate
``<learner>_fit``).

    python -m duckmine.benchmarks.memory [--rows 1000000,10000000]
        [--learners c45,naive_bayes,...] [--forms fed,aggregate]

Each fit runs in a fresh process on a table kept in a database file (5 DOUBLE, 1
INTEGER and 1 two-valued VARCHAR column and a two-class target, some NULLs), after
a fit on a small table has compiled the kernels, so that the figure is the fit's
own. ``ru_maxrss`` is the high-water mark of the process.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

DEFAULT = ("c45", "naive_bayes", "kmeans", "em", "m5p")
COLUMNS_BYTES = 5 * 8 + 4 + 16 + 16  # DuckDB's own widths: DOUBLE, INTEGER, 2 VARCHAR


def make(path, rows):
    import duckmine
    from duckmine.benchmarks.determinism import make_table

    con = duckmine.connect(path)
    make_table(con, rows)
    con.close()


def fit_sql(name, table, form):
    """The fit of ``name`` on ``table`` (a name or a query in parentheses) in one
    of the two forms, with the options of ``determinism.fit_sql``."""
    from duckmine.algorithms import contract
    from duckmine.benchmarks.determinism import fit_sql as sql

    if form == "aggregate":
        return sql(name).replace(" FROM t t", f" FROM {table} t").replace(
            "FROM (SELECT * EXCLUDE (y) FROM t) t",
            f"FROM (SELECT * EXCLUDE (y) FROM {table}) t")
    decl = contract.learners()[name]
    if decl.kind == "clusterer":
        source = f"(SELECT * EXCLUDE (y) FROM {table})"
        return f"SELECT model.id FROM fit('{name}', '{source}', NULL, options := {{'k': 3}})"
    target = "'a'" if decl.kind == "regressor" else "'y'"
    return f"SELECT model.id FROM fit('{name}', '{table}', {target})"


def child(path, name, form):
    """In the fresh process: warm up on 2,000 rows, then fit the whole table."""
    import duckmine

    con = duckmine.connect(path, read_only=True)
    con.execute("SET enable_progress_bar = false")
    con.execute(fit_sql(name, "(SELECT * FROM t LIMIT 2000)", form)).fetchall()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    con.execute(fit_sql(name, "t", form)).fetchall()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(before, peak, seconds)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--learners", default=",".join(DEFAULT))
    parser.add_argument("--forms", default="fed,aggregate")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child)
    print(f"columns read: about {COLUMNS_BYTES} bytes a row in DuckDB")
    print(f"{'rows':>12} {'learner':12} {'form':9} {'seconds':>8} {'peak MiB':>9} "
          f"{'bytes/row':>10} {'x columns':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in map(int, args.rows.split(",")):
            path = os.path.join(tmp, f"t{rows}.duckdb")
            make(path, rows)
            for name in args.learners.split(","):
                for form in args.forms.split(","):
                    out = subprocess.run(
                        [sys.executable, "-m", "duckmine.benchmarks.memory", "--child",
                         path, name, form], capture_output=True, text=True)
                    if out.returncode != 0:
                        last = (out.stderr.strip().splitlines() or ["?"])[-1]
                        print(f"{rows:>12,} {name:12} {form:9} failed: {last[:100]}",
                              flush=True)
                        continue
                    before, peak, seconds = map(float, out.stdout.split())
                    per_row = (peak - before) / rows
                    print(f"{rows:>12,} {name:12} {form:9} {seconds:8.1f} "
                          f"{peak / 2**20:9,.0f} {per_row:10,.0f} "
                          f"{per_row / COLUMNS_BYTES:9.1f}", flush=True)


if __name__ == "__main__":
    main()
