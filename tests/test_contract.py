"""The learner contract's common tests: every declared learner passes them by being
declared. Data per kind: a classifier learns play from the mixed weather table, a
regressor class from cpu, a clusterer and a counter the weather tables."""

import json
import random

import numpy as np
import pytest

import duckmine
from duckmine.algorithms import contract
from duckmine.algorithms.contract import literal
from duckmine.extension.warm import example_options
from duckmine.udfs.models import model_of
from duckmine.udfs.table import Encoder

from .conftest import arff_tables, fails

LEARNERS = list(contract.learners().values())
# each learner with each kind of model it makes (a predictor: both)
CASES = [(d, k) for d in LEARNERS for k in d.model_kinds]


def case_id(case):
    return case.name if isinstance(case, contract.Learner) else case


def cases(capability=None, relation=False):
    return [(d, k) for d, k in CASES
            if (capability is None or capability in d.capabilities_for(k))
            and (d.relation or not relation)]
DATASETS = {  # kind: (table, target)
    "classifier": ("weather_numeric", "play"),
    "regressor": ("cpu", "class"),
    "clusterer": ("weather_numeric", None),
    "counter": ("weather_nominal", None),
}


@pytest.fixture(scope="module")
def db():
    con = arff_tables(["weather.nominal", "weather.numeric", "cpu"])
    for t in ("weather_nominal", "weather_numeric", "cpu"):
        con.execute(f"CREATE TABLE {t}_empty AS FROM {t} LIMIT 0")
    yield con
    con.close()


required = example_options  # values for the options that have no default


def sql_args(values):
    return "".join(f", {k} := {literal(v)}" for k, v in values.items())


def head(decl, kind):
    table, target = DATASETS[kind]
    return table, ("" if target is None else f", '{target}'")


def fit_sql(decl, kind, extra=None, table=None):
    t, target = head(decl, kind)
    return (f"SELECT {decl.name}_fit(x{target}{sql_args({**required(decl), **(extra or {})})})"
            f" AS m FROM {table or t} x")


def model(db, decl, kind):
    return db.sql(fit_sql(decl, kind)).fetchall()[0][0]


def random_rows(db, table, n=60, seed=3):
    """Rows drawn from the table's values, with NULLs and unseen values."""
    rng = random.Random(seed)
    rows = db.sql(f"FROM {table}").fetchall()
    cols = [d[0] for d in db.sql(f"FROM {table}").description]
    numeric = [isinstance(next((r[j] for r in rows if r[j] is not None), 0.0), (int, float))
               for j in range(len(cols))]
    out = []
    for _ in range(n):
        row = []
        for j in range(len(cols)):
            u = rng.random()
            if u < 0.15:
                row.append(None)
            elif u < 0.25:
                row.append(rng.uniform(-100, 1000) if numeric[j] else "never-seen")
            else:
                row.append(rng.choice(rows)[j])
        out.append(row)
    return cols, numeric, out


def _array_bytes(x, seen=None):
    """The bytes of the arrays an object reaches through its attributes, lists,
    tuples and dicts."""
    seen = set() if seen is None else seen
    if id(x) in seen or isinstance(x, (str, bytes, int, float, type(None))):
        return 0
    seen.add(id(x))
    if isinstance(x, np.ndarray):
        return x.nbytes
    if isinstance(x, dict):
        return sum(_array_bytes(v, seen) for v in x.values())
    if isinstance(x, (list, tuple, set, frozenset)):
        return sum(_array_bytes(v, seen) for v in x)
    return sum(_array_bytes(v, seen) for v in getattr(x, "__dict__", {}).values())


@pytest.mark.parametrize("decl,kind", CASES, ids=case_id)
def test_a_fitted_model_is_the_model_its_body_reads_as(db, decl, kind, monkeypatch):
    """The fit caches the model it fitted, so scoring in the same session uses it
    rather than its body: it must score, print and serialise as the model read back
    from its body does, and keep nothing more than that one."""
    from duckmine.algorithms import models as core

    def unread(*args):
        raise AssertionError("the fitted model was read from its body")

    v = model(db, decl, kind)
    monkeypatch.setattr(core, "loads", unread)
    m = model_of("test", v)  # as fitted: found in the cache, never read
    monkeypatch.undo()
    again = core.loads(v["learner"], v["version"], v["body"], v["id"])
    assert m is not again and type(m) is type(again) and vars(m).keys() == vars(again).keys()
    assert _array_bytes(m) <= _array_bytes(again)  # no training data kept
    assert json.dumps(m.to_json(), separators=(",", ":")) == v["body"]
    assert json.dumps(again.to_json(), separators=(",", ":")) == v["body"]
    if "model_text" in decl.capabilities_for(kind):
        assert m.text() == again.text()
    table, _ = DATASETS[kind]
    rows = db.sql(f"SELECT list(x) FROM {table} x").arrow().read_all().column(0)[0].values
    for capability in ("predict_proba", "predict_value", "log_likelihood"):
        if capability in decl.capabilities_for(kind):
            method = contract.METHODS[capability]
            cols = Encoder(rows, "test").columns([m.attributes[i] for i in m.used])
            a = getattr(m, method)(cols, len(rows))
            b = getattr(again, method)(cols, len(rows))
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("decl,kind", cases("predict_proba"), ids=case_id)
def test_probabilities_sum_to_one(db, decl, kind):
    table, _ = DATASETS[kind]
    cols, _, rows = random_rows(db, table)
    db.execute("CREATE OR REPLACE TEMP TABLE m AS " + fit_sql(decl, kind))
    sums = db.sql(f"SELECT list_sum(map_values(predict_proba(m.m, x))) FROM {table} x, m"
                  ).fetchall()
    assert all(abs(s - 1) < 1e-9 for (s,) in sums)


@pytest.mark.parametrize("decl,kind", cases("model_to_sql"), ids=case_id)
def test_model_to_sql_equals_predict(db, decl, kind):
    table, _ = DATASETS[kind]
    cols, numeric, rows = random_rows(db, table)
    types = [f'"{c}" {"DOUBLE" if num else "VARCHAR"}' for c, num in zip(cols, numeric)]
    db.execute(f"CREATE OR REPLACE TEMP TABLE r ({', '.join(types)})")
    db.executemany(f"INSERT INTO r VALUES ({', '.join('?' * len(cols))})", rows)
    for c in (c for c, num in zip(cols, numeric) if num):  # NaN: missing to a model
        db.execute(f"""INSERT INTO r SELECT * REPLACE ('NaN'::DOUBLE AS "{c}") FROM r
                       LIMIT 5""")
    db.execute("CREATE OR REPLACE TEMP TABLE m AS " + fit_sql(decl, kind))
    expr = db.sql("SELECT model_to_sql(m) FROM m").fetchall()[0][0]
    scored = "predict_value(m.m, r)" if kind == "regressor" else "predict(m.m, r)"
    got = db.sql(f"SELECT {scored}, {expr} FROM r, m").fetchall()
    assert len(got) >= 60
    for ours, written in got:
        if kind == "regressor":
            assert (ours is None and written is None) or abs(ours - written) <= 1e-9 * max(
                1, abs(ours)), (ours, written)
        else:
            assert ours == written


def violations(p):
    """Values that break parameter ``p``'s declared constraint."""
    if p.type == "boolean":
        return ["'false'", "1"]
    if p.type == "model":
        return ["42", "'abc'"]
    if p.choices:
        return ["'no such choice'", "3"]
    if p.type == "text_list":
        return ["42"]
    if p.type == "text":
        return ["42"]
    out = ["'abc'"]
    if not p.nullable:
        out.append("NULL")
    if p.low is not None:
        out.append(repr(p.low - 1) if not p.low_open else repr(p.low))
    if p.high is not None:
        out.append(repr(p.high + 1) if not p.high_open else repr(p.high))
    if p.type == "integer":
        out.append("2.5")
    return out


@pytest.mark.parametrize("decl,kind", CASES, ids=case_id)
def test_each_constraint_violated_is_named(db, decl, kind):
    t, target = head(decl, kind)
    for p in decl.params:
        for bad in violations(p):
            values = {**required(decl)}
            values.pop(p.name, None)
            args = sql_args(values) + f", {p.name} := {bad}"
            fails(db, f"SELECT {decl.name}_fit(x{target}{args}) FROM {t} x",
                  f"{decl.name}: {p.name} must be")


@pytest.mark.parametrize("decl,kind", cases(relation=True), ids=case_id)
def test_table_form_equals_fit_in_table_order(db, decl, kind):
    """The table form and ``fit`` both read the rows in table order."""
    t, target = head(decl, kind)
    args = sql_args(required(decl))
    table = db.sql(f"SELECT * FROM {decl.name}('{t}'{target}{args})").fetchall()
    order = "ORDER BY " + ", ".join(f'r."{c}"' for c in decl.order_by) if decl.order_by else ""
    columns = ", ".join(f'r."{c}"' for c, _ in decl.relation)
    options = ", ".join(f"'{k}': {literal(v)}" for k, v in required(decl).items())
    fitted = (f"SELECT model AS m FROM fit('{decl.name}', '{t}', "
              f"{target[2:] if target else 'NULL'}"
              f"{', options := {' + options + '}' if options else ''})")
    agg = db.sql(f"SELECT {columns} FROM (SELECT unnest(_dm_rows_{decl.name}(m)) AS r "
                 f"FROM ({fitted})) {order}").fetchall()
    assert table == agg and table


@pytest.mark.parametrize("decl,kind", CASES, ids=case_id)
def test_aggregate_form_ignores_row_order(db, decl, kind):
    """A group's rows have no order: the aggregate gives one model for any."""
    t, _ = head(decl, kind)
    shuffled = f"(SELECT * FROM {t} ORDER BY hash(rowid * 7919))"
    a = db.sql(fit_sql(decl, kind)).fetchall()[0][0]
    b = db.sql(fit_sql(decl, kind, table=shuffled)).fetchall()[0][0]
    assert db.sql(f"SELECT * FROM {shuffled} LIMIT 3").fetchall() != \
        db.sql(f"SELECT * FROM {t} LIMIT 3").fetchall()
    assert a["id"] == b["id"] and a["body"] == b["body"]


@pytest.mark.parametrize("decl,kind", CASES, ids=case_id)
def test_empty_table_and_missing_column(db, decl, kind):
    t, target = head(decl, kind)
    fails(db, fit_sql(decl, kind, table=f"{t}_empty"), f"{decl.name}: the table is empty")
    if decl.has_target:
        fails(db, f"SELECT {decl.name}_fit(x, 'nope'{sql_args(required(decl))}) FROM {t} x",
              f"{decl.name}: target column 'nope' is not in the table")
    if "predict" in decl.capabilities:
        db.execute("CREATE OR REPLACE TEMP TABLE m AS " + fit_sql(decl, kind))
        if model_of("test", db.sql("SELECT m FROM m").fetchall()[0][0]).used:
            fails(db, "SELECT predict(m, {'nothing': 1}) FROM m", "predict:", "has no column")
        else:  # a model that reads no column (ZeroR) scores any row
            assert db.sql("SELECT predict(m, {'nothing': 1}) FROM m").fetchall()[0][0]


@pytest.mark.parametrize("decl,kind", CASES, ids=case_id)
def test_two_fits_are_identical(db, decl, kind):
    a, b = model(db, decl, kind), model(db, decl, kind)
    assert a["id"] == b["id"] and a["body"] == b["body"]


@pytest.mark.parametrize("decl,kind", CASES, ids=case_id)
def test_missing_capabilities_are_refused_by_name(db, decl, kind):
    db.execute("CREATE OR REPLACE TEMP TABLE m AS " + fit_sql(decl, kind))
    info = db.sql("SELECT model_info(m) FROM m").fetchall()[0][0]
    assert info["learner"] == decl.name and info["version"] == decl.version
    assert info["capabilities"] == [*decl.capabilities_for(kind), "model_info"]
    assert info["kind"] == kind
    calls = {"predict": "predict(m, {'a': 1})", "predict_proba": "predict_proba(m, {'a': 1})",
             "predict_value": "predict_value(m, {'a': 1})",
             "log_likelihood": "log_likelihood(m, {'a': 1})", "model_text": "model_text(m)",
             "model_to_sql": "model_to_sql(m)", "model_dot": "model_dot(m)"}
    for capability, call in calls.items():
        if capability not in decl.capabilities_for(kind):
            fails(db, f"SELECT {call} FROM m", f"{capability}: a {decl.name} model",
                  "it offers", "the learners whose models offer it are")


@pytest.mark.parametrize("decl,kind", CASES, ids=case_id)
def test_declaration_is_complete(decl, kind):
    cls = decl.model_class()
    assert cls.learner == decl.name
    for capability in decl.capabilities:
        method = contract.METHODS[capability]
        if method:
            assert callable(getattr(cls, method, None)), (decl.name, method)
    if decl.relation:
        assert callable(getattr(cls, "rows", None))
    for p in decl.params:
        assert p.doc and p.name.isidentifier()
        if not p.required:
            assert p.check("x", p.default) == p.default or p.default is None


def test_every_learner_package_is_packaged():
    """A learner family is a package of algorithms/; an install must carry it."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    listed = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"]
    found = {f"duckmine.algorithms.{p.parent.name}"
             for p in (root / "algorithms").glob("*/__init__.py")}
    assert found <= set(listed), sorted(found - set(listed))


def test_aggregate_fits_give_one_model_on_a_parallel_scan():
    """A table large enough that two threads scan it, handing the aggregate its rows
    in a different order each run: the same model every run
    (``benchmarks/determinism.py`` runs every learner at a million rows)."""
    from duckmine.benchmarks import determinism

    con = duckmine.connect()
    con.execute("SET threads = 2")
    determinism.make_table(con, 300_000)
    for name in ("kmeans", "naive_bayes", "c45"):
        got, _ = determinism.ids(con, name, 3)
        assert len(set(got)) == 1, name
    con.close()
