"""Bad input gets an error that names the problem; the connection keeps working."""

import json
import re

import duckdb
import pytest

from .conftest import fails


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


@pytest.mark.parametrize("conf", ["-0.1", "1.5", "NULL", "'x'", "true"])
def test_bad_min_confidence(con, conf):
    fails(con, f"SELECT * FROM association_rules('weather', 2, min_confidence := {conf})",
          "association_rules: min_confidence must be in [0, 1]")


@pytest.mark.parametrize("sql,message", [
    ("fp_growth('weather', 2, max_length := 0)",
     "fp_growth: max_length must be a whole number >= 1 or NULL, got 0"),
    ("fp_growth('weather', 2, max_length := 2.5)", "max_length must be a whole number"),
    ("fp_growth('weather', 2, max_length := 'x')", "max_length must be a whole number"),
    ("fp_growth('weather', 2, target := 'frequent')",
     "fp_growth: target must be one of 'all', 'closed', 'maximal', got 'frequent'"),
    ("fp_growth('weather', 2, target := 3)", "target must be one of"),
    ("association_rules('weather', 2, max_consequent := 0)",
     "association_rules: max_consequent must be a whole number >= 1"),
    ("association_rules('weather', 2, max_consequent := true)",
     "max_consequent must be a whole number >= 1 or NULL, got true"),
    ("fp_growth('weather', 2, layout := 'tall')", "fp_growth: layout must be one of"),
    ("fp_growth('weather', 2, layout := 3)", "fp_growth: layout must be one of"),
    ("fp_growth('weather', 'abc')", "fp_growth: min_support must be a fraction"),
    ("fp_growth('weather', true)", "fp_growth: min_support must be a fraction"),
    ("ad_counts('weather', 3)", "ad_counts: columns must be a list of names, got 3"),
])
def test_bad_options(con, sql, message):
    """Options of the wrong type are refused by name, as those out of range."""
    fails(con, f"SELECT * FROM {sql}", message)


def test_bad_aggregate_options_name_the_aggregate(con):
    fails(con, "SELECT fp_growth_agg([outlook::VARCHAR], 2, target := 3) FROM weather",
          "fp_growth_agg: target must be one of")
    fails(con, "SELECT association_rules_agg([outlook::VARCHAR], 2, min_confidence := "
          "'x') FROM weather", "association_rules_agg: min_confidence must be in")


def test_no_recognised_layout(fresh):
    fresh.execute("CREATE TABLE nums AS SELECT 1.5 AS x, 2.5 AS y, 'a' AS z")
    fails(fresh, "SELECT * FROM fp_growth('nums', 1)", "no recognised layout",
          "column 'x' has type DECIMAL(2,1)")
    fresh.execute("CREATE TABLE two_lists AS SELECT ['a'] AS p, ['b'] AS q")
    fails(fresh, "SELECT * FROM fp_growth('two_lists', 1)",
          "exactly one LIST column of items (found: p, q)")
    fails(fresh, "SELECT * FROM fp_growth('nums', 1, layout := 'long')",
          "fp_growth: the long layout needs exactly two columns")


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
        fails(fresh, "SELECT count(*) FROM association_rules('(SELECT [i::VARCHAR FOR i "
                     "IN range(12)] FROM range(3))', 1, min_confidence := 0.0, "
                     "max_length := 3)", "stopped after finding more than 1,000 rules")
        fresh.execute("SET VARIABLE duckmine_max_itemsets = 0")
        fails(fresh, "SELECT count(*) FROM fp_growth('dense', 1)",
              "duckmine_max_itemsets must be in [1, 1,000,000,000], got 0")
    finally:
        fresh.execute("RESET VARIABLE duckmine_max_itemsets")


# -- learners: C4.5 and the shared data layer ------------------------------------

@pytest.mark.parametrize("sql, fragments", [
    ("SELECT * FROM c45('no_such_table', 'play')", ["no_such_table"]),
    ("SELECT * FROM c45('weather', 'nope')",
     ["target column 'nope' is not in the table", "outlook"]),
    ("SELECT * FROM c45('weather', NULL)", ["target must name a column"]),
    ("SELECT * FROM c45('(SELECT *, 1.5 AS x FROM weather)', 'x')",
     ["target column 'x' is numeric", "m5p"]),
    ("SELECT * FROM c45('(SELECT outlook, NULL::VARCHAR AS y FROM weather)', 'y')",
     ["'y' has no values (all NULL)"]),
    ("SELECT * FROM c45('(SELECT outlook, ''a'' AS y FROM weather)', 'y')",
     ["single class ('a')"]),
    ("SELECT * FROM c45('(SELECT play FROM weather)', 'play')",
     ["no attributes besides the target"]),
    ("SELECT * FROM c45('(SELECT * FROM weather WHERE false)', 'play')",
     ["the table is empty"]),
    ("SELECT * FROM c45('weather', 'play', confidence := 0)", ["confidence must be in"]),
    ("SELECT * FROM c45('weather', 'play', confidence := 0.9)", ["confidence must be in"]),
    ("SELECT * FROM c45('weather', 'play', min_leaf := 0)", ["min_leaf must be"]),
    ("SELECT * FROM c45('weather', 'play', pruned := NULL)", ["pruned must be true or"]),
    ("SELECT * FROM c45('(SELECT *, ''infinity''::DOUBLE AS x FROM weather)', 'play')",
     ["column 'x' holds an infinite value"]),
    ("SELECT * FROM c45('(SELECT *, DATE ''2020-01-01'' AS d FROM weather)', 'play')",
     ["column 'd' has type date32", "neither numeric nor nominal"]),
    ("SELECT * FROM c45('(SELECT *, [1] AS l FROM weather)', 'play')",
     ["column 'l' has type", "neither numeric nor nominal"]),
    ("SELECT * FROM c45('(SELECT *, -1.0 AS w FROM weather)', 'play', weight := 'w')",
     ["weight column 'w' must hold finite, non-negative"]),
    ("SELECT * FROM c45('weather', 'play', weight := 'nope')",
     ["weight column 'nope' is not in the table"]),
    ("SELECT * FROM cross_validate('nope', 'weather', 'play')", ["learner must be one of"]),
    ("SELECT * FROM cross_validate('c45', 'weather', 'play', folds := 1)",
     ["folds must be a whole number >= 2"]),
    ("SELECT * FROM cross_validate('c45', 'weather', 'play', folds := 15)",
     ["folds (15) cannot exceed the number of rows (14)"]),
    ("SELECT * FROM confusion_matrix('c45_rules', 'weather', 'play')",
     ["confusion_matrix: a c45_rules model", "makes no predictions to cross-validate"]),
])
def test_c45_bad_input(con, sql, fragments):
    fails(con, sql, *fragments)


def test_too_many_nominal_values(fresh):
    fresh.execute("CREATE TABLE t AS SELECT i::VARCHAR AS id, (i % 2)::VARCHAR AS y "
                  "FROM range(50) r(i)")
    fresh.execute("SET VARIABLE duckmine_max_nominal_values = 20")
    fails(fresh, "SELECT * FROM c45('t', 'y')",
          "column 'id' has 50 distinct values, more than the limit of 20")
    fresh.execute("RESET VARIABLE duckmine_max_nominal_values")
    assert len(fresh.sql("SELECT * FROM c45('t', 'y')").fetchall()) >= 1


def test_bad_model_values(con):
    con.execute("CREATE OR REPLACE TEMP TABLE m AS "
                "SELECT c45_fit(t, 'play') AS model FROM weather t")
    fails(con, "SELECT predict({'format': 'duckmine.model', 'version': 1, 'learner': 'c45', "
               "'id': 'x', 'body': '{}'}, t) FROM weather t", "predict", "corrupt")
    fails(con, "SELECT model_text(struct_update(model, body := replace(model.body, "
               "'outlook', 'x'))) FROM m", "model_text", "corrupt")
    fails(con, "SELECT model_text(struct_update(model, version := 99)) FROM m",
          "version 99 is not supported")
    fails(con, "SELECT model_text(42)", "expected a model value")
    fails(con, "SELECT predict(m.model, {'temperature': 'hot'}) FROM m",
          "the row has no column 'outlook'")
    fails(con, "SELECT * FROM c45_rules('weather', 'nope')", "target column 'nope'")


def assert_forgeries_refused(con, value, rewrite, cases):
    """Each ``(edit, what)``: the model ``value`` with its JSON body rewritten by
    ``rewrite(d, edit)`` and its id recomputed is refused with ``what``, and the
    connection lives on."""
    from duckmine.algorithms import models
    from duckmine.udfs.models import MODEL_SQL

    for edit, what in cases:
        d = json.loads(value["body"])
        rewrite(d, edit)
        body = json.dumps(d)
        forged = dict(value, body=body, id=models.digest(value["learner"],
                                                        value["version"], body))
        with pytest.raises(duckdb.Error, match="predict: the model value is corrupt: .*"
                                               + re.escape(what)):
            con.execute(f"SELECT predict($m::{MODEL_SQL}, t) FROM weather t",
                        {"m": forged}).fetchall()
    assert con.sql("SELECT count(*) FROM weather").fetchall() == [(14,)]


def test_forged_c45_bodies_are_refused_by_what_is_wrong(con):
    """Bodies edited and given a matching id: the error says what does not fit,
    instead of the scoring kernel reading out of bounds."""
    v = con.sql("SELECT c45_fit(t, 'play') FROM weather t").fetchall()[0][0]

    def more_values(d):
        d["attributes"][0]["values"] += [f"v{i}" for i in range(100_000)]

    def far_attribute(d):
        d["tree"]["attr"] = [a if a < 0 else 10**6 for a in d["tree"]["attr"]]

    def far_parent(d):
        d["tree"]["parent"] = [p if p < 0 else 10**6 for p in d["tree"]["parent"]]

    def huge_weights(d):
        d["tree"]["dist"] = [[[1e308, -1.0]] for _ in d["tree"]["dist"]]

    def twice(d):
        d["attributes"].append(d["attributes"][0])

    assert_forgeries_refused(con, v, lambda d, edit: edit(d), (
        (more_values, "node 0's test does not fit attribute 'outlook'"),
        (far_attribute, "node 0 tests attribute 1000000"),
        (far_parent, "hangs below node 1000000"),
        (huge_weights, "finite class weights"),
        (twice, "attribute 'outlook' appears twice")))


@pytest.mark.parametrize("learner", ["rep_tree", "cart"])
def test_forged_tree_bodies_are_refused_by_what_is_wrong(con, learner):
    """A child that points back up the tree (a walk that would never end), a test
    on an attribute the model does not have, probabilities of the wrong width."""
    v = con.sql(f"SELECT {learner}_fit(t, 'play', min_leaf := 1, pruned := false) "
                "FROM weather t").fetchall()[0][0]

    def rewrite(d, edit):
        by_field = isinstance(d["nodes"], dict)  # REPTree keeps lists by field
        nodes = [dict(zip(d["nodes"], row)) for row in zip(*d["nodes"].values())] \
            if by_field else d["nodes"]
        edit(nodes)
        d["nodes"] = {key: [n[key] for n in nodes] for key in d["nodes"]} if by_field \
            else nodes

    def loop(nodes):
        nodes[0]["children"][-1] = 0

    def far(nodes):
        nodes[0]["attr"] = 99

    def wide(nodes):
        nodes[-1]["probs"] = [0.5, 0.25, 0.25]

    assert_forgeries_refused(con, v, rewrite, (
        (loop, "node 0's child 0 is not a node after it"),
        (far, "node 0 tests attribute 99"),
        (wide, "finite probabilities")))


def test_forged_rule_bodies_are_refused_by_what_is_wrong(con):
    """A rule testing an attribute the model does not have, a RIPPER list without
    its default rule, class weights of the wrong width."""
    def fitted(learner, options="", table="weather", target="play"):
        return con.sql(f"SELECT {learner}_fit(t, '{target}'{options}) FROM {table} t"
                       ).fetchall()[0][0]

    def first_condition(key):
        def edit(d):
            rule = next(r for r in d["rules"] if r[key])
            rule[key][0][0] = 99
        return edit

    def no_default(d):
        d["rules"][-1]["antds"] = d["rules"][0]["antds"] or [[0, 0, None]]

    def wide(key):
        def edit(d):
            d["rules"][0][key] = [1.0, 2.0, 3.0]
        return edit

    def ridor_far(d):
        d["root"]["rules"][0]["antds"][0][0] = 99

    apply = lambda d, edit: edit(d)  # noqa: E731
    assert_forgeries_refused(con, fitted("part", ", min_leaf := 1"), apply, (
        (first_condition("conditions"), "rule 0 tests attribute 99"),
        (wide("leaf"), "rule 0 does not hold 2 finite class weights")))
    assert_forgeries_refused(con, fitted("ripper", ", min_weight := 1.0, folds := 2"),
                             apply, (
        (first_condition("antds"), "tests attribute 99"),
        (no_default, "its rules do not end with a default rule"),
        (wide("dist"), "rule 0 does not hold 2 finite class weights")))
    ridor = fitted("ridor", ", min_weight := 1.0", "contact_lenses", "contact-lenses")
    assert_forgeries_refused(con, ridor, apply, (
        (ridor_far, "a rule tests attribute 99"),))


def test_an_alias_that_is_also_a_column_name_is_explained(con):
    con.execute("CREATE OR REPLACE TEMP TABLE d AS SELECT * FROM (VALUES (1.0, 'x'), "
                "(2.0, 'y')) v(d, y)")
    fails(con, "SELECT c45_fit(d, 'y') FROM d d", "c45: expected the rows of a table",
          "when the alias is also a column name", "choose an alias no column has")


def test_an_edited_body_under_a_cached_id_is_not_served_from_the_cache(con):
    """The original is scored (and cached) first; the edited value keeps its id."""
    con.execute("CREATE OR REPLACE TEMP TABLE m AS "
                "SELECT c45_fit(t, 'play') AS model FROM weather t")
    assert con.sql("SELECT count(predict(m.model, t)) FROM weather t, m").fetchall() == [(14,)]
    fails(con, "SELECT predict(struct_update(m.model, body := m.model.body || ' '), t) "
               "FROM weather t, m", "predict", "corrupt")


@pytest.mark.parametrize("name", ["select", "values", "with", "table", "my table",
                                  "naïve données"])
def test_tbl_is_a_name_whatever_it_is_called(fresh, name):
    quoted = '"' + name + '"'
    fresh.execute(f"CREATE TABLE {quoted} AS SELECT 'a' AS x, 'yes' AS y UNION ALL "
                  "SELECT 'b', 'no' UNION ALL SELECT 'a', 'yes'")
    literal = name.replace("'", "''")
    for tbl in (literal, quoted, f"main.{quoted}"):
        rows = fresh.execute(f"SELECT count(*) FROM zero_r('{tbl}', 'y')").fetchall()
        assert rows == [(2,)], tbl


def test_a_query_goes_in_parentheses(con, tmp_path):
    path = str(tmp_path / "w.parquet")
    con.execute(f"COPY weather TO '{path}'")
    expect = con.execute("SELECT * FROM c45('weather', 'play')").fetchall()
    for tbl in ("(SELECT * FROM weather)", "(-- the weather\nFROM weather)",
                "  (TABLE weather)"):
        assert con.execute(f"SELECT * FROM c45('{tbl}', 'play')").fetchall() == expect
    # Parquet keeps the values as text (sorted), not the ENUMs' declared order
    parquet = con.execute(f"SELECT * FROM c45('(FROM read_parquet(''{path}''))', 'play')"
                          ).fetchall()
    assert sorted(parquet, key=str) != [] and len(parquet) == len(expect)
    text = fails(con, "SELECT * FROM c45('SELECT * FROM weather', 'play')", "c45: tbl is a "
                 "table name, and 'SELECT * FROM weather' reads as a query; write a query "
                 "in parentheses, as '(SELECT * FROM weather)', and a table with such a "
                 "name in double quotes")
    assert "Traceback" not in text
    fails(con, "SELECT * FROM fit('c45', '-- a comment\nFROM weather', 'play')",
          "fit: tbl is a table name", "reads as a query")
    fails(con, f"SELECT * FROM fp_growth('read_parquet(''{path}'')', 2)",
          "fp_growth: tbl is a table name", "reads as a table function call",
          f"'(FROM read_parquet('{path}'))'")
    fails(con, "SELECT * FROM cross_validate('c45', 'VALUES (1)', 'play')",
          "cross_validate: tbl is a table name")
    fails(con, "SELECT * FROM ad_counts(NULL, ['play'])", "ad_counts: tbl must be a table "
          "name, got NULL")


def test_large_integers_are_read_as_numbers(fresh):
    fresh.execute("CREATE TABLE ids AS SELECT (9007199254740993 + i * 1000003)::BIGINT AS "
                  "id, (18446744073000000000::UBIGINT + i::UBIGINT) AS ns, "
                  "CASE WHEN i < 50 THEN 'a' ELSE 'b' END AS y FROM range(100) r(i)")
    rows = fresh.execute("SELECT * FROM c45('ids', 'y')").fetchall()
    assert len(rows) == 3  # one split on id, two leaves
    _, _, _, attribute, operator, value = rows[1][:6]
    assert (attribute, operator) == ("id", "<=") and 9.00719e15 < float(value) < 9.0072e15


def test_extreme_magnitudes_are_refused_by_name(fresh):
    fresh.execute("CREATE TABLE huge AS SELECT i * 1e200 AS a, i::DOUBLE AS b, "
                  "random() AS c FROM range(50) r(i)")
    for sql in ("SELECT * FROM m5p('huge', 'c')", "SELECT * FROM em('huge')",
                "SELECT * FROM kmeans('huge', k := 2)"):
        fails(fresh, sql, "column 'a' holds a value beyond ±1e+150", "rescale it")


def test_an_enum_counts_against_the_nominal_limit(fresh):
    fresh.execute("CREATE TYPE many AS ENUM (SELECT 'v' || i FROM range(12000) r(i))")
    fresh.execute("CREATE TABLE e AS SELECT ('v' || i)::many AS a, "
                  "(i % 2)::VARCHAR AS y FROM range(100) r(i)")
    fails(fresh, "SELECT * FROM c45('e', 'y')", "column 'a' has 12,000 distinct values, "
          "more than the limit of 10,000")


def test_a_prior_count_of_zero_is_refused(con):
    fails(con, "SELECT * FROM bayes_net('weather', 'play', alpha := 0)",
          "bayes_net: alpha must be a number > 0, got 0")


def test_a_column_may_have_any_internal_name(fresh):
    """The names duckmine's SQL uses inside (_dm_row, _dm_n, _dm_pad) are free for a
    user's columns: a row is packed from its columns, never named by an alias."""
    fresh.execute("CREATE TABLE u AS SELECT 'a' AS _dm_row, 'x' AS _dm_n, 'p' AS _dm_pad, "
                  "'yes' AS y UNION ALL SELECT 'b', 'y', 'q', 'no'")
    assert fresh.execute("SELECT attribute, value FROM one_r('u', 'y') ORDER BY value"
                         ).fetchall() == [("_dm_row", "a"), ("_dm_row", "b")]
    assert fresh.execute("SELECT count(*) FROM fp_growth('u', 1) WHERE itemset = "
                         "['_dm_pad=p']").fetchall() == [(1,)]
    assert fresh.execute("SELECT count(*) FROM ad_counts('u', ['_dm_row', '_dm_n'])"
                         ).fetchall() == [(4,)]
    assert fresh.execute("SELECT pct_correct FROM cross_validate('zero_r', 'u', 'y', "
                         "folds := 2)").fetchall() == [(0.0,)]


def test_an_option_of_another_learner_is_refused(con):
    fails(con, "SELECT * FROM cross_validate('naive_bayes', 'weather', 'play', "
               "options := {'confidence': 0.2})",
          "cross_validate: naive_bayes has no option 'confidence' (its options: numeric)")
    fails(con, "SELECT * FROM fit('kmeans', 'weather', NULL, options := {'k': 2, 'pruned': "
               "false})", "kmeans: kmeans has no option 'pruned'")
