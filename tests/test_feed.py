"""Rows fed to a fit as DuckDB scans them (``udfs/feed.py``): each fit of a query gets
its own rows, in table order on a parallel scan, no job outlives its fit, and a fit
that fails while its rows arrive leaves the connection usable and its rows dropped."""

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duckmine
from duckmine.udfs import feed


def open_jobs(con):
    return feed.open_jobs(con.sql("SELECT getvariable('duckmine_connection')"
                                  ).fetchall()[0][0])


@pytest.fixture
def con():
    c = duckmine.connect()
    c.execute("SET enable_progress_bar = false")
    c.execute("""CREATE TABLE t AS SELECT i, i % 7 AS a, (i * 13) % 11 AS b,
        CASE WHEN (i * 31) % 5 < 2 THEN 'p' ELSE 'q' END AS y, (i % 3)::VARCHAR AS s
        FROM range(300000) r(i)""")
    yield c
    c.close()


def test_two_fits_in_one_query_read_their_own_rows(con):
    both = con.sql("""SELECT a.model.id, b.model.id
        FROM fit('c45', '(SELECT a, b, y FROM t WHERE i % 2 = 0)', 'y') a,
             fit('c45', '(SELECT a, b, y FROM t WHERE i % 2 = 1)', 'y') b""").fetchall()[0]
    alone = [con.sql(f"SELECT model.id FROM fit('c45', '(SELECT a, b, y FROM t "
                     f"WHERE i % 2 = {k})', 'y')").fetchall()[0][0] for k in (0, 1)]
    assert list(both) == alone
    assert open_jobs(con) == 0


def test_a_view_counted_otherwise_than_it_reads_is_read_whole(con):
    """A view named is counted before it is read; where the count and the rows
    differ (the view draws at random), the matrix grows or shrinks to the rows that
    came, and the model is that of those rows."""
    con.execute("SELECT setseed(0.5)")
    con.execute("CREATE VIEW half AS SELECT * FROM t WHERE random() < 0.5")
    con.execute("CREATE VIEW few AS SELECT * FROM t WHERE i < 1000 + random() * 50000")
    for view, low, high in (("half", 140_000, 160_000), ("few", 1_000, 51_000)):
        for _ in range(3):
            rows = con.sql(f"SELECT model_info(model).instances FROM fit('zero_r', "
                           f"'{view}', 'y')").fetchall()[0][0]
            assert low <= rows <= high
    assert open_jobs(con) == 0


def test_rows_arrive_in_table_order_on_a_parallel_scan(con):
    """k-means starts from rows taken by their place, so its model shows the order
    its rows were read in: the same on two threads, run after run, as on one."""
    con.execute("SET threads = 2")
    ids = {con.sql("SELECT model.id FROM fit('kmeans', '(SELECT a, b FROM t)', NULL, "
                   "options := {'k': 3})").fetchall()[0][0] for _ in range(3)}
    assert len(ids) == 1
    con.execute("SET threads = 1")
    single = con.sql("SELECT model.id FROM fit('kmeans', '(SELECT a, b FROM t)', NULL, "
                     "options := {'k': 3})").fetchall()[0][0]
    assert ids == {single}


def test_a_fit_inside_a_transaction(con):
    con.execute("BEGIN")
    first = con.sql("SELECT count(*) FROM c45('t', 'y')").fetchall()
    again = con.sql("SELECT count(*) FROM c45('t', 'y')").fetchall()
    con.execute("COMMIT")
    assert first == again and open_jobs(con) == 0


def test_a_fit_refused_while_its_rows_arrive(con):
    """A table named is counted first, so its fit is refused at its first chunk for
    all of its rows; a query's, once the rows read so far are too many."""
    con.execute("SET VARIABLE duckmine_memory_limit = '1MB'")
    with pytest.raises(duckdb.Error, match=r"about .* \(300,000 rows x 5 columns\)"):
        con.sql("SELECT * FROM c45('t', 'y')").fetchall()
    with pytest.raises(duckdb.Error, match="read so far"):
        con.sql("SELECT * FROM c45('(FROM t)', 'y')").fetchall()
    assert open_jobs(con) == 1  # its rows, until the connection's next fit
    con.execute("SET VARIABLE duckmine_memory_limit = '1GB'")
    assert con.sql("SELECT count(*) FROM c45('t', 'y')").fetchall()[0][0] > 0
    assert open_jobs(con) == 0


def test_an_empty_relation_and_bad_columns(con):
    with pytest.raises(duckdb.Error, match="c45: the table is empty"):
        con.sql("SELECT * FROM c45('(FROM t LIMIT 0)', 'y')").fetchall()
    with pytest.raises(duckdb.Error, match="ad_counts: column 'zz' is not in the table"):
        con.sql("SELECT * FROM ad_counts('t', ['s', 'zz'])").fetchall()
    # only the named columns are read: the numeric ones, which it refuses, are not
    counts = con.sql("SELECT count(*), sum(count) FROM ad_counts('t', ['y', 's'])"
                     ).fetchall()[0]
    assert counts == (6, 300000)
    assert open_jobs(con) <= 1  # the refused one, until the next fit


def test_connections_of_two_databases_keep_their_own_rows():
    """DuckDB numbers connections and transactions per database, so the same numbers
    meet in one process; fits on two databases at once, from two threads, each read
    their own rows."""
    import threading

    dbs = [duckmine.connect() for _ in range(2)]
    for k, db in enumerate(dbs):
        db.execute("SET enable_progress_bar = false")
        db.execute(f"""CREATE TABLE t AS SELECT i % (5 + {k}) AS a, (i * 13) % 11 AS b,
            CASE WHEN (i * 31 + {k}) % 5 < 2 THEN 'p' ELSE 'q' END AS y
            FROM range(200000) r(i)""")
    dbs[1].execute("SELECT 1").fetchall()  # its transactions numbered apart from the other's
    query = "SELECT model.id FROM fit('c45', 't', 'y')"
    alone = [db.sql(query).fetchall()[0][0] for db in dbs]
    got, errors = [[], []], []

    def run(k):
        try:
            for _ in range(3):
                got[k].append(dbs[k].sql(query).fetchall()[0][0])
        except Exception as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and got == [[alone[0]] * 3, [alone[1]] * 3]
    for db in dbs:
        db.close()


def test_each_loaded_connection_has_its_own_key():
    """Jobs (fed rows, interrupts, progress) are known by the key load gives a
    connection: unique across databases and cursors, kept when loaded again."""
    from duckmine.extension import interrupts

    a, b = duckmine.connect(), duckmine.connect()
    cursor = duckmine.load(a.cursor())
    keys = [c.sql("SELECT getvariable('duckmine_connection')").fetchall()[0][0]
            for c in (a, b, cursor)]
    assert len(set(keys)) == 3 and None not in keys
    assert [interrupts._IDS[c] for c in (a, b, cursor)] == keys
    duckmine.load(a)
    assert a.sql("SELECT getvariable('duckmine_connection')").fetchall()[0][0] == keys[0]
    for c in (cursor, a, b):
        c.close()


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_chunks_land_at_their_places_in_the_relation(data):
    """Every fed row lands at its number's place, whatever order the chunks came
    in, however a chunk's own numbers lie, a chunk at a time or all at once, and
    whether the row count was known before (``expected``), guessed too high or too
    low (the matrix grows or shrinks), or not known."""
    import numpy as np
    import pyarrow as pa

    from duckmine.udfs import table

    n = data.draw(st.integers(1, 60))
    cuts = sorted(data.draw(st.sets(st.integers(1, max(n - 1, 1)), max_size=6)))
    chunks = [c for c in np.split(np.arange(n), [c for c in cuts if c < n]) if len(c)]
    chunks = data.draw(st.permutations(chunks))
    if data.draw(st.booleans()):  # one chunk's numbers out of order
        i = data.draw(st.integers(0, len(chunks) - 1))
        chunks[i] = np.array(data.draw(st.permutations(chunks[i].tolist())), np.int64)
    batch = data.draw(st.sampled_from([0, table.BATCH_BYTES]))  # 0: a chunk a time
    expected = data.draw(st.sampled_from([None, n, max(n // 2, 1), 2 * n + 3]))
    x = np.array([np.nan if i % 7 == 3 else i * 0.5 - 4 for i in range(n)])
    text = [None if i % 5 == 2 else "zyxw"[i * 7 % 4] for i in range(n)]
    w = np.array([1.0 + i % 3 for i in range(n)])
    rows = table.Rows("f", weight="w", expected=expected)
    kept = table.BATCH_BYTES, table.RECODED
    table.BATCH_BYTES, table.RECODED = batch, data.draw(st.sampled_from([3, kept[1]]))
    try:
        for c in chunks:
            rows.add(pa.StructArray.from_arrays(
                [pa.array(x[c], from_pandas=True), pa.array([text[i] for i in c], pa.string()),
                 pa.array(w[c])], ["x", "s", "w"]), pa.array(c + 1))
        d = rows.dataset()
    finally:
        table.BATCH_BYTES, table.RECODED = kept
    values = tuple(sorted({t for t in text if t is not None}))
    assert [a.name for a in d.attributes] == ["x", "s"] and d.attributes[1].values == values
    assert np.array_equal(d.columns[0], x, equal_nan=True)
    assert np.array_equal(d.columns[1], [np.nan if t is None else values.index(t)
                                         for t in text], equal_nan=True)
    assert np.array_equal(d.weights, w) and d.weights.base is None  # not the matrix's


@pytest.mark.parametrize("kind", ["int8", "int16", "int32", "int64", "uint8", "uint32"])
def test_arrow_indices_become_codes_with_minus_one_where_missing(kind):
    """Read from the array's buffers: any integer type, nulls, and slices whose
    offset falls inside a byte of the validity bitmap."""
    import numpy as np
    import pyarrow as pa

    from duckmine.udfs.table import _int32

    whole = pa.array([None if i % 7 == 0 else i % 100 for i in range(300)], kind)
    for arr in (whole, whole.slice(1), whole.slice(3, 5), whole.slice(13, 200),
                whole.slice(299), whole.slice(0, 0), pa.array([1, 2, 3], kind).slice(1),
                pa.nulls(3, kind), pa.array([], kind)):
        want = np.array([-1 if v is None else v for v in arr.to_pylist()], np.int32)
        got = _int32(arr)
        assert got.dtype == np.int32 and got.tolist() == want.tolist()
