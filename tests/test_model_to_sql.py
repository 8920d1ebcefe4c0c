"""model_to_sql: the SQL expression of a C4.5 tree gives the labels predict gives, in
DuckDB and in SQLite, on the training rows, on rows with missing and unseen values,
and on rows that reach every leaf (empty ones too)."""

import math
import sqlite3

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import sqlglot
from sqlglot import exp

from duckmine.algorithms import contract
from duckmine.algorithms.c45.model import NOMINAL_SPLIT, C45Model, Tree
from duckmine.algorithms.c45.sql import TreeSql, expression
from duckmine.algorithms.classes import labels
from duckmine.algorithms.dataset import NUMERIC, Attribute
from duckmine.algorithms.sqlgen import (
    SHALLOW_PARSERS,
    _as,
    _greatest_convention,
    _select,
    dialect_of,
    first_best,
    with_lists,
)
from duckmine.algorithms.sqlgen import model_sql as _model_sql
from duckmine.udfs.models import MODEL_SQL, model_of, value

from .conftest import arff_tables, fails, table

C45_OPTIONS = contract.learners()["c45"].options("c45")  # a hand-made model's


def model_sql(model, dialect):
    return _model_sql(expression, model, dialect)

TARGETS = {"weather.numeric": "play", "weather.nominal": "play", "labor": "class",
           "soybean": "class", "breast-cancer": "Class", "iris": "class",
           "diabetes": "class", "contact-lenses": "contact-lenses"}
OPTIONS = {"default": "", "binary": ", binary_splits := true",
           "unpruned": ", pruned := false"}
CASES = [(name, "default") for name in TARGETS] + [
    (name, key) for name in ("labor", "soybean", "breast-cancer", "iris", "weather.nominal")
    for key in ("binary", "unpruned")]
WITH_MISSING = [("labor", "default"), ("labor", "unpruned"), ("soybean", "default"),
                ("soybean", "binary"), ("breast-cancer", "unpruned"), ("iris", "default"),
                ("diabetes", "default"), ("contact-lenses", "default")]
OTHER_DIALECTS = ("postgres", "sqlite", "bigquery", "snowflake", "tsql")


@pytest.fixture(scope="module")
def db():
    c = arff_tables(TARGETS)
    yield c
    c.close()


def fit(db, name, key):
    """The name of a one-row table holding the model, and the model."""
    models = f"model_{table(name)}_{key}"
    db.execute(f"CREATE OR REPLACE TABLE {models} AS SELECT c45_fit(t, '{TARGETS[name]}'"
               f"{OPTIONS[key]}) AS model FROM {table(name)} t")
    return models, model_of("test", db.sql(f"SELECT model FROM {models}").fetchall()[0][0])


def sql_of(db, models, dialect="duckdb"):
    return db.execute(f"SELECT model_to_sql(model, ?) FROM {models}",
                      [dialect]).fetchall()[0][0]


def both(db, models, rows, expr):
    """[(label of ``expr``, label of predict)] for each row of the table ``rows``."""
    return db.sql(f"SELECT {expr}, predict(m.model, t) FROM {rows} t, {models} m").fetchall()


def assert_same(pairs):
    assert pairs
    wrong = [(i, got, want) for i, (got, want) in enumerate(pairs) if got != want]
    assert not wrong, f"{len(wrong)} of {len(pairs)} rows differ, e.g. {wrong[:5]}"


def create(db, name, arrow_table):
    db.register("arrow_rows", arrow_table)
    db.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM arrow_rows")
    db.unregister("arrow_rows")
    return name


def noisy(db, name, key, model, seed=0):
    """A copy of the training rows with NULLs, NaNs and unseen nominal values in
    the attributes the tree tests (nominal columns become VARCHAR)."""
    rng = np.random.default_rng(seed)
    rows = db.sql(f"SELECT * FROM {table(name)}").to_arrow_table()
    tested = {model.attributes[a].name for a in model.used}
    columns = {}
    for field, col in zip(rows.schema, rows.columns):
        col = col.combine_chunks()
        if field.name in tested:
            n = len(col)
            if pa.types.is_dictionary(col.type):
                col = pc.cast(col, pa.string())
                col = pc.if_else(pa.array(rng.random(n) < 0.1), "never seen", col)
            else:
                col = pc.if_else(pa.array(rng.random(n) < 0.05), math.nan, col)
            col = pc.if_else(pa.array(rng.random(n) < 0.2), pa.scalar(None, col.type), col)
        columns[field.name] = col
    return create(db, f"noisy_{table(name)}_{key}", pa.table(columns))


def leaf_rows(model):
    """Rows, as {attribute name: value}, that reach each leaf and each empty branch,
    and the same rows with one of the attributes tested on the way set to NULL."""
    tree, attributes = model.tree, model.attributes
    rows = []

    def emit(constraints):
        row = {}
        for a, c in constraints.items():
            if attributes[a].nominal:
                row[attributes[a].name] = next(v for v in attributes[a].values if v in c)
            else:
                lo, hi = c
                row[attributes[a].name] = hi if hi < math.inf else \
                    (lo + 1.0 if lo > -math.inf else 0.0)
        rows.append(row)
        for a in constraints:
            rows.append({**row, attributes[a].name: None})

    def walk(node, constraints):
        a = int(tree.attr[node])
        values = attributes[a].values
        for child in tree.children[node]:
            b = int(tree.branch[child])
            if attributes[a].nominal:
                allowed = constraints.get(a, set(values))
                if tree.kind[node] == NOMINAL_SPLIT:
                    mine = {values[b]}
                else:
                    v = values[tree.value[node]]
                    mine = {v} if b == 0 else set(values) - {v}
                c = allowed & mine
                if not c:
                    continue
            else:
                lo, hi = constraints.get(a, (-math.inf, math.inf))
                t = float(tree.threshold[node])
                c = (lo, min(hi, t)) if b == 0 else (max(lo, t), hi)
                if c[0] >= c[1]:
                    continue
            below = {**constraints, a: c}
            if tree.is_leaf(child):
                emit(below)
            else:
                walk(child, below)

    if not tree.is_leaf(0):
        walk(0, {})
    return rows


def rows_table(db, name, model, rows):
    fields = [pa.field(a.name, pa.string() if a.nominal else pa.float64())
              for a in model.attributes]
    data = {f.name: pa.array([r.get(f.name) for r in rows], f.type) for f in fields}
    return create(db, name, pa.table(data))


def sqlite_labels(db, models, rows, expr):
    """(labels of ``expr`` in SQLite, labels of predict in DuckDB) on the same rows."""
    names = db.sql(f"SELECT * FROM {rows} LIMIT 0").columns
    fetched = db.sql(f"SELECT predict(m.model, t), t.* FROM {rows} t, {models} m").fetchall()
    lite = sqlite3.connect(":memory:")
    quoted = ", ".join('"' + n.replace('"', '""') + '"' for n in names)
    lite.execute(f"CREATE TABLE t ({quoted})")
    lite.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(names))})",
                     [r[1:] for r in fetched])
    got = [r[0] for r in lite.execute(f"SELECT {expr} FROM t ORDER BY rowid").fetchall()]
    lite.close()
    return list(zip(got, [r[0] for r in fetched]))


@pytest.mark.parametrize("name, key", CASES)
def test_training_rows_match_predict(db, name, key):
    models, model = fit(db, name, key)
    expr = sql_of(db, models)
    assert expr == model_sql(model, "duckdb")
    assert_same(both(db, models, table(name), expr))
    if not model.tree.is_leaf(0):  # every row, by the class probabilities alone
        alone = TreeSql(model).missing_path().sql("duckdb")
        assert_same(both(db, models, table(name), alone))


@pytest.mark.parametrize("name, key", WITH_MISSING)
def test_missing_and_unseen_values_match_predict(db, name, key):
    models, model = fit(db, name, key)
    rows = noisy(db, name, key, model)
    expr = sql_of(db, models)
    assert_same(both(db, models, rows, expr))
    tree = TreeSql(model)
    known = tree.known_path().sql("duckdb")
    assert db.sql(f"SELECT count(*) FROM {rows} WHERE ({known}) IS NULL").fetchall()[0][0] > 0
    assert_same(both(db, models, rows, tree.missing_path().sql("duckdb")))


@pytest.mark.parametrize("name, key", [("soybean", "default"), ("soybean", "binary"),
                                       ("breast-cancer", "unpruned"), ("labor", "unpruned")])
def test_every_leaf_and_empty_branch(db, name, key):
    models, model = fit(db, name, key)
    rows = leaf_rows(model)
    n_leaves = sum(model.tree.is_leaf(i) for i in range(len(model.tree.attr)))
    assert len(rows) > n_leaves
    if key != "binary":
        assert model.tree.empty.any()
    rows = rows_table(db, f"leaves_{table(name)}_{key}", model, rows)
    assert_same(both(db, models, rows, sql_of(db, models)))
    assert_same(sqlite_labels(db, models, rows, sql_of(db, models, "sqlite")))


@pytest.mark.parametrize("name, key", [("labor", "default"), ("soybean", "default"),
                                       ("iris", "default"), ("breast-cancer", "binary")])
def test_sqlite_runs_the_expression(db, name, key):
    models, model = fit(db, name, key)
    expr = sql_of(db, models, "sqlite")
    assert_same(sqlite_labels(db, models, table(name), expr))
    assert_same(sqlite_labels(db, models, noisy(db, name, key, model, seed=1), expr))


@pytest.mark.parametrize("name", ["labor", "soybean", "iris"])
def test_other_dialects(db, name):
    models, _ = fit(db, name, "default")
    quoted = {"bigquery": "`wage-increase-first-year`", "tsql": "[wage-increase-first-year]",
              "postgres": '"wage-increase-first-year"'}
    for dialect in OTHER_DIALECTS:
        expr = sql_of(db, models, dialect)
        assert sqlglot.parse_one(expr, read=dialect).sql(dialect) == expr
        if name == "labor" and dialect in quoted:
            assert quoted[dialect] in expr
    assert sql_of(db, models, " DuckDB ") == sql_of(db, models)


def test_names_values_and_thresholds(fresh):
    """Identifiers and strings that need quoting, and thresholds that need all 17
    digits (the row at the threshold goes left)."""
    rng = np.random.default_rng(3)
    n = 120
    x = rng.random(n)
    kind = rng.choice(["it's", 'say "hi"', "plain"], n)
    label = np.where((x > 0.5) & (kind != "plain"), "yes'", "no")
    fresh.register("rows", pa.table({"x y": x, "odd-name\"": kind, "the class": label}))
    fresh.execute("CREATE TABLE odd AS SELECT * FROM rows")
    fresh.execute("CREATE TABLE m AS SELECT c45_fit(t, 'the class') AS model FROM odd t")
    model = model_of("test", fresh.sql("SELECT model FROM m").fetchall()[0][0])
    tree = model.tree
    thresholds = [float(t) for t, k in zip(tree.threshold, tree.kind) if k == 0]
    assert thresholds and {a.name for a in model.attributes} == {"x y", 'odd-name"'}
    expr = fresh.sql("SELECT model_to_sql(model) FROM m").fetchall()[0][0]
    for t in thresholds:
        assert repr(t) in expr and t in x
    assert_same(both(fresh, "m", "odd", expr))
    assert_same(sqlite_labels(fresh, "m", "odd", model_sql(model, "sqlite")))


def test_single_leaf(db):
    db.execute("CREATE OR REPLACE TABLE one_leaf AS SELECT c45_fit(t, 'play', "
               "min_leaf := 100) AS model FROM weather_nominal t")
    expr = sql_of(db, "one_leaf")
    assert expr == "'yes'"
    assert_same(both(db, "one_leaf", "weather_nominal", expr))


def chain(depth, classes):
    """A model testing x <= 0, x <= 1, ... in turn: each split's right branch goes on."""
    k = len(classes)
    attr, kind, threshold, value, parent, branch, dist, empty = ([] for _ in range(8))

    def node(a, p, b, d):
        for col, v in zip((attr, kind, threshold, value, parent, branch, dist, empty),
                          (a, 0 if a >= 0 else -1, float(len(attr) // 2), -1, p, b, d, False)):
            col.append(v)
        return len(attr) - 1

    p = b = -1
    for i in range(depth):
        me = node(0, p, b, [[1.0 + (i + j) % k for j in range(k)], [2.0] * k])
        node(-1, me, 0, [[1.0 + (i + j) % k for j in range(k)]])
        p, b = me, 1
    node(-1, p, b, [[1.0] + [2.0] * (k - 1)])
    tree = Tree(attr, kind, threshold, value, parent, branch, dist, empty)
    return C45Model("y", classes, [Attribute("x", NUMERIC)], tree, C45_OPTIONS, 10)


@pytest.mark.parametrize("classes", [("a", "b"), ("a", "b", "c")])
def test_size_is_linear_in_the_tree(fresh, classes):
    sizes = {}
    for depth in (30, 60):
        model = chain(depth, classes)
        expr = model_sql(model, "duckdb")
        sizes[depth] = len(expr)
        fresh.execute(f"CREATE OR REPLACE TABLE m AS SELECT ?::{MODEL_SQL} AS model",
                      [value(model)])
        fresh.execute("CREATE OR REPLACE TABLE xs AS SELECT * FROM (VALUES (-1.0), (0.0), "
                      "(0.5), (7.0), (29.0), (100.0), (NULL), ('nan'::DOUBLE)) v(x)")
        assert_same(both(fresh, "m", "xs", expr))
    assert sizes[60] < 2.2 * sizes[30]


def stump(dist):
    """x <= 0 or not, both leaves with the class counts ``dist``."""
    tree = Tree([0, -1, -1], [0, -1, -1], [0.0, 0.0, 0.0], [-1, -1, -1], [-1, 0, 0],
                [-1, 0, 1], [[dist, dist], [dist], [dist]], [False] * 3)
    classes = [f"c{c}" for c in range(len(dist))]
    return C45Model("y", classes, [Attribute("x", NUMERIC)], tree, C45_OPTIONS, 10)


@pytest.mark.parametrize("dist, want", [
    ([1e6, 1e6 + 2], "c0"),  # c1 ahead by less than 1e-6
    ([1e6, 1e6 + 3], "c1"),
    ([1e6, 1e6 + 2, 1e6 + 4], "c2"),  # c1 is not ahead of c0, c2 is
    ([1e6 + 4, 1e6 + 2, 1e6 + 4], "c0"),
    ([0.0, 0.0, 0.0], "c0"),
])
def test_near_ties_follow_the_running_best(fresh, dist, want):
    """The first class ahead of the best so far by more than 1e-6 wins, also for a
    row with a missing value: with counts 1e6, 1e6 + 2, 1e6 + 4 that is the third
    class, while the first within 1e-6 of the largest probability is the second."""
    model = stump(dist)
    fresh.execute(f"CREATE TABLE m AS SELECT ?::{MODEL_SQL} AS model", [value(model)])
    fresh.execute("CREATE TABLE xs AS SELECT x::DOUBLE AS x FROM (VALUES (-1), (1), (NULL)) v(x)")
    pairs = both(fresh, "m", "xs", model_sql(model, "duckdb"))
    assert_same(pairs)
    assert [want] * 3 == [label for _, label in pairs]
    assert_same(sqlite_labels(fresh, "m", "xs", model_sql(model, "sqlite")))


def near_ties(n, k, seed):
    """``n`` rows of ``k`` class probabilities that lie about 1e-6 apart: a shared
    base plus steps of 1e-6, half of it and a quarter of it, some an ulp or two off,
    and Laplace estimates over a million rows, whose differences are 1e-6 but for
    rounding."""
    rng = np.random.default_rng(seed)
    base = rng.choice([0.1, 0.25, 1 / 3, 0.5, 0.9], (n, 1))
    step = rng.choice([1e-6, 5e-7, 2.5e-7, 1e-6 + 1e-17, 1e-6 - 1e-17], (n, k))
    p = base + rng.integers(-3, 4, (n, k)) * step
    ulps = rng.integers(-2, 3, (n, k)).astype(float)
    p = np.where(rng.random((n, k)) < 0.2, p + ulps * np.spacing(p), p)
    counts = rng.integers(249_990, 250_010, (n // 4, k))
    p[: n // 4] = (counts + 1) / (1_000_000 + k)
    return p


@pytest.mark.parametrize("k, n", [(3, 2000), (13, 2000), (130, 500)])
def test_the_first_best_class_is_the_one_scoring_picks(k, n):
    """``first_best``'s SQL names, in DuckDB and in SQLite, the class ``labels`` picks
    (later classes must beat the best so far by more than 1e-6, in doubles) on rows
    built to fall on that margin; 130 classes nest past SQLite's parser stack unless
    its SELECTs are a WITH list."""
    p = near_ties(n, k, seed=k)
    want = labels(p).tolist()
    rows = [(i, *map(float, r)) for i, r in enumerate(p)]
    columns = ", ".join(f"x{c} DOUBLE" for c in range(k))
    lite, duck = sqlite3.connect(":memory:"), duckdb.connect()
    for name, con in (("sqlite", lite), ("duckdb", duck)):
        d = dialect_of(name)
        query = _select([_as(exp.column(f"x{c}"), f"_dm_p{c}") for c in range(k)])
        tree = first_best(query, k, exp.Literal.number, _greatest_convention(d))
        sql = (with_lists(tree) if name in SHALLOW_PARSERS else tree).sql(dialect=d)
        con.execute(f"CREATE TABLE t (i INTEGER, {columns})")
        con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * (k + 1))})", rows)
        got = [r[0] for r in con.execute(f"SELECT {sql} FROM t ORDER BY i").fetchall()]
        assert_same(list(zip(got, want)))
        con.close()


def test_errors_and_nulls(db):
    models, _ = fit(db, "labor", "default")
    fails(db, "SELECT model_to_sql(42)", "model_to_sql", "expected a model value")
    fails(db, "SELECT model_to_sql({'a': 1})", "model_to_sql", "expected a model value")
    fails(db, f"SELECT model_to_sql(model, 'no_such_sql') FROM {models}", "model_to_sql",
          "unknown dialect 'no_such_sql'", "postgres", "sqlite")
    fails(db, f"SELECT model_to_sql(model, dialect := 'oracel') FROM {models}",
          "unknown dialect 'oracel'")
    fails(db, f"SELECT model_to_sql(model, NULL) FROM {models}", "dialect", "NULL")
    fails(db, f"SELECT model_to_sql(struct_update(model, version := 99)) FROM {models}",
          "model_to_sql", "version 99")
    assert db.sql("SELECT model_to_sql(NULL)").fetchall() == [(None,)]
    iris, _ = fit(db, "iris", "default")
    several = db.sql(f"SELECT model_to_sql(x) FROM (SELECT model AS x FROM {models} "
                     f"UNION ALL SELECT NULL UNION ALL SELECT model FROM {iris})").fetchall()
    assert sorted(several, key=str) == sorted(
        [(sql_of(db, models),), (sql_of(db, iris),), (None,)], key=str)


def test_a_model_too_large_to_write_is_refused(db, monkeypatch):
    from duckmine.udfs import models as model_udfs

    models, _ = fit(db, "soybean", "default")
    size = db.sql(f"SELECT length(model.body) FROM {models}").fetchall()[0][0]
    monkeypatch.setattr(model_udfs, "MAX_SQL_BODY", size - 1)
    fails(db, f"SELECT model_to_sql(model) FROM {models}", "model_to_sql",
          "too large to write as SQL", "score it with predict")
    monkeypatch.setattr(model_udfs, "MAX_SQL_BODY", size)
    assert db.sql(f"SELECT model_to_sql(model) FROM {models}").fetchall()[0][0]
