"""model_to_sql on a long decision list: PART's rules on Agrawal data (the rules
benchmark's file, made by Weka once), written as SQL for DuckDB and for SQLite and
run on the first rows of the table in each engine, side by side with ``predict``.

    python -m duckmine.benchmarks.model_sql [--rows 100000] [--score 2000]

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


def run(n, score):
    con = duckmine.connect(str(database(n)), read_only=True)
    con.execute("SET enable_progress_bar = false")
    con.execute(f"CREATE TEMP TABLE m AS SELECT model FROM fit('part', 'agrawal', '{TARGET}')")
    text = con.execute("SELECT model_text(model) FROM m").fetchall()[0][0]
    rules = re.search(r"Number of Rules\s*:\s*(\d+)", text)[1]
    print(f"{n:,} rows: {rules} rules")
    con.execute(f"CREATE TEMP TABLE s AS SELECT * FROM agrawal LIMIT {score}")
    names = con.execute("SELECT * FROM s LIMIT 0").description
    rows = con.execute("SELECT s.* FROM s ORDER BY rowid").fetchall()
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
            lite = sqlite3.connect(":memory:")
            quoted = ", ".join('"' + d[0].replace('"', '""') + '"' for d in names)
            lite.execute(f"CREATE TABLE s ({quoted})")
            lite.executemany(f"INSERT INTO s VALUES ({', '.join('?' * len(names))})", rows)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--score", type=int, default=2000)
    args = parser.parse_args()
    run(args.rows, args.score)


if __name__ == "__main__":
    main()
