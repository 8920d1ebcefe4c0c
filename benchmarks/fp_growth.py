"""FP-growth side by side: duckmine in SQL, pyfim and mlxtend, on Quest-style baskets.

    python -m duckmine.benchmarks.fp_growth [--sizes 100000 1000000]
        [--supports 0.01 0.005 0.0025] [--repeat 3] [--timeout 900]

Needs ``pip install pyfim mlxtend pandas`` (the ``bench`` extra). The baskets (about
1,000 items, about 10 items per transaction, seed 1) are written once to a DuckDB
file in long layout (tid, item). Every measurement runs in its own process, so
each reports its own peak memory (resident set, which includes about 150 MB for
Python, DuckDB and the libraries). Times are end to end from the DuckDB table:

- duckmine: ``SELECT count(*) FROM fp_growth('baskets', s)``;
- pyfim: fetch the transactions from the same table, then ``fim.fpgrowth``;
- mlxtend: fetch, one-hot encode (sparse), then ``mlxtend.frequent_patterns.fpgrowth``.

Each measurement is repeated ``--repeat`` times in its process (only once when a
run takes over 30 s) and the median is printed. All three must report the same
number of itemsets.
"""

import argparse
import json
import resource
import time
from pathlib import Path

from .child import run_child

DATA = Path(__file__).resolve().parent / ".data"
TOOLS = ("duckmine", "pyfim", "mlxtend")


def database(n):
    """The DuckDB file holding ``n`` baskets, created on first use."""
    path = DATA / f"baskets_{n}.duckdb"
    if not path.exists():
        import duckdb

        from duckmine.extension.samples import basket_table

        DATA.mkdir(exist_ok=True)
        names = [f"item{i:04d}" for i in range(1000)]
        table = basket_table(n, names, seed=1)
        con = duckdb.connect(str(path) + ".tmp")
        con.register("b", table)
        con.execute("CREATE TABLE baskets AS SELECT * FROM b")
        con.close()
        Path(str(path) + ".tmp").rename(path)
    return path


def fetch(con):
    """Transactions as Python lists, the input pyfim and mlxtend take."""
    t = con.execute("SELECT list(item) AS items FROM baskets GROUP BY tid").to_arrow_table()
    return t.column("items").to_pylist()


def measure(con, tool, support):
    """Run one tool once; return (seconds end to end, seconds mining, itemsets)."""
    start = time.perf_counter()
    if tool == "duckmine":
        count = con.execute(f"SELECT count(*) FROM fp_growth('baskets', {support})"
                            ).fetchall()[0][0]
        return time.perf_counter() - start, None, count
    tx = fetch(con)
    if tool == "pyfim":
        import fim

        mined = time.perf_counter()
        count = len(fim.fpgrowth(tx, target="s", supp=100 * support, zmin=1))
    else:
        import pandas as pd
        from mlxtend.frequent_patterns import fpgrowth
        from mlxtend.preprocessing import TransactionEncoder

        enc = TransactionEncoder().fit(tx)
        frame = pd.DataFrame.sparse.from_spmatrix(enc.transform(tx, sparse=True),
                                                  columns=enc.columns_)
        mined = time.perf_counter()
        count = len(fpgrowth(frame, min_support=support))
    end = time.perf_counter()
    return end - start, end - mined, count


def child(tool, n, support, repeat):
    import duckdb

    import duckmine

    path = str(database(n))
    if tool == "duckmine":
        con = duckmine.connect(path, read_only=True)
        # load the cached kernels first, as a warm session would have them
        con.execute("SELECT count(*) FROM fp_growth('(SELECT [''a''] AS i)', 1)").fetchall()
    else:
        con = duckdb.connect(path, read_only=True)
    runs = [measure(con, tool, support)]
    while len(runs) < repeat and runs[0][0] < 30:
        runs.append(measure(con, tool, support))
    con.close()
    total, mining, count = sorted(runs)[len(runs) // 2]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"total": total, "mining": mining, "count": count,
                      "peak_mb": peak_mb}))


def run(tool, n, support, repeat, timeout):
    return run_child("duckmine.benchmarks.fp_growth", [tool, n, support, repeat], timeout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--supports", type=float, nargs="+", default=[0.01, 0.005, 0.0025])
    parser.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS)
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per measurement; the median is shown")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds allowed to one tool's runs")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        tool, n, support, repeat = args.child
        return child(tool, int(n), float(support), int(repeat))
    print(f"{'baskets':>9} {'support':>8} {'tool':>9} {'itemsets':>9} {'total s':>9} "
          f"{'mining s':>9} {'peak MB':>8} {'vs duckmine':>12}")
    for n in args.sizes:
        database(n)
        for support in args.supports:
            results = {t: run(t, n, support, args.repeat, args.timeout)
                       for t in args.tools}
            base = results.get("duckmine")
            for tool, r in results.items():
                if r is None:
                    print(f"{n:>9} {support:>8} {tool:>9} {'-':>9} "
                          f"{'> ' + str(int(args.timeout)):>9}")
                    continue
                ratio = (f"{r['total'] / base['total']:>11.1f}x" if base else "")
                mining = "" if r["mining"] is None else f"{r['mining']:.2f}"
                print(f"{n:>9} {support:>8} {tool:>9} {r['count']:>9} {r['total']:>9.2f} "
                      f"{mining:>9} {r['peak_mb']:>8.0f} {ratio:>12}", flush=True)
            counts = {r["count"] for r in results.values() if r}
            if len(counts) > 1:
                print(f"  !! itemset counts differ: {counts}")


if __name__ == "__main__":
    main()
