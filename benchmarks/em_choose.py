"""EM choosing its number of clusters (``k := -1``, the default), against Weka's EM,
on data with no clusters in it.

    python -m duckmine.benchmarks.em_choose [--rows 2000 5000 10000]
        [--tools duckmine weka] [--repeat 1] [--timeout 7200] [--fresh-weka]

The data are ``--rows`` points drawn uniformly from the unit cube in five
dimensions (numpy, seed 3; six decimals), written once per size as ARFF and loaded
into a DuckDB file (table ``points``), under ``benchmarks/.data/``. With nothing to
find, ten-fold cross-validation keeps adding clusters for a long time: each number
of clusters tried costs ten fits (ten k-means starts and up to 100 EM iterations
each), so this is EM's most expensive default.

- duckmine: ``SELECT model FROM fit('em', 'points', NULL)`` on an open connection
  (the rows in the table's order, as Weka reads the file), after a warm-up fit on
  200 rows that loads the cached kernels;
- weka: ``weka.clusterers.EM -t file.arff`` (its defaults: ``-I 100 -N -1 -S 100``)
  in a fresh JVM; its time is the whole run's wall time (JVM start, reading the
  file and the evaluation pass over the training rows included: Weka prints no
  build time for clusterers; they are a second or two of these runs).

The printed models are compared line for line. Weka's results are kept in
``benchmarks/.data/em_choose_weka_<rows>.json`` and reused; ``--fresh-weka`` runs it
again.
"""

import argparse
import json
import re
import sys
import time
from datetime import UTC, datetime

import numpy as np

from .c45 import data_dir, median, peak_mb, repeated
from .child import answer, run_child, tool_options
from .em import java, same, weka_model, write_arff

TOOLS = ("duckmine", "weka")
DIMENSIONS = 5
TARGET = 10.0  # times faster than Weka


def arff(n):
    path = data_dir() / f"em_choose_{n}.arff"
    if not path.exists():
        x = np.random.default_rng(3).random((n, DIMENSIONS))
        attributes = [(f"x{j}", "numeric") for j in range(DIMENSIONS)]
        write_arff(path, "uniform", attributes,
                   [np.char.mod("%.6f", x[:, j]).astype(object) for j in range(DIMENSIONS)])
    return path


def child_duckmine(n, repeat):
    import duckdb

    import duckmine

    con = duckdb.connect()
    duckmine.load(con)
    con.execute("SET enable_progress_bar = false")
    duckmine.read_arff(con, str(arff(n)), "points")
    sql = "SELECT model FROM fit('em', '{}', NULL)"
    con.execute(sql.format("(SELECT * FROM points LIMIT 200)")).fetchall()

    def fit():
        start = time.perf_counter()
        con.execute(f"CREATE OR REPLACE TEMP TABLE fitted AS {sql.format('points')}")
        return {"fit": time.perf_counter() - start}

    runs = repeated(fit, repeat)
    text = con.execute("SELECT model_text(model) FROM fitted").fetchone()[0]
    return {"fit": median(runs, "fit"), "runs": len(runs), "text": text,
            "peak_mb": peak_mb()}


def child_weka(n, repeat, timeout):
    deadline = time.perf_counter() + timeout

    def fit():
        done = java(["weka.clusterers.EM", "-t", str(arff(n))], deadline)
        if done is None:
            raise TimeoutError
        text, wall, peak = done
        return {"fit": wall, "peak_mb": peak, "text": weka_model(text, "EM")}

    try:
        runs = repeated(fit, repeat)
    except TimeoutError:
        return None
    return {**runs[-1], "fit": median(runs, "fit"), "runs": len(runs)}


def clusters(text):
    found = re.search(r"Number of clusters selected by cross validation: (\d+)", text)
    return int(found.group(1)) if found else None


def run(tool, n, args):
    cache = data_dir() / f"em_choose_weka_{n}.json"
    if tool == "weka" and cache.exists() and not args.fresh_weka:
        return {**json.loads(cache.read_text()), "source": str(cache)}
    if tool == "weka":
        print(f"running Weka on {n:,} rows...", file=sys.stderr, flush=True)
    r = run_child("duckmine.benchmarks.em_choose", [tool, n, args.repeat, args.timeout],
                  args.timeout + 60)
    if tool == "weka" and r is not None:
        r["recorded"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        cache.write_text(json.dumps(r))
    return r


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 5000, 10000])
    tool_options(parser, TOOLS, 7200, 4)
    parser.set_defaults(repeat=1)
    args = parser.parse_args()
    if args.child:
        return answer(args.child, child_duckmine, child_weka)
    print("| rows | duckmine | Weka EM (whole run) | vs Weka | clusters (duckmine, Weka) "
          "| same model |")
    print("|---|---|---|---|---|---|")
    ok, compared = True, False
    for n in args.rows:
        r = {tool: run(tool, n, args) for tool in args.tools}
        mine, theirs = r.get("duckmine"), r.get("weka")
        cells = [f"{n:,}"]
        for x in (mine, theirs):
            cells.append("-" if x is None else f"{x['fit']:.2f} s, {x['peak_mb']:,.0f} MB")
        ratio = theirs["fit"] / mine["fit"] if mine and theirs else None
        cells.append("-" if ratio is None else f"{ratio:.1f}x")
        cells.append(", ".join("-" if x is None else str(clusters(x["text"]))
                               for x in (mine, theirs)))
        cells.append(same(mine["text"], theirs["text"]) if mine and theirs else "-")
        print("| " + " | ".join(cells) + " |", flush=True)
        if ratio is not None:
            compared = True
            ok = ok and ratio >= TARGET and cells[-1].startswith("SAME")
        if theirs and theirs.get("source"):
            print(f"  (Weka's result from {theirs['source']}, {theirs.get('recorded')})")
    verdict = ("met" if ok else "NOT met") if compared else "not measured (no Weka runs)"
    print(f"target: {TARGET:.0f}x Weka with the same model: {verdict}")


if __name__ == "__main__":
    main()
