"""The same functions on Apache Spark (``local[2]``) and on DuckDB, compared case
by case: every learner's model value equal (so its tree, rules and figures equal
to the last digit), per-group models equal group for group, itemsets and rules
equal, scores equal; models fitted on one engine score on the other; and the
contract's errors, by name, on Spark."""

import json
import math

import numpy as np
import pyarrow as pa
import pytest

import duckmine
from duckmine.algorithms import contract
from duckmine.udfs.models import MODEL

from .conftest import arff_tables, table
from .test_contract import CASES, DATASETS, case_id, required

pytestmark = pytest.mark.spark

TABLES = ["weather.nominal", "weather.numeric", "cpu", "cpu.missing", "iris", "supermarket",
          "labor", "breast-cancer"]


@pytest.fixture(scope="module")
def engines():
    """A DuckDB connection and a SparkSession holding the same tables. DuckDB reads
    ARFF nominal columns as ENUMs; Spark has none, so both hold them as VARCHAR."""
    from duckmine import spark as dmspark

    con = arff_tables(TABLES)
    session = dmspark.session(quick=True)  # short jobs: a JVM that starts sooner
    dmspark.register(session)
    for name in TABLES:
        t = table(name)
        cols = con.execute(f"DESCRIBE {t}").fetchall()
        select = ", ".join(f'"{c}"::VARCHAR AS "{c}"' if typ.startswith("ENUM")
                           else f'"{c}"' for c, typ, *_ in cols)
        con.execute(f"CREATE OR REPLACE TABLE {t} AS SELECT {select} FROM {t}")
        session.createDataFrame(con.sql(f"FROM {t}").to_arrow_table()) \
            .createOrReplaceTempView(t)
    # iris in three groups, the group a column of the rows as GROUP BY sees it
    con.execute("CREATE TABLE iris_groups AS SELECT *, (row_number() OVER () % 3)::BIGINT "
                "AS g FROM iris")
    session.createDataFrame(con.sql("FROM iris_groups").to_arrow_table(), ) \
        .repartition(2).createOrReplaceTempView("iris_groups")
    yield con, session
    con.close()


def test_workers_start_with_duckmine_loaded_and_frozen(engines):
    """The session's workers fork from duckmine's daemon (spark/daemon.py): every
    learner's core is imported before the task runs, and outside the collections."""
    _, spark = engines

    def probe(batches):
        import gc
        import sys

        loaded = all(m in sys.modules for m in ("duckmine.algorithms.c45.grow",
                                                "duckmine.algorithms.rules.ripper",
                                                "duckmine.spark.trees", "numba"))
        for _ in batches:
            pass
        yield pa.RecordBatch.from_pydict({"loaded": [loaded],
                                          "frozen": [gc.get_freeze_count()]})

    rows = spark.range(4, numPartitions=2).mapInArrow(probe, "loaded boolean, frozen long")\
        .collect()
    assert len(rows) == 2
    assert all(r.loaded and r.frozen > 100_000 for r in rows), rows


def spark_args(values):
    return "".join(f", {k} => {spark_literal(v)}" for k, v in values.items())


def spark_literal(v):
    """A Python value as a Spark SQL literal (a fraction as a DOUBLE: a bare 0.1 is
    a DECIMAL in Spark)."""
    if isinstance(v, float):
        return f"{v!r}D"
    return contract.literal(v)


def spark_fit(decl, kind, table=None, extra=""):
    t, target = DATASETS[kind]
    target = "" if target is None else f", target => '{target}'"
    return (f"SELECT key, model FROM {decl.name}_fit(TABLE({table or t}) WITH SINGLE "
            f"PARTITION{target}{spark_args(required(decl))}{extra})")


def duck_fit(decl, kind):
    t, target = DATASETS[kind]
    target = "" if target is None else f", '{target}'"
    args = "".join(f", {k} := {contract.literal(v)}" for k, v in required(decl).items())
    return f"SELECT {decl.name}_fit(x{target}{args}) AS model FROM {t} x"


def spark_errors(session, sql, *fragments):
    """``sql`` fails on Spark with an error naming every fragment; the session still
    answers."""
    with pytest.raises(Exception) as err:
        session.sql(sql).collect()
    text = str(err.value)
    for f in fragments:
        assert f in text, text
    assert session.sql("SELECT 42").collect()[0][0] == 42
    return text


@pytest.mark.parametrize("decl,kind", CASES, ids=case_id)
def test_every_learner_fits_the_same_model_on_both(engines, decl, kind):
    con, session = engines
    text = "model_text" in decl.capabilities  # printed in the same query: one fit
    rows = session.sql(f"SELECT key, model{', model_text(model) AS text' if text else ''} "
                       f"FROM ({spark_fit(decl, kind)})").collect()
    assert len(rows) == 1 and rows[0]["key"] is None
    duck = con.sql(f"SELECT model{', model_text(model)' if text else ''} "
                   f"FROM ({duck_fit(decl, kind)})").fetchall()[0]
    assert rows[0]["model"].asDict() == duck[0]
    if text:
        assert rows[0]["text"] == duck[1]


RELATIONS = [(d, k) for d, k in CASES if d.relation]


@pytest.mark.parametrize("decl,kind", RELATIONS, ids=case_id)
def test_table_forms_give_the_model_relation(engines, decl, kind):
    """Spark's table form lists the same rows as the model's relation in DuckDB."""
    con, session = engines
    t, target = DATASETS[kind]
    arg = "" if target is None else f", target => '{target}'"
    got = session.sql(f"SELECT * FROM {decl.name}(TABLE({t}) WITH SINGLE PARTITION{arg}"
                      f"{spark_args(required(decl))})").toArrow()
    want = con.sql(f"SELECT unnest(_dm_rows_{decl.name}(model), recursive := true) "
                   f"FROM ({duck_fit(decl, kind)})").to_arrow_table()
    assert got.column_names == want.column_names
    assert _rows(got) == _rows(want)


def _rows(table):
    rows = table.to_pylist()
    for r in rows:
        for k, v in r.items():
            if isinstance(v, list) and v and isinstance(v[0], tuple):  # a MAP
                r[k] = sorted(v)
            elif isinstance(v, dict):
                r[k] = sorted(v.items())
    return rows


@pytest.mark.parametrize("learner,target", [("c45", "class"), ("m5p", "petallength"),
                                             ("em", None), ("naive_bayes", "class")])
def test_per_group_models_equal_group_for_group(engines, learner, target):
    """PARTITION BY with by => 'g' on Spark, GROUP BY g on DuckDB: the same models."""
    con, session = engines
    t = "" if target is None else f", target => '{target}'"
    opts = ", k => 2" if learner == "em" else ""
    spark = {r["key"]: r["model"].asDict() for r in session.sql(
        f"SELECT key, model FROM {learner}_fit(TABLE(iris_groups) PARTITION BY (g){t}"
        f"{opts}, by => 'g')").collect()}
    duck_t = "" if target is None else f", '{target}'"
    duck_opts = ", k := 2" if learner == "em" else ""
    duck = {str(g): m for g, m in con.sql(
        f"SELECT g, {learner}_fit(x{duck_t}{duck_opts}) FROM iris_groups x GROUP BY g"
    ).fetchall()}
    assert sorted(spark) == ["0", "1", "2"]
    assert spark == duck


def test_em_log_likelihoods_agree(engines):
    """EM on both engines: the same model, and the same log density of every row to
    1e-9 relative, each engine scoring its own model."""
    con, session = engines
    fit = "em_fit(TABLE(iris) WITH SINGLE PARTITION, k => 3)"
    spark = [r[0] for r in session.sql(
        f"SELECT log_likelihood(m.model, struct(i.*)) FROM iris i, {fit} m").collect()]
    duck = [r[0] for r in con.sql(
        "WITH m AS (SELECT em_fit(x, k := 3) AS model FROM iris x) "
        "SELECT log_likelihood(m.model, i) FROM iris i, m").fetchall()]
    assert sorted(spark) == pytest.approx(sorted(duck), rel=1e-9)
    assert all(math.isfinite(v) for v in spark)


def _duck_scores(con, model, table, what):
    con.execute("CREATE OR REPLACE TEMP TABLE _m AS SELECT ?::" + _model_sql() + " AS model",
                [model])
    return con.sql(f"SELECT {what}(_m.model, i) FROM {table} i, _m").fetchall()


def _model_sql():
    from duckmine.udfs.models import MODEL_SQL

    return MODEL_SQL


@pytest.mark.parametrize("learner,table,target,what", [
    ("c45", "iris", "class", "predict"), ("ripper", "weather_nominal", "play", "predict"),
    ("m5p", "cpu", "class", "predict_value"), ("naive_bayes", "iris", "class",
                                                "predict_proba")])
def test_a_model_moves_between_the_engines(engines, learner, table, target, what):
    """Fitted on Spark and scored on DuckDB, and the other way round: the same
    scores as each engine gives its own model."""
    con, session = engines
    from_spark = session.sql(f"SELECT model FROM {learner}_fit(TABLE({table}) WITH "
                             f"SINGLE PARTITION, target => '{target}')").collect()[0][0]
    from_spark = from_spark.asDict()
    from_duck = con.sql(f"SELECT {learner}_fit(x, '{target}') FROM {table} x"
                        ).fetchall()[0][0]
    # DuckDB scores the Spark model
    duck_scores = _duck_scores(con, from_spark, table, what)
    # Spark scores the DuckDB model, passed in as a value
    frame = session.createDataFrame(pa.table({"model": pa.array([from_duck], MODEL)}))
    frame.createOrReplaceTempView("_duck_model")
    spark_scores = session.sql(f"SELECT {what}(m.model, struct(i.*)) FROM {table} i, "
                               "_duck_model m").collect()

    def plain(v):
        return sorted(v.items()) if isinstance(v, dict) else sorted(v) \
            if isinstance(v, list) else v

    assert sorted(map(str, (plain(r[0]) for r in duck_scores))) == \
        sorted(map(str, (plain(r[0]) for r in spark_scores)))
    assert len(duck_scores) == con.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]


def test_itemsets_and_rules_equal(engines):
    con, session = engines
    spark = session.sql("SELECT * FROM fp_growth(TABLE(supermarket) WITH SINGLE "
                        "PARTITION, min_support => 0.2D)").collect()
    duck = con.sql("SELECT * FROM fp_growth('supermarket', 0.2)").fetchall()
    assert len(spark) > 50
    assert sorted((tuple(r[0]), r[1], r[2]) for r in spark) == \
        sorted((tuple(r[0]), r[1], r[2]) for r in duck)
    spark = session.sql("SELECT * FROM association_rules(TABLE(supermarket) WITH SINGLE "
                        "PARTITION, min_support => 0.2D, min_confidence => 0.8D)").collect()
    duck = con.sql("SELECT * FROM association_rules('supermarket', 0.2, "
                   "min_confidence := 0.8)").fetchall()
    assert len(spark) > 10
    assert sorted((tuple(r[0]), tuple(r[1])) + tuple(r[2:]) for r in spark) == \
        sorted((tuple(r[0]), tuple(r[1])) + tuple(r[2:]) for r in duck)


def test_the_long_and_list_layouts(engines):
    con, session = engines
    session.createDataFrame([(1, "a"), (1, "b"), (2, "a"), (2, None), (3, "b"), (3, "a")],
                            "tid long, item string").createOrReplaceTempView("pairs")
    got = session.sql("SELECT * FROM fp_growth(TABLE(pairs) WITH SINGLE PARTITION, "
                      "min_support => 2)").collect()
    assert sorted((tuple(r[0]), r[1]) for r in got) == [(("a",), 3), (("a", "b"), 2),
                                                        (("b",), 2)]
    session.createDataFrame([(["a", "b"],), (["a", None],), (None,), (["b", "a"],)],
                            "items array<string>").createOrReplaceTempView("lists")
    got = session.sql("SELECT itemset, support FROM fp_growth(TABLE(lists) WITH SINGLE "
                      "PARTITION, min_support => 0.5D)").collect()
    assert sorted((tuple(r[0]), r[1]) for r in got) == [(("a",), 0.75), (("a", "b"), 0.5),
                                                        (("b",), 0.5)]


def test_a_split_table_is_refused_not_fitted_per_partition(engines):
    _, session = engines
    spark_errors(session, "SELECT * FROM c45_fit(TABLE(iris_groups), target => 'class')",
                 "c45_fit", "WITH SINGLE PARTITION", "PARTITION BY")
    spark_errors(session, "SELECT * FROM c45_fit(TABLE(iris_groups) PARTITION BY (g), "
                 "target => 'class')", "c45_fit", "several partitions")
    spark_errors(session, "SELECT * FROM c45_fit(TABLE(iris_groups) PARTITION BY (g), "
                 "target => 'class', by => 'sepallength')", "c45_fit", "sepallength")


def test_bad_input_is_named(engines):
    _, session = engines
    single = "TABLE(iris) WITH SINGLE PARTITION"
    spark_errors(session, f"SELECT * FROM c45_fit({single}, target => 'class', "
                 "confidence => 0.7D)", "c45_fit: confidence must be in (0, 0.5], got 0.7")
    spark_errors(session, f"SELECT * FROM c45_fit({single}, target => 'class', "
                 "bogus => 1)", "bogus")
    spark_errors(session, f"SELECT * FROM c45_fit({single}, target => 'nope')",
                 "c45_fit: target column 'nope' is not in the table")
    spark_errors(session, f"SELECT * FROM m5p_fit({single}, target => 'class')",
                 "m5p_fit: target column 'class' is nominal")
    # Spark calls a table function for no partition of an empty relation, so there is
    # nothing to refuse: no rows give no model, as a GROUP BY of no rows gives none
    assert session.sql("SELECT * FROM c45_fit(TABLE(SELECT * FROM iris_groups WHERE "
                       "sepallength < 0) WITH SINGLE PARTITION, target => 'class')"
                       ).collect() == []
    spark_errors(session, "SELECT * FROM fp_growth(TABLE(supermarket) WITH SINGLE "
                 "PARTITION, min_support => 0D)", "fp_growth: min_support")


def test_a_newer_model_format_is_refused_naming_both_versions(engines):
    con, session = engines
    from duckmine.algorithms.models import digest

    m = con.sql("SELECT c45_fit(x, 'class') FROM iris x").fetchall()[0][0]
    # a value as a newer duckmine writes it: its id the digest of its version too
    # (keeping the old id would find the model of version 1 already parsed)
    m = {**m, "version": 99, "id": digest("c45", 99, m["body"])}
    session.createDataFrame(pa.table({"model": pa.array([m], MODEL)})) \
        .createOrReplaceTempView("_newer")
    text = spark_errors(session, "SELECT predict(m.model, struct(i.*)) FROM iris i, "
                        "_newer m", "predict", "version 99")
    assert f"reads {contract.learners()['c45'].version}" in text


def test_model_functions_answer_as_on_duckdb(engines):
    con, session = engines
    fit = "c45_fit(TABLE(weather_numeric) WITH SINGLE PARTITION, target => 'play')"
    row = session.sql(f"SELECT model_info(model) AS i, model_dot(model) AS d, "
                      f"model_to_sql(model, 'spark') AS s FROM {fit}").collect()[0]
    duck = con.sql("SELECT model_info(m) AS i, model_dot(m) AS d, "
                   "model_to_sql(m, 'spark') AS s FROM (SELECT c45_fit(x, 'play') AS m "
                   "FROM weather_numeric x)").fetchall()[0]
    assert row["d"] == duck[1] and row["s"] == duck[2]
    info = row["i"].asDict(recursive=True)
    assert info["learner"] == "c45" and info["target"] == "play"
    assert json.loads(dict(info["options"])["confidence"]) == 0.25
    # the SQL written for Spark runs on Spark and predicts as the model does
    session.sql("SELECT * FROM weather_numeric").createOrReplaceTempView("w")
    predicted = session.sql(f"SELECT ({duck[2]}) AS p FROM weather_numeric").collect()
    scored = session.sql(f"SELECT predict(m.model, struct(w.*)) AS p FROM weather_numeric w, "
                         f"{fit} m").collect()
    assert sorted(r[0] for r in predicted) == sorted(r[0] for r in scored)
    # and where values are missing (labor: a third of its cells), row by row, the
    # scalar subquery that spreads them as the model does, on an unpruned tree
    con.execute("CREATE OR REPLACE TEMP TABLE labor_m AS SELECT c45_fit(t, 'class', "
                "pruned := false) AS m FROM labor t")
    expr = con.sql("SELECT model_to_sql(m, 'spark') FROM labor_m").fetchall()[0][0]
    con.execute("CREATE OR REPLACE TEMP TABLE labor_numbered AS SELECT row_number() "
                "OVER (ORDER BY rowid) AS _n, * FROM labor")
    session.createDataFrame(con.sql("FROM labor_numbered").to_arrow_table()) \
        .createOrReplaceTempView("labor_numbered")
    want = con.sql("SELECT predict(m.m, t) FROM labor_numbered t, labor_m m "
                   "ORDER BY t._n").fetchall()
    assert session.sql(f"SELECT ({expr}) FROM labor_numbered ORDER BY _n").collect() == \
        [tuple(r) for r in want]


def test_register_lists_every_declared_learner(engines):
    _, session = engines
    from duckmine import spark as dmspark

    names = dmspark.register(session)
    for decl in contract.learners().values():
        assert f"{decl.name}_fit" in names
        assert (decl.name in names) == bool(decl.relation)
    for name in ("fp_growth", "association_rules", "ad_counts", "predict", "predict_proba",
                 "predict_value", "model_text"):
        assert name in names
    assert duckmine.__name__ == "duckmine"


def close(a, b, rel=1e-9):
    """Two model bodies equal, numbers to ``rel``: the same model but for the order in
    which sums were added."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            close(a[k], b[k], rel) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            close(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (int, float)):
        return a == b or abs(a - b) <= rel * max(abs(a), abs(b))
    return a == b


def frame(engines, table, parts=3):
    """A table as a DataFrame of several partitions, so that sums are split."""
    con, session = engines
    return session.createDataFrame(con.sql(f"FROM {table}").to_arrow_table()) \
        .repartition(parts)


@pytest.mark.parametrize("table,k", [("weather_numeric", 2), ("iris", 3),
                                     ("cpu_missing", 4)])
@pytest.mark.parametrize("init", ["random", "k-means++"])
def test_kmeans_over_the_cluster_equals_one_machine(engines, table, k, init):
    from duckmine import spark as dmspark

    con, _ = engines
    got = dmspark.kmeans(frame(engines, table), k, init=init)
    want = con.sql(f"SELECT kmeans_fit(x, {k}, init := '{init}') FROM {table} x"
                   ).fetchall()[0][0]
    a, b = json.loads(got["body"]), json.loads(want["body"])
    assert a["iterations"] == b["iterations"] and a["sizes"] == b["sizes"]
    assert close(a, b)


@pytest.mark.parametrize("table,size", [("iris", 40), ("cpu_missing", 100),
                                        ("cpu_missing", 1_000)])
def test_the_sample_a_stage_draws_is_the_whole_tables_draw(engines, table, size):
    """The rows the tasks of a fit's stage draw as they encode their blocks are
    those whose hash falls below the sample's share: the rows a draw over the whole
    table (here, in the test) makes, however the rows are partitioned. The
    summary the driver adds up is the same too, and every task holds its rows."""
    from duckmine.spark import frames

    def stage(parts, size):
        f = frames.Frame("kmeans", frame(engines, table, parts))
        f.read_values(count=True)
        got = {}

        def begin(total, sampled):
            fill = f.replaced(total)[0]
            got.update(total=total, fill=fill, drawn=sampled(fill),
                       raw=sampled(np.full(f.p, np.nan)))
            return {"fill": fill.tolist()}

        out = frames.iterate(f, (7, size), begin, lambda mats, total, start: total(
            {"n": sum(len(X) for X, _ in mats),
             "nan": sum(int(np.isnan(X).sum()) for X, _ in mats)}))
        return got, out

    (a, held), (every, _) = stage(3, size), stage(5, 10**9)
    assert held == {"n": a["total"]["n"], "nan": 0}
    assert a["total"]["n"] == every["total"]["n"]
    assert close(a["total"]["cols"], every["total"]["cols"], rel=1e-12)
    X, w = every["raw"]
    keep = frames._drawn(X, w, 7) < min(1.0, size / every["total"]["n"])
    X1, w1 = a["drawn"]
    assert 0 < len(X1) <= len(X) and (len(X1) < len(X)) == (size < len(X))
    assert X1.tobytes() == frames._filled(np.asfortranarray(X[keep]), a["fill"]).tobytes()
    assert w1.tobytes() == w[keep].tobytes()


def test_a_stages_tasks_ask_the_driver_and_go_on_with_their_rows(engines):
    """A step whose dicts hold ``ask`` is answered by the driver's ``again`` (EM's
    new start after a failed step), once a step however many tasks ask, and the
    tasks go on with the rows they hold; an error ``again`` raises is the fit's."""
    from duckmine.spark import frames

    f = frames.Frame("em", frame(engines, "iris", 3))
    f.read_values(count=True)
    asked = []

    def again(d):
        asked.append(d["k"])
        if d["k"] == 5:
            raise ValueError("em: EM failed: Cluster empty!")
        return {"k": d["k"] + 1}

    def task(up_to):
        def run(mats, total, start):
            k = start["k"]
            while k < up_to:
                k = total({"ask": "again", "k": k})["k"]
            return {"k": k, "n": total({"n": sum(len(X) for X, _ in mats)})["n"]}
        return run

    def begin(total, sampled):
        return {"fill": f.replaced(total)[0].tolist(), "k": 1}

    assert frames.iterate(f, (1, 100), begin, task(3), again) == {"k": 3, "n": 150}
    assert asked == [1, 2]
    with pytest.raises(ValueError, match=r"^em: EM failed: Cluster empty!"):
        frames.iterate(f, (1, 100), begin, task(9), again)


@pytest.mark.parametrize("table,k", [("weather_numeric", 2), ("iris", 5),
                                     ("cpu_missing", 4)])
def test_em_over_the_cluster_equals_one_machine(engines, table, k):
    from duckmine import spark as dmspark

    con, _ = engines
    got = dmspark.em(frame(engines, table), k)
    want = con.sql(f"SELECT em_fit(x, k := {k}) FROM {table} x").fetchall()[0][0]
    a, b = json.loads(got["body"]), json.loads(want["body"])
    assert a["iterations"] == b["iterations"]
    assert a["log_likelihood"] == pytest.approx(b["log_likelihood"], rel=1e-9)
    assert close(a, b)


@pytest.mark.parametrize("target,max_length", [("all", None), ("closed", 3),
                                                ("maximal", None), ("all", 2)])
def test_parallel_fp_growth_equals_one_machine(engines, target, max_length):
    from duckmine import spark as dmspark

    con, _ = engines
    got = dmspark.fp_growth(frame(engines, "supermarket"), 0.15, target=target,
                            max_length=max_length, groups=5).collect()
    want = con.sql(f"SELECT * FROM fp_growth('supermarket', 0.15, target := '{target}', "
                   f"max_length := {contract.literal(max_length)})").fetchall()
    assert len(want) > 20
    assert sorted((tuple(r[0]), r[1], r[2]) for r in got) == \
        sorted((tuple(r[0]), r[1], r[2]) for r in want)


def test_parallel_fp_growth_reads_every_layout(engines):
    from duckmine import spark as dmspark

    _, session = engines
    pairs = session.createDataFrame(
        [(1, "a"), (1, "b"), (2, "a"), (2, None), (3, "b"), (3, "a"), (None, "c")],
        "tid long, item string")
    lists = session.createDataFrame([(["a", "b"],), (["a", None],), (None,), (["b", "a"],)],
                                    "items array<string>")
    wide = session.createDataFrame([("x", True), ("x", False), (None, True)],
                                   "color string, big boolean")
    for df, support, want in [
            (pairs, 2, [(("a",), 3), (("a", "b"), 2), (("b",), 2)]),
            (lists, 2, [(("a",), 3), (("a", "b"), 2), (("b",), 2)]),
            (wide, 2, [(("big",), 2), (("color=x",), 2)])]:
        got = dmspark.fp_growth(df, support).collect()
        assert sorted((tuple(r[0]), r[1]) for r in got) == want


NETWORKS = {"": {}, ", search := 'tan'": {"search": "tan"},
            ", search := 'hill_climb', max_parents := 2, score := 'mdl'":
                {"search": "hill_climb", "max_parents": 2, "score": "mdl"},
            ", max_parents := 3, alpha := 1.5, use_ad_tree := false":
                {"max_parents": 3, "alpha": 1.5, "use_ad_tree": False}}


NETWORK_CASES = [("labor", "class", sql) for sql in NETWORKS] + [
    (table, target, "") for table, target in (("weather_numeric", "play"), ("iris", "class"),
                                              ("breast_cancer", "Class"),
                                              ("weather_nominal", "play"))]


@pytest.mark.parametrize("table,target,sql", NETWORK_CASES)
def test_a_network_from_counts_over_the_cluster_equals_one_machine(engines, table, target,
                                                                   sql):
    """Cut points, fill values, structure, tables and scores, bit for bit: numeric
    attributes (iris, labor), missing values (labor, breast-cancer, supermarket)."""
    from duckmine import spark as dmspark

    con, _ = engines
    got = dmspark.bayes_net(frame(engines, table), target, **NETWORKS[sql])
    want = con.sql(f"SELECT bayes_net_fit(x, '{target}'{sql}) FROM {table} x"
                   ).fetchall()[0][0]
    assert got["id"] == want["id"] and got["body"] == want["body"]


def test_a_network_counted_from_a_given_tree(engines):
    """A network counted from an AD-tree fitted on Spark is the model DuckDB fits
    from the rows: the tree is passed as a model value (a literal: Spark 4 cannot
    run a scalar subquery as a table function's argument), the rows read for their
    target column only."""
    con, session = engines
    tree = session.sql("SELECT model FROM ad_tree_fit(TABLE(breast_cancer) WITH SINGLE "
                       "PARTITION, max_depth => 3)").collect()[0]["model"].asDict()
    assert "'" not in tree["body"]
    value = "named_struct(" + ", ".join(
        f"'{k}', {v}" if k == "version" else f"'{k}', '{v}'" for k, v in tree.items()) + ")"
    got = session.sql(f"SELECT model FROM bayes_net_fit(TABLE(breast_cancer) WITH SINGLE "
                      f"PARTITION, target => 'Class', search => 'tan', ad_tree => {value})"
                      ).collect()[0]["model"].asDict()
    want = con.sql("SELECT bayes_net_fit(t, 'Class', search := 'tan') FROM breast_cancer t"
                   ).fetchall()[0][0]
    assert got == want


def test_a_weighted_network_over_the_cluster(engines):
    """Whole weights count as rows, as on one machine; fractions are refused, since
    Spark adds them in no fixed order."""
    from duckmine import spark as dmspark

    con, session = engines
    con.execute("CREATE OR REPLACE TABLE labor_w AS SELECT *, (1 + row_number() OVER () "
                "% 3)::DOUBLE AS w FROM labor")
    df = session.createDataFrame(con.sql("FROM labor_w").to_arrow_table()).repartition(3)
    got = dmspark.bayes_net(df, "class", weight="w", search="tan")
    want = con.sql("SELECT bayes_net_fit(x, 'class', search := 'tan', weight := 'w') "
                   "FROM labor_w x").fetchall()[0][0]
    assert got["id"] == want["id"]
    with pytest.raises(ValueError, match="bayes_net: weight column 'h' holds fractions"):
        dmspark.bayes_net(df.withColumn("h", df["w"] / 2), "class", weight="h")


TREES = [("weather_numeric", "play", {}), ("weather_numeric", "play", {"pruned": False}),
         ("iris", "class", {"binary_splits": True, "min_leaf": 5}),
         ("iris", "class", {"subtree_raising": False, "confidence": 0.1}),
         ("labor", "class", {}),  # a subtree raised; missing values spread
         ("breast_cancer", "Class", {})]  # rows passed down wait for the shares


@pytest.mark.parametrize("table,target,options", TREES,
                         ids=[f"{t}-{o}" for t, _, o in TREES])
def test_a_tree_grown_over_the_cluster_equals_one_machine(engines, table, target, options):
    """J48's tree, level by level: the same text to the last digit; the same model
    value where no row is spread by a missing value (every sum then of whole
    numbers), and the subtrees raised as J48 raises them."""
    from duckmine import spark as dmspark

    con, _ = engines
    got = dmspark.c45(frame(engines, table), target, **options)
    sql = "".join(f", {k} := {contract.literal(v)}" for k, v in options.items())
    want = con.sql(f"SELECT c45_fit(x, '{target}'{sql}) FROM {table} x").fetchall()[0][0]
    text = con.execute("SELECT model_text(?), model_text(?)", [got, want]).fetchall()[0]
    assert text[0] == text[1]
    if table in ("weather_numeric", "iris"):
        assert got["id"] == want["id"]


def test_a_tree_over_the_cluster_is_the_same_however_the_table_is_split(engines):
    """Missing values spread rows in fractions, whose sums depend on their order:
    a node's rows are ordered by their values, not by where Spark put them."""
    from duckmine import spark as dmspark

    ids = {dmspark.c45(frame(engines, "labor", parts), "class")["id"] for parts in (1, 5)}
    assert len(ids) == 1


def test_a_weighted_tree_over_the_cluster(engines):
    from duckmine import spark as dmspark

    con, session = engines
    con.execute("CREATE OR REPLACE TABLE iris_w AS SELECT *, (1 + row_number() OVER () "
                "% 4)::DOUBLE AS w FROM iris")
    df = session.createDataFrame(con.sql("FROM iris_w").to_arrow_table()).repartition(3)
    got = dmspark.c45(df, "class", weight="w")
    want = con.sql("SELECT c45_fit(x, 'class', weight := 'w') FROM iris_w x").fetchall()[0][0]
    assert got["id"] == want["id"]


def test_thresholds_placed_by_the_order_of_the_rows(engines):
    """Values within 1e-6 of each other below a cut: J48 walks the table's rows in
    their order to place the threshold. The cluster sorts them as a single machine
    orders them and walks the parts side by side."""
    import random

    from duckmine import spark as dmspark

    con, session = engines
    rng = random.Random(7)
    rows = []
    for _ in range(400):
        x = round(rng.uniform(0, 1), 2) + rng.choice([0, 0, 3e-7, 6e-7, 9e-7])
        z = rng.uniform(0, 1)
        y = "a" if x + 0.3 * z > 0.7 or rng.random() < 0.05 else "b"
        rows.append((x, z, y))
    con.execute("CREATE OR REPLACE TABLE near AS SELECT * FROM (VALUES " + ", ".join(
        f"({x!r}, {z!r}, '{y}')" for x, z, y in rows) + ") t(x, z, y)")
    from duckmine.spark import trees

    got = dmspark.c45(session.createDataFrame(con.sql("FROM near").to_arrow_table())
                      .repartition(3), "y")
    want = con.sql("SELECT c45_fit(t, 'y') FROM near t").fetchall()[0][0]
    assert got["id"] == want["id"]
    assert trees.LAST["below_top"] >= 3  # thresholds the walk put below the largest value


def test_a_threshold_walked_across_a_value_of_its_node_over_the_cluster(engines):
    """Where J48's walk moves a threshold across a value of its node, the tree is
    grown again, each threshold walked at its level before the rows go on by it:
    the single machine's tree, whose leaves print the midpoint's counts."""
    import random

    from duckmine import spark as dmspark
    from duckmine.spark import trees

    con, session = engines
    rng = random.Random(3)
    rows = [(0.0, "a")] * 3 + [(1e-6, "a")] + [(1.0, "b")] * 3
    rows += [(rng.randrange(3) * 2e-5 + rng.randrange(3) * 1e-6 + 5.0,
              rng.choice("ab")) for _ in range(60)]
    con.execute("CREATE OR REPLACE TABLE across AS SELECT * FROM (VALUES " + ", ".join(
        f"({x!r}, '{y}')" for x, y in rows) + ") t(x, y)")
    for options in ({}, {"pruned": False, "min_leaf": 1}):
        got = dmspark.c45(session.createDataFrame(con.sql("FROM across").to_arrow_table())
                          .repartition(2), "y", **options)
        sql = "".join(f", {k} := {contract.literal(v)}" for k, v in options.items())
        want = con.sql(f"SELECT c45_fit(t, 'y'{sql}) FROM across t").fetchall()[0][0]
        assert trees.LAST["crossed"]
        assert got["id"] == want["id"]


def test_a_run_of_one_way_splits_over_the_cluster(engines):
    """Where J48's walk sends every row of a node with a value one way and rows miss
    the value, the cluster makes the single machine's run of such splits (26 on
    this table, unpruned). Its model prints as the single machine's; the class
    weights may differ in their last bits, the missing values' shares added in
    another order."""
    from pathlib import Path

    from duckmine import spark as dmspark
    from duckmine.spark import trees
    from duckmine.udfs.models import model_of

    con, session = engines
    chain = Path(__file__).parent / "golden" / "near_ties" / "chain.arff"
    duckmine.read_arff(con, chain, "chain")
    got = dmspark.c45(session.createDataFrame(con.sql("FROM chain").to_arrow_table())
                      .repartition(2), "y", pruned=False, min_leaf=1)
    assert trees.LAST["run"] == 26
    want = con.sql("SELECT c45_fit(t, 'y', pruned := false, min_leaf := 1) FROM chain t") \
        .fetchall()[0][0]
    assert model_of("c45", got).text() == model_of("c45", want).text()


def test_em_over_the_cluster_fills_in_missing_values_as_one_machine_does(engines):
    """A standard deviation that collapses takes the attribute's over the whole
    table with its missing values filled in (the rows a single-machine fit holds),
    not over its known values alone; a table of one partition is dealt to every
    task of the stage, and an empty one is refused by name."""
    from duckmine import spark as dmspark

    con, session = engines
    con.execute("CREATE OR REPLACE TABLE tiny AS SELECT * FROM (VALUES (1.0, 1.0), "
                "(2.0, NULL), (3.0, 3.0), (4.0, 1.0), (5.0, 2.0), (8.0, 9.0)) v(a, b)")
    df = session.createDataFrame(con.sql("FROM tiny").to_arrow_table()).coalesce(1)
    for fit, sql in ((lambda d: dmspark.em(d, 2), "em_fit(t, k := 2)"),
                     (lambda d: dmspark.kmeans(d, 2), "kmeans_fit(t, 2)")):
        got = json.loads(fit(df)["body"])
        want = json.loads(con.sql(f"SELECT {sql} FROM tiny t").fetchall()[0][0]["body"])
        assert got.get("log_likelihood", 0) == pytest.approx(
            want.get("log_likelihood", 0), rel=1e-9)
        assert close(got, want)
        with pytest.raises(ValueError, match=r"^(em|kmeans): the table is empty"):
            fit(df.limit(0))


def test_over_the_cluster_bad_input_is_named(engines):
    from duckmine import spark as dmspark

    with pytest.raises(ValueError, match="em: k must be a number of clusters on Spark"):
        dmspark.em(frame(engines, "iris"), -1)
    with pytest.raises(ValueError, match="kmeans: k must be"):
        dmspark.kmeans(frame(engines, "iris"), 0)
    with pytest.raises(ValueError, match="kmeans: k = 500 is larger than the number of "
                                         "distinct rows"):
        dmspark.kmeans(frame(engines, "weather_numeric"), 500)
    with pytest.raises(ValueError, match="fp_growth: min_support"):
        dmspark.fp_growth(frame(engines, "supermarket"), -1.0)
    with pytest.raises(ValueError, match="exclude names 'nope'"):
        dmspark.kmeans(frame(engines, "iris"), 2, exclude=["nope"])
    with pytest.raises(ValueError, match="c45: target column 'MYCT' is numeric"):
        dmspark.c45(frame(engines, "cpu"), "MYCT")
    with pytest.raises(ValueError, match="c45: min_leaf must be"):
        dmspark.c45(frame(engines, "iris"), "class", min_leaf=0)
    with pytest.raises(ValueError, match="bayes_net: target column 'MYCT' is numeric"):
        dmspark.bayes_net(frame(engines, "cpu"), "MYCT")
    with pytest.raises(ValueError, match="bayes_net: target column 'nope' is not in the "
                                         "table"):
        dmspark.bayes_net(frame(engines, "iris"), "nope")
    with pytest.raises(ValueError, match="bayes_net: search must be one of"):
        dmspark.bayes_net(frame(engines, "iris"), "class", search="k3")
    with pytest.raises(ValueError, match="bayes_net: attribute 'department8' has only "
                                         "missing values"):
        dmspark.bayes_net(frame(engines, "supermarket"), "total")


def test_a_fit_too_large_for_a_worker_is_refused(engines):
    from duckmine import spark as dmspark

    _, session = engines
    session.conf.set("spark.duckmine.memoryLimit", "2KB")
    try:
        dmspark.register(session)
        text = spark_errors(session, "SELECT * FROM m5p_fit(TABLE(cpu) WITH SINGLE "
                            "PARTITION, target => 'class')", "m5p_fit: this fit would take",
                            "PARTITION BY (g)", "spark.duckmine.memoryLimit")
        assert "USING SAMPLE" not in text
        with pytest.raises(ValueError, match="bayes_net: this fit would take .* the "
                                             "driver holds the table's distinct rows"):
            dmspark.bayes_net(frame(engines, "iris"), "class")
        with pytest.raises(ValueError, match="c45: this fit would take .* one worker "
                                             "scores an attribute over every row"):
            dmspark.c45(frame(engines, "iris"), "class")
    finally:
        session.conf.unset("spark.duckmine.memoryLimit")
        dmspark.register(session)


def test_contingency_tables_over_the_cluster_equal_ad_counts(engines):
    from duckmine import spark as dmspark

    con, _ = engines
    cols = ["outlook", "windy", "play"]
    got = dmspark.ad_counts(frame(engines, "weather_nominal"), cols).collect()
    want = con.sql(f"SELECT * FROM ad_counts('weather_nominal', {cols})").fetchall()
    assert len(got) == 3 * 2 * 2
    assert sorted((sorted(r[0].items()), r[1]) for r in got) == \
        sorted((sorted(r[0].items()), r[1]) for r in want)
    with pytest.raises(ValueError, match="ad_counts: column 'temperature' is numeric"):
        dmspark.ad_counts(frame(engines, "weather_numeric"), ["temperature"])
    # and in SQL, on one worker through an AD-tree
    _, session = engines
    got = session.sql("SELECT * FROM ad_counts(TABLE(weather_nominal) WITH SINGLE "
                      "PARTITION, columns => array('outlook', 'windy', 'play'))").collect()
    assert sorted((sorted(r[0].items()), r[1]) for r in got) == \
        sorted((sorted(r[0].items()), r[1]) for r in want)


def test_the_hub_takes_sums_from_its_own_tasks_only():
    """A connection that does not show the fit's token (a port scan, another
    program) or a task of the stage is closed, and the stage's tasks are still
    heard, each step's total added up in partition order."""
    import socket

    from duckmine.spark import frames

    with frames._Hub("127.0.0.1", 2) as hub:
        for junk in (b"GET / HTTP/1.0\r\n\r\n", b"\x00" * 8,
                     frames.struct.pack("!Q", 17) + b'["wrong", 1]     '):
            with socket.create_connection(hub.where) as s:
                s.sendall(junk)
        for part, count in ((2, 2), (-1, 2), (0, "2")):  # no such task of the stage
            with socket.create_connection(hub.where) as s:
                frames._send(s, [hub.token, part, count])
        tasks = [socket.create_connection(hub.where) for _ in range(2)]
        for part in (1, 0):
            frames._send(tasks[part], [hub.token, part, 2])
        for step in range(2):
            for part in (1, 0):
                frames._send(tasks[part], {"n": part + 1, "sums": [[1.0, part + step]]})
            got = [frames._receive(t) for t in tasks]
            assert got[0] == got[1] == {"n": 3, "sums": [[2.0, 1.0 + 2 * step]]}
        for t in tasks:
            t.close()
