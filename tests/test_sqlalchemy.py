"""The ``duckmine`` SQLAlchemy dialect: every connection its pool opens has the
functions, so pandas and other SQLAlchemy tools fit, store and score models."""

import threading

import pandas as pd
import pytest
import sqlalchemy as sa

import duckmine

from .conftest import DATA

SCORE = ("SELECT outlook, temperature, humidity, windy, predict(m.model, w) AS predicted "
         "FROM weather w, models m ORDER BY ALL")


@pytest.fixture
def shop(tmp_path):
    """A database file holding the weather table."""
    path = tmp_path / "shop.duckdb"
    con = duckmine.connect(str(path))
    duckmine.read_arff(con, DATA / "weather.nominal.arff", "weather")
    con.close()
    return path


def engine(path, **kwargs):
    return sa.create_engine(f"duckmine:///{path}", **kwargs)


def expected(path):
    con = duckmine.connect(str(path))
    con.execute("CREATE TEMP TABLE models AS SELECT c45_fit(w, 'play') AS model FROM weather w")
    rows = con.execute(SCORE).fetchall()
    con.close()
    return rows


def test_pandas_reads_a_fit_through_the_engine(shop):
    e = engine(shop)
    tree = pd.read_sql("SELECT * FROM c45('weather', 'play') ORDER BY node", e)
    assert list(tree["attribute"].dropna().unique()) == ["outlook", "humidity", "windy"]
    assert tree["is_leaf"].sum() == 5
    e.dispose()


def test_a_model_stored_by_one_engine_scores_through_another(shop):
    want = expected(shop)
    first = engine(shop)
    with first.begin() as c:
        c.execute(sa.text("CREATE TABLE models AS "
                          "SELECT c45_fit(w, 'play') AS model FROM weather w"))
    first.dispose()
    second = engine(shop)
    with second.connect() as c:
        got = [tuple(r) for r in c.execute(sa.text(SCORE))]
        text = c.execute(sa.text("SELECT model_text(model) FROM models")).scalar()
    assert got == want and len(got) == 14
    assert "outlook = overcast: yes (4.0)" in text
    second.dispose()


def test_every_pooled_connection_has_the_functions(shop):
    want = expected(shop)  # first: DuckDB opens a file once per configuration
    first = engine(shop)
    with first.begin() as c:
        c.execute(sa.text("CREATE TABLE models AS "
                          "SELECT c45_fit(w, 'play') AS model FROM weather w"))
    first.dispose()
    e = engine(shop, pool_size=2, max_overflow=0)
    results, errors = [None] * 2, []
    barrier = threading.Barrier(2)

    def work(i):
        try:
            with e.connect() as c:
                barrier.wait(timeout=60)  # both connections checked out at once
                for _ in range(3):
                    results[i] = [tuple(r) for r in c.execute(sa.text(SCORE))]
        except Exception as err:  # reported below, in the test's thread
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == [want, want]
    assert e.pool.checkedin() == 2  # two connections were opened, each loaded
    e.dispose()  # a reconnect: the new connections are loaded too
    with e.connect() as c:
        assert [tuple(r) for r in c.execute(sa.text(SCORE))] == want
    e.dispose()


def test_in_memory_url():
    e = sa.create_engine("duckmine:///:memory:")
    with e.connect() as c:
        c.execute(sa.text("CREATE TABLE b AS SELECT * FROM (VALUES ([1, 2]), ([1, 3]), "
                          "([1, 2, 3])) t(items)"))
        rows = c.execute(sa.text("SELECT itemset, support_count FROM fp_growth('b', 2) "
                                 "ORDER BY support_count DESC, itemset")).fetchall()
    assert [tuple(r) for r in rows] == [(["1"], 3), (["1", "2"], 2), (["1", "3"], 2),
                                        (["2"], 2), (["3"], 2)]
    e.dispose()
