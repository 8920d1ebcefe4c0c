"""cross_validate against J48's stratified cross-validation (Weka 3.6.14 -t output):
the same folds, so the same counts and error figures to the printed precision."""

import re
from pathlib import Path

import pytest

import duckmine
from duckmine.algorithms.javafmt import double_to_string

from .conftest import loaded

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "eval"
DATA = HERE / "data"
RUNS = sorted(p.name for p in GOLDEN.glob("cli__*__j48__x*_s*.txt"))
FIGURES = {"Kappa statistic": "kappa", "Mean absolute error": "mean_absolute_error",
           "Root mean squared error": "root_mean_squared_error",
           "Relative absolute error": "relative_absolute_error",
           "Root relative squared error": "root_relative_squared_error",
           "Total Number of Instances": "instances"}


def weka_cv(text):
    """The figures of the stratified cross-validation section."""
    section = text[text.index("=== Stratified cross-validation ==="):]
    out = {}
    m = re.search(r"Correctly Classified Instances\s+(\S+)\s+(\S+)\s*%", section)
    out["correct"], out["pct_correct"] = float(m[1]), float(m[2])
    m = re.search(r"Ignored Class Unknown Instances\s+(\S+)", section)
    out["missing_class"] = float(m[1]) if m else 0.0
    for label, key in FIGURES.items():
        out[key] = float(re.search(re.escape(label) + r"\s+(\S+)", section)[1])
    matrix = section[section.index("=== Confusion Matrix ==="):].splitlines()[3:]
    out["confusion"] = [line.split("|")[0].split() for line in matrix if "|" in line]
    return out  # the matrix as printed: cells to compare at their printed digits


@pytest.fixture(scope="module")
def db():
    c = duckmine.connect()
    yield c
    c.close()


def assert_cv_is_wekas(db, learner, t, target, options, text):
    """One cross-validation of ``learner`` on table ``t`` (with ``options``, SQL named
    arguments) gives the figures and the confusion matrix of the reference's printed
    stratified cross-validation ``text``, to its printed precision. It is read from
    the evaluation that ``cross_validate`` and ``confusion_matrix`` each project
    (``test_both_evaluations_project_one``), so that a slow learner runs it once."""
    expected = weka_cv(text)
    rel = db.sql(f"SELECT r.* FROM _dm_evaluation('{learner}', '{t}', '{target}'{options})")
    got = dict(zip(rel.columns, rel.fetchall()[0]))
    for key, value in expected.items():
        if key != "confusion":
            assert got[key] == pytest.approx(value, abs=0.51e-4), key
    classes = db.sql(f'SELECT enum_range("{target}") FROM {t} LIMIT 1').fetchall()[0][0]
    cells = {(c["actual"], c["predicted"]): c["weight"] for c in got["confusion"]}
    printed = expected["confusion"]
    assert len(printed) == len(classes)
    # the reference prints every cell to two places (its rounding: half up, trailing
    # zeros dropped) once any is not whole, else whole numbers
    places = 2 if any("." in cell for row in printed for cell in row) else 0
    for a, row in zip(classes, printed):
        assert len(row) == len(classes)
        for p, cell in zip(classes, row):
            assert double_to_string(cells[(a, p)], places) == cell, (a, p)


def test_both_evaluations_project_one(db):
    """``cross_validate`` gives the figures and ``confusion_matrix`` the cells of one
    evaluation, for every classifier, with every argument passed through."""
    from duckmine.algorithms import contract

    db.execute("DROP TABLE IF EXISTS labor_w")
    duckmine.read_arff(db, DATA / "labor.arff", "labor_w")
    db.execute("ALTER TABLE labor_w ADD COLUMN w DOUBLE DEFAULT 1.5")
    args = ", folds := 4, seed := 3, weight := 'w'"
    names = [d.name for d in contract.learners().values()
             if "classifier" in d.model_kinds and "predict" in d.capabilities]
    assert len(names) > 5
    for name in names:
        call = f"('{name}', 'labor_w', 'class'{args})"
        whole = db.sql(f"SELECT r.* FROM _dm_evaluation{call}")
        r = dict(zip(whole.columns, whole.fetchall()[0]))
        summary = db.sql(f"SELECT * FROM cross_validate{call}")
        assert dict(zip(summary.columns, summary.fetchall()[0])) == \
            {k: v for k, v in r.items() if k != "confusion"}, name
        assert db.sql(f"SELECT * FROM confusion_matrix{call}").fetchall() == \
            [(c["actual"], c["predicted"], c["weight"]) for c in r["confusion"]], name


@pytest.mark.parametrize("run", RUNS)
def test_cross_validation_is_wekas(db, run):
    _, name, _, spec = run[:-4].split("__")
    folds, seed = (int(x) for x in re.fullmatch(r"x(\d+)_s(\d+)", spec).groups())
    t, target, weight, _ = loaded(db, name)  # weighted: some classes missing
    options = f", folds := {folds}, seed := {seed}" + weight
    assert_cv_is_wekas(db, "c45", t, target, options, (GOLDEN / run).read_text())
