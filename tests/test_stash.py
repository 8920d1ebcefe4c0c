"""The aggregate forms' rows, held once for their groups (``udfs/stash.py``): each
group's model is the one its own list of rows gives (``table.dataset``: the rows
put in an order of their values, text columns knowing the group's values alone),
whatever the query around the aggregate, and no rows are left behind."""

import gc

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duckmine
from duckmine.algorithms import contract
from duckmine.udfs import stash
from duckmine.udfs.models import value
from duckmine.udfs.table import dataset

from .conftest import fails
from .test_fit_groups import GROUPS


def listed(con, learner, target, where="true", options=None, weight=None, group="grp",
           source="g"):
    """Each group's model id, fitted on the group's own list of rows as DuckDB
    gathers it (the reference: the list read whole, put in value order)."""
    decl = contract.learners()[learner]
    opts = decl.options(learner, options or {})
    out = {}
    lists = con.sql(f"SELECT {group}, list(t) FROM {source} t WHERE {where} "
                    "GROUP BY ALL").to_arrow_table()
    for key, rows in zip(lists.column(0).to_pylist(), lists.column(1).combine_chunks()):
        data = dataset(rows.values, learner, None, weight)
        out[key] = value(decl.train(learner, data, target, opts, {}))["id"]
    return out


def ids(con, sql):
    return dict(con.execute(sql).fetchall())


def drained(con):
    """Whether no rows of ``con`` are held."""
    key = con.execute("SELECT getvariable('duckmine_connection')").fetchall()[0][0]
    return not any(k[0] == key for k in stash._STORES)


@pytest.fixture
def grouped(fresh):
    fresh.execute(GROUPS)
    return fresh


@pytest.mark.parametrize("learner, target", [("c45", "y"), ("naive_bayes", "y"),
                                             ("m5p", "r"), ("kmeans", None)])
def test_each_group_gets_the_model_of_its_own_list(grouped, learner, target):
    t = ", 2" if target is None else f", '{target}'"
    # (k-means refuses the NULL group's column grp: it has only missing values)
    where = "grp IS NOT NULL" if target is None else "true"
    got = ids(grouped, f"SELECT grp, {learner}_fit(t{t}).id FROM g t WHERE {where} "
                       "GROUP BY grp")
    options = {"k": 2} if target is None else None
    assert got == listed(grouped, learner, target, where, options=options)
    assert drained(grouped)


def test_the_whole_table_as_one_group(grouped):
    got = grouped.execute("SELECT c45_fit(t, 'y').id FROM g t").fetchall()[0][0]
    assert got == listed(grouped, "c45", "y", group="0 AS one")[0]
    assert drained(grouped)


def test_two_fits_of_one_learner_in_one_query_each_get_their_rows(grouped):
    got = grouped.execute("SELECT grp, c45_fit(t, 'y').id, c45_fit(t, 'y', "
                          "min_leaf := 20).id FROM g t GROUP BY grp").fetchall()
    plain = listed(grouped, "c45", "y")
    pruned = listed(grouped, "c45", "y", options={"min_leaf": 20})
    assert {r[0]: r[1] for r in got} == plain and {r[0]: r[2] for r in got} == pruned
    assert drained(grouped)


def test_a_fit_a_macro_names_twice_takes_its_rows_once(grouped, monkeypatch):
    """ad_count passes its model argument three times (its key, whether its value is
    needed, the value): the fit runs once, the others get the model it gave."""
    taken = []
    take = stash.taken
    monkeypatch.setattr(stash, "taken", lambda *a, **k: taken.append(1) or take(*a, **k))
    got = grouped.execute("SELECT ad_count(ad_tree_fit(t), {'y': 'hi'}) "
                          "FROM (SELECT y, s FROM g) t").fetchall()[0][0]
    assert got == grouped.execute("SELECT count(*) FROM g WHERE y = 'hi'").fetchall()[0][0]
    assert len(taken) == 1 and drained(grouped)


def test_an_aggregate_in_having_in_a_subquery_and_correlated(grouped):
    plain = listed(grouped, "naive_bayes", "y")
    having = ids(grouped, "SELECT grp, naive_bayes_fit(t, 'y').id FROM g t GROUP BY grp "
                          "HAVING naive_bayes_fit(t, 'y') IS NOT NULL")
    assert having == plain
    correlated = ids(grouped, "SELECT o.grp, (SELECT naive_bayes_fit(t, 'y').id FROM g t "
                              "WHERE t.grp = o.grp) FROM (SELECT DISTINCT grp FROM g "
                              "WHERE grp IS NOT NULL) o")
    assert correlated == {k: v for k, v in plain.items() if k is not None}
    assert drained(grouped)


def test_a_filtered_aggregate_holds_only_its_rows(grouped):
    got = ids(grouped, "SELECT grp, c45_fit(t, 'y').id FROM g t WHERE x > 3 GROUP BY grp")
    assert got == listed(grouped, "c45", "y", where="x > 3")


def test_a_row_in_two_groups_is_refused_by_name(grouped):
    fails(grouped, "SELECT grp, c45_fit(t, 'y') FROM g t GROUP BY ROLLUP (grp)",
          "c45: the rows of this group are gone", "ROLLUP", "UNION ALL")
    # the rows the failed query left are dropped by the next
    assert grouped.execute("SELECT count(*) FROM (SELECT grp, c45_fit(t, 'y') FROM g t "
                           "GROUP BY grp)").fetchall()[0][0] == 4
    assert drained(grouped)


def test_a_failed_querys_rows_go_with_its_connections_next_query(grouped):
    fails(grouped, "SELECT grp, naive_bayes_fit(t, 'y') FROM g t "
                   "WHERE grp IS NOT NULL OR y = 'hi' GROUP BY grp",
          "naive_bayes: target column 'y' has a single class")
    assert not drained(grouped)
    grouped.execute("SELECT c45_fit(t, 'y') FROM g t").fetchall()
    assert drained(grouped)


def test_a_connection_that_goes_takes_its_rows_with_it():
    con = duckmine.connect()
    con.execute(GROUPS)
    fails(con, "SELECT grp, naive_bayes_fit(t, 'y') FROM g t "
               "WHERE grp IS NOT NULL OR y = 'hi' GROUP BY grp", "single class")
    assert not drained(con)
    held = [k for k in stash._STORES if k[0] == con.execute(
        "SELECT getvariable('duckmine_connection')").fetchall()[0][0]]
    con.close()
    del con
    gc.collect()
    assert held and not any(k in stash._STORES for k in held)


def test_text_values_are_counted_per_group(grouped):
    # 's' holds seven values in all and three in each group but the NULL one
    grouped.execute("SET VARIABLE duckmine_max_nominal_values = 3")
    assert len(ids(grouped, "SELECT grp, c45_fit(t, 'y').id FROM g t WHERE grp IS NOT NULL "
                            "GROUP BY grp")) == 3
    fails(grouped, "SELECT c45_fit(t, 'y') FROM g t",
          "c45: column 's' has 7 distinct values, more than the limit of 3")


def test_weights_per_group(grouped):
    got = ids(grouped, "SELECT grp, c45_fit(t, 'y', weight := 'x').id FROM g t "
                       "GROUP BY grp")
    assert got == listed(grouped, "c45", "y", weight="x")
    grouped.execute("UPDATE g SET x = -1 WHERE i = 5")
    fails(grouped, "SELECT grp, c45_fit(t, 'y', weight := 'x') FROM g t GROUP BY grp",
          "c45: weight column 'x' must hold finite, non-negative numbers")


def test_the_same_model_on_every_thread_count(grouped):
    grouped.execute("CREATE TABLE big AS SELECT * REPLACE (i % 3 AS grp) FROM g, "
                    "range(60) r(k)")
    seen = set()
    for threads in (1, 2, 4):
        grouped.execute(f"SET threads = {threads}")
        seen.add(tuple(sorted(ids(grouped, "SELECT grp, kmeans_fit(t, 2).id FROM big t "
                                           "GROUP BY grp").items())))
    assert len(seen) == 1


@given(st.data())
@settings(max_examples=30, deadline=None)
def test_random_groups_get_the_models_of_their_lists(data):
    """Random small tables (NULL cells and rows, text values some groups lack,
    groups of one row): every group's model is its own list's."""
    n = data.draw(st.integers(1, 40))
    keys = data.draw(st.lists(st.sampled_from([None, 0, 1, 2]), min_size=n, max_size=n))
    texts = data.draw(st.lists(st.sampled_from([None, "p", "q", "r"]), min_size=n,
                               max_size=n))
    xs = data.draw(st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=n,
                            max_size=n))
    learner = data.draw(st.sampled_from(["zero_r", "one_r", "naive_bayes"]))
    con = duckmine.connect()
    try:
        con.execute("CREATE TABLE h (k INTEGER, s VARCHAR, x DOUBLE, y VARCHAR)")
        con.executemany("INSERT INTO h VALUES (?, ?, ?, ?)",
                        [[k, t, x, "ab"[i % 2 if i % 5 else 0]]
                         for i, (k, t, x) in enumerate(zip(keys, texts, xs))])
        try:
            want = listed(con, learner, "y", group="k", source="h")
        except ValueError as err:  # a group its own list cannot fit
            with pytest.raises(duckdb.Error) as got:
                con.execute(f"SELECT k, {learner}_fit(t, 'y') FROM h t GROUP BY k").fetchall()
            assert str(err).split(":")[0] in str(got.value)
        else:
            assert ids(con, f"SELECT k, {learner}_fit(t, 'y').id FROM h t GROUP BY k") == want
            assert drained(con)
    finally:
        con.close()


def test_places_are_never_given_twice_in_a_transaction(grouped, monkeypatch):
    """A key's next store starts where its last ended, so the places of a store
    that is gone find no rows in the next, and are refused by name."""
    seen = []
    take = stash.taken
    monkeypatch.setattr(stash, "taken",
                        lambda fn, key, places, *a, **k: seen.append((key, places.copy()))
                        or take(fn, key, places, *a, **k))
    query = "SELECT grp, naive_bayes_fit(t, 'y').id FROM g t WHERE {} GROUP BY grp"
    grouped.execute("BEGIN")
    first = ids(grouped, query.format("grp IS NOT NULL"))
    assert first == listed(grouped, "naive_bayes", "y", "grp IS NOT NULL")
    ended = max(int(p.max()) for _, p in seen)
    assert sorted(int(p.min()) for _, p in seen)[0] == 0
    # a failed query leaves a store of the same key, its places after the first's
    with pytest.raises(duckdb.Error, match="single class"):
        grouped.execute(query.format("grp IS NOT NULL OR y = 'hi'")).fetchall()
    live = stash._STORES[seen[0][0]]
    assert live.start == ended + 1
    with pytest.raises(ValueError, match="naive_bayes: the rows of this group are gone"):
        take("naive_bayes", *seen[0], {"max_values": None, "memory_limit": None}, 0.0)
    grouped.execute("ROLLBACK")
