"""The ``duckmine`` command: ``demo`` builds the sample database and runs every
mining function on it; ``sql`` runs a query on a loaded connection; ``dashboard``
opens the database in a web page to fit, look at and use models; ``compile``
compiles and caches the kernels ahead of use."""

import argparse
import csv
import json
import os
import sys
import time
from contextlib import nullcontext

import duckdb

from . import progress
from .loader import connect

DEMO_DB = "duckmine_demo.duckdb"

DEMO = [
    ("The book's weather data (section 6.3): itemsets with support >= 6",
     "SELECT * FROM fp_growth('weather', 6)"),
    ("Closed itemsets of the contact-lens data at 25% support",
     "SELECT * FROM fp_growth('contact_lenses', 0.25, target := 'closed')"),
    ("Association rules of the weather data, support >= 3, confidence 1",
     "SELECT antecedent, consequent, support_count, confidence, lift, leverage, "
     "conviction FROM association_rules('weather', 3, min_confidence := 1.0) LIMIT 10"),
    ("Market baskets (long layout): maximal itemsets at 3% support",
     "SELECT * FROM fp_growth('baskets', 0.03, target := 'maximal') LIMIT 10"),
    ("Rules from the baskets, consequents of one item",
     "SELECT antecedent, consequent, support, confidence, lift FROM "
     "association_rules('baskets', 0.02, min_confidence := 0.7, max_consequent := 1) "
     "LIMIT 10"),
    ("One model per group: frequent pairs per weekday, mined with GROUP BY",
     "SELECT day, s.itemset, s.support_count FROM ("
     "SELECT day, unnest(fp_growth_agg(items, 0.08, max_length := 2)) AS s FROM ("
     "SELECT tid % 7 AS day, list(item) AS items FROM baskets GROUP BY tid) "
     "GROUP BY day) WHERE len(s.itemset) = 2 ORDER BY day, s.support_count DESC "
     "LIMIT 10"),
    ("One rule set per group: the strongest rule of each weekday",
     "SELECT day, r.antecedent, r.consequent, round(r.confidence, 3) AS confidence FROM ("
     "SELECT day, unnest(association_rules_agg(items, 0.05, min_confidence := 0.8)) AS r "
     "FROM (SELECT tid % 7 AS day, list(item) AS items FROM baskets GROUP BY tid) "
     "GROUP BY day) QUALIFY row_number() OVER (PARTITION BY day ORDER BY r.confidence "
     "DESC, r.support_count DESC) = 1 ORDER BY day"),
    ("The book's baselines (chapter 4) on the labor data: ZeroR, 1R and naive Bayes, "
     "cross-validated as Weka does",
     "SELECT 'zero_r' AS learner, round(pct_correct, 4) AS pct_correct "
     "FROM cross_validate('zero_r', 'labor', 'class') UNION ALL "
     "SELECT 'one_r', round(pct_correct, 4) FROM cross_validate('one_r', 'labor', 'class') "
     "UNION ALL SELECT 'naive_bayes', round(pct_correct, 4) "
     "FROM cross_validate('naive_bayes', 'labor', 'class')"),
    ("1R on the numeric weather data: one attribute, one rule",
     "SELECT * FROM one_r('weather_numeric', 'play')"),
    ("C4.5 on the book's numeric weather data (section 6.1): the tree as a relation",
     "SELECT node, parent, attribute, operator, value, is_leaf, class, weight, errors "
     "FROM c45('weather_numeric', 'play')"),
    ("A model is a value: fit it once and keep it in a table",
     "CREATE OR REPLACE TABLE models AS "
     "SELECT 'labor' AS name, c45_fit(t, 'class') AS model FROM labor t"),
    ("The stored tree, printed line for line as J48 prints it",
     "SELECT replace(unnest(string_split(model_text(model), chr(10))), chr(9), ' ') "
     "AS j48 FROM models"),
    ("Scoring in plain SQL: predictions and class probabilities next to the data",
     "SELECT duration, \"wage-increase-first-year\" AS wage1, \"statutory-holidays\" "
     "AS holidays, class, predict(m.model, l) AS predicted, "
     "predict_proba(m.model, l)['good'] AS p_good FROM labor l, models m LIMIT 8"),
    ("... and as one SQL expression, to score it in another engine",
     "SELECT left(model_to_sql(model, 'postgres'), 150) || ' ...' AS postgres "
     "FROM models"),
    ("One tree per group of a whole table, its rows read once: fit_groups",
     "SELECT windy, model_info(model).instances AS instances, "
     "predict(model, {'outlook': 'rainy', 'temperature': 'mild', 'humidity': 'high'}) "
     "AS rainy_mild_high FROM fit_groups('c45', 'weather', 'play', 'windy')"),
    ("From trees to rules (section 6.2)",
     "SELECT * FROM c45_rules('labor', 'class')"),
    ("Rules from partial trees (PART) and rules with exceptions (Ridor) on the labor data",
     "SELECT 'part' AS learner, rule, conditions, class, round(coverage, 2) AS coverage "
     "FROM part('labor', 'class') UNION ALL SELECT 'ridor', rule, conditions, class, "
     "coverage FROM ridor('labor', 'class')"),
    ("RIPPER's rule list and CART's pruned tree on the labor data",
     "SELECT 'ripper' AS learner, rule AS step, array_to_string(conditions, ' and ') "
     "AS test, class FROM ripper('labor', 'class') UNION ALL "
     "SELECT 'cart', node, test, class FROM cart('labor', 'class') WHERE is_leaf"),
    ("REPTree on the CPU data: a regression tree pruned on a held-out fold, "
     "cross-validated",
     "SELECT round(correlation, 4) AS correlation, round(root_relative_squared_error, 4) "
     "AS rrse FROM cross_validate('rep_tree', 'cpu', 'class')"),
    ("Ten-fold stratified cross-validation, with J48's folds and figures",
     "SELECT correct, round(pct_correct, 4) AS pct_correct, round(kappa, 4) AS kappa, "
     "round(mean_absolute_error, 4) AS mae, round(root_mean_squared_error, 4) AS rmse, "
     "round(relative_absolute_error, 4) AS rae, "
     "round(root_relative_squared_error, 4) AS rrse, instances "
     "FROM cross_validate('c45', 'labor', 'class')"),
    ("Options travel as one value; EM's ten-fold cross-validated log-likelihood",
     "SELECT round(pct_correct, 4) AS pct_correct FROM cross_validate('c45', 'labor', "
     "'class', options := {'confidence': 0.1, 'min_leaf': 5}) UNION ALL "
     "SELECT round(log_likelihood, 4) FROM cross_validate('em', 'cpu', NULL, "
     "options := {'k': 3})"),
    ("What a stored model is: its learner, options, attributes and what it answers",
     "SELECT i.learner, i.version, i.kind, i.options, i.instances, i.target, "
     "i.capabilities FROM (SELECT model_info(model) AS i FROM models)"),
    ("... and its confusion matrix",
     "SELECT * FROM confusion_matrix('c45', 'labor', 'class')"),
    ("M5' model tree of CPU performance (section 6.6): nodes, leaves and their models",
     "SELECT node, parent, attribute, operator, value, model, instances, "
     "round(error_pct, 3) AS error_pct, round(intercept, 4) AS intercept, "
     "round(coefficients['CACH'], 4) AS cach, cardinality(coefficients) AS terms "
     "FROM m5p('cpu', 'class')"),
    ("The stored model tree, printed as M5P prints it",
     "CREATE OR REPLACE TABLE cpu_models AS SELECT m5p_fit(t, 'class') AS model FROM cpu t"),
    ("",
     "SELECT replace(unnest(string_split(model_text(model), chr(10))), chr(9), '    ') "
     "AS m5p FROM cpu_models"),
    ("Predicting numbers in plain SQL",
     "SELECT MYCT, MMIN, MMAX, CACH, class, round(predict_value(m.model, c), 2) AS "
     "predicted FROM cpu c, cpu_models m LIMIT 6"),
    ("Rules from model trees (section 6.6)",
     "SELECT rule, conditions, round(intercept, 4) AS intercept, coverage, "
     "round(error_pct, 3) AS error_pct FROM m5_rules('cpu', 'class')"),
    ("Ten-fold cross-validation of the model tree, with M5P's folds and figures",
     "SELECT round(correlation, 4) AS correlation, round(mean_absolute_error, 4) AS mae, "
     "round(root_mean_squared_error, 4) AS rmse, round(relative_absolute_error, 4) AS rae, "
     "round(root_relative_squared_error, 4) AS rrse, instances "
     "FROM cross_validate('m5p', 'cpu', 'class')"),
    ("EM clustering (section 6.8): a two-cluster mixture of the numeric weather data",
     "SELECT cluster, round(prior, 3) AS prior, attribute, value, round(mean, 3) AS mean, "
     "round(std_dev, 3) AS std_dev, round(probability, 3) AS probability "
     "FROM em('weather_numeric', k := 2)"),
    ("The number of clusters chosen by ten-fold cross-validated log-likelihood",
     "SELECT DISTINCT num_clusters, round(log_likelihood, 4) AS log_likelihood "
     "FROM em('cpu')"),
    ("Cluster memberships and log densities in plain SQL",
     "SELECT outlook, temperature, humidity, windy, play, predict(m.model, w) AS cluster, "
     "round(predict_proba(m.model, w)['0'], 4) AS p0, "
     "round(log_likelihood(m.model, w), 4) AS log_density FROM weather_numeric w, "
     "(SELECT em_fit(t, k := 2) AS model FROM weather_numeric t) m LIMIT 6"),
    ("k-means (k-means++ seeding): the centres and the within-cluster squared error",
     "SELECT cluster, size, attribute, round(value, 2) AS value, label, "
     "round(sse, 4) AS sse FROM kmeans('weather_numeric', 2)"),
    ("An AD-tree (section 6.7) of the weather data reduced to humidity, windy and play",
     "CREATE OR REPLACE TABLE weather_tree AS SELECT ad_tree_fit(w) AS tree "
     "FROM (SELECT humidity, windy, play FROM weather) w"),
    ("Counts the tree does not store, derived by subtraction",
     "SELECT ad_count(tree, {'humidity': 'high', 'windy': 'TRUE', 'play': 'no'}) AS a, "
     "ad_count(tree, {'humidity': 'high', 'windy': 'FALSE', 'play': 'no'}) AS b, "
     "ad_count(tree, {'play': 'yes'}) AS c FROM weather_tree"),
    ("A contingency table through an AD-tree, zero counts included",
     "SELECT * FROM ad_counts('weather', ['outlook', 'play'])"),
    ("A Bayesian network classifier by K2 (up to 3 parents): each table entry",
     "SELECT node, parents, parent_values, value, round(probability, 4) AS probability "
     "FROM bayes_net('weather', 'play', max_parents := 3) WHERE node = 'humidity'"),
    ("A tree-augmented naive Bayes network, printed as Weka's BayesNet prints it",
     "SELECT unnest(string_split(model_text(bayes_net_fit(t, 'class', search := 'tan')), "
     "chr(10))) AS network FROM labor t"),
    ("Ten-fold cross-validation of naive Bayes, K2, TAN and AODE on the labor data",
     "SELECT 'naive Bayes' AS learner, round(pct_correct, 4) AS pct_correct "
     "FROM cross_validate('bayes_net', 'labor', 'class') UNION ALL "
     "SELECT 'K2, 3 parents', round(pct_correct, 4) "
     "FROM cross_validate('bayes_net', 'labor', 'class', options := {'max_parents': 3}) "
     "UNION ALL "
     "SELECT 'TAN', round(pct_correct, 4) "
     "FROM cross_validate('bayes_net', 'labor', 'class', options := {'search': 'tan'}) "
     "UNION ALL "
     "SELECT 'AODE', round(pct_correct, 4) FROM cross_validate('aode', 'labor', 'class')"),
]


def run_quietly(queries):
    """``queries`` in turn on an in-memory copy of the sample tables, results
    discarded, to compile their kernels: the (query, error) of those that failed
    (one that needs an earlier one's table, run out of order)."""
    from .samples import create_sample_tables

    con = connect()
    create_sample_tables(con)
    failed = []
    for query in queries:
        try:
            con.execute(query).fetchall()
        except duckdb.Error as err:
            failed.append((query, str(err)))
    return failed


COMPILING, COMPILED = "demo-compiling", "demo-compiled"  # a lock and a mark (kernel_cache)


def compile_ahead():
    """Compile the demo's kernels: its queries from the last back
    (``run_quietly``), then those that needed an earlier one's table, in order.
    Only one process at a time does it (the lock ``COMPILING``), and the last
    leaves the mark ``COMPILED``."""
    from ..algorithms import kernel_cache

    with kernel_cache.holding(COMPILING) as held:
        if not held:
            return
        failed = {query for query, _ in run_quietly([query for _, query in reversed(DEMO)])}
        run_quietly([q for _, q in DEMO if q in failed or q.startswith("CREATE")])
        kernel_cache.mark(COMPILED)


def start_compile_ahead():
    """While the demo's kernels are not all compiled (no ``COMPILED`` mark) and no
    process is compiling them, a process that runs ``compile_ahead`` in the
    background; else None. It goes on after the demo, so that later runs find the
    kernels compiled. ``DUCKMINE_COMPILE_AHEAD=0`` turns it off (the tests, which
    keep every core busy already)."""
    import subprocess

    from ..algorithms import kernel_cache

    if os.environ.get("DUCKMINE_COMPILE_AHEAD", "1") == "0" \
            or kernel_cache.marked(COMPILED):
        return None
    with kernel_cache.holding(COMPILING) as free:
        if not free:
            return None
    return subprocess.Popen([sys.executable, "-c", "from duckmine.extension.cli import "
                             "compile_ahead; compile_ahead()"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def demo(db):
    """Build the sample database ``db`` and run every query of ``DEMO`` on it. A
    kernel not yet compiled runs as Python (``jit.interpreting``): on the sample
    tables that takes moments, where compiling takes minutes, and gives the same
    results. Meanwhile a process compiles the demo's kernels in the background
    (``start_compile_ahead``), which is returned."""
    from ..algorithms import jit
    from .samples import create_sample_tables

    if os.path.exists(db):
        os.remove(db)
    helper = start_compile_ahead()
    con = connect(db)
    try:
        create_sample_tables(con)
        print(f"Sample database {db}: tables weather, weather_numeric, contact_lenses, "
              "labor, cpu, baskets "
              f"({con.execute('SELECT count(DISTINCT tid) FROM baskets').fetchall()[0][0]}"
              " baskets)\n")
        with jit.interpreting():
            for title, query in DEMO:
                start = time.perf_counter()
                print(f"-- {title}\n{query};" if title else f"{query};")
                if query.startswith("CREATE"):
                    con.execute(query)
                else:
                    con.sql(query).show(max_width=200, max_rows=40)
                print(f"({time.perf_counter() - start:.2f} s)\n")
    except BaseException:
        if helper is not None:
            helper.kill()
            helper.wait()
        raise
    finally:
        con.close()
    if helper is not None:
        print(f"The demo's kernels are compiling in the background (process {helper.pid}), "
              "for later queries; `duckmine compile` compiles every learner's.")
    return helper


def run_sql(query, db, create=False, output="table", max_rows=100):
    """Run ``query`` on a loaded connection and print its result: as a table (at
    most ``max_rows`` rows), as CSV or JSON lines, or ``raw`` (each value as it is,
    tab separated, so that ``model_text`` and ``model_to_sql`` print as text)."""
    if db is None and os.path.exists(DEMO_DB):
        db = DEMO_DB
    if db is not None and db != ":memory:" and not os.path.exists(db) and not create:
        raise FileNotFoundError(f"no database file {db!r} (give --create to make a new "
                                "one)")
    con = connect(db)
    try:
        bars = progress.Bars() if sys.stderr.isatty() else None
        try:  # on a terminal, the query runs here with progress bars
            with progress.watching(con, bars) if bars else nullcontext():
                rel = con.sql(query)
                if rel is not None and bars:
                    rel = con.from_arrow(rel.to_arrow_table())
        finally:
            if bars:
                bars.close()
        if rel is None:  # a statement without a result
            return
        if output == "table":
            rel.show(max_width=200, max_rows=max_rows)
            return
        names, rows = rel.columns, rel.fetchall()
        if output == "csv":
            writer = csv.writer(sys.stdout, lineterminator="\n")
            writer.writerow(names)
            writer.writerows(rows)
        elif output == "json":
            for row in rows:
                print(json.dumps(dict(zip(names, row)), default=str))
        else:
            for row in rows:
                print("\t".join("" if v is None else str(v) for v in row))
    finally:
        con.close()


def dashboard(db, port=None):
    """Serve the dashboard on ``db`` (the demo database by default, made with the
    sample tables if it is not there) until Ctrl-C."""
    import subprocess
    from importlib.util import find_spec

    if find_spec("streamlit") is None:
        raise ModuleNotFoundError("the dashboard needs Streamlit: pip install "
                                  "'duckmine[dashboard]'")
    if db is None:
        db = DEMO_DB
        if not os.path.exists(db):
            from .samples import create_sample_tables

            con = connect(db)
            try:
                create_sample_tables(con)
            finally:
                con.close()
    elif db != ":memory:" and not os.path.isfile(db):
        raise FileNotFoundError(f"no database file {db!r}")
    else:
        duckdb.connect(db, read_only=True).close()  # a file that is not a database fails here
    from . import dashboard as page

    app = os.path.join(os.path.dirname(page.__file__), "dashboard_app.py")
    command = [sys.executable, "-m", "streamlit", "run", app, "--server.headless", "true",
               "--browser.gatherUsageStats", "false"]
    if port is not None:
        command += ["--server.port", str(port)]
    env = dict(os.environ, **{page.DB_VARIABLE: os.path.abspath(db) if db != ":memory:"
                              else db})
    return subprocess.call(command, env=env)


def interrupted(err):
    """Whether ``err`` is how a query stopped by Ctrl-C fails: DuckDB's interrupt
    error, its Python client's, or a stopped duckmine job's."""
    from ..udfs.registry import INTERRUPTED

    return (isinstance(err, duckdb.InterruptException) or str(err) == "Query interrupted"
            or INTERRUPTED in str(err))


def main(argv=None):
    from .. import __version__

    parser = argparse.ArgumentParser(prog="duckmine", description=__doc__)
    parser.add_argument("--version", action="version", version=f"duckmine {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="build the sample database and mine it")
    p.add_argument("--db", default=DEMO_DB, help=f"database file (default {DEMO_DB})")
    p = sub.add_parser("sql", help="run a query on a connection with duckmine loaded")
    p.add_argument("query")
    p.add_argument("--db", default=None,
                   help=f"database file (default {DEMO_DB} if present, else in memory)")
    p.add_argument("--create", action="store_true",
                   help="make the --db file when it does not exist (else refused)")
    p.add_argument("--format", default="table", choices=("table", "csv", "json", "raw"),
                   help="how to print the result (raw: values as they are, tab separated)")
    p.add_argument("--max-rows", type=int, default=100,
                   help="rows a table shows at most (default 100)")
    p = sub.add_parser("dashboard", help="fit and look at models in a web page")
    p.add_argument("--db", default=None,
                   help=f"database file (default {DEMO_DB}, made with the sample tables "
                        "if it is not there)")
    p.add_argument("--port", type=int, default=None, help="the page's port (default 8501)")
    sub.add_parser("compile", help="compile and cache every learner's kernels now "
                   "(for an image or after an install), rather than on first use")
    args = parser.parse_args(argv)
    try:
        try:
            if args.command == "demo":
                demo(args.db)
            elif args.command == "compile":
                from .warm import compile_all

                return compile_all()
            elif args.command == "dashboard":
                return dashboard(args.db, args.port)
            else:
                run_sql(args.query, args.db, args.create, args.format, args.max_rows)
        except Exception as err:  # a readable message, not a traceback
            if interrupted(err):
                raise KeyboardInterrupt from None
            hint = None
            if args.command == "sql":
                from .arguments import explain  # sqlglot: imported when needed

                hint = explain(err, args.query)
            print(f"duckmine: {type(err).__name__}: {hint or err}", file=sys.stderr)
            return 1
    except KeyboardInterrupt:  # Ctrl-C: the query stopped, as the shell expects
        print("duckmine: interrupted", file=sys.stderr)
        _exit_now(130)
    return 0


def _exit_now(code):
    """Exit with ``code`` at once, past Python's finalisation: a stopped fit may
    still be compiling a kernel on another thread (which nothing can stop), and
    finalising under it aborts the process. The connection is closed already."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
