"""model_to_sql on a long decision list: PART's rules on Agrawal data (the rules
benchmark's file, made by Weka once), written as SQL for DuckDB and for SQLite and
run on the first rows of the table in each engine, side by side with ``predict``.
With ``--deep``, trees hundreds of levels deep instead (C4.5's, or REPTree's or
CART's with ``--learner``).

    python -m duckmine.benchmarks.model_sql [--rows 100000] [--score 2000]
    python -m duckmine.benchmarks.model_sql --deep [--rows 20000] [--learner c45]

Prints the rules, the SQL's size and the seconds to write it, then per engine the
seconds to score ``--score`` rows, the rows a second, and whether every label is
``predict``'s. On 100,000 rows PART makes 2,147 rules: more SELECTs than SQLite's
parser nests before 3.46 (written for it as a WITH list), and more rules than it
allows columns (each SELECT names only what the next one reads).
"""

import argparse
import re
import sqlite3
import time

import duckmine

from .rules_trees import TARGET, database


def sqlite_copy(con, select, table):
    """An in-memory SQLite database holding the rows of ``select`` (run on ``con``)
    as ``table``, in their order."""
    rel = con.execute(select)
    names = [d[0] for d in rel.description]
    lite = sqlite3.connect(":memory:")
    quoted = ", ".join('"' + name.replace('"', '""') + '"' for name in names)
    lite.execute(f'CREATE TABLE "{table}" ({quoted})')
    lite.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(names))})',
                     rel.fetchall())
    return lite


def run(n, score):
    con = duckmine.connect(str(database(n)), read_only=True)
    con.execute("SET enable_progress_bar = false")
    con.execute(f"CREATE TEMP TABLE m AS SELECT model FROM fit('part', 'agrawal', '{TARGET}')")
    text = con.execute("SELECT model_text(model) FROM m").fetchall()[0][0]
    rules = re.search(r"Number of Rules\s*:\s*(\d+)", text)[1]
    print(f"{n:,} rows: {rules} rules")
    con.execute(f"CREATE TEMP TABLE s AS SELECT * FROM agrawal LIMIT {score}")
    want = [r[0] for r in con.execute("SELECT predict(m.model, s) FROM s, m "
                                      "ORDER BY s.rowid").fetchall()]
    for dialect in ("duckdb", "sqlite"):
        start = time.perf_counter()
        expr = con.execute("SELECT model_to_sql(model, ?) FROM m", [dialect]).fetchall()[0][0]
        written = time.perf_counter() - start
        if dialect == "duckdb":
            start = time.perf_counter()
            got = [r[0] for r in con.execute(f"SELECT {expr} FROM s ORDER BY rowid").fetchall()]
        else:
            lite = sqlite_copy(con, "SELECT s.* FROM s ORDER BY rowid", "s")
            start = time.perf_counter()
            try:
                got = [r[0] for r in lite.execute(f"SELECT {expr} FROM s ORDER BY rowid")]
            except sqlite3.OperationalError as err:  # a limit of SQLite's
                print(f"{dialect:7} {len(expr) / 1e6:.2f} MB written in {written:.1f} s; "
                      f"refused: {err}")
                continue
            finally:
                lite.close()
        took = time.perf_counter() - start
        print(f"{dialect:7} {len(expr) / 1e6:.2f} MB written in {written:.1f} s; {len(got):,} "
              f"rows scored in {took:.1f} s ({len(got) / took:,.0f} rows/s); "
              f"same as predict: {got == want}")
    con.close()


# staircase targets: an unpruned C4.5 tree is a chain of one split per step (rows / 50
# of them for two classes, rows / 40 for three, where missing values are spread
# down every level of the sums)
CHAINS = {
    "two classes": "SELECT i::DOUBLE AS x, CASE WHEN (i // 50) % 2 = 0 THEN 'a' ELSE 'b' "
                   "END AS y FROM range({n}) r(i)",
    "three classes, missing values": (
        "SELECT CASE WHEN i % 13 = 5 THEN NULL WHEN i % 17 = 3 THEN 'NaN'::DOUBLE "
        "ELSE i::DOUBLE END AS x, CASE WHEN i % 11 < 2 THEN i::DOUBLE END AS z, "
        "['a', 'b', 'c'][1 + (i // 40) % 3] AS y FROM range({n}) r(i)"),
}


def deep(n, learner):
    """Per chain: the SQL's size, DuckDB's time to plan it (EXPLAIN), and to score
    the table's ``n`` rows with it, beside ``predict``'s; then SQLite's. The tree is
    ``learner``'s, unpruned."""
    con = duckmine.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute("SET max_expression_depth TO 100000")
    for name, rows in CHAINS.items():
        con.execute(f"CREATE OR REPLACE TABLE t AS {rows.format(n=n)}")
        con.execute(f"CREATE OR REPLACE TABLE m AS SELECT model FROM fit('{learner}', 't', "
                    "'y', options := {'pruned': false})")
        depth = max(line.count("|") for line in con.execute(
            "SELECT model_text(model) FROM m").fetchall()[0][0].splitlines())
        start = time.perf_counter()
        expr = con.execute("SELECT model_to_sql(model) FROM m").fetchall()[0][0]
        written = time.perf_counter() - start
        start = time.perf_counter()
        con.execute(f"EXPLAIN SELECT ({expr}) FROM t").fetchall()
        planned = time.perf_counter() - start
        start = time.perf_counter()
        got = con.execute(f"SELECT ({expr}) FROM t ORDER BY rowid").fetchall()
        scored = time.perf_counter() - start
        start = time.perf_counter()
        want = con.execute("SELECT predict(m.model, t) FROM t, m ORDER BY t.rowid").fetchall()
        predicted = time.perf_counter() - start
        print(f"{name}: {n:,} rows, {depth} levels deep; {len(expr) / 1e6:.2f} MB of SQL "
              f"written in {written:.2f} s, planned in {planned:.2f} s, scoring the rows "
              f"{scored:.2f} s (predict {predicted:.2f} s); same as predict: {got == want}")
        lite = sqlite_copy(con, "SELECT * EXCLUDE (y) FROM t ORDER BY rowid", "t")
        expr = con.execute("SELECT model_to_sql(model, 'sqlite') FROM m").fetchall()[0][0]
        start = time.perf_counter()
        got = lite.execute(f"SELECT {expr} FROM t ORDER BY rowid").fetchall()
        print(f"  sqlite: {len(expr) / 1e6:.2f} MB of SQL, scoring the rows "
              f"{time.perf_counter() - start:.2f} s; same as predict: {got == want}")
        lite.close()
    con.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=None,
                        help="rows of the table (100,000; 20,000 with --deep)")
    parser.add_argument("--score", type=int, default=2000)
    parser.add_argument("--deep", action="store_true", help="trees hundreds of levels deep")
    parser.add_argument("--learner", default="c45", choices=["c45", "rep_tree", "cart"],
                        help="whose trees --deep writes (C4.5's)")
    args = parser.parse_args()
    if args.deep:
        deep(args.rows or 20_000, args.learner)
    else:
        run(args.rows or 100_000, args.score)


if __name__ == "__main__":
    main()
