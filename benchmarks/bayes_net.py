"""AD-trees and K2 Bayesian networks side by side: duckmine in SQL, plain DuckDB
scans and Weka's BayesNet, on data drawn from a random Bayesian network.

    python -m duckmine.benchmarks.bayes_net [--rows 1000000]
        [--cutoffs 100000,10000,1000,100,0] [--max-depth 4] [--queries 10000]
        [--sample 200]
        [--max-mb MB] [--repeat 3] [--tools duckmine duckdb weka]
        [--weka-modes plain adtree] [--timeout 10800] [--fresh-weka] [--breakdown]

Needs Java with ``/usr/share/java/weka.jar`` (Weka 3.6.14). The data: 20 nominal
attributes ``a1`` .. ``a20``, values ``v0``, ``v1``, ...; the last one, ``a20``, is
the class (Weka's default, the last attribute). They are drawn with numpy (seed 11)
from a random Bayesian network over the order a1, ..., a20: each attribute has 2 to
5 values and 0 to 3 parents among the attributes before it (the class at least
one), and each row of its table (one per configuration of its parents) is a
Dirichlet(1, ..., 1) draw; the rows are sampled ancestrally, one attribute at a
time over all rows. The data are written once per size as ARFF and loaded once
into a DuckDB file (table ``points``) with ``duckmine.read_arff``, both cached
under ``benchmarks/.data/``.

Every measurement runs in a process of its own, which reports its own peak memory
(resident set; for Weka the JVM's, run with ``-Xmx16g``):

- duckmine, AD-trees: for each ``leaf_list_cutoff`` C of ``--cutoffs``,
  ``CREATE TEMP TABLE tr AS SELECT ad_tree_fit(t, leaf_list_cutoff := C,
  max_depth := D) AS tree FROM points t`` (D = ``--max-depth``, 4 by default: the
  queries have at most 4 conditions; ``NULL`` builds full trees) on an open
  connection, after a warm-up fit on 2,000 rows (the numba kernels come from the
  disk cache, as in a warm session). Shown: the time
  of that statement (the hand-off of the rows, the build and the model value), the
  tree's size as ``model_text(tree)`` prints it, the process's peak before the
  build, after it and after the queries. A build that would pass
  ``duckmine_ad_tree_max_mb`` (unset, so ``ad_tree_fit``'s default, unless
  ``--max-mb`` sets it) is refused with an error, shown as "refused"; any other
  error is shown as "FAILED", with its message under the table. Then the count
  queries against that tree: ``SELECT q.id, ad_count(tr.tree, q.conditions) FROM
  queries q, tr ORDER BY q.id``, where ``queries(id, conditions MAP(VARCHAR,
  VARCHAR))`` holds ``--queries`` random conjunctions of 1 to 4 ``attribute =
  value`` conditions (distinct attributes, a20 as likely as any other, each value
  drawn uniformly from the attribute's values, so a few counts are 0). The first
  run, which also reads the tree back from its model value, is shown apart from
  the median of the runs after it. Shown too: the time of the tree's counting kernel alone on the
  same queries (called from Python on the parsed tree, the queries already
  encoded as ``ad_count`` encodes them), which tells the counting from the cost of
  getting the queries and the model value to it.
- duckdb: the same queries as scans of the table, one statement each, ``SELECT
  count(*) FROM points WHERE a1 = 'v0' AND a3 = 'v2'``. Only the first
  ``--sample`` queries are run (after one untimed pass over them, which brings the
  table into memory), and their time is scaled up to all ``--queries`` (said so
  where printed). Also one ``GROUP BY GROUPING SETS`` statement over the distinct
  attribute sets of those sampled queries, which answers them all in one
  statement, scaled up the same way. Both must give the counts ``ad_count`` gives
  on those queries.
- duckmine, K2: ``SELECT bayes_net_fit(t, 'a20', search := 'k2', max_parents := 3,
  use_ad_tree := true) FROM points t`` and the same with ``use_ad_tree := false``,
  each after a warm-up fit on 2,000 rows. The two networks (``model_text``) must
  be the same but for the line saying whether an ADTree was used. ``--breakdown``
  adds the time of each stage of one fit, run step by step outside SQL: the
  hand-off (``SELECT list(t)``), building the learner's columns, the learner
  (counts and search) and serialising the model.
- weka: ``java -Xmx16g -cp weka.jar weka.classifiers.bayes.BayesNet -t file.arff
  -no-cv -Q weka.classifiers.bayes.net.search.local.K2 -- -P 3 -S BAYES -E
  weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A 0.5`` in a fresh JVM,
  as mode ``adtree`` (so it counts with its ADTree) and, with ``-D``, as mode
  ``plain`` (it counts by going over the instances). The fit time is the "Time
  taken to build model" it prints (its own clock); the wall time covers the JVM
  start, reading the ARFF, building and the evaluation on the training data. A run
  that runs out of Java heap is shown as such, one that passes ``--timeout`` is
  stopped. Its network ("Network structure" lines) and scores ("LogScore" lines)
  are compared with duckmine's ``model_text``.

Each measurement is repeated ``--repeat`` times in its process (only once when a
run takes over 30 s) and the median is printed. Weka's results are kept in
``benchmarks/.data/bayes_net_weka_<rows>_<mode>.json`` and reused by later runs,
which say so (a run that was stopped at a shorter timeout than the one given is
run again); ``--fresh-weka`` runs Weka again. The ratios at the end: ``ad_count``
against the scans (target 100x), K2 with the AD-tree against K2 without it (target
10x), and duckmine's K2 against Weka's, both on its build time and on its wall
time (target: faster).
"""

import argparse
import json
import re
import statistics
import sys
import time
from datetime import UTC, datetime

import numpy as np

from .c45 import arff_database, data_dir, median, peak_mb, repeated, tree_lines, verdict
from .child import run_child, tool_options
from .em import java, write_arff

MODULE = "duckmine.benchmarks.bayes_net"
TOOLS = ("duckmine", "duckdb", "weka")
WEKA_MODES = ("plain", "adtree")
WEKA = ["weka.classifiers.bayes.BayesNet", "-no-cv",
        "-Q", "weka.classifiers.bayes.net.search.local.K2", "--", "-P", "3", "-S", "BAYES",
        "-E", "weka.classifiers.bayes.net.estimate.SimpleEstimator", "--", "-A", "0.5"]
SEED = 11
ATTRIBUTES = [f"a{i}" for i in range(1, 21)]
CLASS = ATTRIBUTES[-1]
MAX_PARENTS = 3  # of the network the data are drawn from, and of the K2 search
WARM_ROWS = 2000
WARM_CUTOFF = 100  # the warm-up tree's cutoff: a full tree of 2,000 rows is large
K2 = ("SELECT bayes_net_fit(t, '{cls}', search := 'k2', max_parents := {parents}, "
      "use_ad_tree := {ad}) AS model FROM {source} t")
TREE = ("SELECT ad_tree_fit(t, leaf_list_cutoff := {cutoff}, max_depth := {depth}) AS tree "
        "FROM {source} t")
MAX_CONDITIONS = 4  # of a random count query
COUNTS = "SELECT q.id, ad_count(tr.tree, q.conditions) FROM queries q, tr ORDER BY q.id"
TARGETS = {"ad_count": 100.0, "k2": 10.0, "weka": 1.0}


# -- the data ----------------------------------------------------------------------

def network():
    """The network the data are drawn from: the number of values of each attribute,
    its parents (earlier attributes) and its table, one Dirichlet(1, ..., 1) row
    per configuration of the parents (first parent most significant)."""
    rng = np.random.default_rng(SEED)
    card = rng.integers(2, 6, len(ATTRIBUTES))
    parents, tables = [], []
    for i in range(len(ATTRIBUTES)):
        low = 1 if i == len(ATTRIBUTES) - 1 else 0  # the class depends on something
        k = int(rng.integers(low, min(MAX_PARENTS, i) + 1))
        ps = sorted(rng.choice(i, k, replace=False).tolist()) if k else []
        configs = int(np.prod([card[q] for q in ps], dtype=np.int64))
        parents.append(ps)
        tables.append(rng.dirichlet(np.ones(card[i]), configs))
    return card, parents, tables


def draw(n):
    """(n, 20) value codes of ``n`` rows sampled ancestrally from ``network()``."""
    card, parents, tables = network()
    rng = np.random.default_rng([SEED, n])
    codes = np.empty((n, len(ATTRIBUTES)), np.int8)
    for i, (ps, table) in enumerate(zip(parents, tables)):
        config = np.zeros(n, np.int64)
        for q in ps:
            config = config * card[q] + codes[:, q]
        cum = np.cumsum(table, axis=1)[config]
        picked = (rng.random(n)[:, None] >= cum).sum(axis=1)
        codes[:, i] = np.minimum(picked, card[i] - 1)
    return codes


def labels(j):
    """The values of attribute ``j``."""
    card, _, _ = network()
    return [f"v{v}" for v in range(card[j])]


def arff(n):
    """The ARFF file of ``n`` rows, written on first use."""
    path = data_dir() / f"bayes_net_{n}.arff"
    if path.exists():
        return path
    codes = draw(n)
    attributes = [(name, "{" + ",".join(labels(j)) + "}")
                  for j, name in enumerate(ATTRIBUTES)]
    cells = [np.array(labels(j), dtype=object)[codes[:, j]] for j in range(len(ATTRIBUTES))]
    write_arff(path, "random_bayes_net", attributes, cells)
    return path


def database(n):
    """The DuckDB file holding the ARFF file of ``n`` rows as table points."""
    return arff_database(arff(n), "points")


def queries(count):
    """``count`` random conjunctions: lists of (attribute, value) pairs, 1 to 4 of
    them on distinct attributes (in increasing order), values drawn uniformly."""
    card, _, _ = network()
    rng = np.random.default_rng([SEED, count, 1])
    out = []
    for _ in range(count):
        k = int(rng.integers(1, MAX_CONDITIONS + 1))
        attrs = sorted(rng.choice(len(ATTRIBUTES), k, replace=False).tolist())
        out.append([(ATTRIBUTES[j], f"v{int(rng.integers(card[j]))}") for j in attrs])
    return out


def scan_sql(query):
    where = " AND ".join(f"{a} = '{v}'" for a, v in query)
    return f"SELECT count(*) FROM points WHERE {where}"


# -- the tools, each in its own process ---------------------------------------------

def connect(n):
    import duckmine

    con = duckmine.connect(str(database(n)), read_only=True)
    con.execute("SET enable_progress_bar = false")
    return con


def queries_table(con, count):
    """The temporary table queries(id, conditions MAP(VARCHAR, VARCHAR))."""
    import pyarrow as pa

    qs = queries(count)
    table = pa.table({"id": pa.array(range(len(qs)), pa.int32()),
                      "conditions": pa.array(qs, pa.map_(pa.string(), pa.string()))})
    con.register("queries_arrow", table)
    con.execute("CREATE TEMP TABLE queries AS SELECT * FROM queries_arrow")
    con.unregister("queries_arrow")


def tree_size(text):
    """The figures of an AD-tree's ``model_text``: AD nodes, those with a leaf
    list, the rows in leaf lists, vary nodes and MiB."""
    found = re.search(r": ([\d,]+) AD nodes \(([\d,]+) with a leaf list of ([\d,]+) rows in "
                      r"all\), ([\d,]+) vary nodes, ([\d.]+) MiB", text)
    if not found:
        return None
    nodes, listed, rows, vary, mib = found.groups()
    return {"nodes": int(nodes.replace(",", "")), "listed": int(listed.replace(",", "")),
            "list_rows": int(rows.replace(",", "")), "vary": int(vary.replace(",", "")),
            "mib": float(mib)}


def child_tree(n, repeat, cutoff, count, sample, max_mb, depth):
    """One AD-tree built and asked ``count`` count queries."""
    import duckdb

    con = connect(n)
    if max_mb > 0:
        con.execute(f"SET VARIABLE duckmine_ad_tree_max_mb = {max_mb}")
    queries_table(con, count)
    # the kernels from the disk cache, as a warm session has them
    warm = f"(SELECT * FROM points LIMIT {WARM_ROWS})"
    warm_tree = TREE.format(cutoff=WARM_CUTOFF, depth=depth, source=warm)
    con.execute(f"CREATE TEMP TABLE tr AS {warm_tree}")
    con.execute(COUNTS).fetchall()
    con.execute("SELECT model_text(tree) FROM tr").fetchall()
    con.execute("DROP TABLE tr")
    base = peak_mb()
    sql = f"CREATE TEMP TABLE tr AS {TREE.format(cutoff=cutoff, depth=depth, source='points')}"

    def build():
        con.execute("DROP TABLE IF EXISTS tr")
        start = time.perf_counter()
        con.execute(sql)
        return {"fit": time.perf_counter() - start}

    start = time.perf_counter()
    try:
        runs = repeated(build, repeat)
    except duckdb.Error as err:
        message = str(err).strip().splitlines()[0]
        why = "refused" if "duckmine_ad_tree_max_mb" in message else "error"
        return {why: message,
                "seconds": time.perf_counter() - start, "base_mb": base,
                "peak_mb": peak_mb()}
    fit_peak = peak_mb()
    text = con.execute("SELECT model_text(tree) FROM tr").fetchone()[0]
    answers = []

    def ask():
        start = time.perf_counter()
        answers.append(con.execute(COUNTS).fetchall())
        return {"fit": time.perf_counter() - start}

    first = ask()["fit"]  # reads the tree back from its model value
    asked = [ask() for _ in range(max(repeat, 1))]
    counts = [c for _, c in answers[-1]]
    query_peak = peak_mb()
    kernel = counting_kernel(con, count, repeat)
    return {"fit": median(runs, "fit"), "runs": len(runs), "base_mb": base,
            "peak_mb": fit_peak, "text": text, "size": tree_size(text),
            "first": first, "queries": median(asked, "fit"), "query_runs": len(asked),
            "total": int(sum(counts)), "zero": sum(c == 0 for c in counts),
            "sample": counts[:sample], "query_peak_mb": query_peak,
            "kernel": kernel["seconds"], "kernel_agrees": kernel["counts"] == counts}


def counting_kernel(con, count, repeat):
    """The same queries put to the tree of ``tr`` outside SQL: the seconds of its
    counting kernel alone (the queries encoded beforehand, as ad_count encodes
    them), and the counts."""
    from duckmine.udfs.adtree import _query
    from duckmine.udfs.models import _cache

    model = _cache[con.execute("SELECT tree.id FROM tr").fetchone()[0]][0]  # parsed by now
    q_off, q_attr, q_val = [0], [], []
    for q in queries(count):
        attrs, codes = _query(model, q)
        q_attr += attrs
        q_val += codes
        q_off.append(len(q_attr))
    q_off, q_attr, q_val = (np.array(a, np.int64) for a in (q_off, q_attr, q_val))
    out = []

    def run():
        start = time.perf_counter()
        out.append(model.tree.counts(q_off, q_attr, q_val))
        return {"fit": time.perf_counter() - start}

    runs = [run() for _ in range(max(repeat, 1))]
    return {"seconds": median(runs, "fit"), "counts": out[-1].tolist()}


def child_scans(n, repeat, count, sample):
    """The first ``sample`` queries as scans, one statement each, and as one
    GROUPING SETS statement."""
    con = connect(n)
    asked = queries(count)[:sample]
    sqls = [scan_sql(q) for q in asked]
    for sql in sqls:  # untimed: brings the table into memory
        con.execute(sql).fetchall()
    counts = []

    def scans():
        start = time.perf_counter()
        got = [con.execute(sql).fetchone()[0] for sql in sqls]
        seconds = time.perf_counter() - start
        counts.append(got)
        return {"fit": seconds}

    runs = repeated(scans, repeat)
    sets = sorted({tuple(a for a, _ in q) for q in asked}, key=lambda s: (len(s), s))
    grouped = ", ".join("(" + ", ".join(s) + ")" for s in sets)
    names = ", ".join(ATTRIBUTES)
    sql = (f"SELECT grouping({names}) AS g, {names}, count(*) FROM points "
           f"GROUP BY GROUPING SETS ({grouped})")
    con.execute(sql).fetchall()
    tables = []

    def one_statement():
        start = time.perf_counter()
        tables.append(con.execute(sql).fetchall())
        return {"fit": time.perf_counter() - start}

    grouping = repeated(one_statement, repeat)
    cells = {}
    top = len(ATTRIBUTES) - 1
    for g, *rest in tables[-1]:
        values, c = rest[:-1], rest[-1]
        used = tuple(a for j, a in enumerate(ATTRIBUTES) if not (g >> (top - j)) & 1)
        cells[(used, tuple(str(values[ATTRIBUTES.index(a)]) for a in used))] = c
    by_set = [cells.get((tuple(a for a, _ in q), tuple(v for _, v in q)), 0) for q in asked]
    return {"fit": median(runs, "fit"), "runs": len(runs), "sample": counts[-1],
            "grouping": median(grouping, "fit"), "grouping_runs": len(grouping),
            "sets": len(sets), "grouping_sample": by_set, "peak_mb": peak_mb()}


def child_k2(n, repeat, ad, breakdown):
    """K2 with at most 3 parents, counting with an AD-tree or by scans."""
    con = connect(n)
    warm = f"(SELECT * FROM points LIMIT {WARM_ROWS})"
    fit = K2.format(cls=CLASS, parents=MAX_PARENTS, ad=ad, source="points")
    con.execute("CREATE TEMP TABLE fitted AS "
                + K2.format(cls=CLASS, parents=MAX_PARENTS, ad=ad, source=warm))
    con.execute("SELECT model_text(model) FROM fitted").fetchall()
    con.execute("DROP TABLE fitted")
    base = peak_mb()

    def run():
        start = time.perf_counter()
        con.execute(f"CREATE OR REPLACE TEMP TABLE fitted AS {fit}")
        return {"fit": time.perf_counter() - start}

    runs = repeated(run, repeat)
    out = {"fit": median(runs, "fit"), "runs": len(runs), "base_mb": base,
           "peak_mb": peak_mb(),
           "text": con.execute("SELECT model_text(model) FROM fitted").fetchone()[0]}
    if breakdown:
        out["stages"] = k2_stages(con, ad == "true")
    return out


def k2_stages(con, ad):
    """Seconds of each stage of one K2 fit, run step by step outside SQL."""
    from duckmine.algorithms.bayes import net as bn
    from duckmine.algorithms.bayes.model import coded_training_data

    from .c45 import fit_stages

    times, _, data, t = fit_stages(con, "points", "bayes_net", CLASS,
                                   {"search": "k2", "max_parents": MAX_PARENTS,
                                    "use_ad_tree": ad})
    # the learner split in two: coding the rows and building the counter (the
    # AD-tree, if any), then the K2 search over it
    start = time.perf_counter()
    _, coding, X = coded_training_data(data, t)
    counts = bn.Counts(X, [len(v) for v in coding.values], ad, MAX_PARENTS + 1)
    times["of which coding and counter (AD-tree build)"] = time.perf_counter() - start
    start = time.perf_counter()
    bn.k2(X.shape[1], t, MAX_PARENTS, bn.Scorer(counts, "bayes"))
    times[f"of which K2 search ({len(counts._cache)} tables)"] = time.perf_counter() - start
    return times


def weka_model(output):
    """BayesNet's printed model: from "Bayes Network Classifier" to the line before
    "Time taken"."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Bayes Network"))
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("Time taken")),
               len(lines))
    return "\n".join(lines[start:end])


def child_weka(n, repeat, mode, timeout):
    deadline = time.perf_counter() + timeout
    args = WEKA[:1] + ["-t", str(arff(n))] + (["-D"] if mode == "plain" else []) + WEKA[1:]

    def fit():
        try:
            done = java(args, deadline)
        except RuntimeError as err:
            if "OutOfMemoryError" in str(err):
                raise MemoryError from None
            raise
        if done is None:
            raise TimeoutError
        text, wall, peak = done
        build = re.search(r"Time taken to build model: ([\d.]+) seconds", text)
        correct = re.search(r"Correctly Classified Instances\s+(\d+)", text)
        return {"fit": float(build.group(1)), "wall": wall, "peak_mb": peak,
                "correct": int(correct.group(1)) if correct else None,
                "text": weka_model(text)}

    start = time.perf_counter()
    try:
        runs = repeated(fit, repeat)
    except MemoryError:
        return {"status": "out of memory", "seconds": time.perf_counter() - start,
                "timeout": timeout}
    except TimeoutError:
        return {"status": "timeout", "seconds": time.perf_counter() - start,
                "timeout": timeout}
    return {"status": "ok", "fit": median(runs, "fit"), "wall": median(runs, "wall"),
            "runs": len(runs), "peak_mb": max(r["peak_mb"] for r in runs),
            "correct": runs[0]["correct"], "text": runs[0]["text"], "timeout": timeout}


def child(args):
    kind, n, repeat, *rest = args
    n, repeat = int(n), int(repeat)
    if kind == "tree":
        cutoff, count, sample, max_mb, depth = rest
        out = child_tree(n, repeat, int(cutoff), int(count), int(sample), float(max_mb),
                         depth)
    elif kind == "scans":
        count, sample = rest
        out = child_scans(n, repeat, int(count), int(sample))
    elif kind == "k2":
        ad, breakdown = rest
        out = child_k2(n, repeat, ad, breakdown == "breakdown")
    else:
        mode, timeout = rest
        out = child_weka(n, repeat, mode, float(timeout))
    print(json.dumps(out))


def weka_cache(n, mode):
    return data_dir() / f"bayes_net_weka_{n}_{mode}.json"


def run_weka(n, mode, args):
    """Weka's result in ``mode``, from the cache when there is one."""
    cache = weka_cache(n, mode)
    if cache.exists() and not args.fresh_weka:
        r = json.loads(cache.read_text())
        if not (r["status"] == "timeout" and r["timeout"] < args.timeout):
            return {**r, "source": str(cache)}
    progress(f"running Weka's BayesNet ({mode}) on {n:,} rows...")
    # the child stops its own JVMs at the timeout; the margin lets it report
    r = run_child(MODULE, ["weka", n, args.repeat, mode, args.timeout], args.timeout + 120)
    if r is None:
        r = {"status": "timeout", "seconds": args.timeout, "timeout": args.timeout}
    r["recorded"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    cache.write_text(json.dumps(r))
    return r


def measure(args, timeout):
    """A child's result; None when it runs out of time, {"failed": ...} when it
    dies (killed for want of memory, say)."""
    try:
        return run_child(MODULE, args, timeout)
    except RuntimeError as err:
        return {"failed": str(err).strip().splitlines()[-1][:300]}


def progress(message):
    print(message, file=sys.stderr, flush=True)


# -- the report -------------------------------------------------------------------

def network_lines(text):
    """(structure lines, score lines) of a printed network: the lines after
    "Network structure" up to the first "LogScore", and the "LogScore" lines."""
    lines = tree_lines(text)
    at = next((i for i, line in enumerate(lines) if line.startswith("Network structure")),
              len(lines))
    structure = [line for line in lines[at + 1:] if not line.startswith("LogScore")]
    return structure, [line for line in lines if line.startswith("LogScore")]


def differ(a, b, what, mine="duckmine", theirs="Weka"):
    """"SAME (k lines)" or where two lists of lines first differ."""
    if a == b:
        return f"SAME ({len(a)} {what})"
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return (f"DIFFERENT ({len(a)}/{len(b)} {what}), first at {at + 1}: {mine} "
            f"{a[at] if at < len(a) else '<end>'!r}, {theirs} "
            f"{b[at] if at < len(b) else '<end>'!r}")


def same_network(mine, theirs, theirs_name="Weka"):
    a, b = network_lines(mine), network_lines(theirs)
    return (differ(a[0], b[0], "nodes", theirs=theirs_name),
            differ(a[1], b[1], "scores", theirs=theirs_name))


def without_ad_line(text):
    return [line for line in tree_lines(text)
            if line not in ("Using ADTree", "not using ADTree")]


def ratio(x, y):
    return f"{x / y:.1f}x" if x and y else "-"


def stopped(r, timeout):
    """The cell of a measurement that gave no figures, or None if it did."""
    if r is None:
        return f"> {timeout:.0f} s (stopped)"
    if "failed" in r:
        return "FAILED"
    return None


def tree_report(n, trees, scans, args):
    count = args.queries
    print(f"\n### AD-trees of {n:,} rows x {len(ATTRIBUTES)} attributes, and "
          f"{count:,} count queries\n")
    print("| leaf_list_cutoff | build s | AD nodes | with a leaf list | rows in leaf lists "
          "| vary nodes | tree MiB | peak MB: before / built / queried | "
          f"ad_count x {count:,} s (first run) | counting kernel s | scans / ad_count |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    scanned = scans and "failed" not in scans
    k = len(scans["sample"]) if scanned else 0
    scan_total = scans["fit"] * count / k if scanned else None
    notes = []
    for cutoff, r in trees.items():
        gone = stopped(r, args.timeout)
        if gone:
            print(f"| {cutoff} | {gone} |" + " |" * 9)
            if r:
                notes.append(f"leaf_list_cutoff={cutoff}: the process died: {r['failed']}")
            continue
        if "refused" in r or "error" in r:
            what = "refused" if "refused" in r else "FAILED"
            print(f"| {cutoff} | {what} after {r['seconds']:.1f} s | | | | | | "
                  f"{r['base_mb']:.0f} / {r['peak_mb']:.0f} / - | | | |")
            notes.append(f"leaf_list_cutoff={cutoff}: {r.get('refused') or r['error']}")
            continue
        size = r["size"] or {}
        cells = [f"{size[key]:,}" if key in size else "?"
                 for key in ("nodes", "listed", "list_rows", "vary")]
        mib = f"{size['mib']:.1f}" if "mib" in size else "?"
        print(f"| {cutoff} | {r['fit']:.2f} | {' | '.join(cells)} | {mib} | "
              f"{r['base_mb']:.0f} / {r['peak_mb']:.0f} / {r['query_peak_mb']:.0f} | "
              f"{r['queries']:.3f} ({r['first']:.3f}) | {r['kernel']:.3f} | "
              f"{ratio(scan_total, r['queries'])} |")
        notes.append(f"leaf_list_cutoff={cutoff}: {r['runs']} build(s), median of "
                     f"{r['query_runs']} query run(s) after the first; {r['zero']:,} of "
                     f"{count:,} counts are 0, the counts sum to {r['total']:,}; the counting "
                     "kernel alone " + ("gives the same counts" if r["kernel_agrees"]
                                        else "gives DIFFERENT counts"))
    built = {c: r for c, r in trees.items()
             if r and not {"refused", "error", "failed"} & set(r)}
    if len({r["total"] for r in built.values()}) > 1:
        notes.append("WARNING: the trees of different cutoffs give different counts: "
                     + ", ".join(f"{c}: {r['total']:,}" for c, r in built.items()))
    if scans and not scanned:
        notes.append(f"DuckDB scans: the process died: {scans['failed']}")
    if scanned:
        per = scans["fit"] / k
        grouped = scans["grouping"] * count / k
        print(f"\nDuckDB, one scan per query (`{scan_sql(queries(count)[0])}`): "
              f"{scans['fit']:.3f} s for the first {k} queries, {1000 * per:.2f} ms each, "
              f"so {scan_total:.1f} s for {count:,} (scaled up from {k}, not run); "
              f"{scans['runs']} run(s); peak {scans['peak_mb']:.0f} MB")
        print(f"DuckDB, one GROUP BY GROUPING SETS statement over the {scans['sets']} "
              f"distinct attribute sets of those {k} queries: {scans['grouping']:.3f} s, "
              f"so {grouped:.1f} s for {count:,} (scaled up from {k}, not run); "
              f"{scans['grouping_runs']} run(s)")
        if scans["grouping_sample"] != scans["sample"]:
            notes.append("WARNING: GROUPING SETS and the scans disagree on some counts")
        for cutoff, r in built.items():
            bad = sum(x != y for x, y in zip(r["sample"], scans["sample"]))
            notes.append(f"leaf_list_cutoff={cutoff}: ad_count and the scans "
                         + ("agree on all" if not bad else f"DISAGREE on {bad} of")
                         + f" {k} sampled queries")
        for cutoff, r in built.items():
            x = scan_total / r["queries"]
            notes.append(f"target ad_count >= {TARGETS['ad_count']:.0f}x faster than scans, "
                         f"leaf_list_cutoff={cutoff}: {x:.1f}x, "
                         f"{verdict(x >= TARGETS['ad_count'])} (the counting kernel alone "
                         f"{scan_total / r['kernel']:.1f}x; ad_count vs the GROUPING SETS "
                         f"statement {grouped / r['queries']:.1f}x)")
    print()
    for note in notes:
        print(f"- {note}")


def k2_report(n, k2, weka, args):
    print(f"\n### K2, at most {MAX_PARENTS} parents, class {CLASS}, {n:,} rows\n")
    print("| tool | counting | fit s | wall s | peak MB | / duckmine with AD-tree "
          "(fit; wall) | network vs duckmine with AD-tree |")
    print("|---|---|---:|---:|---:|---:|---|")
    base = k2.get("true")
    base = base if base and "failed" not in base else None
    notes = []
    for ad, name in (("true", "AD-tree"), ("false", "scans")):
        if ad not in k2:
            continue
        r = k2[ad]
        gone = stopped(r, args.timeout)
        if gone:
            print(f"| duckmine | {name} | {gone} | | | | |")
            if r:
                notes.append(f"duckmine K2 ({name}): the process died: {r['failed']}")
            continue
        same = ""
        if ad == "false" and base:
            same = ("SAME" if without_ad_line(r["text"]) == without_ad_line(base["text"])
                    else "DIFFERENT")
        print(f"| duckmine | {name} | {r['fit']:.2f} | | {r['peak_mb']:.0f} | "
              f"{ratio(r['fit'], base['fit']) if base else '-'} | {same} |")
        notes.append(f"duckmine K2 ({name}): {r['runs']} run(s); peak before the fit "
                     f"{r['base_mb']:.0f} MB")
        if r.get("stages"):
            notes.append(f"duckmine K2 ({name}), stage by stage: " + ", ".join(
                f"{stage} {seconds:.2f} s" for stage, seconds in r["stages"].items()))
    for mode, r in weka.items():
        label = "ADTree" if mode == "adtree" else "instances (-D)"
        star = " *" if "source" in r else ""
        cached = (f"* CACHED result, not run now: {r.get('source')} (recorded "
                  f"{r.get('recorded', '?')}; --fresh-weka reruns it)")
        if r["status"] != "ok":
            what = ("out of Java heap (-Xmx16g)" if r["status"] == "out of memory"
                    else f"stopped at the {r['timeout']:.0f} s timeout")
            print(f"| Weka | {label} | {what}{star} | {r['seconds']:.0f} | | | |")
            if star:
                notes.append(f"Weka ({label}): {cached}")
            continue
        nodes, scores = same_network(base["text"], r["text"]) if base else ("", "")
        print(f"| Weka | {label} | {r['fit']:.2f}{star} | {r['wall']:.1f} | "
              f"{r['peak_mb']:.0f} | "
              f"{ratio(r['fit'], base['fit']) if base else '-'}; "
              f"{ratio(r['wall'], base['fit']) if base else '-'} | {nodes.split(' ')[0]} |")
        notes.append(f"Weka ({label}): its own build time; wall = JVM start, ARFF read, "
                     f"build, evaluation on the training data; {r['runs']} run(s)"
                     + (f"; {cached}" if star else ""))
        if base:
            notes.append(f"network, duckmine vs Weka ({label}): structure {nodes}; "
                         f"scores {scores}")
    mine = k2.get("false")
    if base and mine and "failed" not in mine:
        a, b = without_ad_line(base["text"]), without_ad_line(mine["text"])
        notes.append("duckmine's networks with and without the AD-tree: "
                     + differ(a, b, "lines", "AD-tree", "scans"))
        x = mine["fit"] / base["fit"]
        notes.append(f"target K2 with the AD-tree >= {TARGETS['k2']:.0f}x faster than "
                     f"without: {x:.1f}x, {verdict(x >= TARGETS['k2'])}")
    for mode, r in weka.items():
        if base and r["status"] == "ok":
            x, y = r["fit"] / base["fit"], r["wall"] / base["fit"]
            notes.append(f"target duckmine K2 (AD-tree) faster than Weka ({mode}) end to "
                         f"end: {y:.1f}x its wall time, {verdict(y > TARGETS['weka'])} "
                         f"({x:.1f}x its build time)")
    print()
    for note in notes:
        print(f"- {note}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="number of rows")
    parser.add_argument("--max-depth", default=str(MAX_CONDITIONS),
                        help="max_depth of the AD-trees (NULL: a full tree)")
    parser.add_argument("--cutoffs", default="100000,10000,1000,100,0",
                        help="comma-separated leaf_list_cutoff values of the AD-trees")
    parser.add_argument("--queries", type=int, default=10_000,
                        help="number of random count queries")
    parser.add_argument("--sample", type=int, default=200,
                        help="queries run as scans (the time is scaled up to all)")
    parser.add_argument("--max-mb", type=float, default=0,
                        help="SET VARIABLE duckmine_ad_tree_max_mb (0: leave the default)")
    tool_options(parser, TOOLS, 10800, "+")
    parser.add_argument("--weka-modes", nargs="+", default=list(WEKA_MODES),
                        choices=WEKA_MODES,
                        help="adtree: BayesNet with its ADTree; plain: with -D")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time the stages of one duckmine K2 fit")
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    n = args.rows
    args.sample = min(args.sample, args.queries)
    cutoffs = [int(c) for c in args.cutoffs.replace(" ", ",").split(",") if c]
    start = time.perf_counter()
    database(n)
    progress(f"data: {n:,} rows ready in {time.perf_counter() - start:.1f} s")
    trees, scans, k2, weka = {}, None, {}, {}
    if "duckmine" in args.tools:
        for cutoff in cutoffs:
            progress(f"AD-tree, leaf_list_cutoff={cutoff}...")
            trees[cutoff] = measure(["tree", n, args.repeat, cutoff, args.queries,
                                     args.sample, args.max_mb, args.max_depth],
                                    args.timeout)
    if "duckdb" in args.tools:
        progress(f"scans of the first {args.sample} queries...")
        scans = measure(["scans", n, args.repeat, args.queries, args.sample], args.timeout)
    if "duckmine" in args.tools:
        for ad in ("true", "false"):
            progress(f"K2, use_ad_tree := {ad}...")
            k2[ad] = measure(["k2", n, args.repeat, ad,
                              "breakdown" if args.breakdown else "-"], args.timeout)
    if "weka" in args.tools:
        for mode in args.weka_modes:
            weka[mode] = run_weka(n, mode, args)
    card, parents, _ = network()
    print(f"Data: {n:,} rows drawn from a random Bayesian network (seed {SEED}) over "
          f"{len(ATTRIBUTES)} nominal attributes a1..a20 ({int(card.sum())} values in "
          f"all), class {CLASS}; {sum(map(len, parents))} arcs, "
          f"{statistics.mean(map(len, parents)):.2f} parents per node")
    if trees or scans:
        tree_report(n, trees, scans, args)
    if k2 or weka:
        k2_report(n, k2, weka, args)


if __name__ == "__main__":
    main()
