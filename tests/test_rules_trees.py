"""The rule learners and trees against the reference (goldens from
tests/golden/make_rules_trees_golden.py): on every data set, the printed model line
for line, ``predict_proba`` (``predict_value`` for a numeric target) against
``distributionForInstance`` on every training row, and ten-fold cross-validation
against the reference's command line."""

import json
import re
import sqlite3
from pathlib import Path

import duckdb
import pytest
import sqlglot
from sqlglot import exp

import duckmine
from duckmine.algorithms.contract import literal

from .conftest import fitted, loaded
from .test_cross_validate import assert_cv_is_wekas

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "rules_trees"
DATA = HERE / "data"
CONFIGS = {  # golden config: (learner, options)
    "ridor": ("ridor", {}),
    "ridor_a": ("ridor", {"all_data_error": True}),
    "ridor_m": ("ridor", {"majority_class": True}),
    "ridor_f4_n3_s3": ("ridor", {"folds": 4, "min_weight": 3.0, "shuffles": 3}),
    "ripper": ("ripper", {}),
    "ripper_p": ("ripper", {"pruned": False}),
    "ripper_e": ("ripper", {"check_error_rate": False}),
    "ripper_f4_n3_o1_s7": ("ripper", {"folds": 4, "min_weight": 3.0, "optimizations": 1,
                                      "seed": 7}),
    "cart": ("cart", {}),
    "cart_u": ("cart", {"pruned": False}),
    "cart_a_n10": ("cart", {"one_se_rule": True, "folds": 10}),
    "cart_h_c05": ("cart", {"heuristic": False, "train_fraction": 0.5}),
    "part": ("part", {}),
    "part_r": ("part", {"reduced_error_pruning": True}),
    "part_b_m5": ("part", {"binary_splits": True, "min_leaf": 5}),
    "part_u": ("part", {"pruned": False}),
    "rep_tree": ("rep_tree", {}),
    "rep_tree_unpruned": ("rep_tree", {"pruned": False}),
    "rep_tree_l3_m5": ("rep_tree", {"max_depth": 3, "min_leaf": 5}),
}
CASES = sorted(p.stem.split("__") for p in GOLDEN.glob("*.json"))
RUNS = sorted(p.name for p in GOLDEN.glob("cli__*.txt"))
# Known defects, kept visible (strict: each fails until it is mended). None is
# known now. What is still not the reference's, with no case here to show it: where
# rows spread by a missing value (weighing fractions) meet in a node, the reference
# adds them in the order its split search left them (sorted in place by each numeric
# attribute in turn), and here they are added in table order, so such sums can
# differ in their last bits.
KNOWN = {}


def known(cases):
    """``cases`` with the known defects marked as failing (strictly)."""
    return [pytest.param(*c if isinstance(c, tuple) else (c,), marks=pytest.mark.xfail(
        strict=True, reason=KNOWN[c])) if c in KNOWN else c for c in cases]


NUMERIC_FIGURES = {"Correlation coefficient": "correlation",
                   "Mean absolute error": "mean_absolute_error",
                   "Root mean squared error": "root_mean_squared_error",
                   "Relative absolute error": "relative_absolute_error",
                   "Root relative squared error": "root_relative_squared_error",
                   "Total Number of Instances": "instances"}


@pytest.fixture(scope="module")
def db():
    c = duckmine.connect()
    yield c
    c.close()


# Data sets without a numeric attribute: the reference sorts no node's rows, so
# PART's sums run in its order, its rows are spread by its running shares, a leaf's
# probabilities are over its running total, and a row's are added as its recursions
# add them: each probability is the reference's own double.
NOMINAL = {"breast-cancer", "contact-lenses", "soybean", "supermarket", "weather.nominal"}


@pytest.mark.parametrize("data,config", CASES)
def test_model_and_probabilities_are_the_references(db, data, config):
    golden = json.loads((GOLDEN / f"{data}__{config}.json").read_text())
    learner, given = CONFIGS[config]
    t, target, weight, numeric = loaded(db, data)
    db.execute(f"CREATE OR REPLACE TEMP TABLE m AS SELECT model AS m FROM "
               f"{fitted(learner, t, target, given, 'w' if weight else None)}")
    assert db.sql("SELECT model_text(m) FROM m").fetchall()[0][0] == golden["text"]
    if numeric:
        got = [[v] for (v,) in db.sql(f"SELECT predict_value(m.m, row_) FROM {t} row_, m "
                                      f"ORDER BY row_.rowid").fetchall()]
    else:
        got = [list(p.values()) for (p,) in db.sql(
            f"SELECT predict_proba(m.m, row_) FROM {t} row_, m ORDER BY row_.rowid")
            .fetchall()]
    want = golden["dist"]
    assert len(got) == len(want)
    if learner == "part" and data in NOMINAL:
        assert got == want  # to the bit, rows with missing values included
    for g, w in zip(got, want):
        assert g == pytest.approx(w, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("data,config", [c for c in CASES if CONFIGS[c[1]][0] == "cart"])
def test_cart_grown_by_two_growers_is_the_references(db, data, config, monkeypatch):
    """A large tree grows on two threads, each handing the other, when it waits, the
    largest subtree it has yet to grow, and the subtrees are joined after: here on
    data of any size, handing nodes of any size."""
    from duckmine.algorithms import stop
    from duckmine.algorithms.trees import cart

    monkeypatch.setattr(stop, "SERIAL_ROWS", 0)
    monkeypatch.setattr(cart, "HAND_ENTRIES", 1)
    test_model_and_probabilities_are_the_references(db, data, config)


def test_cart_fit_fails_whole_when_one_of_its_growers_fails(db, monkeypatch):
    """An error in one grower ends the other's wait or its growth, and the fit fails
    with that error; the connection stays usable."""
    import itertools

    from duckmine.algorithms import stop
    from duckmine.algorithms.trees import cart

    monkeypatch.setattr(stop, "SERIAL_ROWS", 0)
    monkeypatch.setattr(cart, "HAND_ENTRIES", 1)
    made, calls = cart.Grower.make_node, itertools.count()

    def failing(self, *args):
        if next(calls) == 40:
            raise ValueError("a grower failed")
        return made(self, *args)

    monkeypatch.setattr(cart.Grower, "make_node", failing)
    t, target, _, _ = loaded(db, "missing-deep")
    with pytest.raises(duckdb.Error, match="a grower failed"):
        db.sql(f"SELECT * FROM fit('cart', '{t}', '{target}')").fetchall()
    assert db.sql("SELECT 42").fetchall() == [(42,)]


@pytest.mark.parametrize("run", known(RUNS))
def test_cross_validation_is_the_references(db, run):
    _, data, config = run[:-4].split("__")
    learner, given = CONFIGS[config]
    t, target, weight, numeric = loaded(db, data)
    options = ", ".join(f"'{k}': {literal(v)}" for k, v in given.items())
    options = (f", options := {{{options}}}" if options else "") + weight
    text = (GOLDEN / run).read_text()
    if not numeric:
        assert_cv_is_wekas(db, learner, t, target, options, text)
        return
    rel = db.sql(f"SELECT * FROM cross_validate('{learner}', '{t}', '{target}'{options})")
    got = dict(zip(rel.columns, rel.fetchall()[0]))
    section = text[text.index("=== Cross-validation ==="):]
    for label, key in NUMERIC_FIGURES.items():
        want = float(re.search(re.escape(label) + r"\s+(\S+)", section)[1])
        assert got[key] == pytest.approx(want, abs=0.51e-4), key


SQL_CASES = [c for c in CASES if c[1] in ("rep_tree", "part", "part_b_m5", "ridor", "ridor_a",
                                          "ripper", "ripper_p", "cart", "cart_u")]


@pytest.mark.parametrize("data,config", known([tuple(c) for c in SQL_CASES]))
def test_model_to_sql_gives_what_scoring_gives(db, data, config):
    """In DuckDB and in SQLite, on every training row (missing values spread)."""
    learner, given = CONFIGS[config]
    t, target, weight, numeric = loaded(db, data)
    db.execute(f"CREATE OR REPLACE TEMP TABLE m AS SELECT model AS m FROM "
               f"{fitted(learner, t, target, given, 'w' if weight else None)}")
    score = "predict_value" if numeric else "predict"
    fetched = db.execute(f"SELECT {score}(m.m, row_), row_.* FROM {t} row_, m "
                         f"ORDER BY row_.rowid").fetchall()
    names = db.sql(f"SELECT * FROM {t} LIMIT 0").columns
    for dialect in ("duckdb", "sqlite"):  # (a relation would plan the query twice)
        expr = db.execute(f"SELECT model_to_sql(m, '{dialect}') FROM m").fetchall()[0][0]
        if dialect == "duckdb":
            got = [r[0] for r in db.execute(f"SELECT {expr} FROM {t} ORDER BY rowid")
                   .fetchall()]
        else:
            lite = sqlite3.connect(":memory:")
            quoted = ", ".join('"' + n.replace('"', '""') + '"' for n in names)
            lite.execute(f"CREATE TABLE t ({quoted})")
            lite.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(names))})",
                             [r[1:] for r in fetched])
            got = [r[0] for r in lite.execute(f"SELECT {expr} FROM t ORDER BY rowid")]
            lite.close()
        want = [r[0] for r in fetched]
        if numeric:
            assert got == pytest.approx(want, rel=1e-12), dialect
        else:
            assert got == want, dialect


def test_ridor_refuses_fewer_rows_than_folds_and_the_connection_lives(db):
    """Heavy rows: a rule leaves two rows that still weigh more than three folds."""
    db.execute("""CREATE OR REPLACE TEMP TABLE heavy AS SELECT * FROM (VALUES
                  ('r', 0.0, 'z', 4.0), ('p', 0.0, 'z', 4.0), ('p', 2.0, 'z', 4.0),
                  ('p', 1.0, 'x', 6.0), ('q', 0.0, 'z', 1.0)) v(a, b, y, w)""")
    with pytest.raises(duckdb.Error, match=r"ridor: folds: .*fewer than the 3 folds"):
        db.sql(f"SELECT * FROM {fitted('ridor', 'heavy', 'y', {'min_weight': 0.5}, 'w')}")\
            .fetchall()
    assert db.sql("SELECT 1").fetchall() == [(1,)]


@pytest.mark.parametrize("call", ["ridor_fit(t, 'y', folds := 9)",
                                  "ripper_fit(t, 'y', folds := 9)",
                                  "part_fit(t, 'y', folds := 9, reduced_error_pruning := true)",
                                  "rep_tree_fit(t, 'y', folds := 9)"])
def test_more_folds_than_rows_is_refused(db, call):
    db.execute("""CREATE OR REPLACE TEMP TABLE t AS SELECT * FROM (VALUES
                  ('a', 1.0, 'x'), ('b', 2.0, 'y'), ('a', 3.0, 'x'), ('b', 2.0, NULL))
                  v(a, b, y)""")
    with pytest.raises(duckdb.Error, match=r"folds \(9\) cannot exceed the number of "
                                           r"rows with a class \(3\)"):
        db.sql(f"SELECT {call} FROM t").fetchall()
    assert db.sql("SELECT 1").fetchall() == [(1,)]


def test_cart_refuses_more_folds_than_its_pruning_rows(db):
    """The pruning cross-validation reads train_fraction of the rows, less one."""
    db.execute("""CREATE OR REPLACE TEMP TABLE t AS SELECT * FROM (VALUES
                  ('a', 1.0, 'x'), ('b', 2.0, 'y'), ('a', 3.0, 'x'), ('b', 2.0, 'y'),
                  ('a', 5.0, 'x'), ('b', 2.5, NULL)) v(a, b, y)""")
    with pytest.raises(duckdb.Error, match=r"cart: folds \(5\) cannot exceed the number of "
                                           r"rows .*\(4\)"):
        db.sql("SELECT cart_fit(t, 'y') FROM t").fetchall()
    with pytest.raises(duckdb.Error, match=r"cart: .*train_fraction.*\(0, 1\]"):
        db.sql("SELECT cart_fit(t, 'y', train_fraction := 1.5) FROM t").fetchall()
    assert db.sql("SELECT cart_fit(t, 'y', folds := 4) IS NOT NULL FROM t").fetchall() == \
        [(True,)]


@pytest.mark.parametrize("target", ["y", "a"])
def test_rep_tree_moving_its_rows_leaves_the_model_as_it_is(db, monkeypatch, target):
    """REPTree deals rows in place and moves the rows waiting on its stack to a
    smaller part once less than half of a part is waiting; missing values copy rows
    to parts of their own. Moving at every chance gives the model that moving
    never does, for a nominal and a numeric target."""
    from duckmine.algorithms.trees import reptree

    db.execute("SELECT setseed(0.5)")
    db.execute("""CREATE OR REPLACE TEMP TABLE t AS SELECT
                  round(random() * 100, 1) AS a,
                  CASE WHEN random() < 0.1 THEN NULL ELSE round(random() * 50, 1) END AS b,
                  CASE WHEN random() < 0.1 THEN NULL
                       ELSE ['p', 'q', 'r'][1 + floor(random() * 3)::INTEGER] END AS c,
                  CASE WHEN random() < 0.4 THEN 'x' ELSE 'z' END AS y
                  FROM range(6000)""")
    sql = f"SELECT model_text(rep_tree_fit(t, '{target}', pruned := false)) FROM t t"
    monkeypatch.setattr(reptree, "COMPACT_COLUMNS", 10**9)
    never = db.execute(sql).fetchone()[0]
    monkeypatch.setattr(reptree, "COMPACT_COLUMNS", 0)
    always = db.execute(sql).fetchone()[0]
    assert always == never
    assert len(never.splitlines()) > 100  # a tree of some depth


@pytest.mark.parametrize("weight", ["NULL", "'w'"])
def test_rep_tree_held_out_halves_side_by_side_give_the_one_pass(db, monkeypatch, weight):
    """The held-out rows pass down the tree in two halves on two threads where
    their sums are of whole numbers (whole weights, no value missing), and in one
    pass otherwise (here, weights of a half): the model and its held-out figures
    are those of one pass either way."""
    from duckmine.algorithms.trees import reptree

    db.execute("SELECT setseed(0.75)")
    db.execute("""CREATE OR REPLACE TEMP TABLE t AS SELECT
                  round(random() * 100, 1) AS a, round(random() * 50, 1) AS b,
                  ['p', 'q', 'r'][1 + floor(random() * 3)::INTEGER] AS c,
                  CASE WHEN random() < 0.5 THEN 1.0 ELSE 1.5 END AS w,
                  CASE WHEN random() < 0.4 THEN 'x' ELSE 'z' END AS y
                  FROM range(6000)""")
    passes = []
    holdout = reptree._holdout

    def counted(*args):
        passes.append((args[-2], args[-1]))
        return holdout(*args)

    monkeypatch.setattr(reptree, "_holdout", counted)
    sql = f"SELECT m::VARCHAR, model_text(m) FROM (SELECT rep_tree_fit(t, 'y', " \
          f"weight := {weight}) AS m FROM t t)"
    models = []
    for split in (10**9, 100):
        monkeypatch.setattr(reptree, "HOLDOUT_SPLIT", split)
        passes.clear()
        models.append((db.execute(sql).fetchone(), len(passes)))
    assert models[1][0] == models[0][0]
    assert models[0][1] == 1 and models[1][1] == (2 if weight == "NULL" else 1)


@pytest.mark.parametrize("target", ["y", "a"])
def test_rep_tree_grown_as_subtrees_side_by_side_is_the_one_tree(db, monkeypatch, target):
    """REPTree grows the nodes of at least SUBTREE_CELLS cells first, then the
    subtrees under them on two threads, each in its own columns of the rows, and
    joins them. With many subtrees (rows moved to smaller parts at every chance,
    rows copied for missing values, the subtrees' columns packed to the front of
    every part before they grow) or a few, the model and its held-out figures
    are those of one depth-first growth, for a nominal and a numeric target,
    pruned and not."""
    from duckmine.algorithms.trees import reptree

    db.execute("SELECT setseed(0.25)")
    db.execute("""CREATE OR REPLACE TEMP TABLE t AS SELECT
                  round(random() * 100, 1) AS a,
                  CASE WHEN random() < 0.1 THEN NULL ELSE round(random() * 50, 1) END AS b,
                  CASE WHEN random() < 0.1 THEN NULL
                       ELSE ['p', 'q', 'r', 's'][1 + floor(random() * 4)::INTEGER] END AS c,
                  CASE WHEN random() < 0.4 THEN 'x' ELSE 'z' END AS y
                  FROM range(6000)""")
    joined, subtrees = reptree._joined, []

    def counted(tree, below, at):
        subtrees.append(len(below))
        return joined(tree, below, at)

    monkeypatch.setattr(reptree, "_joined", counted)
    packed_part, moved = reptree._packed_part, []

    def packing(*args):
        places, order = args[-4], args[-2]
        before = places[order, 1].copy()
        out = packed_part(*args)
        moved.append(int((places[order, 1] != before).sum()))
        return out

    monkeypatch.setattr(reptree, "_packed_part", packing)
    models = []
    for cells in (reptree.NO_CELLS, 300, 4_000):
        monkeypatch.setattr(reptree, "SUBTREE_CELLS", cells)
        monkeypatch.setattr(reptree, "COMPACT_COLUMNS", 0 if cells == 300 else 4096)
        monkeypatch.setattr(reptree, "PACK_BYTES", 0 if cells == 300 else 16 << 20)
        models.append(db.execute(
            f"""SELECT model_text(m), m::VARCHAR, model_text(u) FROM (
                SELECT rep_tree_fit(t, '{target}') AS m,
                       rep_tree_fit(t, '{target}', pruned := false) AS u FROM t t)""").fetchone())
    assert models[1] == models[0] and models[2] == models[0]
    assert len(models[0][2].splitlines()) > 100  # a tree of some depth
    # one subtree (the root's) when no node is that wide, over a hundred at 300
    # cells, a few at 4,000 (pruned and not)
    assert subtrees[:2] == [1, 1] and min(subtrees[2:4]) > 100 and min(subtrees[4:]) > 1
    assert sum(moved) > 0  # subtrees' columns moved to the front of their parts


def test_a_long_decision_list_scores_in_sqlite(db):
    """PART's SQL has one SELECT for every ``sql.GROUP`` rules, each handing on only
    what the next reads (SQLite allows 2,000 columns, and a list of 2,147 rules once
    had a SELECT of them all), written for SQLite as a WITH list (its parser nests
    about 19 SELECTs): a list of 68 rules scores there as in DuckDB."""
    from duckmine.algorithms.rules import sql

    db.execute("""CREATE OR REPLACE TEMP TABLE longlist AS SELECT
                  (i * 7919 % 1000) / 10.0 AS a, (i * 104729 % 997) / 10.0 AS b,
                  CASE WHEN (i * 7919 % 1000) / 10.0 + (i * 104729 % 997) / 20.0
                            + (i * 31337 % 101) / 2.0 > 100 THEN 'p' ELSE 'q' END AS y
                  FROM range(60000) r(i)""")
    db.execute("CREATE OR REPLACE TEMP TABLE m AS SELECT model AS m FROM "
               "fit('part', 'longlist', 'y', options := {'pruned': false})")
    text = db.sql("SELECT model_text(m) FROM m").fetchall()[0][0]
    assert int(re.search(r"Number of Rules\s*:\s*(\d+)", text).group(1)) > 4 * sql.GROUP
    expr = db.sql("SELECT model_to_sql(m, 'sqlite') FROM m").fetchall()[0][0]
    parsed = sqlglot.parse_one(f"SELECT {expr}", read="sqlite")
    assert len(parsed.find(exp.With).expressions) > 4
    assert max(len(s.expressions) for s in parsed.find_all(exp.Select)) <= 2 * sql.GROUP + 3
    fetched = db.sql("SELECT predict(m.m, t), t.a, t.b, t.y FROM longlist t, m "
                     "ORDER BY t.rowid LIMIT 3000").fetchall()
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE TABLE t (a, b, y)")
    lite.executemany("INSERT INTO t VALUES (?, ?, ?)", [r[1:] for r in fetched])
    got = [r[0] for r in lite.execute(f"SELECT {expr} FROM t ORDER BY rowid")]
    lite.close()
    assert got == [r[0] for r in fetched]
