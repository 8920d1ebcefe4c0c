"""``duckmine compile``: the kernels compiled and cached before anything needs them,
for an image's build or a CI's install (a first query otherwise waits for its
kernels). It runs the demo's queries, then a fit of every declared learner on
the sample tables with each scoring its models answer, then the fits whose kernels
differ on large data on a table of ``LARGE_ROWS``. numba compiles on one core,
so two processes take the list from both ends and share what they compile
through the kernel cache."""

import subprocess
import sys
import time

from ..algorithms import contract, kernel_cache

# a sample table, and its target, for each kind of model
TABLES = {"classifier": ("labor", "class"), "regressor": ("cpu", "class"),
          "clusterer": ("weather_numeric", None), "counter": ("weather", None)}
# the scoring functions that read rows, and those that read the model alone
ON_ROWS = ("predict", "predict_proba", "predict_value", "log_likelihood")
ON_MODEL = {"model_text": "model_text(m)", "model_to_sql": "model_to_sql(m, 'duckdb')"}


def example_options(decl):
    """Values for the options of ``decl`` that have no default: the least allowed."""
    out = {}
    for p in decl.params:
        if p.required:
            out[p.name] = int(max(p.low or 0, 2)) if p.type == "integer" else p.low or 1.0
    return out


def learner_queries():
    """For every declared learner and kind of model it makes: its aggregate fit on
    a sample table, scored by every function its models answer."""
    out = []
    for decl in contract.learners().values():
        for kind in decl.model_kinds:
            table, target = TABLES[kind]
            args = "".join(f", {k} := {contract.literal(v)}"
                           for k, v in example_options(decl).items())
            fit = f"{decl.name}_fit(x{'' if target is None else f', {target!r}'}{args})"
            can = decl.capabilities_for(kind)
            scores = [f"{c}(m, t)" for c in ON_ROWS if c in can] + \
                [sql for c, sql in ON_MODEL.items() if c in can]
            out.append(f"SELECT {', '.join(scores) or 'm'} FROM "
                       f"(SELECT {fit} AS m FROM {table} x), {table} t")
    return out


# a table large enough for the kernels that run threads only on large data
# (``jit.threads``: ripper's and ridor's PARALLEL_ROWS, REPTree's SUBTREE_CELLS,
# CART's PARALLEL_ENTRIES, PART's c45.WIDE_CELLS, k-means' and EM's chunks and the
# passes that prepare them, jit.COLUMN_PASS_CELLS; the benchmarks warm up on as many
# rows), and the fits that compile them
LARGE_ROWS = 100_000  # REPTree and RIPPER grow on two thirds of them
LARGE = ("(SELECT hash(i) % 1000 / 10.0 AS a, hash(i + 1) % 1000 / 10.0 AS b, "
         "hash(i + 2) % 1000 / 10.0 AS c, hash(i + 3) % 7 AS d, "
         "CASE WHEN hash(i) % 1000 + hash(i + 3) % 500 > 800 THEN 'yes' ELSE 'no' END AS y "
         f"FROM range({LARGE_ROWS}) r(i))")
# (REPTree twice: its growth compiles once for a class, held in a byte, and once
# for a numeric target)
LARGE_FITS = ("rep_tree_fit(x, 'y')", "rep_tree_fit(x, 'a')", "ripper_fit(x, 'y')",
              "ridor_fit(x, 'y', shuffles := 2)",
              "cart_fit(x, 'y')", "part_fit(x, 'y')", "kmeans_fit(x, 2)",
              "em_fit(x, k := 2, max_iterations := 3)")


def queries():
    from .cli import DEMO

    return [q for _, q in DEMO] + learner_queries() + \
        [f"SELECT {fit}.id FROM {LARGE} x" for fit in LARGE_FITS]


def run(reverse=False):
    """``queries`` (from the last back with ``reverse``) run by ``cli.run_quietly``:
    the queries that failed."""
    from .cli import run_quietly

    todo = queries()
    return run_quietly(todo[::-1] if reverse else todo)


def compile_all():
    """``duckmine compile``: the list run from both ends; prints what is cached."""
    start = time.perf_counter()
    before = kernel_cache.cached()
    helper = subprocess.Popen([sys.executable, "-c", "from duckmine.extension.warm import "
                               "run; run(reverse=True)"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        failed = run()
    finally:
        helper.wait()
    for query, err in failed:
        print(f"duckmine compile: a query failed: {query}\n  {err}", file=sys.stderr)
    after = kernel_cache.cached()
    print(f"{after} kernels cached ({after - before} new) in {kernel_cache.kernel_dir()}, "
          f"{time.perf_counter() - start:.0f} s")
    return 1 if failed else 0
