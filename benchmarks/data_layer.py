"""The cost of the shared data layer: a table of any schema into columnar arrays.

Times, on a DuckDB table of 1,000,000 rows x 20 columns (12 DOUBLE, 4 INTEGER, 2 ENUM,
2 VARCHAR, 5% NULLs), the hand-off of all rows to Python as one list of row structs
(``SELECT list(t) FROM t``, as an aggregate form does) and the conversion into a
Dataset (float64 columns, nominal codes, missing values, the rows put in an order of
their values); and a fit that reads the same rows as DuckDB scans them (``fit``, as
the table forms do) and does nothing with them (ZeroR):

    python -m duckmine.benchmarks.data_layer [--rows N] [--repeat 5]
"""

import argparse
import statistics
import time

import duckmine
from duckmine.udfs.table import dataset


def table(con, rows):
    cols = [f"CASE WHEN random() < 0.05 THEN NULL ELSE random() * 1000 END AS d{i}"
            for i in range(12)]
    cols += [f"(random() * 100)::INTEGER AS i{i}" for i in range(4)]
    cols += [f"(['a', 'b', 'c', 'd'])[1 + (random() * 3.999)::INTEGER]::ab AS e{i}"
             for i in range(2)]
    cols += [f"'v' || (random() * 50)::INTEGER AS s{i}" for i in range(2)]
    con.execute("CREATE TYPE ab AS ENUM ('a', 'b', 'c', 'd')")
    con.execute(f"CREATE TABLE t AS SELECT {', '.join(cols)} FROM range({rows})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    con = duckmine.connect()
    table(con, args.rows)
    con.execute("SET enable_progress_bar = false")
    handoff, convert, fed = [], [], []
    target = con.sql("SELECT name FROM pragma_table_info('t') WHERE type LIKE 'ENUM%' "
                     "LIMIT 1").fetchall()[0][0]
    for _ in range(args.repeat):
        start = time.perf_counter()
        rows = con.sql("SELECT list(t) FROM t t").to_arrow_table().column(0)[0].values
        middle = time.perf_counter()
        data = dataset(rows, "benchmark")
        end = time.perf_counter()
        handoff.append(middle - start)
        convert.append(end - middle)
        start = time.perf_counter()
        con.execute(f"SELECT model.id FROM fit('zero_r', 't', '{target}')").fetchall()
        fed.append(time.perf_counter() - start)
    print(f"{args.rows:,} rows x {len(data.attributes)} columns, median of {args.repeat}:")
    print(f"  hand-off (SELECT list(t) to Arrow): {statistics.median(handoff):.3f} s")
    print(f"  columns (Dataset):                  {statistics.median(convert):.3f} s")
    print(f"  total:                              "
          f"{statistics.median(h + c for h, c in zip(handoff, convert)):.3f} s")
    print(f"  fed as scanned (fit('zero_r', ...)): {statistics.median(fed):.3f} s")
    con.close()


if __name__ == "__main__":
    main()
