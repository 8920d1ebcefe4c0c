"""duckmine on Apache Spark: the same functions on a SparkSession, written from the
same declarations and run by the same engine-free cores as on DuckDB.

    import duckmine.spark
    duckmine.spark.register(spark)
    spark.sql("SELECT key AS region, model FROM c45_fit("
              "TABLE(customers) PARTITION BY (region), target => 'churned', "
              "by => 'region')")

Spark's table functions take their table as ``TABLE(t)`` followed by how its rows
are split: ``WITH SINGLE PARTITION`` for one result of the whole table,
``PARTITION BY (g)`` for one per group (a fit then names the group's columns with
``by``, which its ``key`` column gives back). Model values are the same STRUCT as
DuckDB's, so a model fitted on either engine scores on the other.

Functions registered with Spark are the session's: register again in every new
SparkSession. The workers import ``duckmine`` (install it on every node) and run
its compiled kernels from their cache.
"""

import os
import sys

# the engine settings a fit reads, from the session's configuration
SETTINGS = {"max_values": "spark.duckmine.maxNominalValues",
            "memory_limit": "spark.duckmine.memoryLimit",
            "ad_tree_max_mb": "spark.duckmine.adTreeMaxMb",
            "max_itemsets": "spark.duckmine.maxItemsets"}


def settings(spark):
    """The duckmine settings of ``spark``'s configuration (None: the default). The
    memory a whole-table fit may take on one worker is, unless set, this machine's
    memory shared by the tasks that run at once (``spark.default.parallelism``)."""
    out = {}
    for key, conf in SETTINGS.items():
        v = spark.conf.get(conf, None)
        out[key] = None if v is None else (v if key == "memory_limit" else int(v))
    if out["memory_limit"] is None:
        tasks = max(1, spark.sparkContext.defaultParallelism)
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        out["memory_limit"] = int(0.8 * physical / tasks)
    return out


def register(spark):
    """Register every duckmine function on ``spark`` (a SparkSession): each declared
    learner's ``_fit`` and table forms, ``fp_growth``, ``association_rules``,
    ``ad_counts``, and the model functions (``predict``, ``predict_proba``, ``predict_value``,
    ``log_likelihood``, ``model_text``, ``model_dot``, ``model_svg``,
    ``model_info``, ``model_to_sql``). Returns the names registered."""
    from . import counts, itemsets, learners, scoring

    s = settings(spark)
    names = []
    for name, f in (learners.table_functions(s) + itemsets.table_functions(s)
                    + counts.table_functions(s)):
        spark.udtf.register(name, f)
        names.append(name)
    for name, f in scoring.functions():
        spark.udf.register(name, f)
        names.append(name)
    return names


def kmeans(df, k, **options):
    """k-means over the whole cluster (``spark/lloyd.py``): the model value, as
    ``kmeans_fit`` gives it."""
    from .lloyd import fitted

    return fitted(df, k, **options)


def em(df, k, **options):
    """EM over the whole cluster (``spark/mixture.py``): the model value, as ``em_fit``
    gives it."""
    from .mixture import fitted

    return fitted(df, k, **options)


def bayes_net(df, target, **options):
    """A Bayesian network classifier from counts made over the whole cluster
    (``spark/network.py``): the model value, as ``bayes_net_fit`` gives it."""
    from .network import fitted

    return fitted(df, target, **options)


def c45(df, target, **options):
    """A C4.5 tree grown a level at a time over the whole cluster
    (``spark/trees.py``): the model value, as ``c45_fit`` gives it."""
    from .trees import fitted

    return fitted(df, target, **options)


def fp_growth(df, min_support, **options):
    """Parallel FP-growth over the whole cluster (``spark/pfp.py``): a DataFrame of
    ``(itemset, support_count, support)``."""
    from .pfp import fp_growth as mine

    return mine(df, min_support, **options)


def ad_counts(df, columns):
    """The contingency table of ``columns`` over the whole cluster
    (``spark/counts.py``): a DataFrame of ``(combination, count)``."""
    from .counts import ad_counts as table

    return table(df, columns)


def models(spark, values):
    """A DataFrame of one ``model`` column holding the model values given (as the
    ``_fit`` functions and ``kmeans``/``em`` give them), to score in SQL."""
    import pyarrow as pa

    from ..udfs.models import MODEL

    return spark.createDataFrame(pa.table({"model": pa.array(list(values), MODEL)}))


def session(master="local[2]", app="duckmine", quick=False, **conf):
    """A SparkSession for one machine, its Python workers this interpreter, forked
    from a daemon that has duckmine loaded (``spark/daemon.py``). ``quick`` runs
    the JVM with its client compiler and serial collector, for short jobs (the
    tests): that starts it about half a second sooner, but a long job then runs at
    about half the speed (FP-growth at a million baskets: 7.4 s against 3.7 s)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app)
    if quick:
        builder = builder.config("spark.driver.extraJavaOptions",
                                 "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    builder = (builder.config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.python.daemon.module", "duckmine.spark.daemon"))
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
