"""EM and k-means from SQL: the model texts Weka prints, the relations, scoring
(clusters, memberships, log densities), models per group, and bad input."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

import duckmine

from .conftest import DATA, fails, fitted, table

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "em"
DATASETS = ["weather.numeric", "iris", "labor", "cpu"]


@pytest.fixture(scope="module")
def db():
    c = duckmine.connect()
    for name in DATASETS:
        duckmine.read_arff(c, DATA / f"{name}.arff", table(name))
    yield c
    c.close()


def model_part(text):
    """Weka's printed model, without the clustering statistics after it."""
    return text[:text.index("=== Clustering stats")].rstrip("\n")


FITS = {"k3": ("em", "k := 3"), "auto": ("em", ""),
        "kmeans3": ("kmeans", "k := 3, init := 'random'")}


@pytest.mark.parametrize("tag", FITS)
@pytest.mark.parametrize("name", DATASETS)
def test_model_text_is_wekas(db, name, tag):
    expected = model_part((GOLDEN / f"{name}__{tag}.txt").read_text())
    learner, options = FITS[tag]
    got = db.sql(f"SELECT model_text(model) FROM {fitted(learner, table(name), None, options)}")\
        .fetchall()[0][0]
    assert got.rstrip("\n") == expected


@pytest.mark.parametrize("name", DATASETS)
def test_relation_and_scoring_agree_with_the_reference(db, name):
    gold = json.loads((GOLDEN / f"{name}__k3.json").read_text())
    t = table(name)
    rows = db.sql(f"SELECT * FROM em('{t}', k := 3)").df()
    assert set(rows.num_clusters) == {3}
    priors = rows.groupby("cluster").prior.first().to_numpy()
    assert priors.sum() == pytest.approx(1.0)
    assert rows.log_likelihood.iloc[0] == pytest.approx(gold["loglikely"], abs=1e-6)
    nominal = rows[rows.value.notna()]
    if len(nominal):  # value probabilities of each attribute sum to one per cluster
        sums = nominal.groupby(["cluster", "attribute"]).probability.sum()
        np.testing.assert_allclose(sums, 1.0)
    scored = db.sql(f"""SELECT predict(m.model, t) AS c, predict_proba(m.model, t) AS p,
                               log_likelihood(m.model, t) AS ll
                        FROM {t} t, {fitted('em', t, None, 'k := 3')} m""").df()
    probs = np.array([[p[str(c)] for c in range(3)] for p in scored.p])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert list(scored.c) == [str(int(np.argmax(p))) for p in probs]
    # the mean log density over the rows is what Weka's evaluation prints
    assert scored.ll.mean() == pytest.approx(gold["eval_loglikely"], abs=1e-6)


def test_kmeans_relation_and_sse(db):
    rows = db.sql("SELECT * FROM kmeans('iris', 3, init := 'random')").df()
    gold = json.loads((GOLDEN / "iris__kmeans3.json").read_text())
    assert rows.sse.iloc[0] == pytest.approx(gold["squared_error"], abs=1e-9)
    assert sorted(rows.groupby("cluster")["size"].first()) == sorted(gold["sizes"])
    labels = rows[rows.attribute == "class"].label
    assert labels.notna().all() and rows[rows.attribute != "class"].value.notna().all()
    # k-means++ (the default) also separates the three species
    sizes = db.sql("SELECT predict(m, t) AS c, count(*) AS n FROM iris t, "
                   "(SELECT kmeans_fit(t, 3) AS m FROM iris t) GROUP BY c").fetchall()
    assert len(sizes) == 3 and all(n >= 35 for _, n in sizes)


def test_one_model_per_group_and_exclude(db):
    got = db.sql("""SELECT class, model_text(em_fit(t, k := 2, exclude := ['class']))
                    FROM iris t GROUP BY class ORDER BY class""").fetchall()
    assert len(got) == 3
    for cls, text in got:
        alone = db.sql(f"""SELECT model_text(em_fit(t, k := 2)) FROM
                           (SELECT * EXCLUDE (class) FROM iris WHERE class = '{cls}') t"""
                       ).fetchall()[0][0]
        assert text == alone and "class" not in text


def test_missing_values_score_as_the_training_mean(db):
    m = "(SELECT em_fit(t, k := 2) AS model FROM weather_numeric t)"
    a = db.sql(f"""SELECT log_likelihood(m.model, {{'outlook': 'sunny',
                   'temperature': NULL::DOUBLE, 'humidity': 80.0, 'windy': 'FALSE',
                   'play': 'yes'}}) FROM {m} m""").fetchall()[0][0]
    mean = db.sql("SELECT avg(temperature) FROM weather_numeric").fetchall()[0][0]
    b = db.sql(f"""SELECT log_likelihood(m.model, {{'outlook': 'sunny',
                   'temperature': {mean!r}, 'humidity': 80.0, 'windy': 'FALSE',
                   'play': 'yes'}}) FROM {m} m""").fetchall()[0][0]
    assert math.isfinite(a) and a == pytest.approx(b, abs=1e-12)


def test_constant_columns_work(fresh):
    fresh.execute("CREATE TABLE d AS SELECT (i % 2) * 10.0 + (i % 7) * 0.1 AS x, "
                  "5.0 AS constant FROM range(200) r(i)")
    rows = fresh.execute("SELECT cluster, attribute, mean, std_dev FROM em('d', k := 2) "
                         "ORDER BY cluster, attribute").fetchall()
    assert {round(r[2]) for r in rows if r[1] == "x"} == {0, 10}
    assert all(r[2] == 5.0 and r[3] > 0 for r in rows if r[1] == "constant")


BAD = [
    ("SELECT em_fit(t, k := 0) FROM iris t", "k"),
    ("SELECT em_fit(t, min_stddev := 0) FROM iris t", "min_stddev"),
    ("SELECT em_fit(t, max_iterations := 0) FROM iris t", "max_iterations"),
    ("SELECT kmeans_fit(t, 200) FROM iris t", "larger than the number of distinct rows"),
    ("SELECT kmeans_fit(t, 3, init := 'bogus') FROM iris t", "init"),
    ("SELECT em_fit(t, exclude := ['nope']) FROM iris t", "nope"),
    ("SELECT em_fit(t, exclude := ['x']) FROM (SELECT 1.0 AS x) t", "no attributes"),
    ("SELECT em_fit(t) FROM (SELECT NULL::DOUBLE AS a, 1.0 AS b) t", "'a'"),
    ("SELECT em_fit(t) FROM (SELECT 1.0 AS a WHERE false) t", "empty"),
    ("SELECT * FROM em('no_such_table')", "no_such_table"),
    ("SELECT log_likelihood(m, t) FROM iris t, (SELECT kmeans_fit(t, 3) AS m FROM iris t)",
     "does not offer log_likelihood"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0][:60] for c in BAD])
def test_bad_input_gets_a_clear_error(db, case):
    fails(db, case[0], *case[1:])
