"""Bayesian network classifiers and AODE against Weka 3.6.14 (golden runs made by
tests/golden/make_bayes_net_golden.py): the same parent sets, tables, printed
model and log scores, the same class probabilities on every training row and the
same 10-fold cross-validation; the relations and bad input."""

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import duckmine

from .conftest import DATA, fails, options_struct, table
from .test_cross_validate import weka_cv

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "bayes_net"
DATASETS = ["weather.nominal", "weather.numeric", "contact-lenses", "labor", "iris",
            "diabetes", "soybean", "breast-cancer", "supermarket"]
CONFIGS = {"k2_p1": "search := 'k2', max_parents := 1, use_ad_tree := false",
           "k2_p3": "search := 'k2', max_parents := 3, use_ad_tree := false",
           "k2_p3_adtree": "search := 'k2', max_parents := 3, use_ad_tree := true",
           "tan": "search := 'tan', use_ad_tree := false",
           "hill_climb": "search := 'hill_climb', max_parents := 2, use_ad_tree := false"}
RUNS = [(n, c) for n in DATASETS for c in CONFIGS if (GOLDEN / f"{n}__{c}.json").exists()]
NOMINAL = ["weather.nominal", "contact-lenses", "soybean", "breast-cancer", "supermarket"]
SCORE_NAMES = {"bayes": "Bayes", "bdeu": "BDeu", "mdl": "MDL", "entropy": "ENTROPY",
               "aic": "AIC"}


@pytest.fixture(scope="module")
def db():
    c = duckmine.connect()
    for name in DATASETS:
        duckmine.read_arff(c, DATA / f"{name}.arff", table(name))
    yield c
    c.close()


def target_of(db, name):
    return db.sql(f"DESCRIBE {table(name)}").fetchall()[-1][0]


def golden(name, config):
    return json.loads((GOLDEN / f"{name}__{config}.json").read_text())


@pytest.fixture(scope="module")
def models(db):
    """One fitted model per golden run, kept in a table."""
    db.execute("CREATE TABLE bn_models (name VARCHAR, config VARCHAR, m MODEL_T)"
               .replace("MODEL_T", db.sql("SELECT typeof(bayes_net_fit(t, 'play')) "
                                          "FROM weather_nominal t").fetchall()[0][0]))
    for name, config in RUNS:
        t = table(name)
        db.execute(f"INSERT INTO bn_models SELECT '{name}', '{config}', "
                   f"bayes_net_fit(t, '{target_of(db, name)}', {CONFIGS[config]}) "
                   f"FROM {t} t")
    return "bn_models"


def model_of(name, config):
    return f"(SELECT m FROM bn_models WHERE name = '{name}' AND config = '{config}')"


@pytest.mark.parametrize("name,config", RUNS)
def test_network_and_tables_are_wekas(db, models, name, config):
    gold = golden(name, config)
    text = db.sql(f"SELECT model_text({model_of(name, config)})").fetchall()[0][0]
    assert text == gold["text"]  # structure and log scores, character for character
    for label, key in SCORE_NAMES.items():
        line = next(x for x in text.splitlines() if x.startswith(f"LogScore {key}:"))
        assert float(line.split(": ")[1]) == pytest.approx(gold["scores"][label], abs=1e-6)
    rows = db.sql(f"""SELECT r.node, r.parents, r.parent_values, r.value, r.probability
                      FROM (SELECT unnest(_dm_rows_bayes_net({model_of(name, config)})) r)
                   """).fetchall()
    names = [a["name"] for a in gold["attributes"]]
    values = [[v.strip("'") for v in a["values"]] for a in gold["attributes"]]
    for i, node in enumerate(gold["nodes"]):
        mine = [r for r in rows if r[0] == node["name"]]
        assert {tuple(r[1]) for r in mine} == {tuple(names[p] for p in node["parents"])}
        cpt = np.full(np.shape(node["cpt"]), np.nan)
        for _, _, parent_values, value, prob in mine:
            row = 0
            for p, v in zip(node["parents"], parent_values):
                row = row * len(values[p]) + values[p].index(v)
            cpt[row, values[i].index(value)] = prob
        np.testing.assert_allclose(cpt, node["cpt"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("name,config", RUNS)
def test_class_probabilities_are_wekas(db, models, name, config):
    gold = golden(name, config)
    t = table(name)
    got = db.sql(f"""SELECT map_values(predict_proba({model_of(name, config)}, t))
                     FROM {t} t""").fetchall()
    np.testing.assert_allclose([g[0] for g in got], gold["dist"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("name,config", [r for r in RUNS if r[0] != "supermarket"
                                         or r[1] == "k2_p1"])
def test_cross_validation_is_wekas(db, name, config):
    expected = weka_cv((GOLDEN / f"{name}__{config}.txt").read_text())
    got = dict(zip(*_cv(db, "bayes_net", name, CONFIGS[config])))
    for key, value in expected.items():
        if key != "confusion":
            assert got[key] == pytest.approx(value, abs=0.51e-4), key


def _cv(db, learner, name, options):
    opts = options_struct(options)
    rel = db.sql(f"SELECT * FROM cross_validate('{learner}', '{table(name)}', "
                 f"'{target_of(db, name)}'{', ' + opts if opts else ''})")
    return rel.columns, rel.fetchall()[0]


@pytest.mark.parametrize("name,config", [r for r in RUNS if r[0] in
                                         ("labor", "iris", "breast-cancer", "weather.nominal")])
def test_model_to_sql_predicts_as_predict(db, models, name, config):
    t = table(name)
    sql = db.sql(f"SELECT model_to_sql({model_of(name, config)})").fetchall()[0][0]
    got = db.sql(f"""SELECT count(*) FILTER (WHERE predict({model_of(name, config)}, t)
                                              IS DISTINCT FROM ({sql})) FROM {t} t""")
    assert got.fetchall() == [(0,)]


def test_model_to_sql_runs_in_sqlite(db, models):
    model = model_of("weather.nominal", "tan")
    sql = db.sql(f"SELECT model_to_sql({model}, 'sqlite')").fetchall()[0][0]
    rows = db.sql("SELECT outlook, temperature, humidity, windy::VARCHAR, "
                  f"predict({model}, t) FROM weather_nominal t").fetchall()
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE TABLE t (outlook, temperature, humidity, windy)")
    lite.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [r[:4] for r in rows])
    assert [r[0] for r in lite.execute(f"SELECT {sql} FROM t")] == [r[4] for r in rows]


def test_the_relation_lists_every_table_entry(db):
    rows = db.sql("SELECT * FROM bayes_net('weather_nominal', 'play', max_parents := 3)").df()
    assert list(rows.columns) == ["node", "parents", "parent_values", "value", "probability"]
    sums = rows.groupby(["node", rows.parent_values.astype(str)]).probability.sum()
    np.testing.assert_allclose(sums, 1.0)
    windy = rows[rows.node == "windy"]
    assert list(windy.parents.iloc[0]) == ["play", "outlook", "temperature"]
    assert len(windy) == 2 * 3 * 3 * 2
    # P(sunny | yes) = (2 + 0.5) / (9 + 3 * 0.5)
    sunny = rows[(rows.node == "outlook") & (rows.value == "sunny")]
    assert sunny.probability.iloc[0] == pytest.approx(2.5 / 10.5)


def test_discretised_attributes_are_named_by_their_intervals(db):
    values = db.sql("SELECT DISTINCT value FROM bayes_net('iris', 'class') "
                    "WHERE node = 'petallength' ORDER BY value").fetchall()
    assert [v for (v,) in values] == ["(-inf-2.45]", "(2.45-4.75]", "(4.75-inf)"]


def test_the_tree_and_scans_learn_the_same_network(db):
    for search in ("k2", "tan", "hill_climb"):
        a, b = db.sql(f"""SELECT model_text(bayes_net_fit(t, 'class', search := '{search}',
                                 max_parents := 3, score := 'mdl', use_ad_tree := u))
                          FROM soybean t, (VALUES (true), (false)) v(u) GROUP BY u
                          ORDER BY u""").fetchall()
        assert a[0].replace("not using ADTree", "Using ADTree") == b[0]


def test_one_model_per_group(db):
    got = db.sql("""SELECT age, model_text(bayes_net_fit(t, 'contact-lenses'))
                    FROM contact_lenses t GROUP BY 1 ORDER BY 1""").fetchall()
    assert [g[0] for g in got] == ["young", "pre-presbyopic", "presbyopic"]  # ENUM order
    assert all("#attributes=5" in g[1] for g in got)


def test_scores_pick_other_networks(db):
    texts = {s: db.sql(f"SELECT model_text(bayes_net_fit(t, 'class', max_parents := 3, "
                       f"score := '{s}')) FROM breast_cancer t").fetchall()[0][0]
             for s in ("bayes", "bdeu", "mdl", "aic", "loglik")}
    structure = {s: t.split("LogScore")[0] for s, t in texts.items()}
    assert structure["loglik"] != structure["mdl"]  # the penalty prunes arcs


def test_missing_values_are_scored_as_the_training_mode(db):
    got = db.sql("""SELECT predict_proba(m, {'outlook': NULL, 'temperature': NULL,
                                             'humidity': NULL, 'windy': NULL}) =
                           predict_proba(m, {'outlook': 'sunny', 'temperature': 'mild',
                                             'humidity': 'high', 'windy': 'FALSE'})
                    FROM (SELECT bayes_net_fit(t, 'play') m FROM weather_nominal t)""")
    assert got.fetchall() == [(True,)]


@pytest.mark.parametrize("name", DATASETS)
def test_aode_is_wekas(db, name):
    gold = golden(name, "aode")
    t = table(name)
    got = db.sql(f"""SELECT model_text(m), list(map_values(predict_proba(m, t)))
                     FROM (SELECT aode_fit(t, '{target_of(db, name)}') m FROM {t} t),
                          {t} t GROUP BY ALL""").fetchall()[0]
    expected = "\n".join(x for x in gold["text"].split("\n") if not x.startswith("Dataset:"))
    assert got[0] == expected
    np.testing.assert_allclose(got[1], gold["dist"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", [n for n in NOMINAL if n != "supermarket"])
def test_aode_cross_validation_is_wekas(db, name):
    expected = weka_cv((GOLDEN / f"{name}__aode.txt").read_text())
    got = dict(zip(*_cv(db, "aode", name, "min_frequency := 1")))
    for key, value in expected.items():
        if key != "confusion":
            assert got[key] == pytest.approx(value, abs=0.51e-4), key


def test_aode_relation_and_frequency_limit(db):
    rows = db.sql("SELECT * FROM aode('weather_nominal', 'play', min_frequency := 5)").df()
    sunny = rows[(rows.attribute == "outlook") & (rows.value == "sunny")]
    assert sorted(sunny["count"]) == [2.0, 3.0]
    assert list(sunny.superparent) == [True, True]  # 5 rows
    overcast = rows[(rows.attribute == "outlook") & (rows.value == "overcast")]
    assert not overcast.superparent.any()  # 4 rows
    # no superparent frequent enough: naive Bayes over the known values, Laplace
    # corrected: yes (9+1)/16 * (4+1)/(9+3), no (5+1)/16 * (0+1)/(5+3)
    got = db.sql("""SELECT predict_proba(m, {'outlook': 'overcast', 'temperature': NULL,
                                             'humidity': NULL, 'windy': NULL})
                    FROM (SELECT aode_fit(t, 'play', min_frequency := 100) m
                          FROM weather_nominal t)""").fetchall()[0][0]
    yes, no = 10 / 16 * 5 / 12, 6 / 16 * 1 / 8
    assert got == pytest.approx({"yes": yes / (yes + no), "no": no / (yes + no)})


@pytest.mark.parametrize("sql,fragments", [
    ("SELECT * FROM bayes_net('iris', 'class', max_parents := -1)", ["max_parents", ">= 0"]),
    ("SELECT * FROM bayes_net('iris', 'class', search := 'greedy')", ["search", "'greedy'"]),
    ("SELECT * FROM bayes_net('iris', 'class', score := 'bic')", ["score", "'bic'"]),
    ("SELECT * FROM bayes_net('iris', 'sepallength')", ["numeric", "m5p"]),
    ("SELECT * FROM bayes_net('iris', 'nope')", ["'nope'", "not in the table"]),
    ("SELECT * FROM bayes_net('iris', 'class', alpha := -0.5)", ["alpha"]),
    ("SELECT * FROM bayes_net('no_such_table', 'class')", ["no_such_table"]),
    ("SELECT * FROM aode('iris', 'class', min_frequency := -1)", ["min_frequency"]),
    ("SELECT * FROM aode('iris', 'petalwidth')", ["numeric", "m5p"]),
    ("SELECT * FROM cross_validate('bayes_net', 'iris', 'class', options := {'search': 'x'})",
     ["search"]),
])
def test_bad_input_gets_a_clear_error(db, sql, fragments):
    fails(db, sql, *fragments)


def test_empty_and_all_null_input(db):
    db.execute("CREATE TEMP TABLE empty_t AS SELECT * FROM weather_nominal WHERE false")
    fails(db, "SELECT * FROM bayes_net('empty_t', 'play')", "empty")
    db.execute("CREATE TEMP TABLE nulls_t AS SELECT *, NULL::VARCHAR AS nothing "
               "FROM weather_nominal")
    fails(db, "SELECT * FROM bayes_net('nulls_t', 'play')", "'nothing'", "all NULL")
    fails(db, "SELECT * FROM bayes_net('weather_nominal', 'play', use_ad_tree := NULL)",
          "use_ad_tree")


def test_a_tree_too_large_for_the_memory_limit(db):
    db.execute("SET VARIABLE duckmine_ad_tree_max_mb = 0.001")
    try:
        fails(db, "SELECT * FROM bayes_net('soybean', 'class', max_parents := 3)",
              "MiB", "use_ad_tree := false")
        assert db.sql("SELECT count(*) FROM bayes_net('soybean', 'class', max_parents := 3, "
                      "use_ad_tree := false)").fetchall()[0][0] > 0
    finally:
        db.execute("RESET VARIABLE duckmine_ad_tree_max_mb")
