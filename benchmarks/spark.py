"""duckmine on Spark side by side with Spark's own MLlib (and scikit-learn per
group), at ``local[1]`` and ``local[2]`` on this machine.

    python -m duckmine.benchmarks.spark [--baskets 1000000 5000000] [--support 0.01]
        [--rows 5000000] [--group-rows 1000000] [--groups 1000] [--cores 1 2]
        [--parts fp kmeans em c45 bn tree] [--tree-rows 200000] [--timeout 3600]
        [--tools duckmine peer] [--driver-memory 8g] [--repeat 1] [--pin] [--quick-jvm]

Needs the ``spark`` and ``bench`` extras and Java 17+. Each core count runs in a
process of its own (one SparkSession from ``duckmine.spark.session``, its JVM with
the JVM's defaults, and Python workers), whose peak memory is sampled over the
whole process tree; ``--pin`` keeps that tree on as many CPUs as the core count.
Every timing runs on a cached DataFrame (built and counted first) and forces the
whole result:

- **fp:** Quest-style baskets (about 1,000 items, 10 a basket, seed 1) as an
  ``items`` list column. duckmine: ``duckmine.spark.fp_growth(df, s).count()``
  (parallel FP-growth); MLlib: ``FPGrowth(minSupport=s).fit(df).freqItemsets
  .count()`` (lazy until counted). Both must count the same itemsets.
- **kmeans:** ``rows`` x 10 normal columns around 10 centres. duckmine:
  ``duckmine.spark.kmeans(df, 10)`` (k-means++ on a 100,000-row sample, then Lloyd
  passes to convergence); MLlib: ``KMeans(k=10, initMode='random', tol=0,
  maxIter=`` duckmine's passes ``)`` on the same columns assembled as vectors
  (assembled and cached beforehand, not timed), and again from the columns, as
  duckmine reads them (``VectorAssembler`` in the timing).
- **em:** the same table, 5 clusters, 10 iterations each. duckmine:
  ``duckmine.spark.em(df, 5, max_iterations=10)`` (independent normals per
  attribute, its start from ten k-means runs on the sample); MLlib:
  ``GaussianMixture(k=5, maxIter=10, tol=0)`` (full covariance matrices: more work
  a row than independent normals, reported as it is).
- **c45:** ``group-rows`` rows in ``groups`` groups (5 numeric, 1 nominal
  attribute, a two-valued class). duckmine: ``c45_fit(TABLE(t) PARTITION BY (g),
  target => 'y', by => 'g')``, counted; scikit-learn: ``groupBy('g')
  .applyInPandas`` fitting a ``DecisionTreeClassifier`` per group (the nominal
  attribute as codes).
- **bn:** ``rows`` rows of the c45 part's columns in one group. duckmine:
  ``duckmine.spark.bayes_net(df, 'y', search='tan')`` (counts over the cluster, the
  search on the driver); peer: the same fit on one worker,
  ``bayes_net_fit(TABLE(t) WITH SINGLE PARTITION, target => 'y', search => 'tan')``.
  Both must give the same model.
- **tree:** ``tree-rows`` rows of the c45 part's columns in one group, the numeric
  ones scaled to [0, 1000) (J48 cuts only between values more than 1e-5 apart, so
  a million values in [0, 1) leave it almost no cut). duckmine:
  ``duckmine.spark.c45(df, 'y')`` (J48's tree a level at a time over the cluster);
  peer: ``c45_fit(TABLE(t) WITH SINGLE PARTITION, target => 'y')`` on one worker.
  Both must give the same model.

It prints each timing, duckmine's speed-up over the peer, and each tool's speed-up
from 1 to 2 cores. Targets: at least 3x MLlib's FPGrowth and KMeans, and at least
1.6x from 1 to 2 cores. ``--tools duckmine`` times duckmine alone: MLlib's FPGrowth
takes five to seven minutes at a million baskets.
"""

import argparse
import itertools
import json
import os
import threading
import time

import numpy as np

from .child import run_child

PARTS = ("fp", "kmeans", "em", "c45", "bn", "tree")


class PeakMemory:
    """The largest resident set of this process and its descendants (the JVM and
    the Python workers), sampled every 0.2 s."""

    def __init__(self):
        self.peak = 0
        self.done = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    def _tree(self):
        kids = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(pid))
        out, todo = [], [os.getpid()]
        while todo:
            p = todo.pop()
            out.append(p)
            todo += kids.get(p, [])
        return out

    def _rss(self, pid):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def _watch(self):
        while not self.done.wait(0.2):
            self.peak = max(self.peak, sum(self._rss(p) for p in self._tree()))

    def mb(self):
        return self.peak / 2**20


def timed(args, fn):
    """The median seconds of ``--repeat`` runs of ``fn`` (the first run in a fresh
    session also warms up its JVM and workers), and the last run's result."""
    seconds = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        out = fn()
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds)), out


def peer_timed(args, fn):
    """``timed(args, fn)`` of a peer, or (NaN, None) when ``--tools`` leaves the
    peers out."""
    return timed(args, fn) if "peer" in args.tools else (float("nan"), None)


def agree(ours, theirs):
    """What the check says of two model ids (``theirs`` None: no peer ran)."""
    return "no peer run" if theirs is None else \
        "same model" if ours == theirs else "MODELS DIFFER"


def per_pass():
    """The median seconds of the Lloyd or EM passes just run (not the first two:
    the table's encoding and its summary)."""
    from duckmine.spark import frames

    times = frames.SECONDS[2:]
    frames.SECONDS.clear()
    return float(np.median(times)) if times else float("nan")


def say(r):
    """A result as soon as it is measured (stderr), in case a later one runs out of
    time."""
    import sys

    print(json.dumps(r), file=sys.stderr, flush=True)


def baskets(spark, n, cores):
    import pyarrow as pa

    from duckmine.algorithms.baskets import quest_baskets

    offsets, items = quest_baskets(n, n_items=1000, seed=1)
    names = pa.array([f"item{i:04d}" for i in range(1000)])
    lists = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)),
                                     names.take(pa.array(items)))
    # MLlib's FPGrowth needs each basket's items distinct
    table = pa.table({"items": lists})
    df = spark.createDataFrame(table).selectExpr("array_distinct(items) AS items")
    return df.repartition(2 * cores).cache()


def uniform(j):
    """A number in [0, 1) drawn from the row's id and ``j``: the same rows however
    many partitions Spark makes (its ``rand`` draws per partition)."""
    from pyspark.sql import functions as F

    bits = F.xxhash64(F.col("id"), F.lit(j)).bitwiseAND(F.lit(0xFFFFFFFF))
    return bits.cast("double") / F.lit(2.0**32)


def points(spark, n, cores):
    from pyspark.sql import functions as F

    df = spark.range(n, numPartitions=2 * cores)
    centre = (F.col("id") % 10).cast("double")
    # about normal: the sum of four uniforms, scaled to unit variance
    cols = [((sum(uniform(4 * j + k) for k in range(4)) - F.lit(2.0)) * F.lit(3.0**0.5)
             + centre * (j + 1) * 0.7).alias(f"x{j}") for j in range(10)]
    return df.select(*cols).cache()


def grouped(spark, n, groups, cores):
    from pyspark.sql import functions as F

    df = spark.range(n, numPartitions=2 * cores)
    x = [uniform(100 + j).alias(f"x{j}") for j in range(5)]
    return (df.select((F.col("id") % groups).alias("g"), *x,
                      F.element_at(F.array(F.lit("a"), F.lit("b"), F.lit("c")),
                                   (F.col("id") % 3 + 1).cast("int")).alias("c"),
                      uniform(200).alias("noise"))
            .withColumn("y", F.when(F.col("x0") + F.col("x1") * F.col("noise") > 0.8,
                                    "yes").otherwise("no"))
            .drop("noise").cache())


def _fp(spark, args, cores, out):
    from pyspark.ml.fpm import FPGrowth

    import duckmine.spark as dm

    for n in args.baskets:
        df = baskets(spark, n, cores)
        df.count()
        # each run reads the table under a new name: the encoded baskets a call
        # caches would otherwise be found again by the next run, which then reads
        # neither the baskets nor encodes them; those caches go before MLlib runs
        names = (f"items_{i}" for i in itertools.count())
        t, ours = timed(args, lambda df=df, names=names: dm.fp_growth(
            df.withColumnRenamed("items", next(names)), args.support).count())
        spark.catalog.clearCache()
        df.cache().count()
        # ours first: MLlib may take the session down (at five million baskets
        # with an 8 GB heap, its SparkContext shut down after 48 minutes)
        say({"part": "fp", "size": n, "duckmine": t, "check": f"{ours} itemsets"})
        t2, theirs = peer_timed(args, lambda df=df: FPGrowth(
            itemsCol="items", minSupport=args.support).fit(df).freqItemsets.count())
        out.append({"part": "fp", "size": n, "duckmine": t, "peer": t2, "peer_name": "MLlib",
                    "check": f"{ours} itemsets" + ("" if theirs in (None, ours) else
                                                   f" (MLlib {theirs})")})
        say(out[-1])
        df.unpersist()


def _clusters(spark, args, cores, out):
    from pyspark.ml.clustering import GaussianMixture, KMeans
    from pyspark.ml.feature import VectorAssembler

    import duckmine.spark as dm

    df = points(spark, args.rows, cores)
    df.count()
    assembler = VectorAssembler(inputCols=df.columns, outputCol="features")
    vectors = assembler.transform(df).select("features").cache()
    vectors.count()
    if "kmeans" in args.parts:
        from duckmine.spark import frames

        frames.SECONDS.clear()
        t, model = timed(args, lambda: dm.kmeans(df, 10))
        each = per_pass()
        passes = json.loads(model["body"])["iterations"]
        mllib = KMeans(k=10, initMode="random", tol=0.0, maxIter=passes, seed=1)
        t2, _ = peer_timed(args, lambda: mllib.fit(vectors))
        # as duckmine's fit reads the table: its columns assembled into vectors too
        t3, _ = peer_timed(args, lambda: mllib.fit(assembler.transform(df)))
        out.append({"part": "kmeans", "size": args.rows, "duckmine": t, "peer": t2,
                    "peer_name": "MLlib",
                    "check": f"{passes} passes each; duckmine {each:.2f} s a pass" + (
                        "" if np.isnan(t3) else
                        f"; MLlib from the columns {t3:.1f} s ({t3 / t:.1f}x)")})
        say(out[-1])
    if "em" in args.parts:
        per_pass()
        t, model = timed(args, lambda: dm.em(df, 5, max_iterations=10))
        each = per_pass()
        steps = json.loads(model["body"])["iterations"]
        t2, _ = peer_timed(args, lambda: GaussianMixture(k=5, maxIter=10, tol=0.0, seed=1)
                                 .fit(vectors))
        out.append({"part": "em", "size": args.rows, "duckmine": t, "peer": t2,
                    "peer_name": "MLlib GMM",
                    "check": f"{steps} E steps vs 10; duckmine {each:.2f} s a step" + (
                        "" if np.isnan(t2) else f", MLlib {t2 / 10:.2f}")})
        say(out[-1])
    vectors.unpersist()
    df.unpersist()


def _c45(spark, args, cores, out):
    import pandas as pd

    df = grouped(spark, args.group_rows, args.groups, cores)
    df.count()
    df.createOrReplaceTempView("bench_groups")
    t, ours = timed(args, lambda: spark.sql(
        "SELECT count(*) FROM c45_fit(TABLE(bench_groups) PARTITION BY (g), "
        "target => 'y', by => 'g')").collect()[0][0])

    def fit(pdf):
        from sklearn.tree import DecisionTreeClassifier

        X = pdf[[f"x{j}" for j in range(5)]].assign(c=pdf["c"].astype("category").cat.codes)
        DecisionTreeClassifier(random_state=1).fit(X, pdf["y"])
        return pd.DataFrame({"g": [pdf["g"].iloc[0]]})

    t2, theirs = peer_timed(args,
                            lambda: df.groupBy("g").applyInPandas(fit, "g long").count())
    out.append({"part": "c45", "size": args.group_rows, "duckmine": t, "peer": t2,
                "peer_name": "sklearn per group",
                "check": f"{ours} models" + ("" if theirs in (None, ours) else
                                             f" ({theirs})")})
    say(out[-1])
    df.unpersist()


def _bn(spark, args, cores, out):
    import duckmine.spark as dm

    df = grouped(spark, args.rows, 1, cores).drop("g").cache()
    df.count()
    df.createOrReplaceTempView("bench_network")
    t, ours = timed(args, lambda: dm.bayes_net(df, "y", search="tan"))
    t2, theirs = peer_timed(args, lambda: spark.sql(
        "SELECT model FROM bayes_net_fit(TABLE(bench_network) WITH SINGLE PARTITION, "
        "target => 'y', search => 'tan')").collect()[0][0])
    out.append({"part": "bn", "size": args.rows, "duckmine": t, "peer": t2,
                "peer_name": "one worker",
                "check": agree(ours["id"], theirs and theirs["id"])})
    say(out[-1])
    df.unpersist()


def _tree(spark, args, cores, out):
    from pyspark.sql import functions as F

    import duckmine.spark as dm
    from duckmine.spark import trees

    # J48 cuts only between values more than 1e-5 apart: the attributes span
    # [0, 1000) so that a million rows still leave it cuts
    df = grouped(spark, args.tree_rows, 1, cores).drop("g")
    df = df.select(*[(F.col(c) * 1000.0).alias(c) if c.startswith("x") else F.col(c)
                     for c in df.columns]).cache()
    df.count()
    df.createOrReplaceTempView("bench_tree")
    t, ours = timed(args, lambda: dm.c45(df, "y"))
    t2, theirs = peer_timed(args, lambda: spark.sql(
        "SELECT model FROM c45_fit(TABLE(bench_tree) WITH SINGLE PARTITION, "
        "target => 'y')").collect()[0][0])
    parent = json.loads(ours["body"])["tree"]["parent"]
    depth = [0] * len(parent)
    for i, q in enumerate(parent):  # parents come first
        depth[i] = depth[q] + 1 if q >= 0 else 0
    out.append({"part": "tree", "size": args.tree_rows, "duckmine": t, "peer": t2,
                "peer_name": "one worker",
                "check": agree(ours["id"], theirs and theirs["id"])
                + f"; {len(parent)} nodes, {max(depth)} levels, "
                f"{trees.LAST.get('passes', 0)} pruning passes"})
    say(out[-1])
    df.unpersist()


def child(args):
    import duckmine.spark as dm

    if args.pin:  # the JVM and the Python workers inherit it
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:args.cores[0]])
    memory = PeakMemory()
    spark = dm.session(f"local[{args.cores[0]}]", quick=args.quick_jvm,
                       **{"spark.driver.memory": args.driver_memory,
                          "spark.sql.execution.arrow.maxRecordsPerBatch": "10000"})
    dm.register(spark)
    out = []
    warm = spark.createDataFrame([([f"i{j}", "x"],) for j in range(50)], "items array<string>")
    dm.fp_growth(warm, 2).count()  # compile the kernels once, before any timing
    if "c45" in args.parts:
        _c45(spark, args, args.cores[0], out)
    if "kmeans" in args.parts or "em" in args.parts:
        _clusters(spark, args, args.cores[0], out)
    if "bn" in args.parts:
        _bn(spark, args, args.cores[0], out)
    if "tree" in args.parts:
        _tree(spark, args, args.cores[0], out)
    if "fp" in args.parts:  # MLlib's FPGrowth takes longest: last
        _fp(spark, args, args.cores[0], out)
    spark.stop()
    memory.done.set()
    for r in out:
        r["cores"] = args.cores[0]
        r["peak_mb"] = memory.mb()
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baskets", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--support", type=float, default=0.01)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--group-rows", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--tree-rows", type=int, default=200_000)
    parser.add_argument("--cores", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--driver-memory", default="8g",
                        help="the JVM's heap (MLlib's FPGrowth failed with 8g at five "
                             "million baskets, in the quick JVM)")
    parser.add_argument("--tools", nargs="+", default=["duckmine", "peer"],
                        choices=["duckmine", "peer"])
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each timing; the median is shown")
    parser.add_argument("--pin", action="store_true",
                        help="run each core count's processes on that many CPUs alone: "
                             "local[1] otherwise keeps more than one core busy (the JVM "
                             "feeding a Python worker while it computes)")
    parser.add_argument("--quick-jvm", action="store_true",
                        help="the JVM's client compiler and serial collector, as the "
                             "tests start it (session(quick=True)); a long job runs at "
                             "about half the speed")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    results = []
    for cores in args.cores:
        argv = ["--cores", cores, "--support", args.support, "--rows", args.rows,
                "--group-rows", args.group_rows, "--groups", args.groups,
                "--tree-rows", args.tree_rows, "--driver-memory", args.driver_memory,
                "--baskets", *args.baskets, "--parts", *args.parts, "--tools", *args.tools,
                "--repeat", args.repeat,
                *(["--pin"] if args.pin else []), *(["--quick-jvm"] if args.quick_jvm else [])]
        got = run_child("duckmine.benchmarks.spark", argv, args.timeout)
        if got is None:
            print(f"local[{cores}]: out of time ({args.timeout:.0f} s)")
            continue
        results += got
    print(f"{'part':7} {'size':>10} {'cores':>5} {'duckmine s':>11} {'peer s':>9} "
          f"{'ratio':>6}  {'peer':18} {'peak MB':>8}  check")
    for r in results:
        timed_peer = not np.isnan(r["peer"])  # not with --tools duckmine
        ratio = f"{r['peer'] / r['duckmine']:>5.1f}x" if timed_peer else f"{'-':>6}"
        peer = r["peer_name"] if timed_peer else "(not run)"
        print(f"{r['part']:7} {r['size']:>10,} {r['cores']:>5} {r['duckmine']:>11.1f} "
              f"{r['peer']:>9.1f} {ratio}  {peer:18} {r['peak_mb']:>8,.0f}  {r['check']}")
    by = {(r["part"], r["size"], r["cores"]): r for r in results}
    for (part, size, cores), r in by.items():
        one = by.get((part, size, 1))
        if cores == 2 and one:
            theirs = "" if np.isnan(r["peer"]) else \
                f", {r['peer_name']} {one['peer'] / r['peer']:.2f}x"
            print(f"{part} {size:,}: 1 -> 2 cores: duckmine "
                  f"{one['duckmine'] / r['duckmine']:.2f}x{theirs}")


if __name__ == "__main__":
    main()
