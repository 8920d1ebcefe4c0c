"""Charts of SQL results: each is a valid Vega-Lite specification (checked against
the schema Altair ships) whose data are the rows the query returned, unchanged."""

import math

import altair
import jsonschema
import pytest

from duckmine.extension import charts

from .conftest import arff_tables

SCHEMA = altair.vegalite.schema.load_schema()  # the Vega-Lite version Altair speaks


@pytest.fixture(scope="module")
def db():
    con = arff_tables(["weather.nominal", "iris", "labor"])
    yield con
    con.close()


def valid(spec):
    jsonschema.validate(spec, SCHEMA)
    return spec


def test_confusion_heatmap(db):
    rel = db.sql("SELECT * FROM confusion_matrix('c45', 'labor', 'class')")
    rows = rel.fetchall()
    spec = valid(charts.confusion_heatmap(rel))
    assert [(r["actual"], r["predicted"], r["weight"]) for r in spec["data"]["values"]] == rows
    cells, numbers = spec["layer"]
    assert cells["mark"] == "rect" and numbers["encoding"]["text"]["field"] == "weight"
    # actual classes down, predicted across, in the order the relation gives them
    order = list(dict.fromkeys(a for a, _, _ in rows))
    assert cells["encoding"]["y"]["sort"] == order == cells["encoding"]["x"]["sort"]
    assert sum(w for _, _, w in rows) == 57


def test_cluster_scatter(db):
    points = db.sql("SELECT t.*, predict(m.model, t) AS cluster FROM iris t, "
                    "fit('kmeans', 'iris', NULL, options := {'k': 3}) m")
    centres = db.sql("PIVOT (SELECT cluster::VARCHAR AS cluster, attribute, value FROM "
                     "kmeans('iris', 3) WHERE value IS NOT NULL) ON attribute "
                     "USING first(value)")
    spec = valid(charts.cluster_scatter(points, "petallength", "petalwidth",
                                        centres=centres))
    dots, crosses = spec["layer"]
    assert len(dots["data"]["values"]) == 150
    assert {r["cluster"] for r in dots["data"]["values"]} == {"0", "1", "2"}
    assert len(crosses["data"]["values"]) == 3
    assert dots["encoding"]["x"]["field"] == "petallength"
    assert crosses["mark"]["shape"] == "cross"


def test_rules_scatter(db):
    rel = db.sql("SELECT * FROM association_rules('weather_nominal', 3, "
                 "min_confidence := 0.9)")
    rows = rel.fetchall()
    spec = valid(charts.rules_scatter(rel))
    values = spec["data"]["values"]
    assert len(values) == len(rows) > 0
    # an item list is shown as its text; every figure is the query's own
    assert values[0]["antecedent"] == ", ".join(rows[0][0])
    assert [v["lift"] for v in values] == [r[5] for r in rows]


def test_any_rows_and_values(db):
    """Arrow tables, pandas frames and dicts are taken alike; NaN and infinity
    (which JSON lacks) become missing; dates become ISO text."""
    rel = db.sql("SELECT 'a' AS actual, 'b' AS predicted, 'NaN'::DOUBLE AS weight, "
                 "DATE '2026-01-02' AS d")
    for rows in (rel.to_arrow_table(), rel.df(), [{"actual": "a", "predicted": "b",
                                                   "weight": math.inf,
                                                   "d": "2026-01-02"}]):
        spec = valid(charts.confusion_heatmap(rows))
        (value,) = spec["data"]["values"]
        assert value["d"].startswith("2026-01-02")  # pandas gives a timestamp
        assert {**value, "d": None} == {"actual": "a", "predicted": "b", "weight": None,
                                        "d": None}


def test_rows_without_the_columns(db):
    with pytest.raises(ValueError, match="confusion_heatmap: the rows have no column "
                                         "'predicted', 'weight' \\(they have actual\\)"):
        charts.confusion_heatmap([{"actual": "x"}])
    with pytest.raises(ValueError, match="cluster_scatter: the rows have no column 'z'"):
        charts.cluster_scatter(db.sql("SELECT 1 AS x, 2 AS cluster"), "x", "z")
