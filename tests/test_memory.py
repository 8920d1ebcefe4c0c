"""A fit that would not fit in memory is refused before it starts, with the
estimate, the limit and the ways out; the connection stays usable."""

import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duckmine
from duckmine.algorithms import contract, memory
from duckmine.algorithms.dataset import NUMERIC, Attribute, Dataset, stacked

from .conftest import fails


@pytest.mark.parametrize("text,bytes_", [
    ("18.8 GiB", 18.8 * 2**30), ("500MB", 500e6), ("512 MiB", 2**29), ("1e9", 1e9),
    (4096, 4096), ("2 kb", 2000), ("3TiB", 3 * 2**40), ("10 bytes", 10),
])
def test_sizes_read_as_duckdb_writes_them(text, bytes_):
    assert memory.parse_size(text) == pytest.approx(bytes_)


@pytest.mark.parametrize("text", ["lots", "-1GB", "0", "1 XB", "", "nan", True])
def test_a_size_that_is_none_is_refused(text):
    with pytest.raises(ValueError, match="duckmine_memory_limit must be a"):
        memory.parse_size(text)


def test_every_learner_declares_what_a_fit_holds():
    for decl in contract.learners().values():
        assert 0 < decl.memory < 10_000, decl.name


@pytest.fixture
def big():
    con = duckmine.connect()
    con.execute("CREATE TABLE t AS SELECT random() AS a, random() AS b, "
                "CASE WHEN random() < 0.5 THEN 'x' ELSE 'y' END AS y FROM range(100000)")
    yield con
    con.close()


@pytest.mark.parametrize("sql,fn,size,read", [
    # an aggregate's rows are held for its groups as they are read: refused as they
    # would go over the limit (whole chunks of at most 2,048 rows), before any fit
    ("SELECT c45_fit(t, 'y') FROM t t", "c45", "over", ""),
    ("SELECT * FROM c45('t', 'y')", "c45", "about", "counted"),
    ("SELECT * FROM fit('kmeans', 't', NULL, options := {'k': 2})", "kmeans", "about",
     "counted"),
    ("SELECT * FROM cross_validate('naive_bayes', 't', 'y')", "cross_validate", "about",
     "counted"),
    ("SELECT * FROM c45('(FROM t)', 'y')", "c45", "over", "12,288"),  # 95 bytes a row
    # (C4.5's 21 a cell): 10,526 rows
    ("SELECT * FROM fit('kmeans', '(FROM t)', NULL, options := {'k': 2})", "kmeans",
     "over", "14,336"),  # 71 bytes a row (kmeans' 13 a cell): 14,085 rows
    ("SELECT * FROM cross_validate('naive_bayes', '(FROM t)', 'y')", "cross_validate",
     "over", "12,288"),  # 83 bytes a row (naive Bayes' 17 a cell): 12,049 rows
])
def test_a_fit_over_the_limit_is_refused_by_name(big, sql, fn, size, read):
    """A table named is counted whole at its first chunk; the rows of a query, fed
    from a scan (chunks of 2,048), and those an aggregate holds for its groups are
    refused as soon as the rows read so far would go over the limit, long before
    the end."""
    big.execute("SET VARIABLE duckmine_memory_limit = '1MB'")
    counted = ("(100,000 rows x 3 columns)" if size == "about" else
               f"{read} rows x 3 columns read so far)")
    # an aggregate: the table form reads the whole table without holding it for groups
    listed = ("with the table form or fit(...)",) if "_fit(" in sql else ()
    fails(big, sql, f"{fn}: this fit would take {size}", f"{counted}, more than the limit "
          "of 976.6 KiB", "USING SAMPLE", "GROUP BY", "Spark", "duckmine_memory_limit",
          *listed)
    big.execute("SET VARIABLE duckmine_memory_limit = '1GB'")
    assert big.execute(sql).fetchall()


def test_the_default_limit_is_duckdbs(big):
    """A wide table, whose rows DuckDB gathers within its limit, while the fit's
    float64 columns would exceed it."""
    columns = ", ".join(f"random() AS c{i}" for i in range(40))
    big.execute(f"CREATE TABLE wide AS SELECT {columns}, CASE WHEN random() < 0.5 THEN 'x' "
                "ELSE 'z' END AS y FROM range(60000)")
    big.execute("SET memory_limit = '64MB'")
    fails(big, "SELECT c45_fit(t, 'y') FROM wide t", "(60,000 rows x 41 columns), more "
          "than the limit of 61.0 MiB")
    big.execute("SET VARIABLE duckmine_memory_limit = '1GB'")  # ours, when set
    assert big.execute("SELECT c45_fit(t, 'y') IS NOT NULL FROM wide t").fetchall()


def test_a_limit_that_is_no_size_is_refused_by_name(big):
    big.execute("SET VARIABLE duckmine_memory_limit = 'lots'")
    fails(big, "SELECT c45_fit(t, 'y') FROM t t",
          "c45: duckmine_memory_limit must be a size such as '8GB'")


def test_rows_fed_from_a_scan_are_allowed_what_an_aggregates_groups_take(big):
    """The aggregate form also holds its groups' ids and puts each group in order:
    a limit between the two estimates refuses it and lets the table form, fed a
    chunk at a time, run."""
    decl = contract.learners()["c45"]
    grouped = memory.needed(decl.memory, 100_000, 3, memory.HELD)
    fed = memory.needed(decl.memory, 100_000, 3)
    assert fed < grouped
    big.execute(f"SET VARIABLE duckmine_memory_limit = '{(fed + grouped) / 2:.0f}'")
    fails(big, "SELECT c45_fit(t, 'y') FROM t t", "c45: this fit would take about")
    assert big.execute("SELECT count(*) FROM c45('t', 'y')").fetchone()[0] >= 1


@pytest.mark.parametrize("learner", ["kmeans", "em"])
def test_a_clustering_that_must_fill_missing_cells_counts_the_copy(learner):
    """k-means and EM read the columns in place, but a table with missing cells needs
    a filled copy (8 bytes a cell more): a limit the same table without them fits
    under refuses it, by name, before the copy is made."""
    con = duckmine.connect()
    con.execute("CREATE TABLE whole AS SELECT random() AS a, random() AS b FROM range(100000)")
    con.execute("CREATE TABLE holes AS SELECT a, CASE WHEN b < 0.1 THEN NULL ELSE b END AS b "
                "FROM whole")
    con.execute("SET VARIABLE duckmine_memory_limit = '6MB'")
    sql = "SELECT model.id FROM fit('{0}', '{1}', NULL, options := {{'k': 2}})"
    assert con.execute(sql.format(learner, "whole")).fetchall()
    fails(con, sql.format(learner, "holes"), f"{learner}: this fit would take about",
          "(100,000 rows x 2 columns), more than the limit of 5.7 MiB", "USING SAMPLE")
    con.execute("SET VARIABLE duckmine_memory_limit = '1GB'")
    assert con.execute(sql.format(learner, "holes")).fetchall()
    con.close()


@pytest.mark.parametrize("sql,fn,counted", [
    ("SELECT count(*) FROM fp_growth('b', 2)", "fp_growth",
     "(60,000 frequent items in 20,000 transactions)"),
    ("SELECT count(*) FROM association_rules('b', 2)", "association_rules",
     "(60,000 frequent items in 20,000 transactions)"),
    ("SELECT fp_growth_agg(items, 2) FROM (SELECT list(item) AS items FROM b GROUP BY "
     "tid)", "fp_growth_agg", "(60,000 frequent items in 20,000 transactions)"),
    # an infrequent item is dropped before the tree is built: it takes no memory
    ("SELECT count(*) FROM fp_growth('b', 15000)", "fp_growth",
     "(40,000 frequent items in 20,000 transactions)"),
])
def test_an_itemset_search_over_the_limit_is_refused_by_name(sql, fn, counted):
    """FP-growth's memory grows with the occurrences of frequent items: a search
    over the limit is refused with its estimate, the limit and the ways out, and
    runs once the limit allows it."""
    con = duckmine.connect()
    con.execute("CREATE TABLE b AS SELECT i // 3 AS tid, 'i' || (i % 3 + (i // 3) % 2) AS "
                "item FROM range(60000) r(i)")
    con.execute("SET VARIABLE duckmine_memory_limit = '1MB'")
    fails(con, sql, f"{fn}: this search would take about", f"{counted}, more than the "
          "limit of 976.6 KiB", "raise min_support", "USING SAMPLE", "GROUP BY", "Spark",
          "duckmine_memory_limit")
    con.execute("SET VARIABLE duckmine_memory_limit = '1GB'")
    assert con.execute(sql).fetchall()
    con.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise is Linux's")
def test_columns_past_the_packed_ones_go_back_and_the_rest_stay():
    """``give_back_columns`` hands back whole pages of each row past its first ``n``
    columns (they read as zeros afterwards) and leaves every value before them, in
    rows that do not start on a page."""
    import mmap

    a = np.arange(5 * 300_001, dtype=np.float64).reshape(5, 300_001) + 1.0
    want = a[:, :100_000].copy()
    memory.give_back_columns(a, 100_000)
    assert np.array_equal(a[:, :100_000], want)
    per_page = mmap.PAGESIZE // 8
    assert (a[:, 100_000 + per_page:300_001 - per_page] == 0).all()  # whole pages gone
    memory.give_back_columns(a, 300_001)  # nothing past the end: nothing changes
    assert np.array_equal(a[:, :100_000], want)


HEAP_CHECK = """
import sys
import numpy as np
if sys.argv[1] == "loaded":
    import duckmine
    duckmine.connect().close()
a = np.ones(4 << 17)  # 4 MiB: from pages of its own
del a  # (glibc's threshold rises to 4 MiB here, unless it is fixed)
b = np.ones(1 << 17)  # 1 MiB
heap = [[int(x, 16) for x in line.split()[0].split("-")]
        for line in open("/proc/self/maps") if line.rstrip().endswith("[heap]")]
print(any(lo <= b.ctypes.data < hi for lo, hi in heap))
"""


@pytest.mark.skipif(memory._libc("mallopt") is None or not sys.platform.startswith("linux"),
                    reason="glibc's allocator, read through /proc")
def test_once_loaded_a_freed_array_does_not_keep_the_next_ones_in_the_heap():
    """Without duckmine, glibc serves a 1 MiB array from its heap once a 4 MiB one
    was freed (its threshold rose); once duckmine is loaded, from pages of its own,
    which go back to the system when it is freed (``memory.steady_allocator``)."""
    import subprocess

    def in_heap(how):
        out = subprocess.run([sys.executable, "-c", HEAP_CHECK, how], capture_output=True,
                             text=True, check=True, env={k: v for k, v in os.environ.items()
                                                         if not k.startswith("MALLOC_")})
        return out.stdout.split()[-1] == "True"

    assert in_heap("plain")
    assert not in_heap("loaded")


@given(st.integers(2, 6), st.integers(1, 40), st.data())
@settings(max_examples=60, deadline=None)
def test_a_target_between_the_columns_is_moved_so_that_the_others_stack_as_a_view(k, n, data):
    """``Dataset.put_last`` moves the target's row of the matrix after the others:
    every column keeps its values and its place in ``columns``, and the others then
    stack as a view of the matrix, not a copy (a fit's columns held twice)."""
    t = data.draw(st.integers(0, k), label="target")
    matrix = np.empty((k + 1, n))  # a matrix of its own, as the rows read are
    matrix[:] = np.arange((k + 1) * n).reshape(k + 1, n)
    before = [row.copy() for row in matrix]
    ds = Dataset([Attribute(f"c{i}", NUMERIC) for i in range(k + 1)], list(matrix),
                 spare=True)
    ds.put_last(t)
    assert all(np.array_equal(c, b) for c, b in zip(ds.columns, before))
    assert all(not c.flags.writeable for c in ds.columns) or t in (0, k)
    others = stacked([c for i, c in enumerate(ds.columns) if i != t], n)
    assert others.base is not None and np.shares_memory(others, matrix)
    kept = Dataset(ds.attributes, [row.copy() for row in before], spare=False)
    kept_columns = list(kept.columns)
    kept.put_last(t)  # columns someone else may read stay where they are
    assert all(a is b for a, b in zip(kept.columns, kept_columns))


@pytest.mark.parametrize("learner,read", [
    ("c45", "model.id"), ("c45_rules", "model.id"),
    # a REPTree or PART model lists every column, the target among them, in the
    # table's order
    ("rep_tree", "model_text(model)"), ("part", "model_text(model)")])
def test_the_same_model_whatever_the_targets_place(learner, read):
    """A target between the other columns gives the model it gives last or first:
    its values move in the matrix, the attributes keep their order."""
    con = duckmine.connect()
    con.execute("SELECT setseed(0.3)")
    con.execute("CREATE TABLE last AS SELECT random() AS a, (random() * 5)::INT AS b, "
                "CASE WHEN random() < 0.2 THEN NULL ELSE random() END AS c, "
                "CASE WHEN random() < 0.5 THEN 'x' ELSE 'z' END AS s, "
                "CASE WHEN random() < 0.4 THEN 'p' ELSE 'q' END AS y FROM range(3000)")
    con.execute("UPDATE last SET y = 'p' WHERE a > 0.7 AND s = 'x'")
    con.execute("CREATE TABLE mid AS SELECT a, b, y, c, s FROM last")
    con.execute("CREATE TABLE first AS SELECT y, a, b, c, s FROM last")
    got = {t: con.execute(f"SELECT {read} FROM fit('{learner}', '{t}', 'y')").fetchone()[0]
           for t in ("last", "mid", "first")}
    assert got["mid"] == got["last"] == got["first"]
    con.close()
