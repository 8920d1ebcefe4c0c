"""The dashboard, driven by Streamlit's AppTest on the sample database: picking a
table and a learner, options made from each learner's declaration, fitting every
learner (the picture, Weka's text, cross-validation and the confusion matrix),
saving and scoring, association rules, and bad input shown on the page."""

import json
import os

import pyarrow as pa
import pytest

from duckmine.algorithms import contract
from duckmine.extension import cli
from duckmine.extension import dashboard as page
from duckmine.extension.loader import connect
from duckmine.extension.samples import create_sample_tables

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
APP = os.path.join(os.path.dirname(page.__file__), "dashboard_app.py")
DATA = {"classifier": "weather", "regressor": "cpu", "predictor": "weather",
        "clusterer": "weather_numeric"}


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("dashboard") / "demo.duckdb")
    con = connect(path)
    create_sample_tables(con)
    con.close()
    return path


@pytest.fixture
def app(database, monkeypatch):
    monkeypatch.setenv(page.DB_VARIABLE, database)

    def start(**params):
        at = AppTest.from_file(APP, default_timeout=300)
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, at.exception
        return at
    return start


def widget(at, kind, label):
    return next(w for w in getattr(at, kind) if w.label == label)


def click(at, label):
    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception, at.exception


def codes(at):
    return [c.value for c in at.code]


def _rows(arrow):
    return pa.ipc.open_stream(arrow.data).read_all().to_pylist()


def charts(at):
    """The Vega-Lite charts on the page, their data put back where Streamlit took
    it from (it sends a chart's rows apart from its spec, as Arrow)."""
    out = []
    for e in at.get("vega_lite_chart"):
        spec = json.loads(e.proto.spec)
        if e.proto.HasField("data"):
            spec["data"] = {"values": _rows(e.proto.data)}
        named = {d.name: _rows(d.data) for d in e.proto.datasets}
        for part in [spec, *spec.get("layer", [])]:
            if "name" in part.get("data", {}):
                part["data"] = {"values": named[part["data"]["name"]]}
        out.append(spec)
    return out


def option_labels(at):
    """The labels of the widgets the options pane holds."""
    fixed = {"Table or view", "Learner", "Target", "... or a table name or a query in "
             "parentheses", "Cross-validation folds"}
    return {w.label for kind in ("number_input", "checkbox", "selectbox", "text_input",
                                 "multiselect")
            for w in getattr(at.sidebar, kind) if w.label not in fixed}


def test_options_are_made_from_each_declaration(app):
    at = app(table="weather_numeric")
    for decl in page.learners():
        widget(at, "selectbox", "Learner").set_value(decl.name).run()
        assert not at.exception, (decl.name, at.exception)
        assert option_labels(at) == {p.name for p in decl.params if p.type != "model"}, \
            decl.name
        for p in decl.params:  # each with its declared default
            if p.type in ("double", "integer") and p.default is not contract.REQUIRED:
                assert widget(at, "number_input", p.name).value == p.default, p.name
            if p.type == "boolean":
                assert widget(at, "checkbox", p.name).value is p.default, p.name


def test_fit_c45(app, database):
    at = app(table="weather", learner="c45", target="play")
    assert "Set the options and press Fit." in [i.value for i in at.info]
    widget(at, "number_input", "confidence").set_value(0.1)
    click(at, "Fit")
    sql = codes(at)
    assert sql[0] == ("CREATE OR REPLACE TEMP TABLE dashboard_model AS\nSELECT model FROM "
                      "fit('c45', 'weather', 'play', options := {'confidence': 0.1});")
    assert any(s.startswith("J48 pruned tree") and "outlook = sunny" in s for s in sql)
    assert "SELECT * FROM cross_validate('c45', 'weather', 'play', options := " \
           "{'confidence': 0.1});" in sql
    (svg,) = [m.value for m in at.markdown if "<svg" in m.value]
    assert svg.count('class="node"') == 8 and svg.count('class="edge"') == 7
    (heatmap,) = charts(at)
    assert heatmap["title"] == "Confusion matrix"
    assert sum(r["weight"] for r in heatmap["data"]["values"]) == 14
    # the SQL shown gives what the page shows, on any connection to the database
    con = connect(database)
    try:
        con.execute(sql[0].rstrip(";"))
        text = con.execute(f"SELECT model_text(model) FROM {page.MODEL_TABLE}"
                           ).fetchall()[0][0]
    finally:
        con.close()
    assert text.rstrip("\n") in [c.rstrip("\n") for c in sql]


@pytest.mark.parametrize("decl", page.learners(), ids=lambda d: d.name)
def test_every_learner_fits(app, decl):
    table = DATA[decl.kind]
    at = app(table=table, learner=decl.name)
    if decl.name == "kmeans":
        widget(at, "number_input", "k").set_value(2)
    click(at, "Fit")
    assert not at.error, [e.value for e in at.error]
    sql = codes(at)
    assert sql[0].startswith(f"CREATE OR REPLACE TEMP TABLE dashboard_model AS\nSELECT "
                             f"model FROM fit('{decl.name}', '{table}'")
    assert (f"SELECT model_text(model) FROM {page.MODEL_TABLE};" in sql) == \
        ("model_text" in decl.capabilities)
    if decl.relation:  # its table form, with the same options
        assert any(s.startswith(f"SELECT * FROM {decl.name}('{table}'") for s in sql)
    pictured = [m.value for m in at.markdown if "<svg" in m.value]
    assert len(pictured) == ("model_dot" in decl.capabilities)
    scored = "predict" in decl.capabilities
    if scored and decl.kind in ("classifier", "predictor"):  # a nominal target here
        assert any(c["title"] == "Confusion matrix" for c in charts(at))
    assert ("Score" in [b.label for b in at.button]) == scored
    if decl.kind == "clusterer":  # the rows by cluster, and the centres over them
        (scatter,) = charts(at)
        points, centres = scatter["layer"]
        assert len(points["data"]["values"]) == 14
        assert {r["cluster"] for r in centres["data"]["values"]} == \
            {r["cluster"] for r in points["data"]["values"]}
        assert any(s.startswith("PIVOT (SELECT cluster::VARCHAR AS cluster") for s in sql)


def test_save_and_score(app, database):
    at = app(table="labor", learner="c45", target="class")
    click(at, "Fit")
    widget(at, "text_input", "Table to keep it in").set_value("labor_models")
    click(at, "Save")
    assert "CREATE OR REPLACE TABLE \"labor_models\" AS SELECT model FROM " \
           "dashboard_model;" in codes(at)
    assert [s.value for s in at.success] == ["Saved in labor_models"]
    widget(at, "selectbox", "Table to score").set_value("labor")
    click(at, "Score")
    scored = at.dataframe[-1].value
    assert len(scored) == 57 and scored.columns[-1] == "predicted"
    assert set(scored["predicted"]) == {"good", "bad"}
    assert {b.proto.label for b in at.get("download_button")} == {"Download CSV",
                                                                  "Download Parquet"}
    # the model is in the database, for any other connection
    con = connect(database)
    try:
        assert con.execute("SELECT model_info(model).learner FROM labor_models"
                           ).fetchall() == [("c45",)]
    finally:
        con.close()


def test_association_rules(app):
    at = app(table="weather", learner=page.RULES)
    widget(at, "number_input", "min_support").set_value(3.0).run()
    assert not at.error
    assert "SELECT * FROM association_rules('weather', 3.0, min_confidence := 0.9);" \
        in codes(at)
    (scatter,) = charts(at)
    assert scatter["encoding"]["x"]["field"] == "support" and scatter["data"]["values"]


def test_bad_input_is_shown_on_the_page(app):
    at = app(table="weather", learner="c45", target="play")
    widget(at, "text_input", "... or a table name or a query in parentheses").set_value(
        "no_such_table").run()
    assert not at.exception
    (error,) = at.error
    assert "no_such_table" in error.value and "Traceback" not in error.value
    # an option out of range is the learner's own message
    at = app(table="weather", learner="c45", target="play")
    widget(at, "number_input", "confidence").set_value(0.9)
    click(at, "Fit")
    assert [e.value for e in at.error] == ["c45: confidence must be in (0, 0.5], got 0.9"]
    # a query in parentheses is a table too
    at = app(learner="c45")
    widget(at, "text_input", "... or a table name or a query in parentheses").set_value(
        "(SELECT * FROM weather WHERE windy)").run()
    widget(at, "number_input", "Cross-validation folds").set_value(3)
    click(at, "Fit")
    assert not at.error, [e.value for e in at.error]
    assert "J48 pruned tree" in "".join(codes(at))
    assert "SELECT * FROM cross_validate('c45', '(SELECT * FROM weather WHERE windy)', " \
           "'play', folds := 3);" in codes(at)


def test_the_command_names_a_wrong_database(tmp_path, capsys):
    missing = tmp_path / "nowhere.duckdb"
    assert cli.main(["dashboard", "--db", str(missing)]) == 1
    assert f"no database file '{missing}'" in capsys.readouterr().err
    garbage = tmp_path / "garbage.duckdb"
    garbage.write_text("not a database")
    assert cli.main(["dashboard", "--db", str(garbage)]) == 1
    assert str(garbage) in capsys.readouterr().err
