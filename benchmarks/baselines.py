"""The baselines side by side: duckmine's zero_r, one_r and naive_bayes in SQL and
Weka's ZeroR, OneR and NaiveBayes, on Agrawal data.

    python -m duckmine.benchmarks.baselines [--sizes 200000,1000000] [--repeat 3]
        [--tools duckmine weka] [--timeout 1800]

Needs Java with ``/usr/share/java/weka.jar``. The data is the C4.5 benchmark's
(Weka's Agrawal generator: 6 numeric and 3 nominal attributes, a two-valued class
``group``), cached under ``benchmarks/.data/``. Each tool runs in its own process,
so each reports its own peak memory (resident set; Weka's JVM runs with
``-Xmx16g``):

- duckmine: for each learner, ``SELECT model FROM fit('<learner>', 'agrawal',
  'group', options := {...})`` (the rows in table order, as Weka reads the file) on
  an open connection, after a warm-up fit on 2,000 rows; the printed model
  (``model_text``) is kept. Then scoring:
  ``count(*) FILTER (WHERE predict(m.model, t) = t."group"::VARCHAR)``.
- weka: ``<classifier> -t file.arff -no-cv`` in a fresh JVM; the fit time is the
  "Time taken to build model" it prints, the wall time covers the JVM start,
  reading the file, building and evaluating on the training data.

Each measurement is repeated ``--repeat`` times (once when a run takes over 30 s)
and the median is shown. duckmine's printed model must be Weka's, line for line.
"""

import argparse
import re
import time

from .c45 import (
    TARGET,
    WEKA_JAR,
    arff,
    database,
    median,
    peak_mb,
    repeated,
    tree_lines,
    verdict,
)
from .child import answer, run_child, tool_options
from .em import java

TOOLS = ("duckmine", "weka")
LEARNERS = {  # name: (options as SQL, Weka class, Weka options)
    "zero_r": ("", "weka.classifiers.rules.ZeroR", []),
    "one_r": ("'min_bucket': 6", "weka.classifiers.rules.OneR", ["-B", "6"]),
    "naive_bayes": ("'numeric': 'normal'", "weka.classifiers.bayes.NaiveBayes", []),
    "naive_bayes kernel": ("'numeric': 'kernel'", "weka.classifiers.bayes.NaiveBayes",
                           ["-K"]),
    "naive_bayes discretize": ("'numeric': 'discretize'",
                               "weka.classifiers.bayes.NaiveBayes", ["-D"]),
}
SCORE = (f"SELECT count(*) FILTER (WHERE predict(m.model, t) = t.\"{TARGET}\"::VARCHAR) "
         "AS correct FROM agrawal t, (SELECT model FROM fitted) m")


def fit_sql(learner, source):
    options = LEARNERS[learner][0]
    return (f"SELECT model FROM fit('{learner.split()[0]}', '{source}', '{TARGET}'"
            f"{', options := {' + options + '}' if options else ''})")


def child_duckmine(n, repeat):
    import duckmine

    con = duckmine.connect(str(database(n)), read_only=True)
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE TEMP VIEW warm AS SELECT * FROM agrawal LIMIT 2000")
    out = {}
    for learner in LEARNERS:
        con.execute(f"CREATE OR REPLACE TEMP TABLE fitted AS {fit_sql(learner, 'warm')}")
        con.execute(SCORE).fetchall()

        def fit(learner=learner):
            start = time.perf_counter()
            con.execute(f"CREATE OR REPLACE TEMP TABLE fitted AS {fit_sql(learner, 'agrawal')}")
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


def child_weka(n, repeat, timeout):
    deadline = time.perf_counter() + timeout
    path = str(arff(n))
    out = {}
    for learner, (_, cls, options) in LEARNERS.items():
        def fit(cls=cls, options=options):
            done = java([cls, "-t", path, "-no-cv", *options], deadline)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200000,1000000")
    tool_options(parser, TOOLS, 1800, 4, weka=False)
    args = parser.parse_args()
    if args.child:
        return answer(args.child, child_duckmine, child_weka)
    print(f"Weka: {WEKA_JAR}")
    for n in (int(s) for s in args.sizes.split(",")):
        arff(n)
        database(n)
        results = {tool: run_child("duckmine.benchmarks.baselines",
                                   [tool, n, args.repeat, args.timeout], args.timeout + 60)
                   for tool in args.tools}
        mine, weka = results.get("duckmine"), results.get("weka")
        print(f"\n{n:,} rows")
        print(f"{'learner':<24}{'duckmine s':>11}{'MB':>8}{'B/row':>7}{'score s':>9}"
              f"{'weka build s':>13}{'weka wall s':>12}{'weka MB':>9}{'build x':>9}"
              f"{'wall x':>8}  same model")
        for learner in LEARNERS:
            m = (mine or {}).get(learner)
            w = (weka or {}).get(learner)
            cells = [f"{learner:<24}"]
            cells += [f"{m['fit']:>11.3f}", f"{m['peak_mb']:>8.0f}",
                      f"{m['peak_mb'] * 2**20 / n:>7.0f}", f"{m['score']:>9.3f}"] if m \
                else [f"{'-':>11}{'-':>8}{'-':>7}{'-':>9}"]
            if w:
                cells += [f"{w['fit']:>13.2f}", f"{w['wall']:>12.2f}", f"{w['peak_mb']:>9.0f}"]
                if m:
                    cells += [f"{w['fit'] / m['fit']:>8.1f}x", f"{w['wall'] / m['fit']:>7.1f}x",
                              "  " + verdict(tree_lines(m["text"]) == tree_lines(w["text"]))
                              .replace("met", "yes").replace("MISSED", "NO")]
            print("".join(cells), flush=True)


if __name__ == "__main__":
    main()
