"""AD-trees: the book's example (Figure 6.21: the weather data reduced to
humidity, windy and play), counts against brute-force GROUP BY and numpy
counters on random tables, and bad input."""

import itertools
import os

import duckdb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duckmine
from duckmine.algorithms.adtree.tree import ADTree, ADTreeModel, scan_table
from duckmine.algorithms.dataset import Attribute
from duckmine.udfs.models import MODEL_SQL, model_of

from .conftest import SAMPLES, fails

SETTINGS = settings(max_examples=50, deadline=None)


@pytest.fixture(scope="module")
def db():
    c = duckmine.connect()
    duckmine.read_arff(c, SAMPLES / "weather.nominal.arff", "weather")
    c.execute("CREATE TABLE tree AS SELECT ad_tree_fit(w) AS t "
              "FROM (SELECT humidity, windy, play FROM weather) w")
    yield c
    c.close()


def test_the_books_tree_holds_its_eight_counts(db):
    body = db.sql("SELECT t FROM tree").fetchall()[0][0]
    tree = model_of("test", body).tree
    # root 14; humidity=normal 7, with windy=true 3 (play=no 1), play=no 1;
    # windy=true 6, with play=no 3; play=no 5
    assert sorted(tree.count.tolist()) == sorted([14, 7, 3, 1, 1, 6, 3, 5])
    text = db.sql("SELECT model_text(t) FROM tree").fetchall()[0][0]
    assert "8 AD nodes" in text


@pytest.mark.parametrize("conditions,count", [
    ("{'humidity': 'high', 'windy': 'TRUE', 'play': 'no'}", 2),
    ("{'humidity': 'high', 'windy': 'FALSE', 'play': 'no'}", 2),
    ("{'humidity': 'high'}", 7),
    ("MAP {'play': 'yes', 'windy': 'FALSE'}", 6),
    ("{'humidity': 'normal', 'windy': 'TRUE', 'play': 'yes'}", 2),
    ("MAP {}::MAP(VARCHAR, VARCHAR)", 14),
])
def test_counts_derived_by_subtraction(db, conditions, count):
    assert db.sql(f"SELECT ad_count(t, {conditions}) FROM tree").fetchall() == [(count,)]


def test_contingency_table_with_zero_counts(db):
    rows = db.sql("SELECT combination, count FROM ad_counts('weather', "
                  "['outlook', 'humidity', 'play'])").fetchall()
    assert len(rows) == 3 * 2 * 2
    got = {tuple(c.values()): n for c, n in rows}
    assert got[("overcast", "high", "no")] == 0
    assert got[("sunny", "high", "no")] == 3
    assert sum(got.values()) == 14


@st.composite
def tables(draw):
    n = draw(st.integers(0, 40))
    p = draw(st.integers(1, 4))
    cards = [draw(st.integers(1, 4)) for _ in range(p)]
    cols = [draw(st.lists(st.one_of(st.none(), st.integers(0, k - 1)), min_size=n,
                          max_size=n)) for k in cards]
    return cards, cols


def _con(cards, cols):
    c = duckmine.connect()
    names = [f"a{j}" for j in range(len(cards))]
    rows = list(zip(*cols)) if cols and cols[0] else []
    c.execute("CREATE TABLE r (" + ", ".join(f"{x} VARCHAR" for x in names) + ")")
    if rows:
        c.executemany(f"INSERT INTO r VALUES ({', '.join('?' * len(names))})",
                      [[None if v is None else f"v{v}" for v in row] for row in rows])
    return c, names


@SETTINGS
@given(tables(), st.integers(0, 6), st.data())
def test_every_count_equals_a_group_by(table, cutoff, data):
    cards, cols = table
    if not cols[0] or all(v is None for col in cols for v in col):
        return
    c, names = _con(cards, cols)
    c.execute(f"CREATE TABLE tr AS SELECT ad_tree_fit(r, leaf_list_cutoff := {cutoff}) t "
              "FROM r")
    values = {x: sorted({f"v{v}" for v in col if v is not None})
              for x, col in zip(names, cols)}
    for _ in range(5):
        attrs = data.draw(st.lists(st.sampled_from([x for x in names if values[x]]),
                                   unique=True, max_size=len(names)))
        cond = {x: data.draw(st.sampled_from(values[x])) for x in attrs}
        where = " AND ".join(f"{x} = '{v}'" for x, v in cond.items()) or "true"
        literal = "{" + ", ".join(f"'{x}': '{v}'" for x, v in cond.items()) + "}" \
            if cond else "MAP {}::MAP(VARCHAR, VARCHAR)"
        expected = c.sql(f"SELECT count(*) FROM r WHERE {where}").fetchall()[0][0]
        assert c.sql(f"SELECT ad_count(t, {literal}) FROM tr").fetchall()[0][0] == expected
    picked = [x for x in names if values[x]]
    if picked:
        cells = {tuple(k.values()): n for k, n in c.sql(
            f"SELECT * FROM ad_counts('r', {picked}, leaf_list_cutoff := {cutoff})")
            .fetchall()}
        assert len(cells) == np.prod([len(values[x]) for x in picked])
        groups = dict(((*k,), n) for *k, n in c.sql(
            f"SELECT {', '.join(picked)}, count(*) FROM r "
            f"WHERE {' AND '.join(f'{x} IS NOT NULL' for x in picked)} GROUP BY ALL")
            .fetchall())
        for combo in itertools.product(*(values[x] for x in picked)):
            assert cells[combo] == groups.get(combo, 0)
    c.close()


@SETTINGS
@given(st.integers(0, 300), st.integers(1, 6), st.integers(0, 20), st.integers(0, 2**31),
       st.sampled_from([None, 1, 2, 3]))
def test_tables_equal_scans(n, p, cutoff, seed, depth):
    rng = np.random.default_rng(seed)
    card = rng.integers(2, 6, p)  # the last code of each attribute is missing
    codes = np.stack([rng.integers(0, k, n) for k in card], axis=1) if n else \
        np.zeros((0, p), np.int64)
    tree = ADTree.of(codes, card, cutoff, max_depth=depth)
    for _ in range(4):
        m = int(rng.integers(1, min(p, depth or p) + 1))
        attrs = rng.permutation(p)[:m]
        fixed = np.where(rng.random(m) < 0.4, -1, [rng.integers(0, card[a] - 1)
                                                    for a in attrs])
        np.testing.assert_array_equal(tree.table(attrs, fixed),
                                      scan_table(codes, card, attrs, fixed))
    attributes = [Attribute(f"a{j}", "nominal", tuple(f"v{v}" for v in range(k - 1)))
                  for j, k in enumerate(card)]
    if n:
        ADTreeModel(attributes, tree).validate()  # a tree as built passes the checks


@pytest.mark.parametrize("sql,fragments", [
    ("SELECT ad_count(t, {'humid': 'high'}) FROM tree", ["'humid'", "humidity"]),
    ("SELECT ad_count(t, {'humidity': 'hi'}) FROM tree", ["'hi'", "high, normal"]),
    ("SELECT ad_count(t, {'humidity': NULL}) FROM tree", ["NULL", "humidity"]),
    ("SELECT ad_count(t, 42) FROM tree", ["conditions"]),
    ("SELECT ad_tree_fit(w, leaf_list_cutoff := -1) FROM weather w", ["leaf_list_cutoff"]),
    ("SELECT ad_tree_fit(w) FROM (SELECT 1.5 AS x) w", ["'x'", "numeric"]),
    ("SELECT ad_tree_fit(w) FROM (SELECT * FROM weather WHERE false) w", ["empty"]),
    ("SELECT * FROM ad_counts('weather', ['nope'])", ["'nope'", "not in the table"]),
    ("SELECT * FROM ad_counts('weather', [])", ["at least one"]),
    ("SELECT * FROM ad_counts('no_such_table', ['x'])", ["no_such_table"]),
    ("SELECT predict(t, w) FROM tree, weather w", ["a ad_tree model", "does not offer predict"]),
    ("SELECT ad_count(bayes_net_fit(w, 'play'), {'humidity': 'high'}) FROM weather w",
     ["ad_tree", "bayes_net"]),
])
def test_bad_input_gets_a_clear_error(db, sql, fragments):
    fails(db, sql, *fragments)


def test_a_tree_over_the_memory_limit_asks_for_a_larger_cutoff(db):
    db.execute("SET VARIABLE duckmine_ad_tree_max_mb = 0.0001")
    try:
        fails(db, "SELECT ad_tree_fit(w) FROM weather w", "MiB", "leaf_list_cutoff")
        fails(db, "SELECT * FROM ad_counts('weather', ['outlook', 'play'])",
              "larger leaf_list_cutoff")
    finally:
        db.execute("RESET VARIABLE duckmine_ad_tree_max_mb")
    assert db.sql("SELECT count(*) FROM ad_counts('weather', ['outlook'])").fetchall() \
        == [(3,)]


def test_a_depth_past_the_columns_is_every_depth(db):
    got = db.sql("SELECT ad_count(ad_tree_fit(w, max_depth := 10), {'humidity': 'high', "
                 "'play': 'no'}) FROM (SELECT humidity, windy, play FROM weather) w")
    assert got.fetchall() == [(4,)]


def test_a_tree_for_short_queries(db):
    db.execute("CREATE TABLE shallow AS SELECT ad_tree_fit(w, max_depth := 2) AS t "
               "FROM weather w")
    got = db.sql("""SELECT ad_count(t, {'outlook': 'sunny', 'play': 'no'}),
                           ad_count(t, {'humidity': 'high'}) FROM shallow""").fetchall()
    assert got == [(3, 7)]
    assert "max_depth=2" in db.sql("SELECT model_text(t) FROM shallow").fetchall()[0][0]
    fails(db, "SELECT ad_count(t, {'outlook': 'sunny', 'play': 'no', 'windy': 'TRUE'}) "
          "FROM shallow", "at most 2 conditions", "max_depth")
    fails(db, "SELECT ad_tree_fit(w, max_depth := 0) FROM weather w", "max_depth")


def test_a_leaf_list_tree_gives_the_same_counts():
    con = duckdb.connect()
    duckmine.load(con)
    con.execute("CREATE TABLE r AS SELECT (i % 3)::VARCHAR a, (i % 5)::VARCHAR b, "
                "(i % 7 = 0)::VARCHAR c FROM range(1000) t(i)")
    full, listed = con.sql("""SELECT ad_count(ad_tree_fit(r), {'a': '1', 'c': 'true'}),
                                     ad_count(ad_tree_fit(r, leaf_list_cutoff := 500),
                                              {'a': '1', 'c': 'true'})
                              FROM r""").fetchall()[0]
    assert full == listed == sum(1 for i in range(1000) if i % 3 == 1 and i % 7 == 0)


@pytest.mark.parametrize("cutoff,depth", [(0, None), (0, 3), (50, None)])
def test_a_tree_built_on_several_threads_counts_as_scans(cutoff, depth):
    rng = np.random.default_rng(5)
    n, p = 60_000, 8  # above SPLIT_ROWS: the root's subtrees are built in parallel
    card = rng.integers(2, 6, p)
    codes = np.stack([np.minimum(rng.geometric(0.45, n) - 1, k - 1) for k in card], axis=1)
    tree = ADTree.of(codes, card, cutoff, max_depth=depth)
    for _ in range(30):
        m = int(rng.integers(1, (depth or p) + 1))
        attrs = rng.permutation(p)[:m]
        np.testing.assert_array_equal(tree.table(attrs), scan_table(codes, card, attrs))


def _forged_tree(value, field, change):
    """``value`` (an ad_tree model value) with one of its tree's arrays changed by
    ``change`` and its id made again, as a forger would."""
    import base64
    import json

    from duckmine.algorithms.models import digest

    body = json.loads(value["body"])
    packed = body[field]
    a = np.frombuffer(base64.b64decode(packed["data"]), np.dtype(packed["dtype"])).copy()
    change(a)
    packed["data"] = base64.b64encode(a.tobytes()).decode()
    text = json.dumps(body, separators=(",", ":"))
    return {**value, "body": text, "id": digest("ad_tree", value["version"], text)}


@pytest.mark.parametrize("cutoff", [0, 3])
@pytest.mark.parametrize("field,change", [
    ("child", lambda a: a.__setitem__(a >= 0, 10**6)),
    ("child", lambda a: a.__setitem__(a >= 0, 0)),  # back to the root: a cycle
    ("vary", lambda a: a.__setitem__(a >= 0, 10**6)),
    ("off", lambda a: a.__setitem__(slice(None), -5)),
    ("mcv", lambda a: a.__setitem__(slice(None), 99)),
    ("start", lambda a: a.__setitem__(slice(None), 0)),
    ("count", lambda a: a.__setitem__(slice(1, None), 10**6)),
    ("lstart", lambda a: a.__setitem__(a >= 0, 10**6)),
    ("rows", lambda a: a.__setitem__(slice(None), 10**6)),
])
def test_a_forged_tree_is_refused_not_walked(db, cutoff, field, change):
    """A tree whose arrays were changed and its id made again is refused before any
    count walks it: never a crash, a hang or a count read outside its arrays."""
    value = db.execute(f"SELECT ad_tree_fit(w, leaf_list_cutoff := {cutoff}) "
                       "FROM weather w").fetchall()[0][0]
    forged = _forged_tree(value, field, change)
    if forged["body"] == value["body"]:
        return  # nothing of that kind in this tree (no leaf lists at cutoff 0)
    db.execute("CREATE OR REPLACE TEMP TABLE forged AS SELECT $v::" + MODEL_SQL + " AS t",
               {"v": forged})
    fails(db, "SELECT ad_count(t, {'outlook': 'sunny', 'play': 'no'}) FROM forged",
          "ad_count: the model value is corrupt")
    fails(db, "SELECT bayes_net_fit(w, 'play', ad_tree := (SELECT t FROM forged)) "
          "FROM weather w", "bayes_net: the model value is corrupt")


@settings(max_examples=int(os.environ.get("DUCKMINE_FUZZ", "30")), deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 4), st.sampled_from(ADTree.ARRAYS),
       st.integers(-3, 3), st.floats(0, 1))
def test_a_tree_with_one_index_changed_is_refused_or_walked_safely(seed, cutoff, field,
                                                                   shift, where):
    """One entry of one array of a tree moved: ``validate`` refuses it, or every
    table of up to ``max_depth`` attributes is counted inside the arrays (a walk
    outside them would crash this process), each count whole and at least zero or
    the table refused."""
    rng = np.random.default_rng(seed)
    p = int(rng.integers(2, 5))
    card = rng.integers(2, 5, p)
    codes = np.stack([rng.integers(0, k, 40) for k in card], axis=1)
    tree = ADTree.of(codes, card, cutoff)
    a = getattr(tree, field)
    if len(a) == 0:
        return
    a[int(where * (len(a) - 1))] += shift if shift else len(a)
    model = ADTreeModel([Attribute(f"a{j}", "nominal", tuple(f"v{v}" for v in range(k - 1)))
                         for j, k in enumerate(card)], tree)
    try:
        model.validate()
    except ValueError:
        return
    for m in range(1, tree.max_depth + 1):
        for attrs in itertools.combinations(range(p), m):
            try:
                assert (tree.table(list(attrs), missing=[True] * m) >= 0).all()
            except ValueError as err:
                assert "contradict" in str(err)


def test_a_tree_whose_counts_contradict_is_refused_where_they_do(db):
    """Counts edited within the structure's bounds pass ``validate``; a count that
    comes out below zero then refuses the tree rather than answering it."""
    value = db.execute("SELECT ad_tree_fit(w) FROM weather w").fetchall()[0][0]
    forged = _forged_tree(value, "count", lambda a: a.__setitem__(0, a[0] - 3))
    db.execute("CREATE OR REPLACE TEMP TABLE forged AS SELECT $v::" + MODEL_SQL + " AS t",
               {"v": forged})
    fails(db, "SELECT ad_count(t, {'outlook': o, 'temperature': h}) FROM forged, "
          "(SELECT DISTINCT outlook::VARCHAR AS o FROM weather), "
          "(SELECT DISTINCT temperature::VARCHAR AS h FROM weather)",
          "ad_count: the model value is corrupt: its tree's counts contradict")
