"""Models as values (stored, reopened, one per group, scored in any SELECT), the
tree relation, rules from trees, and the data layer's column kinds."""

import operator

import duckdb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duckmine
from duckmine.algorithms.sqlgen import SPAN

from .conftest import SAMPLES
from .test_model_to_sql import assert_same, sqlite_labels

BOOK_TREE = """J48 pruned tree
------------------

outlook = sunny
|   humidity <= 75: yes (2.0)
|   humidity > 75: no (3.0)
outlook = overcast: yes (4.0)
outlook = rainy
|   windy = TRUE: no (2.0)
|   windy = FALSE: yes (3.0)

Number of Leaves  : \t5

Size of the tree : \t8
"""


@pytest.fixture
def weather(fresh):
    duckmine.read_arff(fresh, SAMPLES / "weather.numeric.arff", "weather")
    return fresh


def test_tree_relation_is_the_books_tree(weather):
    rows = weather.sql("SELECT * FROM c45('weather', 'play')").fetchall()
    assert [r[:8] for r in rows] == [
        (0, None, 0, None, None, None, False, "yes"),
        (1, 0, 1, "outlook", "=", "sunny", False, "no"),
        (2, 1, 2, "humidity", "<=", "75", True, "yes"),
        (3, 1, 2, "humidity", ">", "75", True, "no"),
        (4, 0, 1, "outlook", "=", "overcast", True, "yes"),
        (5, 0, 1, "outlook", "=", "rainy", False, "yes"),
        (6, 5, 2, "windy", "=", "TRUE", True, "no"),
        (7, 5, 2, "windy", "=", "FALSE", True, "yes")]
    root = rows[0]
    assert root[8:] == (14.0, 5.0, {"yes": 9.0, "no": 5.0})


def test_model_survives_the_database(tmp_path):
    path = str(tmp_path / "models.duckdb")
    con = duckmine.connect(path)
    duckmine.read_arff(con, SAMPLES / "weather.numeric.arff", "weather")
    con.execute("CREATE TABLE models AS SELECT c45_fit(t, 'play') AS model FROM weather t")
    con.close()
    con = duckmine.connect(path)
    assert con.sql("SELECT model.format, model.version, model.learner FROM models"
                   ).fetchall() == [("duckmine.model", 1, "c45")]
    assert con.sql("SELECT model_text(model) FROM models").fetchall()[0][0] == BOOK_TREE
    hits = con.sql("SELECT count(*) FILTER (WHERE predict(m.model, w) = w.play::VARCHAR) "
                   "FROM weather w, models m").fetchall()
    assert hits == [(14,)]
    con.close()


def test_one_model_per_group_and_scoring_by_join(weather):
    weather.execute("""
        CREATE TABLE models AS
        SELECT windy, c45_fit(t, 'play', min_leaf := 1) AS model
        FROM weather t GROUP BY windy""")
    texts = dict(weather.sql("SELECT windy, model_text(model) FROM models").fetchall())
    assert set(texts) == {"TRUE", "FALSE"} and texts["TRUE"] != texts["FALSE"]
    # each row scored by its group's model, in WHERE and JOIN
    scored = weather.sql("""
        SELECT count(*) FROM weather w JOIN models m USING (windy)
        WHERE predict(m.model, w) = w.play::VARCHAR""").fetchall()[0][0]
    direct = 0
    for windy in ("TRUE", "FALSE"):
        direct += weather.sql(f"""
            SELECT count(*) FROM weather w,
                 (SELECT c45_fit(t, 'play', min_leaf := 1) AS model FROM weather t
                  WHERE windy = '{windy}') m
            WHERE w.windy = '{windy}' AND predict(m.model, w) = w.play::VARCHAR
            """).fetchall()[0][0]
    assert scored == direct > 0


def test_scoring_ignores_extra_columns_and_spreads_missing_values(weather):
    weather.execute("CREATE TABLE m AS SELECT c45_fit(t, 'play') AS model FROM weather t")
    rows = weather.sql("""
        SELECT predict_proba(m.model, r), predict(m.model, r)
        FROM m, (SELECT NULL::VARCHAR AS outlook, 70.0 AS humidity, 'TRUE' AS windy,
                        'unused' AS extra) r""").fetchall()
    proba, label = rows[0]
    # outlook missing: 5/14 sunny (humidity <= 75: yes), 4/14 overcast (yes),
    # 5/14 rainy (windy: no)
    assert proba["yes"] == pytest.approx(9 / 14) and label == "yes"
    # a value the model never saw counts as missing
    unseen = weather.sql("SELECT predict_proba(m.model, {'outlook': 'foggy', "
                         "'humidity': 70, 'windy': 'TRUE'}) FROM m").fetchall()[0][0]
    assert unseen == proba


def test_scoring_a_whole_table_passes_the_model_once(weather):
    weather.execute("CREATE TABLE m AS SELECT c45_fit(t, 'play') AS model FROM weather t")
    weather.execute("CREATE TABLE big AS SELECT w.* FROM weather w, range(20000)")
    counts = weather.sql("SELECT predict(m.model, b) AS p, count(*) FROM big b, m "
                         "GROUP BY p ORDER BY p").fetchall()
    assert counts == [("no", 5 * 20000), ("yes", 9 * 20000)]


def test_a_trees_scoring_arrays_are_set_after_the_columns_they_are_read_with(weather):
    """Threads share a parsed model, and the first to score a tree makes its
    arrays: a thread that finds the arrays made must find the column map that
    ``proba`` reads them with, so the map is set first (a thread once found the
    arrays without it, in a whole-table scoring on two threads)."""
    from duckmine.algorithms.c45.model import Tree
    from duckmine.udfs import models as udf_models

    value = weather.execute("SELECT c45_fit(t, 'play') FROM weather t").fetchall()[0][0]
    udf_models.forget()
    tree = udf_models.model_of("predict", value).tree
    order = []

    class Watched(Tree):
        def __setattr__(self, key, v):
            order.append(key)
            super().__setattr__(key, v)

    watched = object.__new__(Watched)
    watched.__dict__.update(tree.__dict__)
    watched.arrays()
    assert order.index("_column") < order.index("_arrays")


def test_a_fit_caches_only_small_models(weather, monkeypatch):
    """Scoring in the session of the fit reads no body of a model it fitted, unless
    the body is larger than a fit may keep (FITTED_BYTES): fits alone hold at most
    CACHE_SIZE such models in memory."""
    from duckmine.algorithms import models as core
    from duckmine.udfs import models as udf_models

    parsed = []
    loads = core.loads
    monkeypatch.setattr(core, "loads", lambda *a: parsed.append(a[3]) or loads(*a))
    def scored(leaf):  # a fit, then its model scored in the same query
        return weather.execute(f"WITH m AS (SELECT c45_fit(t, 'play', min_leaf := {leaf}) "
                               "AS model FROM weather t) SELECT predict(m.model, w) FROM "
                               "weather w, m").fetchall()

    assert len(scored(2)) == 14 and parsed == []
    body = weather.execute("SELECT c45_fit(t, 'play', min_leaf := 3) FROM weather t"
                           ).fetchall()[0][0]["body"]
    udf_models.forget()
    monkeypatch.setattr(udf_models, "FITTED_BYTES", len(body) - 1)
    assert len(scored(3)) == 14 and len(parsed) == 1


def test_threads_that_store_and_read_one_model_find_it(weather):
    """DuckDB scores chunks on several threads: while one stores a model it parsed,
    another that was told the model is cached (so its rows came without the body)
    must find it, never a missing key. Thread switches are forced every microsecond
    so that the window, if there is one, is met."""
    import sys
    import threading

    import pyarrow as pa

    from duckmine.udfs import models as udf_models

    v = weather.sql("SELECT c45_fit(t, 'play') FROM weather t").fetchall()[0][0]
    ids = pa.array([udf_models.cache_key(v)] * 3)
    bodies = pa.nulls(3, udf_models.MODEL)
    udf_models.model_of("predict", v)
    errors, done = [], threading.Event()

    def store():
        while not done.is_set():
            udf_models.model_of("predict", {**v})  # found, or parsed and stored again
            udf_models._parse("predict", v)

    def read():
        while not done.is_set():
            try:
                assert not udf_models.model_needed(ids)[0].as_py()
                udf_models._groups("predict", ids, bodies)
            except Exception as err:  # any error is the failure
                errors.append(repr(err))

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=f) for f in (store, read, read)]
        for t in threads:
            t.start()
        done.wait(1)
        done.set()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert errors == []


def test_rows_against_many_models_are_scored_as_one_at_a_time(fresh, monkeypatch):
    """A thousand per-group models in every chunk (a JOIN on the group): each row
    gets its own model's answer, the chunk's columns are read once, models beyond
    the cache's count stay parsed while their bodies fit its bytes, and scoring the
    chunk's models in one call gives what scoring each alone does."""
    from duckmine.algorithms import models as core
    from duckmine.udfs import models as udf_models

    fresh.execute("""CREATE TABLE t AS SELECT (i % 1000)::INTEGER AS grp,
        ((i * 7919) % 1000) / 1000.0 AS a, ((i * 104729) % 997) / 997.0 AS b,
        CASE WHEN i // 1000 % 4 = 0 THEN NULL ELSE ['x', 'y', 'z'][1 + i // 1000 % 3]
        END AS c
        FROM range(10000) r(i)""")
    fresh.execute("CREATE TABLE models AS SELECT grp, kmeans_fit(x, 2) AS model "
                  "FROM (SELECT a, b, c, grp FROM t) x GROUP BY grp")
    udf_models.forget()  # as in another session: every body is read
    monkeypatch.setattr(udf_models, "CACHE_SIZE", 100)
    parsed = []
    loads = core.loads
    monkeypatch.setattr(core, "loads", lambda *a: parsed.append(a[3]) or loads(*a))
    query = ("SELECT x.grp, x.a, x.b, x.c, predict(m.model, x) FROM (SELECT a, b, c, grp "
             "FROM t) x JOIN models m USING (grp) ORDER BY ALL")
    joined = fresh.sql(query).fetchall()
    again = fresh.sql(query).fetchall()
    assert joined == again and len(joined) == 10000
    assert 1000 <= len(parsed) <= 1100  # the first pass read each body (two threads
    # may both read one), the second none
    one = [fresh.sql("SELECT x.grp, x.a, x.b, x.c, predict(m.model, x) FROM (SELECT a, b, "
                     f"c, grp FROM t) x, models m WHERE m.grp = {g} AND x.grp = {g} "
                     "ORDER BY ALL").fetchall() for g in (0, 1, 999)]
    assert [r for r in joined if r[0] in (0, 1, 999)] == [r for rows in one for r in rows]
    # the models of a chunk are scored in one kernel call (k-means' proba_many): row
    # for row what scoring each model on its own rows gives, for models of two and
    # three clusters, an EM model and rows without a model in the same chunks
    fresh.execute("CREATE TABLE mixed AS SELECT grp, CASE WHEN grp % 7 = 0 THEN NULL "
                  "WHEN grp % 5 = 0 THEN kmeans_fit(x, 3) ELSE kmeans_fit(x, 2) END "
                  "AS model FROM (SELECT a, b, c, grp FROM t) x GROUP BY grp UNION ALL "
                  "SELECT 1000, em_fit(x, 2) FROM (SELECT a, b, c FROM t) x")
    scored = ("SELECT x.grp, x.a, x.b, x.c, predict(m.model, x), predict_proba(m.model, x) "
              "FROM (SELECT a, b, c, grp FROM t UNION ALL SELECT a, b, c, 1000 FROM t "
              "WHERE grp < 50) x JOIN mixed m USING (grp) ORDER BY ALL")
    together = fresh.sql(scored).fetchall()
    assert len({len(r[5]) for r in together if r[5] is not None}) == 2
    assert sum(r[4] is None for r in together) == 1430  # 143 groups of no model
    assert [r[:5] for r in together if r[0] % 7 and r[0] % 5 and r[0] < 1000] == [
        r for r in joined if r[0] % 7 and r[0] % 5]
    udf_models.forget()
    monkeypatch.setattr(udf_models.Scorer, "batch", property(lambda self: -1))
    assert fresh.sql(query).fetchall() == joined
    assert fresh.sql(scored).fetchall() == together


def test_an_infinite_value_is_refused_only_where_a_model_reads_it(fresh):
    fresh.execute("CREATE TABLE t AS SELECT i::DOUBLE AS a, i % 3 AS b FROM range(40) r(i)")
    fresh.execute("CREATE TABLE models AS SELECT 0 AS grp, kmeans_fit(x, 2) AS model "
                  "FROM (SELECT b FROM t) x UNION ALL "
                  "SELECT 1, kmeans_fit(x, 2) FROM (SELECT a, b FROM t) x")

    def score(rows):
        return fresh.sql(f"SELECT x.grp, predict(m.model, x) FROM ({rows}) x "
                         "JOIN models m USING (grp) ORDER BY x.grp").fetchall()

    # model 0 does not read a: its row's infinite a is no concern of it
    got = score("SELECT 0 AS grp, 'inf'::DOUBLE AS a, 1 AS b UNION ALL SELECT 1, 2.0, 1")
    assert [g for g, _ in got] == [0, 1] and all(p is not None for _, p in got)
    with pytest.raises(duckdb.Error, match="column 'a' holds an infinite value"):
        score("SELECT 0 AS grp, 2.0 AS a, 1 AS b UNION ALL SELECT 1, 'inf'::DOUBLE, 1")
    assert fresh.sql("SELECT 1").fetchall() == [(1,)]


def test_data_layer_column_kinds(fresh):
    fresh.execute("""CREATE TABLE t AS SELECT
        (i % 3)::VARCHAR || 'v' AS s, i % 2 = 0 AS b, (i % 5)::DECIMAL(4, 1) AS d,
        (i % 7)::TINYINT AS k, CASE WHEN i % 4 = 0 THEN 'nan'::DOUBLE ELSE i END AS x,
        CASE WHEN i % 3 = 0 THEN 'a' ELSE 'b' END AS y FROM range(60) r(i)""")
    rows = fresh.sql("SELECT * FROM c45('t', 'y', min_leaf := 1)").fetchall()
    assert rows[1][3] == "s" and rows[1][5] == "0v"  # VARCHAR values sorted
    fresh.execute("CREATE TABLE m AS SELECT c45_fit(t, 'y') AS model FROM t")
    assert fresh.sql("SELECT count(*) FILTER (WHERE predict(m.model, t) = t.y) "
                     "FROM t, m").fetchall() == [(60,)]


def test_weights_are_instance_weights(weather):
    # doubling every row's weight changes counts, not the tree's shape
    text = weather.sql("SELECT model_text(c45_fit(t, 'play', weight := 'w')) FROM "
                       "(SELECT *, 2.0 AS w FROM weather) t").fetchall()[0][0]
    assert "humidity <= 75: yes (4.0)" in text and "outlook = overcast: yes (8.0)" in text


def test_rules_from_the_book_tree(weather):
    rules = weather.sql("SELECT conditions, class, coverage, errors FROM "
                        "c45_rules('weather', 'play')").fetchall()
    assert (["outlook = overcast"], "yes", 4.0, 0.0) in rules
    assert (["humidity <= 75"], "yes", 5.0, 1.0) in rules


OPS = {"=": operator.eq, "!=": operator.ne, "<=": operator.le, ">": operator.gt}


def meets(row, attr, op, value):
    col = {"n": 0, "x": 1}[attr]
    return OPS[op](row[col], value if attr == "n" else float(value))


def brute_rule(rows, conditions, cls):
    covered = [r for r in rows if all(meets(r, *c) for c in conditions)]
    return len(covered), sum(r[-1] != cls for r in covered)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 9),
                          st.sampled_from(["p", "q"])), min_size=12, max_size=60))
def test_rules_cover_what_they_say(rows):
    con = duckmine.connect()
    try:
        con.execute("CREATE TABLE t (n VARCHAR, x INTEGER, y VARCHAR)")
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        if len({r[2] for r in rows}) < 2:
            return
        rules = con.sql("SELECT conditions, class, coverage, errors, error_estimate "
                        "FROM c45_rules('t', 'y', min_leaf := 1)").fetchall()
        seen = set()
        for conditions, cls, coverage, errors, estimate in rules:
            tests = [c.split(" ") for c in conditions]
            assert (coverage, errors) == brute_rule(rows, tests, cls)
            key = (frozenset(conditions), cls)
            assert key not in seen
            seen.add(key)
            assert 0 <= estimate <= 1 and np.isfinite(estimate)
    finally:
        con.close()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 9),
                          st.floats(0, 1, allow_nan=False), st.sampled_from(["p", "q", "r"])),
                min_size=10, max_size=80),
       st.booleans())
def test_node_counts_are_the_rows_that_reach_them(rows, pruned):
    """Without missing values every row follows one path: each node's weight and
    class distribution are counts of the rows meeting the tests above it."""
    con = duckmine.connect()
    try:
        con.execute("CREATE TABLE t (n VARCHAR, x INTEGER, f DOUBLE, y VARCHAR)")
        con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
        if len({r[3] for r in rows}) < 2:
            return
        nodes = con.sql(f"SELECT node, parent, attribute, operator, value, weight, "
                        f"distribution FROM c45('t', 'y', min_leaf := 1, "
                        f"pruned := {str(pruned).lower()})").fetchall()
        column = {"n": 0, "x": 1, "f": 2}
        # J48 tests a number against its threshold within 1e-6 (x - t < 1e-6)
        tests = {**OPS, "<=": lambda a, b: a - b < 1e-6,
                 ">": lambda a, b: not a - b < 1e-6}
        reach = {}
        for node, parent, attr, op, value, weight, dist in nodes:
            if parent is None:
                reach[node] = list(rows)
            else:
                v = value if attr == "n" else float(value)
                reach[node] = [r for r in reach[parent] if tests[op](r[column[attr]], v)]
            assert weight == len(reach[node])
            assert dist == {c: float(sum(r[3] == c for r in reach[node]))
                            for c in ("p", "q", "r") if c in dist}
    finally:
        con.close()


def test_deep_trees(fresh):
    """A staircase target grows a chain hundreds of levels deep: printing, scoring
    and export walk it without recursion limits."""
    fresh.execute("CREATE TABLE t AS SELECT i::DOUBLE AS x, CASE WHEN (i // 50) % 2 = 0 "
                  "THEN 'a' ELSE 'b' END AS y FROM range(20000) r(i)")
    fresh.execute("CREATE TABLE m AS SELECT c45_fit(t, 'y', pruned := false) AS model "
                  "FROM t t")
    text = fresh.sql("SELECT model_text(model) FROM m").fetchall()[0][0]
    assert max(line.count("|") for line in text.splitlines()) > 300
    assert fresh.sql("SELECT count(*) FILTER (WHERE predict(m.model, t) = t.y) FROM t, m"
                     ).fetchall() == [(20000,)]
    sql = fresh.sql("SELECT model_to_sql(model) FROM m").fetchall()[0][0]
    fresh.execute("SET max_expression_depth TO 100000")  # DuckDB's parser limit
    assert fresh.sql(f"SELECT count(*) FILTER (WHERE ({sql}) = y) FROM t").fetchall() == \
        [(20000,)]
    # three classes, and missing values spread down a hundred levels of sums
    fresh.execute("CREATE TABLE t3 AS SELECT CASE WHEN i % 13 = 5 THEN NULL WHEN i % 17 = 3 "
                  "THEN 'NaN'::DOUBLE ELSE i::DOUBLE END AS x, CASE WHEN i % 11 < 2 THEN "
                  "i::DOUBLE END AS z, ['a', 'b', 'c'][1 + (i // 40) % 3] AS y "
                  "FROM range(4000) r(i)")
    fresh.execute("CREATE TABLE m3 AS SELECT c45_fit(t, 'y', pruned := false) AS model "
                  "FROM t3 t")
    text = fresh.sql("SELECT model_text(model) FROM m3").fetchall()[0][0]
    assert max(line.count("|") for line in text.splitlines()) > 60
    sql = fresh.sql("SELECT model_to_sql(model) FROM m3").fetchall()[0][0]
    assert fresh.sql(f"SELECT count(*) FILTER (WHERE ({sql}) = predict(m.model, t)), "
                     f"count(*) FILTER (WHERE x IS NULL OR isnan(x)) FROM t3 t, m3 m"
                     ).fetchall() == [(4000, 526)]
    # SQLite's parser, which overflows on a CASE nested 17 deep, reads it too
    sql = fresh.sql("SELECT model_to_sql(model, 'sqlite') FROM m3").fetchall()[0][0]
    assert_same(sqlite_labels(fresh, "m3", "t3", sql))


@pytest.mark.parametrize("learner", ["rep_tree", "cart"])
def test_rep_tree_and_cart_thousands_deep(fresh, learner):
    """Labels that alternate row by row grow a chain deeper than Python's recursion
    limit: it fits, prints, scores and draws. The SQL of a chain 148 deep spans it
    ``SPAN`` depths a level, in DuckDB (without LIMIT 1) and SQLite, on rows whose
    missing values are spread down the whole chain."""
    options = "{'pruned': false, 'min_leaf': 1}"
    fresh.execute("CREATE TABLE t AS SELECT i::DOUBLE AS x, ['a', 'b'][1 + i % 2] AS y "
                  "FROM range(1500) r(i)")
    fresh.execute(f"CREATE TABLE m AS SELECT model FROM fit('{learner}', 't', 'y', "
                  f"options := {options})")
    text = fresh.execute("SELECT model_text(model) FROM m").fetchall()[0][0]
    assert max(line.count("|") for line in text.splitlines()) == 1498
    assert fresh.execute("SELECT count(*) FILTER (WHERE predict(m.model, t) = t.y), "
                         "count(*) FILTER (WHERE predict_proba(m.model, t)[t.y] = 1) "
                         "FROM t, m").fetchall() == [(1500, 1500)]
    assert fresh.execute("SELECT model_svg(model) LIKE '%<svg%' FROM m").fetchall() == [(True,)]
    fresh.execute("CREATE TABLE s AS SELECT CASE WHEN i % 7 <> 3 THEN i::DOUBLE END AS x, "
                  "['a', 'b'][1 + i % 2] AS y FROM range(150) r(i)")
    fresh.execute(f"CREATE TABLE n AS SELECT model FROM fit('{learner}', 's', 'y', "
                  f"options := {options})")
    sql = fresh.execute("SELECT model_to_sql(model) FROM n").fetchall()[0][0]
    assert "LIMIT" not in sql and sql.count("SELECT") > 148 // SPAN
    assert_same(fresh.execute(f"SELECT {sql}, predict(n.model, s) FROM s, n "
                              f"ORDER BY s.rowid").fetchall())
    sql = fresh.execute("SELECT model_to_sql(model, 'sqlite') FROM n").fetchall()[0][0]
    assert "LIMIT 1" in sql
    assert_same(sqlite_labels(fresh, "n", "s", sql))
