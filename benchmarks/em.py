"""EM and k-means side by side: duckmine in SQL, scikit-learn and Weka, on a known
mixture of Gaussians.

    python -m duckmine.benchmarks.em [--rows 1000000] [--k 5] [--iterations 20]
        [--repeat 3] [--data numeric mixed] [--tools duckmine sklearn weka]
        [--timeout 14400] [--fresh-weka] [--kmeans-only]

Needs Java with ``/usr/share/java/weka.jar`` and ``pip install scikit-learn`` (the
``bench`` extra). The data are drawn with numpy (seed 7) from a fixed mixture of
five diagonal Gaussians in ten dimensions: means uniform on [-10, 10] (redrawn
until every two are at least 10 apart), standard deviations uniform on [0.5, 2],
weights 0.35, 0.25, 0.18, 0.13 and 0.09. Two data sets share the rows:

- ``numeric``: the ten numeric attributes x1..x10;
- ``mixed``: x1..x8, and instead of x9 and x10 two nominal attributes, ``colour``
  (3 values) and ``shape`` (4 values), whose value probabilities depend on the
  component (per component a Dirichlet(1, ..., 1) draw); then 5% of all cells are
  made missing.

Each is written once per size as ARFF (six decimals, ``?`` for missing) and loaded
once into a DuckDB file (table ``points``) with ``duckmine.read_arff``, both cached
under ``benchmarks/.data/``, so every tool sees the same numbers. Every tool runs in
its own process and reports its own peak memory (resident set; k-means runs first,
then EM, so a process's peak after EM covers both; Weka's is each JVM's own):

- duckmine: ``SELECT em_fit(t, k := 5, max_iterations := N, seed := 100)`` and
  ``SELECT kmeans_fit(t, 5, seed := 10, init := 'k-means++')`` on an open
  connection (the model kept in a temporary table), after warm-up fits on
  ``duckmine compile``'s large size (``warm.LARGE_ROWS``: more than a chunk, so that
  the kernels that run chunks on threads are compiled or loaded, as in a warm
  session). The
  log-likelihood is the ``log_likelihood`` column of the model's relation (the
  rows ``em(...)`` shows), the mean log-density per instance at the last E step,
  as Weka prints it. Also shown: ``avg(log_likelihood(model, t))`` over the table,
  the same under the final parameters, which is what scikit-learn's ``score()``
  gives. The fit includes the hand-off of the rows from SQL and, for EM, Weka's
  initialisation: the best of ten k-means runs (random seeding). The row
  "duckmine, in memory" is the same k-means++ fit of the numeric data by the core
  (``fit_kmeans``) on columns fetched from the table beforehand, timed as
  scikit-learn's ``fit`` is.
- sklearn: ``GaussianMixture(5, covariance_type='diag', tol=0, init_params='kmeans',
  n_init=1)`` (one k-means run as initialisation; ``tol=0`` makes it run all N
  iterations) and ``KMeans(5, init='k-means++', n_init=1, tol=0)`` (``tol=0``:
  it stops when no assignment changes, as Weka's and duckmine's do), on the numeric
  table fetched from DuckDB; only ``fit`` is timed. k-means runs on the attributes
  scaled to [0, 1] by their range, which is the distance Weka's and duckmine's
  k-means use, so its SSE (``inertia_``) is theirs; the ratio also gives its time
  from the table, as duckmine's is: the fetch, the scaling and the fit. scikit-learn takes neither
  nominal attributes nor missing values, so it sits out the ``mixed`` data.
- weka: ``weka.clusterers.EM -t file.arff -N 5 -I N -S 100`` and
  ``weka.clusterers.SimpleKMeans -t file.arff -N 5 -S 10`` (Weka 3.6 has random
  seeding only: duckmine's ``init := 'random'`` is the same algorithm, so it is
  timed as well) in fresh JVMs (``-Xmx16g``). Weka prints no build time for
  clusterers: its time is the wall time of the whole run, which includes the JVM
  start, reading the ARFF file and the evaluation pass over the training data
  (cluster assignments, log-likelihood). The wall time of a JVM that only reads
  the file (``RemoveRange`` of every row, to /dev/null) is shown as well, and the
  ratio to duckmine is given with it subtracted too.

Seconds per iteration. On data this well separated, EM with Weka's stopping rule
(a gain in mean log-likelihood below 1e-6; em_fit has no tolerance option) stops
after a few iterations, 2 on the numeric data, so a fit with at most N iterations
minus a fit with at most 1 measures a single E step. duckmine's time per
iteration is therefore taken on its EM kernel directly: the rows prepared as
``em_fit`` prepares them and the model initialised as it does, N calls of the EM
loop kernel with ``max_iter`` 1, each one E step and one M step (the kernel checks
convergence only from its second step on), timed together and divided by N.
scikit-learn's, with ``tol=0``, is the difference of its fits with ``max_iter``
N and 1 divided by the difference in ``n_iter_`` (its initialisation cancels);
the same difference of duckmine's SQL fits (per E step done) is shown in the notes.
The fit of each tool is also broken down: duckmine's EM fit stage by stage (the
hand-off from SQL, the ten k-means runs, the EM loop). k-means' time per pass is
the difference of fits with at most 500 (sklearn: 500) and 1 passes, over the
difference in passes. Weka prints neither time nor EM iteration count, so it has
no time per iteration; its EM iterations are taken to be duckmine's (the same
algorithm and seed: the printed models are compared line for line). They match
only when duckmine sees the rows in the file's order: on a table of more than one
row group, DuckDB's parallel scan hands ``list(t)`` the rows in an order that
varies from run to run, and random seeding (EM's initialisation, Weka's k-means)
picks rows by position, so the models, iteration counts and fit times of EM can
then differ from Weka's and from run to run.

Each measurement is repeated ``--repeat`` times in its process (only once when a
run takes over 30 s) and the median is printed. Weka's results are kept in
``benchmarks/.data/em_weka_<data>_<rows>_k<k>_i<N>.json`` and reused by later runs,
which say so; ``--fresh-weka`` runs Weka again.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ..extension.warm import LARGE_ROWS as WARM_ROWS
from .c45 import data_dir, median, peak_mb, repeated, tree_lines, verdict
from .child import run_child, tool_options

TOOLS = ("duckmine", "sklearn", "weka")
DATA = ("numeric", "mixed")
WEKA_JAR = "/usr/share/java/weka.jar"
JAVA = ["java", "-Xmx16g", "-cp", WEKA_JAR]
SEED = 7
COMPONENTS = 5
WEIGHTS = (0.35, 0.25, 0.18, 0.13, 0.09)
NUMERIC = [f"x{i}" for i in range(1, 11)]
NOMINAL = {"colour": ("red", "green", "blue"), "shape": ("circle", "square", "triangle", "star")}
MISSING = 0.05  # the share of cells made missing in the mixed data
EM_SEED, KMEANS_SEED = 100, 10  # Weka's defaults
MIN_SD = 1e-6  # em_fit's default min_stddev
TARGETS = {"sklearn": 1.5, "weka": 10.0}  # per EM iteration vs sklearn; times faster than Weka


# -- the data ----------------------------------------------------------------------

def mixture():
    """The true mixture: weights (5,), means and standard deviations (5, 10), and
    per nominal attribute the value probabilities of each component (5, values)."""
    rng = np.random.default_rng(SEED)
    while True:
        means = rng.uniform(-10, 10, (COMPONENTS, len(NUMERIC)))
        gaps = np.linalg.norm(means[:, None] - means[None], axis=2)
        if gaps[np.triu_indices(COMPONENTS, 1)].min() >= 10:
            break
    sds = rng.uniform(0.5, 2.0, (COMPONENTS, len(NUMERIC)))
    probs = [rng.dirichlet(np.ones(len(v)), COMPONENTS) for v in NOMINAL.values()]
    return np.array(WEIGHTS), means, sds, probs


def draw(n, part=()):
    """(component of each row, the numeric attributes (n, 10), the nominal codes
    (n, 2), the mixed data's missing cells (n, 10)); ``part`` adds to the seed (a
    large table's place of the draw)."""
    weights, means, sds, probs = mixture()
    rng = np.random.default_rng([SEED, n, *part])
    z = rng.choice(COMPONENTS, n, p=weights)
    x = means[z] + sds[z] * rng.standard_normal((n, len(NUMERIC)))
    codes = []
    for p in probs:
        cum = np.cumsum(p, axis=1)[z]
        codes.append(np.minimum((rng.random(n)[:, None] >= cum).sum(axis=1), p.shape[1] - 1))
    missing = rng.random((n, len(NUMERIC))) < MISSING
    return z, x, np.column_stack(codes), missing


def write_arff(path, relation, attributes, cells):
    """``attributes``: (name, ARFF type); ``cells``: one object array of text each."""
    header = [f"@relation {relation}", ""]
    header += [f"@attribute {name} {kind}" for name, kind in attributes]
    header += ["", "@data"]
    tmp = path.with_suffix(".arff.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n")
        f.writelines(",".join(row) + "\n" for row in zip(*cells))
    tmp.rename(path)


def arff(data, n):
    """The ARFF file of ``n`` rows of ``data`` ('numeric' or 'mixed'), written on
    first use."""
    path = data_dir() / f"em_{data}_{n}.arff"
    if path.exists():
        return path
    _, x, codes, missing = draw(n)
    kept = NUMERIC if data == "numeric" else NUMERIC[:len(NUMERIC) - len(NOMINAL)]
    attributes = [(name, "numeric") for name in kept]
    cells = [np.char.mod("%.6f", x[:, j]).astype(object) for j in range(len(kept))]
    if data == "mixed":
        for j, (name, values) in enumerate(NOMINAL.items()):
            attributes.append((name, "{" + ",".join(values) + "}"))
            cells.append(np.array(values, dtype=object)[codes[:, j]])
        for column, gone in zip(cells, missing.T):
            column[gone] = "?"
    write_arff(path, f"mixture_{data}", attributes, cells)
    return path


ARFF_ROWS = 10_000_000  # larger tables go straight into DuckDB (no tool reads ARFF)
DRAW_ROWS = 1_000_000  # and are drawn this many rows at a time


def database(data, n):
    """The DuckDB file holding ``n`` rows of ``data`` as table points: its ARFF
    file read, or for more than ``ARFF_ROWS`` rows (beyond Weka and scikit-learn
    here) the rows drawn from the same mixture a million at a time, each draw
    seeded by its place, and written as the ARFF reader would type them."""
    path = data_dir() / f"em_{data}_{n}.duckdb"
    if not path.exists():
        import duckdb

        import duckmine

        tmp = Path(str(path) + ".tmp")
        tmp.unlink(missing_ok=True)
        con = duckdb.connect(str(tmp))
        if n <= ARFF_ROWS:
            duckmine.read_arff(con, arff(data, n), "points")
        else:
            _drawn_table(con, data, n)
        con.close()
        tmp.rename(path)
    return path


def _drawn_table(con, data, n):
    import pyarrow as pa

    kept = NUMERIC if data == "numeric" else NUMERIC[:len(NUMERIC) - len(NOMINAL)]
    nominal = {} if data == "numeric" else NOMINAL
    columns = [f'"{c}" DOUBLE' for c in kept]
    columns += [f'"{c}" VARCHAR' for c in nominal]
    con.execute(f"CREATE TABLE points ({', '.join(columns)})")
    for start in range(0, n, DRAW_ROWS):
        m = min(DRAW_ROWS, n - start)
        _, x, codes, missing = draw(m, (n, start))
        arrays = [pa.array(np.round(x[:, j], 6), mask=missing[:, j] if nominal else None)
                  for j in range(len(kept))]
        for j, values in enumerate(nominal.values()):
            gone = missing[:, len(kept) + j]
            arrays.append(pa.array(np.array(values, dtype=object)[codes[:, j]], mask=gone))
        chunk = pa.table(arrays, names=kept + list(nominal))  # noqa: F841 (read by SQL)
        con.execute("INSERT INTO points SELECT * FROM chunk")


# -- SQL ---------------------------------------------------------------------------

# The rows go to the learner in the table's order, as the reference reads the file
# (random starts pick rows by position).
ORDERED = "SELECT model FROM fit('{learner}', '{source}', NULL, options := {{{options}}})"


def em_sql(source, k, iterations):
    return ORDERED.format(learner="em", source=source.replace("'", "''"), options=(
        f"'k': {k}, 'max_iterations': {iterations}, 'seed': {EM_SEED}, "
        f"'min_stddev': {MIN_SD}"))


def kmeans_sql(source, k, init, iterations=500):
    return ORDERED.format(learner="kmeans", source=source.replace("'", "''"), options=(
        f"'k': {k}, 'seed': {KMEANS_SEED}, 'init': '{init}', "
        f"'max_iterations': {iterations}"))


RELATION_LL = ("SELECT DISTINCT c.log_likelihood, c.num_clusters "
               "FROM (SELECT unnest(_dm_rows_em(model)) AS c FROM fitted)")
SCORED_LL = "SELECT avg(log_likelihood(m.model, t)) FROM {source} t, (SELECT model FROM fitted) m"


# -- the tools, each in its own process ---------------------------------------------

def differenced(full, one, key="iterations"):
    """Seconds per iteration: (fit with N - fit with 1) / (iterations N - iterations 1)."""
    steps = full[key] - one[key]
    return (full["fit"] - one["fit"]) / steps if steps > 0 else None


def child_duckmine(data, n, k, iterations, repeat):
    import duckmine
    from duckmine.udfs.models import model_of

    con = duckmine.connect(str(database(data, n)), read_only=True)
    con.execute("SET enable_progress_bar = false")
    # load the cached kernels first, as a warm session would have them
    warm = f"(SELECT * FROM points LIMIT {WARM_ROWS})"
    for sql in (kmeans_sql(warm, k, "k-means++"), kmeans_sql(warm, k, "random"),
                em_sql(warm, k, 2)):
        con.execute(f"CREATE OR REPLACE TEMP TABLE fitted AS {sql}")
    con.execute(RELATION_LL).fetchall()
    con.execute(SCORED_LL.format(source=warm)).fetchall()
    con.execute("SELECT model_text(model) FROM fitted").fetchall()

    def measure(sql):
        def fit():
            start = time.perf_counter()
            con.execute(f"CREATE OR REPLACE TEMP TABLE fitted AS {sql}")
            seconds = time.perf_counter() - start
            model = model_of("bench", con.execute("SELECT model FROM fitted").fetchone()[0])
            return {"fit": seconds, "iterations": model.iterations, "model": model}
        runs = repeated(fit, repeat)
        return {"fit": median(runs, "fit"), "iterations": runs[-1]["iterations"],
                "runs": len(runs), "model": runs[-1]["model"]}

    out = {}
    for init in ("k-means++", "random"):
        full = measure(kmeans_sql("points", k, init))
        one = measure(kmeans_sql("points", k, init, 1))
        out[f"kmeans {init}"] = {
            "fit": full["fit"], "iterations": full["iterations"], "runs": full["runs"],
            "per_iteration": differenced(full, one), "sse": full["model"].sse,
            "text": full["model"].text(), "peak_mb": peak_mb()}
    out["kmeans in memory"] = kmeans_in_memory(con, k, repeat)
    if not iterations:  # k-means only
        con.close()
        return out
    one = measure(em_sql("points", k, 1))
    full = measure(em_sql("points", k, iterations))  # kept in fitted, for what follows
    relation = con.execute(RELATION_LL).fetchall()
    scored = con.execute(SCORED_LL.format(source="points")).fetchone()[0]
    out["em"] = {"fit": full["fit"], "iterations": full["iterations"], "runs": full["runs"],
                 "fit_1": one["fit"], "differenced": differenced(full, one),
                 "log_likelihood": relation[0][0], "clusters": relation[0][1],
                 "scored_log_likelihood": scored, "reverted": full["model"].reverted,
                 "text": con.execute("SELECT model_text(model) FROM fitted").fetchone()[0],
                 "peak_mb": peak_mb()}
    out["em"].update(em_stages(con, k, iterations))
    con.close()
    return out


def kmeans_in_memory(con, k, repeat):
    """The same k-means++ fit from columns already in memory, as scikit-learn's
    ``fit`` is timed: the core alone, without the hand-off from SQL."""
    from duckmine.algorithms.clusters.model import fit_kmeans
    from duckmine.algorithms.dataset import NUMERIC, Attribute, Dataset

    columns = con.execute("SELECT * FROM points").fetchnumpy()
    if any(c.dtype != np.float64 for c in columns.values()):
        return None  # nominal columns: the numeric data only
    arrays = {name: np.asarray(c, np.float64) for name, c in columns.items()}

    def fit():
        data = Dataset([Attribute(name, NUMERIC) for name in arrays], list(arrays.values()))
        start = time.perf_counter()
        model = fit_kmeans(data, k, seed=KMEANS_SEED, init="k-means++")
        return {"fit": time.perf_counter() - start, "iterations": model.iterations,
                "sse": model.sse}

    runs = repeated(fit, repeat)
    return {"fit": median(runs, "fit"), "iterations": runs[-1]["iterations"],
            "sse": runs[-1]["sse"], "runs": len(runs), "peak_mb": peak_mb()}


def em_stages(con, k, iterations):
    """The stages of one EM fit, run step by step outside SQL as ``em_fit`` runs
    them, and the seconds per iteration of the EM loop's kernel, timed directly:
    ``iterations`` calls of it with max_iter 1, each one E and one M step (it checks
    convergence only from its second step on)."""
    from duckmine.algorithms.clusters import em, kmeans
    from duckmine.algorithms.clusters.model import _prepare
    from duckmine.udfs.table import dataset

    stages = {}
    start = time.perf_counter()
    rows = con.execute("SELECT list(t) AS rows FROM points t").to_arrow_table()
    d = _prepare(dataset(rows.column("rows").chunk(0).values, "em"), ())
    lay = d.layout
    data = em.Rows(d.X, d.w, lay, (d.lo, d.width))
    del rows, d
    stages["hand-off and columns"] = time.perf_counter() - start
    start = time.perf_counter()
    init = em.initialise(data, k, em.fresh_random(EM_SEED), MIN_SD)
    stages["initialisation (10 k-means runs)"] = time.perf_counter() - start
    params = em.Params(*(a.copy() for a in init.params.arrays()))
    start = time.perf_counter()
    done = em.iterate(data, init.params, iterations, MIN_SD, EM_SEED, data, init)
    stages[f"EM loop ({done.steps} iterations)"] = time.perf_counter() - start

    trace, nomidx = np.empty(1), em.nominal_index(lay)

    def step():
        status, *_ = em.iterate_kernel(
            data.X.T, data.w, lay.nominal, lay.nvals, lay.offs, nomidx, *params.arrays(),
            0.0, 1, MIN_SD, data.fsd, data.fsd_done, kmeans.CHUNK, True, trace,
            np.zeros(1, np.int64))
        if status != em.OK:
            raise RuntimeError(f"EM step failed: {em.FAILURES[status]}")

    step()  # not timed: the kernel is loaded by now, this only settles the caches
    start = time.perf_counter()
    for _ in range(iterations):
        step()
    return {"per_iteration": (time.perf_counter() - start) / iterations, "stages": stages}


def child_sklearn(data, n, k, iterations, repeat):
    import warnings

    import duckdb
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture

    warnings.simplefilter("ignore", ConvergenceWarning)  # tol=0 never "converges"
    con = duckdb.connect(str(database(data, n)), read_only=True)
    start = time.perf_counter()
    columns = con.execute("SELECT * FROM points").fetchnumpy()
    x = np.column_stack([np.asarray(c, np.float64) for c in columns.values()])
    load = time.perf_counter() - start
    con.close()
    start = time.perf_counter()
    lo, width = x.min(axis=0), np.ptp(x, axis=0)
    scaled = (x - lo) / np.where(width > 0, width, 1)
    scale = time.perf_counter() - start

    def measure(make, rows):
        def fit():
            model = make()
            start = time.perf_counter()
            model.fit(rows)
            return {"fit": time.perf_counter() - start, "iterations": int(model.n_iter_),
                    "model": model}
        runs = repeated(fit, repeat)
        return {"fit": median(runs, "fit"), "iterations": runs[-1]["iterations"],
                "runs": len(runs), "model": runs[-1]["model"]}

    def kmeans(max_iter):
        return KMeans(k, init="k-means++", n_init=1, tol=0, max_iter=max_iter,
                      random_state=KMEANS_SEED)

    def gmm(max_iter):
        return GaussianMixture(k, covariance_type="diag", max_iter=max_iter, tol=0,
                               init_params="kmeans", n_init=1, random_state=EM_SEED)

    full, one = measure(lambda: kmeans(500), scaled), measure(lambda: kmeans(1), scaled)
    out = {"load": load, "scale": scale, "kmeans k-means++": {
        "fit": full["fit"], "iterations": full["iterations"], "runs": full["runs"],
        "per_iteration": differenced(full, one), "sse": float(full["model"].inertia_),
        "peak_mb": peak_mb()}}
    del scaled
    if not iterations:  # k-means only
        return out
    full = measure(lambda: gmm(iterations), x)
    one = measure(lambda: gmm(1), x)
    model = full["model"]
    out["em"] = {"fit": full["fit"], "iterations": full["iterations"], "runs": full["runs"],
                 "fit_1": one["fit"], "per_iteration": differenced(full, one),
                 "log_likelihood": float(model.score(x)), "converged": bool(model.converged_),
                 "peak_mb": peak_mb()}
    return out


def java(args, deadline):
    """(output, wall seconds, peak MB) of one JVM run; None when the deadline passes."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        start = time.perf_counter()
        proc = subprocess.Popen(JAVA + args, stdout=log, stderr=subprocess.STDOUT)
        timer = threading.Timer(max(deadline - start, 1.0), proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        text = log.read()
    if time.perf_counter() >= deadline:
        return None
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:1])} failed ({proc.returncode}): {text[-2000:]}")
    return text, wall, usage.ru_maxrss / 1024


def weka_model(output, title):
    """The model a Weka clusterer printed: from the line ``title`` to the line
    before "=== Clustering stats"."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("=== ")),
               len(lines))
    return "\n".join(lines[start:end])


def child_weka(data, n, k, iterations, repeat, timeout):
    deadline = time.perf_counter() + timeout
    path = str(arff(data, n))

    def measure(args, parse):
        def fit():
            done = java(args, deadline)
            if done is None:
                raise TimeoutError
            text, wall, peak = done
            return {"fit": wall, "peak_mb": peak, **parse(text)}
        try:
            runs = repeated(fit, repeat)
        except TimeoutError:
            return None
        return {**runs[-1], "fit": median(runs, "fit"), "runs": len(runs),
                "peak_mb": max(r["peak_mb"] for r in runs)}

    def em_out(text):
        ll = re.search(r"Log likelihood:\s+(-?[\d.]+(?:E-?\d+)?)", text)
        return {"log_likelihood": float(ll.group(1)) if ll else None,
                "text": weka_model(text, "EM")}

    def kmeans_out(text):
        its = re.search(r"Number of iterations:\s+(\d+)", text)
        sse = re.search(r"Within cluster sum of squared errors:\s+([\d.E-]+)", text)
        return {"iterations": int(its.group(1)), "sse": float(sse.group(1)),
                "text": weka_model(text, "kMeans")}

    em_args = ["weka.clusterers.EM", "-t", path, "-N", str(k), "-S", str(EM_SEED)]
    km_args = ["weka.clusterers.SimpleKMeans", "-t", path, "-N", str(k),
               "-S", str(KMEANS_SEED)]
    out = {"read": measure(["weka.filters.unsupervised.instance.RemoveRange", "-R",
                            "first-last", "-i", path, "-o", os.devnull], dict)}
    out["kmeans random"] = measure(km_args, kmeans_out)
    if iterations:
        out["em"] = measure(em_args + ["-I", str(iterations)], em_out)
    return out


def child(tool, data, n, k, iterations, repeat, timeout):
    if tool == "duckmine":
        out = child_duckmine(data, n, k, iterations, repeat)
    elif tool == "sklearn":
        out = child_sklearn(data, n, k, iterations, repeat)
    else:
        out = child_weka(data, n, k, iterations, repeat, timeout)
    print(json.dumps(out))


def weka_cache(data, n, k, iterations):
    return data_dir() / f"em_weka_{data}_{n}_k{k}_i{iterations}.json"


def run(tool, data, n, args):
    """One tool's results on ``n`` rows of ``data``, or None when it ran out of time;
    Weka's come from the cache when there is one."""
    cache = weka_cache(data, n, args.k, args.iterations)
    if tool == "weka":
        if cache.exists() and not args.fresh_weka:
            return {**json.loads(cache.read_text()), "source": str(cache)}
        print(f"running Weka on {n:,} {data} rows...", file=sys.stderr, flush=True)
    # Weka's child stops its own JVMs at the timeout; the margin lets it report
    r = run_child("duckmine.benchmarks.em",
                  [tool, data, n, args.k, args.iterations, args.repeat, args.timeout],
                  args.timeout + (120 if tool == "weka" else 0))
    if tool == "weka" and r is not None and all(r[key] is not None for key in r):
        r["recorded"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        cache.write_text(json.dumps(r))
    return r


# -- the report -------------------------------------------------------------------

def same(mine, theirs, skip=None):
    """"SAME" or where two printed models first differ (lines starting with
    ``skip`` left out)."""
    a, b = ([line for line in tree_lines(text) if not (skip and line.startswith(skip))]
            for text in (mine, theirs))
    if a == b:
        return f"SAME ({len(a)} lines)"
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return (f"DIFFERENT at line {at + 1} of {len(a)}/{len(b)}: duckmine "
            f"{a[at] if at < len(a) else '<end>'!r}, Weka {b[at] if at < len(b) else '<end>'!r}")


SSE_LINE = "Within cluster sum of squared errors"


def fmt(value, spec, missing="-"):
    return missing if value is None else format(value, spec)


def per(value):
    """A time per iteration; a difference of fit times can come out negative, when
    one iteration is lost in the run-to-run noise."""
    return f"{value:.4f} (noise)" if value is not None and value < 0 else fmt(value, ".4f")


def em_table(data, results, args, lines, notes):
    base = (results.get("duckmine") or {}).get("em")
    sk, weka = results.get("sklearn"), results.get("weka")
    for tool in args.tools:
        r = results.get(tool)
        if tool == "sklearn" and data == "mixed":
            lines.append(f"| {data} | sklearn | n/a | | | | | cannot take nominal "
                         "attributes or missing values |")
            continue
        if r is None or r.get("em") is None:
            lines.append(f"| {data} | {tool} | > {args.timeout:.0f} (did not finish) "
                         "| | | | | |")
            continue
        e = r["em"]
        iterations, ratio = e.get("iterations"), ""
        if tool == "sklearn" and base and e["per_iteration"]:
            x = base["per_iteration"] / e["per_iteration"]
            ratio = f"duckmine / sklearn per iteration {x:.2f}x"
        if tool == "weka":
            iterations = f"({base['iterations']})" if base else "?"  # Weka prints none
            if base:
                ratio = f"Weka / duckmine time {e['fit'] / base['fit']:.1f}x"
                read = (r.get("read") or {}).get("fit")
                if read is not None:
                    ratio += f" ({(e['fit'] - read) / base['fit']:.1f}x less the ARFF read)"
        star = " *" if tool == "weka" and "source" in r else ""
        lines.append(f"| {data} | {tool} | {e['fit']:.2f}{star} | {fmt(iterations, '')} | "
                     f"{per(e.get('per_iteration'))} | {e['peak_mb']:.0f} | "
                     f"{fmt(e.get('log_likelihood'), '.5f')} | {ratio} |")
    if base:
        notes.append(
            f"{data}, duckmine EM: {base['runs']} run(s); {base['clusters']} clusters"
            f"{', last step undone' if base['reverted'] else ''}; s / iteration timed on the "
            f"EM kernel ({args.iterations} E+M steps); differenced from the SQL fits instead "
            f"(max_iterations 1: {base['fit_1']:.2f} s): {per(base['differenced'])} s; "
            f"mean log-density under the final parameters (as sklearn's score) "
            f"{base['scored_log_likelihood']:.5f}")
        notes.append(f"{data}, duckmine EM fit, stage by stage: " + ", ".join(
            f"{name} {seconds:.2f} s" for name, seconds in base["stages"].items()))
        if base["iterations"] < args.iterations:
            notes.append(f"{data}, duckmine EM converged after {base['iterations']} of "
                         f"{args.iterations} iterations (log-likelihood gain < 1e-6)")
    if sk and data == "numeric" and sk.get("em"):
        e = sk["em"]
        note = (f"{data}, sklearn GaussianMixture: {e['runs']} run(s); s / iteration "
                f"differenced (max_iter 1: {e['fit_1']:.2f} s); load from DuckDB "
                f"{sk['load']:.2f} s (not timed)")
        if e["iterations"] < args.iterations or e["converged"]:
            note += (f"; WARNING: stopped after {e['iterations']} of {args.iterations} "
                     "iterations (converged early)")
        notes.append(note)
    if weka and weka.get("em"):
        e = weka["em"]
        read = (weka.get("read") or {}).get("fit")
        note = (f"{data}, Weka EM: wall time of the whole run (JVM start, ARFF read, "
                f"build, evaluation pass); a JVM only reading the ARFF: {fmt(read, '.2f')} s; "
                f"{e['runs']} run(s)")
        if "source" in weka:
            note += (f"; * CACHED result, not run now: {weka['source']} (recorded "
                     f"{weka.get('recorded', '?')}; --fresh-weka reruns it)")
        notes.append(note)
        if base:
            notes.append(f"{data}, EM model, duckmine vs Weka: {same(base['text'], e['text'])}")
    if base and sk and data == "numeric" and sk.get("em") and sk["em"]["per_iteration"]:
        x = base["per_iteration"] / sk["em"]["per_iteration"]
        notes.append(f"{data}, target EM per iteration <= {TARGETS['sklearn']}x "
                     f"scikit-learn's: {x:.2f}x, {verdict(x <= TARGETS['sklearn'])}")
    if base and weka and weka.get("em"):
        x = weka["em"]["fit"] / base["fit"]
        notes.append(f"{data}, target EM >= {TARGETS['weka']:.0f}x faster than Weka: {x:.1f}x "
                     f"(wall), {verdict(x >= TARGETS['weka'])}")


def kmeans_table(data, results, args, lines, notes):
    mine = results.get("duckmine") or {}
    for tool, variant in (("duckmine", "k-means++"), ("duckmine", "random"),
                          ("sklearn", "k-means++"), ("weka", "random")):
        if tool not in args.tools:
            continue
        r = results.get(tool)
        if tool == "sklearn" and data == "mixed":
            lines.append(f"| {data} | sklearn | k-means++ | n/a | | | | | cannot take "
                         "nominal attributes or missing values |")
            continue
        if r is None or r.get(f"kmeans {variant}") is None:
            lines.append(f"| {data} | {tool} | {variant} | > {args.timeout:.0f} "
                         "(did not finish) | | | | | |")
            continue
        m = r[f"kmeans {variant}"]
        base = mine.get(f"kmeans {variant}")
        ratio = ""
        if base and tool != "duckmine":
            ratio = f"{tool} / duckmine time {m['fit'] / base['fit']:.1f}x"
            if tool == "weka" and (r.get("read") or {}).get("fit") is not None:
                ratio += f" ({(m['fit'] - r['read']['fit']) / base['fit']:.1f}x less the read)"
            memory = mine.get("kmeans in memory")
            if tool == "sklearn" and memory:
                ratio += f"; to duckmine's fit in memory {m['fit'] / memory['fit']:.1f}x"
            if tool == "sklearn" and r.get("scale") is not None:
                # duckmine's time runs from the table; so does this one
                whole = m["fit"] + r["load"] + r["scale"]
                ratio += (f"; {whole:.2f} s with its read from the table and scaling: "
                          f"{whole / base['fit']:.1f}x")
        star = " *" if tool == "weka" and "source" in r else ""
        lines.append(f"| {data} | {tool} | {variant} | {m['fit']:.2f}{star} | "
                     f"{m['iterations']} | {per(m.get('per_iteration'))} | "
                     f"{m['peak_mb']:.0f} | {m['sse']:.4f} | {ratio} |")
        memory = r.get("kmeans in memory") if tool == "duckmine" else None
        if memory and variant == "k-means++":
            lines.append(f"| {data} | duckmine, in memory | k-means++ | {memory['fit']:.2f} | "
                         f"{memory['iterations']} | | {memory['peak_mb']:.0f} | "
                         f"{memory['sse']:.4f} | the core on columns in memory |")
    weka = results.get("weka")
    base = mine.get("kmeans random")
    if base and weka and weka.get("kmeans random"):
        theirs = weka["kmeans random"]
        gap = abs(base["sse"] - theirs["sse"]) / theirs["sse"]
        notes.append(f"{data}, k-means model (random seeding), duckmine vs Weka, but for "
                     f"the SSE line: {same(base['text'], theirs['text'], SSE_LINE)}; SSE "
                     f"relative difference {gap:.1e} (duckmine sums in chunks)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="1000000",
                        help="number of rows (comma-separated for several sizes)")
    parser.add_argument("--k", type=int, default=5, help="number of clusters")
    parser.add_argument("--iterations", type=int, default=20,
                        help="EM's maximum number of iterations (N)")
    parser.add_argument("--data", nargs="+", default=list(DATA), choices=DATA)
    parser.add_argument("--kmeans-only", action="store_true",
                        help="time k-means alone (no EM fits)")
    tool_options(parser, TOOLS, 14400, 7)
    args = parser.parse_args()
    if args.child:
        tool, data, n, k, iterations, repeat, timeout = args.child
        return child(tool, data, int(n), int(k), int(iterations), int(repeat),
                     float(timeout))
    if args.kmeans_only:
        args.iterations = 0  # tells the children
    elif args.iterations < 2:
        parser.error("--iterations must be at least 2 (the time per iteration is a "
                     "difference with a fit of 1 iteration)")
    sizes = [int(s) for s in args.rows.replace(" ", ",").split(",") if s]
    for n in sizes:
        em_lines = ["| data | tool | fit s | iterations | s / EM iteration | peak MB | "
                    "log-likelihood / instance | ratio |", "|---|---|---:|---:|---:|---:|---:|---|"]
        km_lines = ["| data | tool | seeding | fit s | iterations | s / iteration | peak MB | "
                    "SSE (scaled) | ratio |", "|---|---|---|---:|---:|---:|---:|---:|---|"]
        notes = []
        for data in args.data:
            database(data, n)
            results = {t: run(t, data, n, args) for t in args.tools
                       if not (t == "sklearn" and data == "mixed")}  # it cannot
            if args.iterations:
                em_table(data, results, args, em_lines, notes)
            kmeans_table(data, results, args, km_lines, notes)
        if args.iterations:
            print(f"\n### EM, k = {args.k}, at most {args.iterations} iterations, "
                  f"{n:,} rows\n")
            print("\n".join(em_lines))
        print(f"\n### k-means, k = {args.k}, {n:,} rows\n")
        print("\n".join(km_lines))
        print("\n" + "\n".join(f"- {note}" for note in notes), flush=True)


if __name__ == "__main__":
    main()
