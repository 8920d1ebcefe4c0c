"""Bad input gets an error that names the problem; the connection keeps working."""

import duckdb
import pytest


def fails(con, sql, *fragments):
    with pytest.raises(duckdb.Error) as err:
        con.execute(sql).fetchall()
    for f in fragments:
        assert f in str(err.value), str(err.value)
    assert con.execute("SELECT 42").fetchall() == [(42,)]


def test_unknown_table_or_column(con):
    fails(con, "SELECT * FROM fp_growth('no_such_table', 0.1)", "no_such_table")
    fails(con, "SELECT * FROM association_rules('no_such_table', 0.1)", "no_such_table")
    fails(con, "SELECT fp_growth_agg(no_such_column, 0.1) FROM weather",
          "no_such_column")


@pytest.mark.parametrize("support, message", [
    ("0", "min_support must be a fraction in (0, 1] or a count >= 1"),
    ("-0.5", "min_support must be a fraction"),
    ("-3", "min_support must be a fraction"),
    ("2.5", "min_support 2.5 is above 1 but not a whole count"),
    ("NULL", "min_support must not be NULL"),
    ("'nan'::DOUBLE", "min_support must be a fraction"),
])
def test_bad_min_support(con, support, message):
    fails(con, f"SELECT * FROM fp_growth('weather', {support})", "fp_growth", message)
    fails(con, f"SELECT * FROM association_rules('weather', {support})",
          "association_rules", message)
    fails(con, f"SELECT fp_growth_agg([outlook::VARCHAR], {support}) FROM weather",
          message)


@pytest.mark.parametrize("conf", ["-0.1", "1.5", "NULL"])
def test_bad_min_confidence(con, conf):
    fails(con, f"SELECT * FROM association_rules('weather', 2, min_confidence := {conf})",
          "min_confidence must be in [0, 1]")


def test_bad_options(con):
    fails(con, "SELECT * FROM fp_growth('weather', 2, max_length := 0)",
          "max_length must be >= 1")
    fails(con, "SELECT * FROM fp_growth('weather', 2, target := 'frequent')",
          "target must be one of 'all', 'closed', 'maximal'")
    fails(con, "SELECT * FROM association_rules('weather', 2, max_consequent := 0)",
          "max_consequent must be >= 1")
    fails(con, "SELECT * FROM fp_growth('weather', 2, layout := 'tall')",
          "layout must be one of")


def test_no_recognised_layout(fresh):
    fresh.execute("CREATE TABLE nums AS SELECT 1.5 AS x, 2.5 AS y, 'a' AS z")
    fails(fresh, "SELECT * FROM fp_growth('nums', 1)", "no recognised layout",
          "column 'x' has type DECIMAL(2,1)")
    fresh.execute("CREATE TABLE two_lists AS SELECT ['a'] AS p, ['b'] AS q")
    fails(fresh, "SELECT * FROM fp_growth('two_lists', 1)",
          "exactly one LIST column of items (found: p, q)")
    fails(fresh, "SELECT * FROM fp_growth('nums', 1, layout := 'long')",
          "the long layout needs exactly two columns")


def test_output_limit_says_how_many(fresh):
    fresh.execute("CREATE TABLE dense AS SELECT [i::VARCHAR FOR i IN range(20)] AS items "
                  "FROM range(3)")
    fresh.execute("SET VARIABLE duckmine_max_itemsets = 1000")
    try:
        fails(fresh, "SELECT count(*) FROM fp_growth('dense', 1)",
              "stopped after finding more than 1,000 frequent itemsets",
              "set max_length")
        # max_length is the way out
        assert fresh.execute("SELECT count(*) FROM fp_growth('dense', 1, max_length := 2)"
                             ).fetchall() == [(210,)]
        # 298 itemsets of up to 3 of 12 items give 1452 rules
        fails(fresh, "SELECT count(*) FROM association_rules('SELECT [i::VARCHAR FOR i "
                     "IN range(12)] FROM range(3)', 1, min_confidence := 0.0, "
                     "max_length := 3)", "stopped after finding more than 1,000 rules")
        fresh.execute("SET VARIABLE duckmine_max_itemsets = 0")
        fails(fresh, "SELECT count(*) FROM fp_growth('dense', 1)",
              "duckmine_max_itemsets must be in [1, 1,000,000,000], got 0")
    finally:
        fresh.execute("RESET VARIABLE duckmine_max_itemsets")
