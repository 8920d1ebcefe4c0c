"""M5' model trees side by side: duckmine in SQL, Weka's M5P and scikit-learn.

    python -m duckmine.benchmarks.m5p [--sizes 200000,1000000] [--repeat 3]
        [--tools duckmine weka sklearn] [--timeout 14400]
        [--weka-output DIR] [--fresh-weka]

Needs Java with ``/usr/share/java/weka.jar`` and ``pip install scikit-learn`` (the
``bench`` extra). The data is Friedman's regression function, drawn with numpy
(seed 1): ten numeric attributes x1..x10 uniform on [0, 1] and

    y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + N(0, 1)

(x6..x10 are irrelevant), plus two nominal attributes drawn uniformly, each
shifting y by a fixed amount per value: ``colour`` (red 0, green +1.5, blue -1,
yellow +3) and ``size`` (small 0, medium +2, large -2). Then 5% of the attribute
cells (never y) are made missing. The target ``y`` is the last column. The rows
are written once per size as ARFF (six decimals, ``?`` for missing) and loaded
once into a DuckDB file with ``duckmine.read_arff`` (nominal columns become
ENUMs), both cached under ``benchmarks/.data/``, so every tool sees the same
numbers. Every tool runs in its own process, so each reports its own peak memory
(resident set; for M5P the JVM's, run with ``-Xmx16g``):

- duckmine: ``m5p_fit``'s UDF on the rows of friedman in table order (as the m5p table
  form reads them) on an open
  connection, after a warm-up fit on 2,000 rows (the numba kernels come from the
  disk cache, as in a warm session). Then, the model stored in a table, scoring:
  the RMSE of ``predict_value(m.model, t)`` over the whole table (the training
  RMSE, which M5P also prints).
- weka: ``M5P -t file.arff -no-cv`` in a fresh JVM; the fit time is the "Time
  taken to build model" it prints (its own clock), the wall time covers the JVM
  start, reading the ARFF, building and evaluating on the training data.
- sklearn: ``DecisionTreeRegressor(min_samples_split=4)`` fitted on the same table
  fetched from DuckDB (nominal columns as their integer codes, missing values as
  NaN, which its trees take); only ``fit`` is timed. It grows a binary, unpruned
  tree with constant leaves, so its tree is not compared.

Each measurement is repeated ``--repeat`` times in its process (only once when a
run takes over 30 s) and the median is printed. The model duckmine prints
(``model_text``) must be M5P's, line for line (M5P's output from "M5 pruned model
tree" to the line before "Time taken", trailing whitespace removed).

M5P takes long on a million rows, so its result (times, peak memory, printed
model) is kept in ``benchmarks/.data/m5p_weka_<rows>.json`` and reused by later
runs, which say so; ``--fresh-weka`` runs it again. ``--weka-output DIR`` takes a
run recorded by hand instead, and caches it: ``DIR/m5p_weka_<rows>.txt`` holding
M5P's output and, optionally, ``DIR/m5p_weka_<rows>.time`` holding
``/usr/bin/time -v``'s report (for the wall time and peak memory).
"""

import argparse
import json
import re
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from .c45 import (
    arff_database,
    data_dir,
    fit_and_score,
    median,
    numeric_matrix,
    peak_mb,
    repeated,
    tree_lines,
    verdict,
)
from .child import run_child, tool_options

TOOLS = ("duckmine", "weka", "sklearn")
WEKA_JAR = "/usr/share/java/weka.jar"
WEKA = ["java", "-Xmx16g", "-cp", WEKA_JAR, "weka.classifiers.trees.M5P"]
SEED = 1
NUMERIC = [f"x{i}" for i in range(1, 11)]
NOMINAL = {"colour": (("red", 0.0), ("green", 1.5), ("blue", -1.0), ("yellow", 3.0)),
           "size": (("small", 0.0), ("medium", 2.0), ("large", -2.0))}
TARGET = "y"
MISSING = 0.05  # the share of attribute cells made missing
# the rows in the table's order, as M5P reads the file
FIT = f"SELECT model FROM fit('m5p', 'friedman', '{TARGET}')"
SCORE = (f"SELECT sqrt(avg((predict_value(m.model, t) - t.{TARGET}) ^ 2)) "
         "FROM friedman t, (SELECT model FROM fitted) m")
TARGET_RATIO = 10.0  # duckmine's fit at least this many times faster than M5P's


# -- the data ----------------------------------------------------------------------

def friedman(n):
    """The attribute columns (float64; nominal ones as codes; NaN missing) and y."""
    rng = np.random.default_rng(SEED)
    x = rng.random((n, len(NUMERIC)))
    y = (10 * np.sin(np.pi * x[:, 0] * x[:, 1]) + 20 * (x[:, 2] - 0.5) ** 2
         + 10 * x[:, 3] + 5 * x[:, 4] + rng.standard_normal(n))
    columns = list(x.T)
    for values in NOMINAL.values():
        codes = rng.integers(0, len(values), n)
        y += np.array([shift for _, shift in values])[codes]
        columns.append(codes.astype(np.float64))
    missing = rng.random((n, len(columns))) < MISSING
    for column, gone in zip(columns, missing.T):
        column[gone] = np.nan
    return columns, y


def arff(n):
    """The ARFF file of ``n`` instances, written on first use."""
    path = data_dir() / f"friedman_{n}.arff"
    if path.exists():
        return path
    columns, y = friedman(n)
    cells = []
    for column in columns[:len(NUMERIC)]:
        text = np.char.mod("%.6f", column).astype(object)
        text[np.isnan(column)] = "?"
        cells.append(text)
    for values, column in zip(NOMINAL.values(), columns[len(NUMERIC):]):
        labels = np.array([v for v, _ in values] + ["?"], dtype=object)
        cells.append(labels[np.where(np.isnan(column), len(values), column).astype(np.int64)])
    cells.append(np.char.mod("%.6f", y).astype(object))
    header = ["@relation friedman", ""]
    header += [f"@attribute {name} numeric" for name in NUMERIC]
    header += [f"@attribute {name} {{{','.join(v for v, _ in values)}}}"
               for name, values in NOMINAL.items()]
    header += [f"@attribute {TARGET} numeric", "", "@data"]
    tmp = path.with_suffix(".arff.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n")
        f.writelines(",".join(row) + "\n" for row in zip(*cells))
    tmp.rename(path)
    return path


def database(n):
    """The DuckDB file holding the ARFF file of ``n`` instances as table friedman."""
    return arff_database(arff(n), "friedman")


# -- M5P's output ------------------------------------------------------------------

def weka_model(output):
    """M5P's model section: from "M5 pruned model tree" to the line before "Time taken"."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("M5 "))
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("Time taken")),
               len(lines))
    return "\n".join(lines[start:end])


def rules(text):
    """The number of leaves ("Number of Rules : k") of a printed model tree."""
    found = re.search(r"Number of Rules\s*:\s*(\d+)", text)
    return int(found.group(1)) if found else None


def parse_weka(out):
    """Build time, test time and training RMSE M5P printed, and its model."""
    build = re.search(r"Time taken to build model: ([\d.]+) seconds", out)
    test = re.search(r"Time taken to test model on training data: ([\d.]+) seconds", out)
    rmse = re.search(r"Root mean squared error\s+([\d.]+)", out)
    return {"fit": float(build.group(1)), "test": float(test.group(1)) if test else None,
            "rmse": float(rmse.group(1)) if rmse else None, "tree": weka_model(out)}


def weka_cache(n):
    return data_dir() / f"m5p_weka_{n}.json"


def recorded_weka(n, folder):
    """A run of M5P recorded by hand in ``folder`` (its output, and /usr/bin/time -v's
    report if there is one), or None."""
    out = Path(folder) / f"m5p_weka_{n}.txt"
    if not out.exists() or "Time taken to build model" not in out.read_text():
        return None
    r = {**parse_weka(out.read_text()), "runs": 1, "wall": None, "peak_mb": None,
         "source": str(out), "recorded": mtime(out)}
    report = out.with_suffix(".time")
    if report.exists():
        text = report.read_text()
        peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
        wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
        if peak:
            r["peak_mb"] = int(peak.group(1)) / 1024
        if wall:
            r["wall"] = sum(float(p) * 60 ** k
                            for k, p in enumerate(reversed(wall.group(1).split(":"))))
    return r


def mtime(path):
    return datetime.fromtimestamp(Path(path).stat().st_mtime, UTC).strftime(
        "%Y-%m-%d %H:%M UTC")


# -- the tools, each in its own process ---------------------------------------------

def child_duckmine(n, repeat):
    import duckmine

    con = duckmine.connect(str(database(n)), read_only=True)
    runs, fit_peak, text, scores = fit_and_score(
        con, f"SELECT model FROM fit('m5p', '(SELECT * FROM friedman LIMIT 2000)', "
        f"'{TARGET}')", FIT, SCORE, "rmse", repeat)
    con.close()
    return {"fit": median(runs, "fit"), "runs": len(runs), "peak_mb": fit_peak,
            "score": median(scores, "fit"), "rmse": scores[0]["rmse"],
            "score_peak_mb": peak_mb(), "tree": text}


def child_weka(n, repeat):
    cmd = WEKA + ["-t", str(arff(n)), "-no-cv"]

    def fit():
        start = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        return {**parse_weka(out), "wall": time.perf_counter() - start}

    runs = repeated(fit, repeat)
    return {"fit": median(runs, "fit"), "wall": median(runs, "wall"),
            "test": runs[0]["test"], "rmse": runs[0]["rmse"], "runs": len(runs),
            "peak_mb": peak_mb(resource.RUSAGE_CHILDREN), "tree": runs[0]["tree"]}


def child_sklearn(n, repeat):
    from sklearn.tree import DecisionTreeRegressor

    x, y, load = numeric_matrix(database(n), "friedman", TARGET)
    trees = []

    def fit():
        tree = DecisionTreeRegressor(min_samples_split=4, random_state=1)
        start = time.perf_counter()
        tree.fit(x, y)
        trees.append(tree)
        return {"fit": time.perf_counter() - start}

    runs = repeated(fit, repeat)
    tree = trees[-1]
    rmse = float(np.sqrt(np.mean((tree.predict(x) - y) ** 2)))
    return {"fit": median(runs, "fit"), "load": load, "runs": len(runs),
            "peak_mb": peak_mb(), "leaves": int(tree.get_n_leaves()), "rmse": rmse}


def child(tool, n, repeat):
    out = {"duckmine": child_duckmine, "weka": child_weka, "sklearn": child_sklearn}[tool](
        n, repeat)
    print(json.dumps(out))


def run(tool, n, args):
    """One tool's result on ``n`` rows, or None when it ran out of time; M5P's comes
    from a recorded or cached run when there is one."""
    if tool == "weka":
        if args.weka_output and not args.fresh_weka:
            r = recorded_weka(n, args.weka_output)
            if r is not None:  # kept in the cache too, for later runs
                weka_cache(n).write_text(json.dumps({k: v for k, v in r.items()
                                                     if k != "source"}))
                return r
        cache = weka_cache(n)
        if cache.exists() and not args.fresh_weka:
            return {**json.loads(cache.read_text()), "source": str(cache)}
        print(f"running M5P on {n:,} rows (slow: 2.5 hours for a million)...",
              file=sys.stderr, flush=True)
    r = run_child("duckmine.benchmarks.m5p", [tool, n, args.repeat], args.timeout)
    if tool == "weka" and r is not None:
        r["recorded"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        weka_cache(n).write_text(json.dumps(r))
    return r


# -- the report -------------------------------------------------------------------

def compare(mine, theirs):
    """"SAME" or "DIFFERENT" and the first lines that differ."""
    a, b = tree_lines(mine), tree_lines(theirs)
    if a == b:
        return "SAME", f"SAME ({len(a)} lines)"
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    detail = [f"DIFFERENT ({len(a)} lines from duckmine, {len(b)} from M5P; "
              f"first difference at line {at + 1})"]
    for i in range(max(0, at - 2), min(max(len(a), len(b)), at + 4)):
        detail.append(f"      duckmine {i + 1:>6}: {a[i] if i < len(a) else '<end>'}")
        detail.append(f"      M5P      {i + 1:>6}: {b[i] if i < len(b) else '<end>'}")
    return "DIFFERENT", "\n".join(detail)


COLUMNS = ("rows", "duckmine fit s", "duckmine MB", "M5P build s", "M5P MB",
           "sklearn fit s", "sklearn MB", "M5P / duckmine", "sklearn / duckmine",
           "model vs M5P (leaves)", "duckmine scoring s")


def cell(r, key, fmt, timeout):
    if r is None:
        return f"> {timeout:.0f} s" if key == "fit" else "-"
    value = r.get(key)
    return "?" if value is None else format(value, fmt)


def row(n, results, timeout):
    """The table's line for ``n`` rows, and the notes that go under the table."""
    base, weka, sk = (results.get(t, False) for t in TOOLS)
    cells = [f"{n:,}"]
    for r in (base, weka, sk):
        if r is False:
            cells += ["", ""]
        else:
            cells += [cell(r, "fit", ".2f", timeout), cell(r, "peak_mb", ".0f", timeout)]
    cached = bool(weka) and "source" in weka
    if cached:
        cells[3] += " *"
    for r in (weka, sk):
        cells.append(f"{r['fit'] / base['fit']:.1f}x" if base and r else "")
    notes = []
    if base and weka:
        same, detail = compare(base["tree"], weka["tree"])
        cells.append(f"{same} ({rules(base['tree'])} / {rules(weka['tree'])})")
        if same != "SAME":
            notes.append(f"model, duckmine vs M5P: {detail}")
    else:
        cells.append(f"({rules(base['tree'])})" if base else "")
    cells.append(f"{base['score']:.2f}" if base else "")
    if base:
        line = (f"duckmine: {base['runs']} run(s); scoring {n:,} rows with predict_value in "
                f"SQL, training RMSE {base['rmse']:.4f}")
        if weka and weka.get("rmse") is not None:
            line += f" (M5P {weka['rmse']:.4f})"
        notes.append(line + f"; peak {base['score_peak_mb']:.0f} MB with scoring")
    if weka:
        wall = "?" if weka.get("wall") is None else f"{weka['wall']:.1f} s"
        line = (f"M5P: its own build time; wall {wall} (JVM, ARFF, build, test on training"
                + ("" if weka.get("test") is None else f" {weka['test']:.1f} s") + ")")
        if cached:
            line += (f"; * CACHED result, not run now: {weka['source']} "
                     f"(recorded {weka.get('recorded', '?')}; --fresh-weka reruns it)")
        else:
            line += f"; {weka['runs']} run(s)"
        notes.append(line)
    if sk:
        notes.append(f"sklearn: fit only; load+encode {sk['load']:.2f} s; {sk['leaves']} "
                     f"leaves (binary, unpruned, constant); training RMSE {sk['rmse']:.4f}; "
                     f"{sk['runs']} run(s)")
    if base and weka:
        x = weka["fit"] / base["fit"]
        notes.append(f"target duckmine >= {TARGET_RATIO:.0f}x faster than M5P: {x:.1f}x, "
                     f"{verdict(x >= TARGET_RATIO)}")
    return "| " + " | ".join(cells) + " |", notes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="200000,1000000",
                        help="comma-separated numbers of instances")
    tool_options(parser, TOOLS, 14400, 3)
    parser.add_argument("--weka-output", metavar="DIR",
                        help="take M5P's results from DIR/m5p_weka_<rows>.txt (and .time)")
    args = parser.parse_args()
    if args.child:
        tool, n, repeat = args.child
        return child(tool, int(n), int(repeat))
    sizes = [int(s) for s in args.sizes.replace(" ", ",").split(",") if s]
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "|".join("---:" for _ in COLUMNS) + "|", flush=True)
    notes = []
    for n in sizes:
        database(n)
        results = {t: run(t, n, args) for t in args.tools}
        line, more = row(n, results, args.timeout)
        print(line, flush=True)
        notes += [f"- {n:,} rows, {note}" for note in more]
    print("\n" + "\n".join(notes), flush=True)


if __name__ == "__main__":
    main()
