"""The same model on every run: each aggregate fit (``<learner>_fit(t, ...)``) run
several times on one large table with DuckDB scanning it on several threads, where
the rows reach the aggregate in a different order each run; every run must give
one model id.

    python -m duckmine.benchmarks.determinism [--rows 1000000] [--runs 5]
        [--threads 2] [--learners kmeans,m5p,...]

Prints, per learner, the seconds of each run and the number of distinct ids (1 is
the target).
"""

import argparse
import time

import duckmine
from duckmine.algorithms import contract

# learners whose models depend on row order in their own algorithm (shuffles,
# samples, ties, sums in order), the ones a scan order could change
DEFAULT = ("kmeans", "em", "m5p", "rep_tree", "c45", "naive_bayes")


def make_table(con, rows):
    """``t``: five numbers, a whole number, a two-valued text and a two-class target
    ``y``, with some NULLs (a regressor predicts ``a``)."""
    con.execute(f"""CREATE OR REPLACE TABLE t AS SELECT
        random() * 100 AS a, random() * 100 AS b, random() AS c,
        CASE WHEN random() < 0.02 THEN NULL ELSE random() * 1e3 END AS d,
        random() AS e, (random() * 1000)::INTEGER AS i,
        CASE WHEN random() < 0.5 THEN 'x' ELSE 'z' END AS s,
        CASE WHEN random() < 0.3 THEN 'p' ELSE 'q' END AS y
        FROM range({rows})""")


def fit_sql(name):
    """One aggregate fit of ``name`` on ``t`` with its defaults (EM with k := 3:
    its default chooses k by cross-validation, a much longer fit)."""
    decl = contract.learners()[name]
    if decl.kind == "clusterer":
        extra = ", 3" if name == "kmeans" else ""
        named = ", k := 3" if name == "em" else ""
        return f"SELECT {name}_fit(t{extra}{named}).id FROM (SELECT * EXCLUDE (y) FROM t) t"
    target = "'a'" if decl.kind == "regressor" else "'y'"
    return f"SELECT {name}_fit(t, {target}).id FROM t t"


def ids(con, name, runs):
    """(the ids of ``runs`` fits, their seconds)."""
    out, seconds = [], []
    for _ in range(runs):
        start = time.perf_counter()
        out.append(con.execute(fit_sql(name)).fetchall()[0][0])
        seconds.append(time.perf_counter() - start)
    return out, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--learners", default=",".join(DEFAULT))
    args = parser.parse_args(argv)
    con = duckmine.connect()
    con.execute(f"SET threads = {args.threads}")
    con.execute("SET enable_progress_bar = false")
    make_table(con, args.rows)
    print(f"{args.rows:,} rows, threads = {args.threads}, {args.runs} runs each")
    for name in args.learners.split(","):
        got, seconds = ids(con, name, args.runs)
        print(f"  {name:12s} {len(set(got))} distinct id(s)  runs: "
              + " ".join(f"{s:.1f}" for s in seconds) + " s", flush=True)
    con.close()


if __name__ == "__main__":
    main()
