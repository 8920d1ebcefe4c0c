"""``fit_groups``: one model per group of a relation, its rows fed as a scan's, each
group's model the one ``fit`` gives on that group's rows alone."""

import duckdb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

GROUPS = """
CREATE OR REPLACE TABLE g AS
SELECT i,
       CASE WHEN i % 7 = 6 THEN NULL ELSE (i % 3)::INTEGER END AS grp,
       (hash(i, 1) % 1000) / 100.0 AS x,
       (hash(i, 2) % 1000) / 100.0 AS z,
       -- a text column whose values differ from group to group
       CASE WHEN i % 11 = 3 THEN NULL ELSE 'v' || ((i % 3) * 2 + hash(i, 3) % 3) END AS s,
       CASE WHEN (hash(i, 1) % 1000) / 100.0 + (hash(i, 4) % 300) / 100.0 > 6
            THEN 'hi' ELSE 'lo' END AS y,
       (hash(i, 5) % 1000) / 10.0 AS r
FROM range(600) t(i)
"""


@pytest.fixture
def grouped(fresh):
    fresh.execute(GROUPS)
    return fresh


def alone(con, learner, target, value, options="NULL"):
    """The id of ``fit`` on the rows of group ``value`` alone, in table order."""
    where = "grp IS NULL" if value is None else f"grp = {value}"
    source = f"(SELECT * EXCLUDE (grp) FROM g WHERE {where} ORDER BY i)".replace("'", "''")
    target = "NULL" if target is None else f"'{target}'"
    return con.sql(f"SELECT model.id FROM fit('{learner}', '{source}', {target}, "
                   f"options := {options})").fetchall()[0][0]


@pytest.mark.parametrize("learner, target, options", [
    ("c45", "y", "NULL"),
    ("naive_bayes", "y", "NULL"),
    ("ripper", "y", "NULL"),
    ("m5p", "r", "NULL"),
    ("kmeans", None, "{'k': 2}"),
])
def test_each_groups_model_is_fits_on_the_groups_rows_alone(grouped, learner, target,
                                                               options):
    t = "NULL" if target is None else f"'{target}'"
    rows = grouped.sql(f"SELECT grp, model.id FROM fit_groups('{learner}', 'g', {t}, 'grp', "
                       f"options := {options})").fetchall()
    assert [r[0] for r in rows] == [0, 1, 2, None]  # in the order of their first rows
    for value, model_id in rows:
        assert model_id == alone(grouped, learner, target, value, options)


def test_the_group_column_keeps_its_name_and_type_and_is_no_attribute(grouped):
    rel = grouped.sql("SELECT * FROM fit_groups('c45', 'g', 'y', 'GRP')")
    assert rel.columns == ["grp", "model"] and str(rel.types[0]) == "INTEGER"
    info = grouped.sql("SELECT model_info(model) AS i FROM fit_groups('c45', 'g', 'y', 'grp') "
                       "LIMIT 1").fetchall()[0][0]
    assert "grp" not in [a["name"] for a in info["attributes"]]
    # a text column knows the values of its group alone
    values = {a["name"]: a["values"] for a in info["attributes"]}["s"]
    assert values == ["v0", "v1", "v2"]


def test_models_score_their_own_groups_by_a_join(grouped):
    grouped.execute("CREATE TABLE m AS SELECT * FROM fit_groups('c45', 'g', 'y', 'grp')")
    scored = grouped.sql("SELECT count(*), count(predict(m.model, g)) FROM g JOIN m USING (grp)"
                         ).fetchall()[0]
    assert scored[0] == scored[1] == grouped.sql("SELECT count(*) FROM g WHERE grp IS NOT NULL"
                                                 ).fetchall()[0][0]


def test_groups_of_any_type_and_many_of_them_on_two_threads(fresh):
    fresh.execute("SET threads = 2")
    fresh.execute("CREATE TABLE d AS SELECT DATE '2026-01-01' + (i % 500)::INTEGER AS day, "
                  "(hash(i) % 100) / 10.0 AS x, CASE WHEN hash(i, 9) % 2 = 0 THEN 'a' "
                  "ELSE 'b' END AS y FROM range(200000) t(i)")
    q = "SELECT day, model.id AS id FROM fit_groups('naive_bayes', 'd', 'y', 'day')"
    first = fresh.sql(q).fetchall()
    assert len(first) == 500 and fresh.sql(q).fetchall() == first
    assert str(fresh.sql(q).types[0]) == "DATE"
    day, model_id = first[123]
    source = f"(SELECT x, y FROM d WHERE day = DATE ''{day}'')"
    assert fresh.sql(f"SELECT model.id FROM fit('naive_bayes', '{source}', 'y')"
                     ).fetchall()[0][0] == model_id


def test_bad_calls_are_refused_by_name_and_the_connection_goes_on(grouped):
    cases = [
        ("fit_groups('c45', 'g', 'y', 'nope')", "fit_groups: group_by column 'nope' is not "
         "in the table"),
        ("fit_groups('c45', 'g', 'y', 'y')", "fit_groups: group_by must not be the target"),
        ("fit_groups('c45', 'g', 'y', NULL)", "fit_groups: group_by must name a column"),
        ("fit_groups('c45', 'g', 'y', 42)", "fit_groups: group_by column 42 is not"),
        ("fit_groups('c45', 'g', 'y', 'grp', weight := 'grp')",
         "fit_groups: group_by must not be the weight"),
        ("fit_groups('c45', '(SELECT * FROM g WHERE false)', 'y', 'grp')",
         "c45: the table is empty"),
        ("fit_groups('c45', 'g', 'y', 'grp', options := {'confidence': 0.9})",
         "c45: confidence must be in"),
        ("fit_groups('nope', 'g', 'y', 'grp')", "learner must be one of"),
        # a group whose rows hold one class: the group is named
        ("fit_groups('c45', '(SELECT * FROM g WHERE grp <> 1 OR y = ''hi'')', 'y', 'grp')",
         "fit_groups: group grp = '1': c45: target column 'y' has a single class"),
        ("fit_groups('c45', '(SELECT [i] AS l, y, x FROM g)', 'y', 'l')",
         "fit_groups: group_by column 'l' has type"),
        ("fit_groups('bayes_net', '(SELECT grp, s, y FROM g)', 'y', 'grp', options := "
         "{'ad_tree': (SELECT ad_tree_fit(t) FROM (SELECT s, y FROM g) t)})",
         "fit_groups: ad_tree holds the counts of every row"),
    ]
    for call, message in cases:
        with pytest.raises(duckdb.Error, match=message.replace("(", r"\(").replace(
                "[", r"\[")):
            grouped.sql(f"SELECT * FROM {call}").fetchall()
        assert grouped.sql("SELECT 42").fetchall() == [(42,)]


def test_a_float_groups_as_sql_groups_it(fresh):
    """-0.0 and 0.0 are one group, and every NaN another, as GROUP BY has them."""
    fresh.execute("CREATE TABLE z AS SELECT CASE i % 3 WHEN 0 THEN 0.0::DOUBLE WHEN 1 "
                  "THEN -0.0::DOUBLE ELSE 'nan'::DOUBLE END AS k, i::DOUBLE AS x, "
                  "CASE WHEN i % 4 = 0 THEN 'a' ELSE 'b' END AS y FROM range(48) t(i)")
    rows = fresh.sql("SELECT k, model_info(model).instances FROM fit_groups('c45', 'z', "
                     "'y', 'k')").fetchall()
    assert rows[0] == (0.0, 32) and np.isnan(rows[1][0]) and rows[1][1] == 16


def test_parts_follow_duckdbs_groups_and_recode_text_columns():
    import pyarrow as pa

    from duckmine.udfs import grouped, table

    rows = table.Rows("f", group="g")
    g = pa.array([2, 1, 2, None, 1, 2])
    s = pa.array(["b", "a", "c", "c", None, "b"])
    x = pa.array(np.arange(6.0))
    rows.add(pa.StructArray.from_arrays([g, s, x], ["g", "s", "x"]), pa.array(range(1, 7)))
    data = rows.dataset()
    parts = list(grouped.parts(rows, data, "g", [1, 2, 4], [3, 2, 1]))
    labels = [label for _, label in parts]
    assert labels == ["'2'", "'1'", "NULL"]
    two = parts[0][0]
    assert two.attributes[0].values == ("b", "c")
    assert two.columns[0].tolist() == [0.0, 1.0, 0.0] and two.columns[1].tolist() == [0, 2, 5]
    assert parts[1][0].attributes[0].values == ("a",)
    with pytest.raises(ValueError, match="groups the rows otherwise"):
        list(grouped.parts(rows, data, "g", [1, 2], [3, 3]))


@given(st.data())
@settings(max_examples=25, deadline=None)
def test_random_groups_match_fits_of_each_groups_rows(data):
    """On random small tables (groups of one row, NULL groups, text values that
    some groups lack, a group column of any of three types), every group's model is
    ``fit``'s on its rows alone, and the groups are GROUP BY's, by first row."""
    import duckmine

    n = data.draw(st.integers(1, 30))
    kind = data.draw(st.sampled_from(["INTEGER", "VARCHAR", "DOUBLE"]))
    keys = data.draw(st.lists(st.sampled_from([None, 0, 1, 2]), min_size=n, max_size=n))
    texts = data.draw(st.lists(st.sampled_from([None, "p", "q", "r"]), min_size=n,
                               max_size=n))
    xs = data.draw(st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=n,
                            max_size=n))
    con = duckmine.connect()
    try:
        con.execute(f"CREATE TABLE h (i INTEGER, k {kind}, s VARCHAR, x DOUBLE, y DOUBLE)")
        con.executemany("INSERT INTO h VALUES (?, ?, ?, ?, ?)",
                        [[i, None if k is None else (str(k) if kind == "VARCHAR" else k),
                          t, x, float(i % 4)] for i, (k, t, x) in
                         enumerate(zip(keys, texts, xs))])
        groups = [w[0] for w in con.sql("SELECT k FROM h GROUP BY k ORDER BY min(i)"
                                        ).fetchall()]
        alone = []  # each group's own fit: its model id, or its error
        for value in groups:
            where = "k IS NULL" if value is None else f"k = {value!r}" if kind == "VARCHAR" \
                else f"k = {value}"
            source = f"(SELECT * EXCLUDE (k) FROM h WHERE {where} ORDER BY i)".replace(
                "'", "''")
            try:
                alone.append(con.sql(f"SELECT model.id FROM fit('zero_r', '{source}', 'y')"
                                     ).fetchall()[0][0])
            except duckdb.Error as err:
                alone.append(err)
        query = "SELECT k, model.id FROM fit_groups('zero_r', 'h', 'y', 'k')"
        failed = [e for e in alone if isinstance(e, Exception)]
        if failed:  # the first group that fails alone is named, with its own error
            with pytest.raises(duckdb.Error) as err:
                con.sql(query).fetchall()
            assert "fit_groups: group k = " in str(err.value)
            own = str(failed[0])
            assert own[own.index("zero_r: "):] in str(err.value)
        else:
            assert con.sql(query).fetchall() == list(zip(groups, alone))
    finally:
        con.close()


def test_small_groups_fit_two_at_a_time_as_one_after_another(fresh, monkeypatch):
    """Where every group is small its fits run two at a time: the models are those
    of one group after another, and of several failing groups the first in order
    is the one named, however the two threads met them."""
    from duckmine.algorithms import stop

    fresh.execute("CREATE TABLE s AS SELECT i % 40 AS grp, (hash(i) % 100) / 10.0 AS x, "
                  "CASE WHEN i % 40 IN (17, 18, 30) OR (i // 40) % 2 = 0 THEN 'a' "
                  "ELSE 'b' END AS y FROM range(4000) t(i)")
    q = "SELECT grp, model.id AS id FROM fit_groups('c45', '{}', 'y', 'grp')"
    ok = "(SELECT * FROM s WHERE grp NOT IN (17, 18, 30))"
    together = fresh.sql(q.format(ok)).fetchall()
    for _ in range(5):  # in whatever order the threads take the failing groups
        with pytest.raises(duckdb.Error, match=r"group grp = '17': c45: target column 'y' "
                                               "has a single class"):
            fresh.sql(q.format("s")).fetchall()
    monkeypatch.setattr(stop, "SERIAL_ROWS", 0)  # every group large: one at a time
    assert fresh.sql(q.format(ok)).fetchall() == together and len(together) == 37
