"""Bayesian networks counted from a given AD-tree (``ad_tree := ...``): the same
model value as a fit on the rows, missing values and rows without a class
included, and clear errors for a tree that is not the table's."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duckmine

from .conftest import DATA, fails, table

NOMINAL = ["weather.nominal", "contact-lenses", "soybean", "breast-cancer"]
SEARCHES = ["search := 'k2', max_parents := 3", "search := 'tan', score := 'mdl'",
            "search := 'hill_climb', max_parents := 2, score := 'aic'",
            "search := 'hill_climb', max_parents := 3, score := 'bdeu'"]


@pytest.fixture(scope="module")
def db():
    c = duckmine.connect()
    for name in NOMINAL + ["iris"]:
        duckmine.read_arff(c, DATA / f"{name}.arff", table(name))
        if name != "iris":
            c.execute(f"CREATE TABLE {table(name)}_tree AS SELECT ad_tree_fit(t, "
                      f"max_depth := 4) AS tree FROM {table(name)} t")
    yield c
    c.close()


def target_of(db, name):
    return db.sql(f"DESCRIBE {table(name)}").fetchall()[-1][0]


@pytest.mark.parametrize("name", NOMINAL)
@pytest.mark.parametrize("search", SEARCHES)
def test_the_model_of_the_tree_is_the_model_of_the_rows(db, name, search):
    t, target = table(name), target_of(db, name)
    tree = f"(SELECT tree FROM {t}_tree)"
    rows = db.sql(f"SELECT bayes_net_fit(t, '{target}', {search}) FROM {t} t").fetchall()
    counted = db.sql(f"SELECT bayes_net_fit(t, '{target}', {search}, ad_tree := {tree}) "
                     f"FROM {t} t").fetchall()
    assert counted == rows  # the whole value: id, body and all
    relation = f"SELECT * FROM bayes_net('{t}', '{target}', {search}{{}}) ORDER BY ALL"
    assert db.sql(relation.format(f", ad_tree := {tree}")).fetchall() == \
        db.sql(relation.format("")).fetchall()
    options = ", ".join(f"'{k.strip()}': {v}" for k, v in
                        (o.split(":=") for o in search.split(", ")))
    fitted = db.sql(f"SELECT model.id FROM fit('bayes_net', '{t}', '{target}', "
                    f"options := {{{options}, 'ad_tree': {tree}}})").fetchall()
    assert fitted[0][0] == rows[0][0]["id"]


def test_one_tree_per_group(db):
    cols = [c for (c, *_) in db.sql("DESCRIBE soybean").fetchall()]
    row = "{" + ", ".join(f"'{c}': \"{c}\"" for c in cols) + "}"
    db.execute("CREATE TEMP TABLE soy_g AS SELECT row_number() OVER () % 3 AS g, * "
               "FROM soybean")
    db.execute(f"CREATE TEMP TABLE soy_trees AS SELECT g, ad_tree_fit({row}, max_depth := 3) "
               "AS tree FROM soy_g GROUP BY g")
    rows = db.sql(f"SELECT g, bayes_net_fit({row}, 'class', search := 'tan').id "
                  "FROM soy_g GROUP BY g ORDER BY g").fetchall()
    counted = db.sql(f"SELECT g, bayes_net_fit({row}, 'class', search := 'tan', "
                     "ad_tree := any_value(soy_trees.tree)).id FROM soy_g "
                     "JOIN soy_trees USING (g) GROUP BY g ORDER BY g").fetchall()
    assert counted == rows and len({i for _, i in rows}) == 3


def _nominal_table(con, cards, cols):
    names = [f"a{j}" for j in range(len(cards))]
    con.execute("CREATE OR REPLACE TABLE r (" + ", ".join(f"{x} VARCHAR" for x in names) + ")")
    con.executemany(f"INSERT INTO r VALUES ({', '.join('?' * len(names))})",
                    [[None if v is None else f"v{v}" for v in row] for row in zip(*cols)])
    return names


@st.composite
def nominal_tables(draw):
    """Up to 5 nominal columns (the last the class, of two values or more), some
    cells NULL, the class's too."""
    n = draw(st.integers(4, 60))
    p = draw(st.integers(2, 5))
    cards = [draw(st.integers(2, 4)) for _ in range(p)]
    cols = [[draw(st.one_of(st.none(), st.integers(0, k - 1))) if draw(st.booleans())
             else draw(st.integers(0, k - 1)) for _ in range(n)] for k in cards]
    return cards, cols


@settings(max_examples=25, deadline=None)
@given(nominal_tables(), st.integers(0, 5),
       st.sampled_from(["k2", "tan", "hill_climb"]), st.integers(1, 3),
       st.sampled_from(["bayes", "mdl", "loglik"]))
def test_missing_values_and_unlabelled_rows_count_as_the_rows(data, cutoff, search,
                                                               parents, score):
    cards, cols = data
    if len({v for v in cols[-1] if v is not None}) < 2 or \
            any(all(v is None for v in col) for col in cols):
        return  # refused alike with and without a tree
    con = duckmine.connect()
    names = _nominal_table(con, cards, cols)
    target = names[-1]
    con.execute(f"CREATE TABLE tr AS SELECT ad_tree_fit(r, leaf_list_cutoff := {cutoff}) "
                "AS tree FROM r")
    options = f"search := '{search}', max_parents := {parents}, score := '{score}'"
    rows = con.sql(f"SELECT bayes_net_fit(r, '{target}', {options}) FROM r").fetchall()
    counted = con.sql(f"SELECT bayes_net_fit(r, '{target}', {options}, "
                      "ad_tree := (SELECT tree FROM tr)) FROM r").fetchall()
    assert counted == rows
    con.close()


@given(st.integers(1, 200), st.integers(1, 5), st.integers(0, 10), st.integers(0, 2**31))
@settings(max_examples=40, deadline=None)
def test_tables_with_the_missing_value_count_every_row(n, p, cutoff, seed):
    from duckmine.algorithms.adtree.tree import ADTree

    rng = np.random.default_rng(seed)
    card = rng.integers(2, 5, p)  # the last code of each attribute is missing
    codes = np.stack([rng.integers(0, k, n) for k in card], axis=1)
    tree = ADTree.of(codes, card, cutoff)
    m = int(rng.integers(1, p + 1))
    attrs = rng.permutation(p)[:m]
    full = rng.random(m) < 0.5
    tops = np.where(full, card[attrs], card[attrs] - 1)
    expected = np.zeros(tops, np.int64)
    for row in codes[:, attrs]:
        if (row < tops).all():
            expected[tuple(row)] += 1
    np.testing.assert_array_equal(tree.table(attrs, missing=full), expected)


def test_a_search_reads_only_the_target_column(db):
    """The rows' other columns are not read: a table whose columns are all but the
    target NULL still gives the tree's network."""
    db.execute("CREATE TEMP TABLE only_class AS SELECT NULL::VARCHAR AS x, \"class\" "
               "FROM soybean")
    got = db.sql("SELECT bayes_net_fit(t, 'class', ad_tree := (SELECT tree FROM "
                 "soybean_tree)).id FROM only_class t").fetchall()
    assert got == db.sql("SELECT bayes_net_fit(t, 'class').id FROM soybean t").fetchall()


@pytest.mark.parametrize("sql,fragments", [
    ("SELECT bayes_net_fit(t, 'Class', ad_tree := (SELECT tree FROM soybean_tree)) "
     "FROM breast_cancer t", ["values of 'Class'", "are not the table's", "same table"]),
    ("SELECT bayes_net_fit(t, 'contact-lenses', ad_tree := (SELECT tree FROM "
     "soybean_tree)) FROM contact_lenses t", ["'contact-lenses'",
                                              "not one of the AD-tree's attributes"]),
    ("SELECT bayes_net_fit(t, 'class', ad_tree := (SELECT tree FROM soybean_tree)) "
     "FROM (SELECT * FROM soybean LIMIT 100) t", ["does not count the table's rows",
                                                  "683 rows", "same rows"]),
    ("SELECT bayes_net_fit(t, 'class', ad_tree := (SELECT bayes_net_fit(s, 'class') "
     "FROM soybean s)) FROM soybean t", ["ad_tree must be", "ad_tree_fit", "bayes_net model"]),
    ("SELECT bayes_net_fit(t, 'class', ad_tree := 42) FROM soybean t", ["ad_tree"]),
    ("SELECT model FROM fit('bayes_net', 'soybean', 'class', options := {'ad_tree': "
     "{'x': 1}})", ["ad_tree must be a model value"]),
    ("SELECT bayes_net_fit(t, 'class', max_parents := 5, ad_tree := (SELECT tree FROM "
     "soybean_tree)) FROM soybean t", ["max_depth := 4", "needs 6"]),
    ("SELECT bayes_net_fit(t, 'class', use_ad_tree := false, ad_tree := (SELECT tree FROM "
     "soybean_tree)) FROM soybean t", ["use_ad_tree := false", "leave one"]),
    ("SELECT * FROM bayes_net('soybean', 'class', weight := 'date', ad_tree := (SELECT "
     "tree FROM soybean_tree))", ["weight"]),
    ("SELECT * FROM cross_validate('bayes_net', 'soybean', 'class', options := "
     "{'ad_tree': (SELECT tree FROM soybean_tree)})", ["cross_validate", "ad_tree",
                                                      "no fold"]),
    ("SELECT * FROM bayes_net('iris', 'class', ad_tree := (SELECT tree FROM "
     "soybean_tree))", ["are not the table's"]),
])
def test_a_tree_that_is_not_the_tables_is_refused(db, sql, fragments):
    fails(db, sql, *fragments)
