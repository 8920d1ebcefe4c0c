"""The rule learners and trees side by side: duckmine in SQL, the Weka class, and a
Python peer, on Agrawal data (function 2, 5% label noise).

    python -m duckmine.benchmarks.rules_trees [--sizes 200000,1000000] [--repeat 3]
        [--tools duckmine weka peer] [--learners rep_tree,cart,...] [--timeout 1800]

Needs Java with ``/usr/share/java/weka.jar``, scikit-learn and wittgenstein (the
``bench`` extra).
The data: Weka's Agrawal generator (``-F 2 -P 0.05 -S 1``: 6 numeric and 3
nominal attributes, a two-valued class ``group``), written once per size as ARFF and
loaded once into a DuckDB file with ``duckmine.read_arff``, both cached under
``benchmarks/.data/``. Each tool runs in its own process and reports its own peak
memory (resident set; Weka's JVM runs with ``-Xmx16g``):

- duckmine: ``SELECT model FROM fit('rep_tree', 'agrawal', 'group')`` (and
  ``cart``, ``part``, ``ripper``, ``ridor``; the rows in table order, as Weka reads
  the file) on an open connection, after a warm-up fit on ``duckmine compile``'s
  large size (``warm.LARGE_ROWS``, past every learner's threshold for threads), so
  that the kernels of large data are compiled or loaded before the timing, as in a
  warm session; the printed model is kept. Then scoring:
  ``count(*) FILTER (WHERE predict(m.model, t) = t."group"::VARCHAR)``.
- weka: ``REPTree -t file.arff -no-cv`` (``SimpleCart``, ``PART``, ``JRip``,
  ``Ridor``); the fit time is the "Time taken to build model" it prints (its own
  clock), the wall time covers the JVM start, reading the file, building and
  evaluating on the training data.
- peer, on the same table fetched from DuckDB; only ``fit`` is timed:
  - rep_tree: scikit-learn's ``DecisionTreeClassifier(criterion='entropy',
    min_samples_leaf=2)`` (nominal columns as integer codes). It grows binary,
    unpruned trees, so its tree is not compared.
  - cart: scikit-learn's ``DecisionTreeClassifier(min_samples_leaf=2)`` (Gini) with
    ``ccp_alpha`` chosen by 5-fold cross-validation (``GridSearchCV``) among 20
    alphas spread over the full tree's pruning path (quantiles), then refitted: what
    SimpleCart does, with a coarser grid of alphas. Its tree is not compared.
  - ripper: wittgenstein's ``RIPPER(random_state=1)`` (a pandas DataFrame, the
    rarer class positive). It bins numeric columns, so its rules are not compared.
  - PART and Ridor have no Python peer.

Each measurement is repeated ``--repeat`` times (once when a run takes over 30 s)
and the median is shown. duckmine's printed model must be Weka's, line for line.
Targets: 10x Weka's build time at 200,000 rows; no slower than scikit-learn's tree;
50x wittgenstein's RIPPER.

``--rising-missing N`` times, instead, CART alone (unpruned, ``min_leaf`` 1,000) on
``N`` rows where the Gini gain of the attribute ``x`` rises from cut to cut up to its
best and a fifth of ``x`` is missing (seeded): the case where spreading the
missing rows row by row at every cut that may win grows as (rows x missing rows).
"""

import argparse
import json
import re
import subprocess
import time

from ..extension.warm import LARGE_ROWS as WARM_ROWS
from .c45 import WEKA_JAR, arff_database, data_dir, median, peak_mb, repeated, tree_lines
from .child import run_child, tool_options
from .em import java

TOOLS = ("duckmine", "weka", "peer")
TARGET = "group"
LEARNERS = {  # name: the Weka class (defaults on both sides)
    "rep_tree": "weka.classifiers.trees.REPTree",
    "cart": "weka.classifiers.trees.SimpleCart",
    "part": "weka.classifiers.rules.PART",
    "ripper": "weka.classifiers.rules.JRip",
    "ridor": "weka.classifiers.rules.Ridor",
}
SCORE = (f"SELECT count(*) FILTER (WHERE predict(m.model, t) = t.\"{TARGET}\"::VARCHAR) "
         "AS correct FROM agrawal t, (SELECT model FROM fitted) m")


def arff(n):
    """The ARFF file of ``n`` Agrawal (function 2) instances, made by Weka once."""
    path = data_dir() / f"agrawal_f2_{n}.arff"
    if not path.exists():
        tmp = path.with_suffix(".arff.tmp")
        subprocess.run(["java", "-cp", WEKA_JAR,
                        "weka.datagenerators.classifiers.classification.Agrawal",
                        "-n", str(n), "-S", "1", "-F", "2", "-P", "0.05", "-o", str(tmp)],
                       check=True, capture_output=True)
        tmp.rename(path)
    return path


def database(n):
    return arff_database(arff(n), "agrawal")


def child_duckmine(n, repeat, learners):
    import duckmine

    con = duckmine.connect(str(database(n)), read_only=True)
    con.execute("SET enable_progress_bar = false")
    con.execute(f"CREATE TEMP VIEW warm AS SELECT * FROM agrawal LIMIT {WARM_ROWS}")
    out = {}
    for learner in learners:
        sql = f"SELECT model FROM fit('{learner}', '{{source}}', '{TARGET}')"
        con.execute(f"CREATE OR REPLACE TEMP TABLE fitted AS {sql.format(source='warm')}")
        con.execute(SCORE).fetchall()

        def fit(sql=sql):
            start = time.perf_counter()
            con.execute(f"CREATE OR REPLACE TEMP TABLE fitted AS "
                        f"{sql.format(source='agrawal')}")
            return {"fit": time.perf_counter() - start}

        runs = repeated(fit, repeat)
        fit_peak = peak_mb()
        text = con.execute("SELECT model_text(model) FROM fitted").fetchall()[0][0]

        def score():
            start = time.perf_counter()
            correct = con.execute(SCORE).fetchall()[0][0]
            return {"fit": time.perf_counter() - start, "correct": correct}

        scores = repeated(score, repeat)
        out[learner] = {"fit": median(runs, "fit"), "runs": len(runs), "peak_mb": fit_peak,
                        "score": median(scores, "fit"),
                        "accuracy": scores[0]["correct"] / n, "text": text}
    con.close()
    return out


def child_weka(n, repeat, timeout, learners):
    deadline = time.perf_counter() + timeout
    path = str(arff(n))
    out = {}
    for learner in learners:
        def fit(weka=LEARNERS[learner]):
            done = java([weka, "-t", path, "-no-cv"], deadline)
            if done is None:
                raise TimeoutError
            text, wall, peak = done
            build = float(re.search(r"Time taken to build model: ([\d.]+)", text)[1])
            model = "\n".join(line for line in
                              text[:text.index("Time taken to build model")].splitlines()
                              if not line.startswith("Options: "))
            return {"fit": build, "wall": wall, "peak_mb": peak, "text": model}
        try:
            runs = repeated(fit, repeat)
        except TimeoutError:
            out[learner] = None
            continue
        out[learner] = {**runs[-1], "fit": median(runs, "fit"), "wall": median(runs, "wall"),
                        "runs": len(runs), "peak_mb": max(r["peak_mb"] for r in runs)}
    return out


def child_peer(n, repeat, timeout, learners):
    import duckdb
    import numpy as np
    import wittgenstein
    from sklearn.model_selection import GridSearchCV
    from sklearn.tree import DecisionTreeClassifier

    deadline = time.perf_counter() + timeout
    con = duckdb.connect(str(database(n)), read_only=True)
    table = con.sql("SELECT * FROM agrawal").fetchnumpy()
    cols = [c for c in table if c != TARGET]
    X = np.column_stack([np.asarray(table[c].codes if hasattr(table[c], "codes")
                                    else table[c], np.float64) for c in cols])
    y = np.asarray(table[TARGET].codes if hasattr(table[TARGET], "codes") else table[TARGET])
    frame = con.sql("SELECT * FROM agrawal").df()
    for c in frame.columns:
        if str(frame[c].dtype) == "category":
            frame[c] = frame[c].astype(str)
    rarer = frame[TARGET].value_counts().idxmin()
    def cart():
        tree = DecisionTreeClassifier(min_samples_leaf=2, random_state=1)
        path = tree.cost_complexity_pruning_path(X, y).ccp_alphas
        alphas = np.unique(np.quantile(path, np.linspace(0, 1, 20)))
        GridSearchCV(tree, {"ccp_alpha": alphas}, cv=5).fit(X, y)

    fits = {
        "rep_tree": lambda: DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2,
                                                   random_state=1).fit(X, y),
        "cart": cart,
        "ripper": lambda: wittgenstein.RIPPER(random_state=1).fit(
            frame, class_feat=TARGET, pos_class=rarer),
    }
    out = {}
    for learner, run in fits.items():
        if learner not in learners:
            continue
        if time.perf_counter() > deadline:
            break

        def fit(run=run):
            start = time.perf_counter()
            run()
            return {"fit": time.perf_counter() - start}

        runs = repeated(fit, repeat)
        out[learner] = {"fit": median(runs, "fit"), "runs": len(runs), "peak_mb": peak_mb()}
    return out


def rising_missing(n, repeat):
    """CART's fit time on the ``--rising-missing`` table of ``n`` rows."""
    import numpy as np
    import pyarrow as pa

    import duckmine

    con = duckmine.connect()
    rng = np.random.default_rng(1)
    x = rng.random(n)
    y = np.where(x + 0.3 * rng.random(n) > 0.65, "a", "b")
    x[rng.random(n) < 0.2] = np.nan
    rows = pa.table({"x": x, "z": rng.random(n), "y": y})  # noqa: F841 (read by SQL)
    con.execute("CREATE TABLE rising AS SELECT * FROM rows")
    con.execute("CREATE TABLE warm AS FROM rising LIMIT 1000")
    sql = "SELECT * FROM fit('cart', '{}', 'y', options := {{'pruned': false, " \
        "'min_leaf': 1000}})"
    con.execute(sql.format("warm")).fetchall()  # the kernels loaded
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        con.execute(sql.format("rising")).fetchall()
        runs.append(time.perf_counter() - start)
    print(f"CART, {n:,} rows, gains rising, a fifth of x missing: fit "
          f"{sorted(runs)[len(runs) // 2]:.2f} s (median of {repeat}), peak {peak_mb():.0f} MB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200000,1000000")
    parser.add_argument("--rising-missing", type=int, metavar="N",
                        help="time CART on N rows of rising gains and missing values")
    parser.add_argument("--learners", default=",".join(LEARNERS),
                        help="comma-separated, of " + ", ".join(LEARNERS))
    tool_options(parser, TOOLS, 1800, 5, weka=False)
    args = parser.parse_args()
    if args.child:
        tool, n, repeat, timeout, learners = args.child
        n, repeat, timeout = int(n), int(repeat), float(timeout)
        learners = learners.split(",")
        result = {"duckmine": lambda: child_duckmine(n, repeat, learners),
                  "weka": lambda: child_weka(n, repeat, timeout, learners),
                  "peer": lambda: child_peer(n, repeat, timeout, learners)}[tool]()
        print(json.dumps(result))
        return
    if args.rising_missing:
        rising_missing(args.rising_missing, args.repeat)
        return
    learners = args.learners.split(",")
    unknown = sorted(set(learners) - set(LEARNERS))
    if unknown:
        parser.error(f"--learners: unknown {', '.join(unknown)}; choose among "
                     + ", ".join(LEARNERS))
    for n in (int(s) for s in args.sizes.split(",")):
        database(n)
        results = {tool: run_child("duckmine.benchmarks.rules_trees",
                                   [tool, n, args.repeat, args.timeout, ",".join(learners)],
                                   args.timeout + 60)
                   for tool in args.tools}
        print(f"\n{n:,} rows")
        print(f"{'learner':<12}{'duckmine s':>11}{'MB':>7}{'score s':>9}{'weka s':>9}"
              f"{'weka MB':>9}{'peer s':>10}{'peer MB':>8}{'vs weka':>9}{'vs peer':>8}"
              "  same model  accuracy")
        for learner in learners:
            m = (results.get("duckmine") or {}).get(learner)
            w = (results.get("weka") or {}).get(learner)
            s = (results.get("peer") or {}).get(learner)
            cells = [f"{learner:<12}"]
            cells.append(f"{m['fit']:>11.3f}{m['peak_mb']:>7.0f}{m['score']:>9.3f}" if m
                         else f"{'-':>27}")
            cells.append(f"{w['fit']:>9.2f}{w['peak_mb']:>9.0f}" if w else f"{'-':>18}")
            cells.append(f"{s['fit']:>10.3f}{s['peak_mb']:>8.0f}" if s else f"{'-':>18}")
            cells.append(f"{w['fit'] / m['fit']:>8.1f}x" if m and w else f"{'-':>9}")
            cells.append(f"{s['fit'] / m['fit']:>7.2f}x" if m and s else f"{'-':>8}")
            same = "yes" if m and w and tree_lines(m["text"]) == tree_lines(w["text"]) else \
                ("NO" if m and w else "-")
            cells.append(f"  {same:<10}  {m['accuracy']:.4f}" if m else "")
            print("".join(cells), flush=True)


if __name__ == "__main__":
    main()
