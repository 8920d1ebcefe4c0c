"""M5' model trees and M5 rules against Weka 3.6.14's M5P and M5Rules: the same
printed models, the same predictions to the last bit and the same cross-validation
figures; the tree and rule relations; SQL export; models as values."""

import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import duckmine

from .conftest import DATA, fails, fitted, options_struct, table

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "m5p"
DATASETS = ["cpu", "cpu.missing", "regression.nominal", "cpu.missing-weighted"]
OPTIONS = {"default": "", "R": ", regression_tree := true", "N": ", pruned := false",
           "U": ", smoothed := false", "M10": ", min_leaf := 10"}
RUNS = sorted(p.name[:-4] for p in GOLDEN.glob("*.txt"))
CV = {"Correlation coefficient": "correlation", "Mean absolute error": "mean_absolute_error",
      "Root mean squared error": "root_mean_squared_error",
      "Relative absolute error": "relative_absolute_error",
      "Root relative squared error": "root_relative_squared_error",
      "Total Number of Instances": "instances"}


def weighted(name):
    return name.endswith("-weighted")


@pytest.fixture(scope="module")
def db():
    c = duckmine.connect()
    for name in DATASETS:
        duckmine.read_arff(c, DATA / f"{name}.arff", table(name),
                           weight="w" if weighted(name) else None)
    yield c
    c.close()


def parse(run):
    """(fit function, data set, option tag) of a golden file's stem."""
    rules = run.startswith("m5rules__")
    name, tag = run.removeprefix("m5rules__").split("__")
    return ("m5_rules_fit" if rules else "m5p_fit"), name, tag


def target(db, name):
    return db.sql(f"SELECT column_name FROM (DESCRIBE {table(name)})").fetchall()[-2 if
                                                                               weighted(name)
                                                                               else -1][0]


def fit(db, run):
    fn, name, tag = parse(run)
    return fitted(fn.removesuffix("_fit"), table(name), target(db, name), OPTIONS[tag],
                  "w" if weighted(name) else None)


def printed_model(text):
    """Weka's model: from its "M5 " heading to the line before "Time taken"."""
    start = text.index("M5 ")
    return text[start:text.index("Time taken", start)].rstrip("\n")


@pytest.mark.parametrize("run", RUNS)
def test_model_text_is_wekas(db, run):
    expected = printed_model((GOLDEN / f"{run}.txt").read_text())
    got = db.sql(f"SELECT model_text(model) FROM {fit(db, run)}").fetchall()[0][0]
    assert got == expected


@pytest.mark.parametrize("run", [r for r in RUNS if r.split("__")[-2].startswith("cpu")])
def test_wide_nodes_then_subtrees_give_wekas_model(db, run, monkeypatch):
    """The path a large table takes: the nodes of more than an eighth of the rows
    grown a depth at a time, subtrees under them, and the wide nodes' models fitted
    on the coded matrix arranged in place (here for every node of over 26 rows),
    the table coded a column at a time, gives Weka's model and predictions. M5
    rules read the matrix again for each rule, so theirs also show that it is put
    back."""
    from duckmine.algorithms.m5 import grow

    monkeypatch.setattr(grow, "SUBTREE_ROWS", 1)
    monkeypatch.setattr(grow, "CODED_WHOLE_ROWS", 0)  # and coded a column at a time
    seen = {"subtrees": 0, "arranged": 0}
    subtree, arrange = grow._subtree, grow._Layout.arrange

    def counted(*args):
        seen["subtrees"] += 1
        return subtree(*args)

    def arranged(layout, first):
        seen["arranged"] += first is not None
        return arrange(layout, first)

    monkeypatch.setattr(grow, "_subtree", counted)
    monkeypatch.setattr(grow._Layout, "arrange", arranged)
    expected = printed_model((GOLDEN / f"{run}.txt").read_text())
    assert db.sql(f"SELECT model_text(model) FROM {fit(db, run)}").fetchall()[0][0] == \
        expected
    name = parse(run)[1]
    got = [r[0] for r in db.sql(f"SELECT predict_value(m.model, t) FROM {table(name)} t, "
                                f"{fit(db, run)} m ORDER BY t.rowid").fetchall()]
    assert got == json.loads((GOLDEN / f"{run}.pred.json").read_text())
    assert seen["subtrees"] > 2 and seen["arranged"] > 0


@pytest.mark.parametrize("run", RUNS)
def test_predictions_are_wekas_to_the_bit(db, run):
    expected = json.loads((GOLDEN / f"{run}.pred.json").read_text())
    name = parse(run)[1]
    got = [r[0] for r in db.sql(f"SELECT predict_value(m.model, t) FROM {table(name)} t, "
                                f"{fit(db, run)} m ORDER BY t.rowid").fetchall()]
    assert got == expected
    text = db.sql(f"SELECT predict(m.model, t) FROM {table(name)} t, {fit(db, run)} m "
                  "ORDER BY t.rowid").fetchall()
    assert [float(r[0]) for r in text] == expected  # the text reads back to the number


@pytest.mark.parametrize("run", RUNS)
def test_cross_validation_is_wekas(db, run):
    fn, name, tag = parse(run)
    section = (GOLDEN / f"{run}.txt").read_text().split("=== Cross-validation ===")[1]
    expected = {key: float(re.search(re.escape(label) + r"\s+(\S+)", section)[1])
                for label, key in CV.items()}
    learner = fn.removesuffix("_fit")
    w = ", weight := 'w'" if weighted(name) else ""
    opts = options_struct(OPTIONS[tag])
    got = db.sql(f"SELECT * FROM cross_validate('{learner}', '{table(name)}', "
                 f"'{target(db, name)}'{', ' + opts if opts else ''}{w})").df().iloc[0]
    for key, value in expected.items():
        assert round(got[key], 4) == pytest.approx(value, abs=1e-12), key
    assert np.isnan(got["kappa"]) or got["kappa"] is None


def test_tree_relation_matches_the_model(db):
    rows = db.sql("SELECT * FROM m5p('regression_nominal', 'y')").df()
    leaves = rows[rows.is_leaf]
    assert list(leaves.model) == [f"LM{k}" for k in range(1, len(leaves) + 1)]
    assert leaves.instances.sum() == rows.instances[0] == 300
    internal = rows[~rows.is_leaf]
    for node in internal.node:  # a split's children hold its rows
        kids = rows[rows.parent == node]
        assert sorted(kids.operator) == ["<=", ">"]
        assert kids.instances.sum() == rows.instances[node]
    assert internal.coefficients.isna().all() and leaves.intercept.notna().all()
    lm1 = dict(leaves.coefficients.iloc[0])
    assert lm1["x"] == pytest.approx(0.2533, abs=5e-5)
    assert lm1["colour=violet,amber,green"] == pytest.approx(0.6618, abs=5e-5)


def test_rule_relation_covers_every_row(db):
    rules = db.sql("SELECT * FROM m5_rules('cpu', 'class')").df()
    assert rules.coverage.sum() == 209
    assert list(rules.conditions.iloc[-1]) == []  # the last rule is unconditional here
    assert list(rules.conditions.iloc[0]) == ["CHMIN <= 7.5"]  # as M5Rules prints it


def test_models_per_group_and_stored(db, tmp_path):
    path = tmp_path / "m.duckdb"
    c = duckmine.connect(str(path))
    duckmine.read_arff(c, DATA / "regression.nominal.arff", "rn")
    c.execute("CREATE TABLE models AS SELECT size, m5p_fit(t, 'y') AS model "
              "FROM rn t WHERE size IS NOT NULL GROUP BY size")
    per_group = dict(c.execute("SELECT size, model_text(model) FROM models").fetchall())
    assert set(per_group) == {"small", "large"}
    for size, text in per_group.items():
        alone = c.execute(f"SELECT model_text(m5p_fit(t, 'y')) FROM rn t "
                          f"WHERE size = '{size}'").fetchall()[0][0]
        assert text == alone
    c.close()
    c = duckmine.connect(str(path))
    scored = c.execute("SELECT count(*), count(predict_value(m.model, t)) FROM rn t "
                       "JOIN models m USING (size)").fetchall()
    assert scored[0][0] == scored[0][1] > 0
    c.close()


def test_missing_and_unseen_values_score_as_the_training_mean_and_mode(db):
    model = fit(db, "regression.nominal__default")
    got = db.sql(f"""SELECT predict_value(m.model, {{'x': NULL::DOUBLE, 'colour': 'teal',
                         'size': NULL::VARCHAR}}),
                            predict_value(m.model, {{'x': 'NaN'::DOUBLE, 'colour': NULL,
                         'size': NULL}}) FROM {model} m""").fetchall()[0]
    assert got[0] == got[1]
    means = db.sql("SELECT avg(x) FROM regression_nominal WHERE y IS NOT NULL").fetchall()
    filled = db.sql(f"SELECT predict_value(m.model, {{'x': {means[0][0]!r}, "
                    "'colour': 'blue', 'size': 'small'}) FROM " + model + " m").fetchall()
    assert filled[0][0] == pytest.approx(got[0], abs=1e-9)  # blue, small are the modes


@pytest.mark.parametrize("run", [r for r in RUNS if "M10" not in r])
def test_model_to_sql_gives_predict_value(db, run):
    name = parse(run)[1]
    t = table(name)
    sql = db.sql(f"SELECT model_to_sql(model) FROM {fit(db, run)}").fetchall()[0][0]
    rows = db.sql(f"SELECT predict_value(m.model, t) = {sql}, {sql} FROM {t} t, "
                  f"{fit(db, run)} m").fetchall()
    assert all(r[0] for r in rows) and len(rows) > 200
    # NULL, NaN and unseen values in every column
    cols = [c for (c,) in db.sql(f"SELECT column_name FROM (DESCRIBE {t})").fetchall()]
    blank = ", ".join(f"NULL AS \"{c}\"" for c in cols)
    odd = db.sql(f"SELECT predict_value(m.model, t) = {sql} FROM "
                 f"(SELECT {blank}) t, {fit(db, run)} m").fetchall()
    assert odd == [(True,)]


def assert_sqlite_values(db, models, rows, columns):
    """The model's SQLite SQL on ``rows`` (its ``columns``, as SQLite types them)
    gives ``predict_value``'s numbers."""
    sql = db.sql(f"SELECT model_to_sql(model, 'sqlite') FROM {models}").fetchall()[0][0]
    names = [c.split()[0] for c in columns]
    fetched = db.sql(f"SELECT predict_value(m.model, t), {', '.join(names)} FROM {rows} t, "
                     f"{models} m ORDER BY t.rowid").fetchall()
    lite = sqlite3.connect(":memory:")
    lite.execute(f"CREATE TABLE t ({', '.join(columns)})")
    lite.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(names))})",
                     [r[1:] for r in fetched])
    got = [r[0] for r in lite.execute(f"SELECT {sql} FROM t ORDER BY rowid")]
    np.testing.assert_allclose(got, [r[0] for r in fetched], rtol=1e-12)


def test_model_to_sql_runs_in_sqlite(db):
    assert_sqlite_values(db, fit(db, "regression.nominal__default"), "regression_nominal",
                         ["x REAL", "colour TEXT", "size TEXT", "y REAL"])


def test_a_deep_tree_runs_in_sqlite(fresh):
    """SQLite's parser overflows on a CASE nested 17 deep: a deeper tree is walked a
    few levels per SELECT, through the filters (a nominal column, missing values)."""
    fresh.execute("CREATE TABLE s AS SELECT CASE WHEN i % 97 = 5 THEN NULL ELSE i::DOUBLE "
                  "END AS x, ['p', 'q', 'r'][1 + i % 3] AS c, ((i // 50) % 2) * 100.0 + "
                  "sin(i) + CASE WHEN i % 3 = 1 THEN 3 ELSE 0 END AS y FROM range(12000) r(i)")
    fresh.execute("CREATE TABLE m AS SELECT m5p_fit(t, 'y') AS model FROM s t")
    text = fresh.sql("SELECT model_text(model) FROM m").fetchall()[0][0]
    assert max(line.count("|") for line in text.splitlines()) > 16
    assert_sqlite_values(fresh, "m", "s", ["x REAL", "c TEXT"])


def test_constant_and_collinear_attributes_are_handled(fresh):
    fresh.execute("""CREATE TABLE d AS
        SELECT i::DOUBLE AS a, 2.0 * i AS twice, i * 0.5 + 1 AS also, 7 AS constant,
               'same' AS one_value, 3.0 * i + (i % 7) AS y
        FROM range(200) r(i)""")
    text = fresh.execute("SELECT model_text(m5p_fit(t, 'y')) FROM d t").fetchall()[0][0]
    assert "constant" not in text and "one_value" not in text
    err = fresh.execute("SELECT max(abs(predict_value(m.model, t) - y)) FROM d t, "
                        "(SELECT m5p_fit(t, 'y') AS model FROM d t) m").fetchall()[0][0]
    assert err < 3.5  # the residual i % 7 is all that is left


BAD = [
    ("SELECT m5p_fit(t, 'outlook') FROM weather t", "nominal", "use c45"),
    ("SELECT m5p_fit(t, 'nope') FROM weather t", "nope", "not in the table"),
    ("SELECT m5p_fit(t, 'y') FROM (SELECT 1.0 AS x, NULL::DOUBLE AS y FROM range(5)) t",
     "all NULL"),
    ("SELECT m5p_fit(t, 'y') FROM (SELECT 1.0 AS x, 2.0 AS y) t", "at least 2"),
    ("SELECT m5p_fit(t, 'y') FROM (SELECT range::DOUBLE AS y FROM range(5)) t",
     "no attributes besides"),
    ("SELECT m5p_fit(t, 'y', min_leaf := 0) FROM (SELECT 1.0 AS x, 2.0 AS y) t",
     "min_leaf"),
    ("SELECT m5p_fit(t, 'y', smoothed := NULL) FROM (SELECT 1.0 AS x, 2.0 AS y) t",
     "smoothed"),
    ("SELECT m5_rules_fit(t, 'y', min_leaf := 'NaN'::DOUBLE) FROM "
     "(SELECT 1.0 AS x, 2.0 AS y) t", "min_leaf"),
    ("SELECT m5p_fit(t, 'y') FROM (SELECT 1.0 AS x, 'inf'::DOUBLE AS y) t", "infinite"),
    ("SELECT * FROM m5p('no_such_table', 'y')", "no_such_table"),
    ("SELECT * FROM cross_validate('m5p', 'weather', 'outlook')", "nominal", "use c45"),
    ("SELECT * FROM cross_validate('c45', 'cpu_tbl', 'class')", "numeric", "use m5p"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0][:60] for c in BAD])
def test_bad_input_gets_a_clear_error(con, case):
    con.execute("CREATE OR REPLACE TABLE cpu_tbl AS SELECT 1.0 AS x, range::DOUBLE AS "
                "class FROM range(20)")
    fails(con, case[0], *case[1:])


def test_predict_value_refuses_a_classifier_and_predict_proba_a_numeric_model(con):
    con.execute("CREATE OR REPLACE TABLE nums AS SELECT range::DOUBLE AS x, "
                "(range * 2)::DOUBLE AS y FROM range(30)")
    fails(con, "SELECT predict_value(m, t) FROM weather t, "
               "(SELECT c45_fit(t, 'play') AS m FROM weather t)",
          "a c45 model (classifier) does not offer predict_value", "it offers predict,")
    fails(con, "SELECT predict_proba(m, t) FROM nums t, "
               "(SELECT m5p_fit(t, 'y') AS m FROM nums t)",
          "a m5p model (regressor) does not offer predict_proba")
