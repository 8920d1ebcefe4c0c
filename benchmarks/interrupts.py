"""Stop means stop: seconds from ``duckmine.interrupt(con)`` to the failed query, for
every learner's long path, cross-validation, FP-growth, AD-tree counting and
scoring, with their kernels compiled (a compilation cannot be stopped; a stopped fit
that is compiling is left to finish on its own, and its query still fails at once).
The target is 2 s for every row.

    python -m duckmine.benchmarks.interrupts [--repeat 3] [--delay 0.3]
"""

import argparse
import statistics
import threading
import time

TARGET = 2.0  # seconds from the interrupt to the failed query

# learners whose fit takes less than reading their rows (naive Bayes counts 2,000,000
# rows in about 0.1 s, once they are read): the interrupt stops the
# reading (DuckDB between chunks), before any job starts
READING = {"naive_bayes", "one_r", "zero_r"}

# every learner's long path: (table, fit arguments after the table name)
LONG = {
    "ad_tree": ("codes", "NULL"),
    "aode": ("wide", "'y'"),
    "bayes_net": ("wide", "'y'"),
    "c45": ("mixed", "'y'"),
    "c45_rules": ("mixed", "'y'"),
    "cart": ("mixed", "'y'"),
    "em": ("mixed", "NULL"),
    "kmeans": ("mixed", "NULL, options := {'k': 8, 'max_iterations': 1000}"),
    "m5_rules": ("mixed", "'b'"),
    "m5p": ("mixed", "'b'"),
    "naive_bayes": ("wide", "'y'"),
    "one_r": ("wide", "'y'"),
    "part": ("mixed", "'y'"),
    "rep_tree": ("mixed", "'y'"),
    "ridor": ("mixed", "'y'"),
    "ripper": ("mixed", "'y'"),
    "zero_r": ("wide", "'y'"),
}

# the other long computations: (name, a query that warms its kernels, the long query,
# whether it runs as a job; scoring does not: DuckDB stops it between chunks)
OTHERS = [
    ("cross_validate", "SELECT * FROM cross_validate('naive_bayes', 'wide_warm', 'y')",
     "SELECT * FROM cross_validate('naive_bayes', 'wide', 'y')", True),
    ("fp_growth", "SELECT * FROM fp_growth('baskets_warm', 0.01)",
     "SELECT * FROM fp_growth('baskets', 0.0001)", True),
    ("ad_counts", "SELECT * FROM ad_counts('codes_warm', ['v0', 'v1', 'v2'])",
     "SELECT * FROM ad_counts('codes', ['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', "
     "'v8', 'v9'])", True),
    ("scoring", "CREATE OR REPLACE TEMP TABLE scorer AS SELECT model FROM "
     "fit('c45', 'mixed_warm', 'y')",
     "SELECT predict_proba(s.model, m) AS p FROM mixed m, (SELECT model FROM scorer) s, "
     "range(20) r(i)", False),
]


def make_tables(con):
    """Tables on which every long path runs for seconds, and a small ``_warm``
    view of each that compiles the same kernels."""
    con.execute("""CREATE TABLE mixed AS SELECT random() * 10 AS a,
        random() * 5 + (i % 7) AS b, (i % 13)::DOUBLE AS c, ['x', 'y', 'z'][1 + i % 3] AS d,
        random() AS e,
        CASE WHEN random() < 0.3 + 0.05 * (i % 7) THEN 'yes' ELSE 'no' END AS y
        FROM range(400000) r(i)""")
    con.execute("CREATE TABLE wide AS SELECT " + ", ".join(
        f"((i * {p}) % {3 + j})::VARCHAR AS v{j}" for j, p in
        enumerate((7, 11, 13, 17, 19, 23, 29, 31))) + """,
        CASE WHEN random() < 0.2 + 0.1 * (i % 5) THEN 'yes' ELSE 'no' END AS y
        FROM range(2000000) r(i)""")
    con.execute("CREATE TABLE codes AS SELECT " + ", ".join(
        f"(hash(i * {j + 1}) % {2 + j})::VARCHAR AS v{j}" for j in range(12))
        + " FROM range(1000000) r(i)")
    for name in ("mixed", "wide", "codes"):
        con.execute(f"CREATE VIEW {name}_warm AS SELECT * FROM {name} LIMIT 5000")
    con.execute("CREATE TABLE baskets AS SELECT i // 8 AS tid, (hash(i) % 60)::INT AS item "
                "FROM range(3000000) r(i)")
    con.execute("CREATE VIEW baskets_warm AS SELECT * FROM baskets WHERE tid < 1000")


def warm_query(learner):
    """A fit on the small view that compiles the kernels of ``learner``'s long path."""
    table, args = LONG[learner]
    warm = "NULL, options := {'max_depth': 2}" if learner == "ad_tree" else args
    return f"SELECT model FROM fit('{learner}', '{table}_warm', {warm})"


def long_query(learner):
    table, args = LONG[learner]
    return f"SELECT model FROM fit('{learner}', '{table}', {args})"


def interrupted_after(con, query, delay, jobs=1):
    """Run ``query``, interrupting it ``delay`` seconds after ``jobs`` duckmine jobs
    run; (seconds from the interrupt to the failure, or None when the query ended
    before the interrupt, the error)."""
    import duckmine
    from duckmine.algorithms import stop

    fired, ended = [], threading.Event()

    def fire():
        while stop.running() < jobs:
            if ended.wait(0.005):
                return
        if not ended.wait(delay):
            fired.append(time.time())
            duckmine.interrupt(con)

    thread = threading.Thread(target=fire, daemon=True)
    thread.start()
    error = None
    try:
        con.execute(query).fetchall()
    except Exception as err:
        error = err
    ended.set()
    thread.join()
    return (time.time() - fired[0] if fired else None), error


def main(argv=None):
    import duckmine

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="interrupts per row")
    parser.add_argument("--delay", type=float, default=0.3,
                        help="seconds into the run when the interrupt is sent")
    args = parser.parse_args(argv)
    con = duckmine.connect()
    make_tables(con)
    rows = [(name, warm_query(name), long_query(name), name not in READING)
            for name in sorted(LONG)]
    print(f"{'what':<16} {'median s':>9} {'worst s':>8}  target {TARGET:g} s")
    worst_all = 0.0
    for name, warm, query, job in rows + OTHERS:
        con.execute(warm).fetchall()
        took = []
        for _ in range(args.repeat):
            seconds, error = interrupted_after(con, query, args.delay, jobs=int(job))
            if seconds is None:
                raise SystemExit(f"{name}: ended before the interrupt ({error})")
            took.append(seconds)
        worst_all = max(worst_all, max(took))
        print(f"{name:<16} {statistics.median(took):>9.3f} {max(took):>8.3f}  "
              f"{'ok' if max(took) < TARGET else 'MISSED'}")
    print(f"worst of all: {worst_all:.3f} s")


if __name__ == "__main__":
    main()
