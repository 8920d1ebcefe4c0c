"""Memory per row: the peak resident memory of each learner's fit, over what the
process held before it, per row of the table, next to the bytes per row of the
columns it reads; for both ways rows reach a fit: fed from a scan (``fit(...)`` and
the table forms) and gathered into one list per group (the aggregate
``<learner>_fit``).

    python -m duckmine.benchmarks.memory [--rows 1000000,10000000]
        [--learners c45,naive_bayes,...] [--forms fed,aggregate,groups,grouped,peer]
        [--data own|numeric|signal|em_numeric|em_mixed]

The forms ``groups`` and ``grouped`` fit a model per value of the INTEGER column
(about 1,000 groups): ``fit_groups``, whose rows are fed, and the aggregate form
under ``GROUP BY``, whose groups DuckDB gathers into lists.

The form ``peer`` is scikit-learn's nearest equivalent where there is one (needs
the ``bench`` extra), read from the same table with DuckDB's ``fetchnumpy``, the
NULLs filled with column means where it takes none and the text column coded as
0/1: its figure includes its data, as ours includes reading the table.

Each fit runs in a fresh process on a table kept in a database file (5 DOUBLE, 1
INTEGER and 1 two-valued VARCHAR column and a two-class target, some NULLs), after
a fit on a small table has compiled the kernels, so that the figure is the fit's
own; ``--data numeric`` makes its text column ``s`` a number, the most a learner
that sorts numeric values holds a cell, and ``--data signal`` its target depend on
two columns (and noise), so that trees and rules grow as on real data, where on
noise C4.5's tree is one leaf. ``ru_maxrss`` is the high-water mark of the
process. The kernels that run
threads on large data only (``jit.threads``) are loaded by the large fit itself, and
counted in it.

``--data em_numeric`` (or ``em_mixed``) fits k-means and EM instead on the EM
benchmark's mixture (``benchmarks/em.py``: ten DOUBLE columns; the mixed one has
8 DOUBLE, 2 VARCHAR and 5% NULLs), with its options (k = 5, its seeds, EM at most
``EM_ITERATIONS`` iterations), at any size: beyond 10M rows the table is drawn
straight into DuckDB. It is kept under ``benchmarks/.data/``.
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
DATA = {"own": COLUMNS_BYTES, "numeric": 6 * 8 + 4 + 16, "signal": COLUMNS_BYTES,
        "em_numeric": 10 * 8, "em_mixed": 8 * 8 + 2 * 16}
EM_ITERATIONS = 20


def make(path, rows, data="own"):
    """The table ``t`` at ``path``; ``data`` numeric: its text column ``s`` a
    number; signal: a target that depends on ``a`` and ``c``, and on noise."""
    import duckmine
    from duckmine.benchmarks.determinism import make_table

    con = duckmine.connect(path)
    con.execute("SET enable_progress_bar = false")
    con.execute("SET threads = 1")  # one random() stream: the same table every time
    con.execute("SELECT setseed(0.25)")
    make_table(con, rows)
    if data == "numeric":
        con.execute("CREATE OR REPLACE TABLE t AS SELECT * REPLACE (random() AS s) FROM t")
    elif data == "signal":
        con.execute("CREATE OR REPLACE TABLE t AS SELECT * REPLACE (CASE WHEN a + 30 * c + "
                    "20 * random() > 60 THEN 'p' ELSE 'q' END AS y) FROM t")
    con.close()


def fit_sql(name, table, form, data="own"):
    """The fit of ``name`` on ``table`` (a name or a query in parentheses) in one
    of the two forms, with the options of ``determinism.fit_sql`` (or, on the EM
    benchmark's data, of ``em``)."""
    from duckmine.algorithms import contract
    from duckmine.benchmarks import em
    from duckmine.benchmarks.determinism import fit_sql as sql

    if data.startswith("em_"):  # options as SQL literals, given by name to either form
        opts = {"k": em.COMPONENTS, "seed": em.KMEANS_SEED, "init": "'k-means++'"} \
            if name == "kmeans" else {"k": em.COMPONENTS, "seed": em.EM_SEED,
                                      "max_iterations": EM_ITERATIONS}
        if form == "aggregate":
            named = ", ".join(f"{k} := {v}" for k, v in opts.items())
            return f"SELECT {name}_fit(t, {named}).id FROM {table} t"
        given = ", ".join(f"'{k}': {v}" for k, v in opts.items())
        source = table.replace("'", "''")
        return f"SELECT model.id FROM fit('{name}', '{source}', NULL, options := {{{given}}})"
    if form == "grouped":  # the aggregate form, a model per value of i
        one = fit_sql(name, table, "aggregate").replace(" FROM ", " AS m FROM ", 1)
        return f"SELECT count(m) FROM ({one} GROUP BY i)"
    if form == "aggregate":
        return sql(name).replace(" FROM t t", f" FROM {table} t").replace(
            "FROM (SELECT * EXCLUDE (y) FROM t) t",
            f"FROM (SELECT * EXCLUDE (y) FROM {table}) t")
    decl = contract.learners()[name]
    if form == "groups":  # fit_groups, a model per value of i
        clusterer = decl.kind == "clusterer"
        source = (f"(SELECT * EXCLUDE (y) FROM {table})" if clusterer else table).replace(
            "'", "''")
        target = "NULL" if clusterer else "'a'" if decl.kind == "regressor" else "'y'"
        options = ", options := {'k': 3}" if clusterer else ""
        return (f"SELECT count(model) FROM fit_groups('{name}', '{source}', {target}, 'i'"
                f"{options})")
    if decl.kind == "clusterer":
        source = f"(SELECT * EXCLUDE (y) FROM {table})"
        return f"SELECT model.id FROM fit('{name}', '{source}', NULL, options := {{'k': 3}})"
    target = "'a'" if decl.kind == "regressor" else "'y'"
    return f"SELECT model.id FROM fit('{name}', '{table}', {target})"


# scikit-learn's nearest equivalent of a learner: (estimator, target column, NaN
# allowed), made when the child runs
PEERS = {
    "c45": ("DecisionTreeClassifier(criterion='entropy')", "y", True),
    "c45_rules": ("DecisionTreeClassifier(criterion='entropy')", "y", True),
    "rep_tree": ("DecisionTreeClassifier(criterion='entropy')", "y", True),
    "cart": ("DecisionTreeClassifier()", "y", True),
    "m5p": ("DecisionTreeRegressor(min_samples_split=4)", "a", True),
    "naive_bayes": ("GaussianNB()", "y", False),
    "kmeans": ("KMeans(3, n_init=1, algorithm='lloyd')", None, False),
    "em": ("GaussianMixture(3, covariance_type='diag', max_iter=100)", None, False),
}


def peer(path, name):
    """scikit-learn's fit of ``name``'s peer on the table: (peak before, after)."""
    import duckdb
    import numpy as np
    from sklearn.cluster import KMeans  # noqa: F401  (named in PEERS)
    from sklearn.mixture import GaussianMixture  # noqa: F401
    from sklearn.naive_bayes import GaussianNB  # noqa: F401
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: F401

    made, target, nan_ok = PEERS[name]
    estimator = eval(made)
    con = duckdb.connect(path, read_only=True)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    cols = con.execute("SELECT * FROM t").fetchnumpy()
    y = None if target is None else np.asarray(cols.pop(target))
    if target != "y":
        cols.pop("y")
    names = list(cols)
    X = np.empty((len(cols[names[0]]), len(names)))
    for j, c in enumerate(names):
        v = cols.pop(c)
        X[:, j] = (v == "x") if v.dtype == object else np.ma.filled(
            np.ma.asarray(v, np.float64), np.nan)
        if not nan_ok:
            X[np.isnan(X[:, j]), j] = np.nanmean(X[:, j])
    estimator.fit(X, y)
    return before, time.perf_counter() - start


def child(path, name, form, data="own"):
    """In the fresh process: warm up on 2,000 rows, then fit the whole table."""
    if form == "peer":
        before, seconds = peer(path, name)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(before, peak, seconds)
        return
    import duckmine

    con = duckmine.connect(path, read_only=True)
    con.execute("SET enable_progress_bar = false")
    table = "points" if data.startswith("em_") else "t"
    warm = {"groups": "fed", "grouped": "aggregate"}.get(form, form)  # groups of 2 rows
    con.execute(fit_sql(name, f"(SELECT * FROM {table} LIMIT 2000)", warm, data)).fetchall()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    con.execute(fit_sql(name, table, form, data)).fetchall()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(before, peak, seconds)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--learners", default=",".join(DEFAULT))
    parser.add_argument("--forms", default="fed,aggregate")
    parser.add_argument("--data", default="own", choices=sorted(DATA))
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child)
    width = DATA[args.data]
    print(f"columns read: about {width} bytes a row in DuckDB")
    print(f"{'rows':>12} {'learner':12} {'form':9} {'seconds':>8} {'peak MiB':>9} "
          f"{'bytes/row':>10} {'x columns':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in map(int, args.rows.split(",")):
            if not args.data.startswith("em_"):
                path = os.path.join(tmp, f"t{rows}.duckdb")
                make(path, rows, args.data)
            else:
                from duckmine.benchmarks import em
                path = str(em.database(args.data.split("_")[1], rows))
            for name in args.learners.split(","):
                for form in args.forms.split(","):
                    if form == "peer" and (name not in PEERS or args.data.startswith("em_")):
                        continue
                    out = subprocess.run(
                        [sys.executable, "-m", "duckmine.benchmarks.memory", "--child",
                         path, name, form, args.data], capture_output=True, text=True)
                    if out.returncode != 0:
                        last = (out.stderr.strip().splitlines() or ["?"])[-1]
                        print(f"{rows:>12,} {name:12} {form:9} failed: {last[:100]}",
                              flush=True)
                        continue
                    before, peak, seconds = map(float, out.stdout.split())
                    per_row = (peak - before) / rows
                    print(f"{rows:>12,} {name:12} {form:9} {seconds:8.1f} "
                          f"{peak / 2**20:9,.0f} {per_row:10,.0f} "
                          f"{per_row / width:9.1f}", flush=True)


if __name__ == "__main__":
    main()
