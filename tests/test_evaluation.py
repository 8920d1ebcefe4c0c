"""Cross-validation against Weka 3.6.14's stored outputs (tests/golden/eval,
made by tests/golden/make_eval_golden.py; no Java needed here)."""

import csv
import json
import math
import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from duckmine.algorithms.evaluation import (
    Evaluation,
    cross_validate,
    cv_splits,
    stratify,
)
from duckmine.algorithms.javautil import JavaRandom, randomize

GOLDEN = Path(__file__).parent / "golden" / "eval"
DATA = Path(__file__).parent / "data"

LABELS = {  # printed line -> the summary keys of its figures
    "Correctly Classified Instances": ("correct", "pct_correct"),
    "Incorrectly Classified Instances": ("incorrect", "pct_incorrect"),
    "Kappa statistic": ("kappa",),
    "Correlation coefficient": ("correlation",),
    "Mean absolute error": ("mean_absolute_error",),
    "Root mean squared error": ("root_mean_squared_error",),
    "Relative absolute error": ("relative_absolute_error",),
    "Root relative squared error": ("root_relative_squared_error",),
    "UnClassified Instances": ("unclassified", "pct_unclassified"),
    "Total Number of Instances": ("instances",),
    "Ignored Class Unknown Instances": ("missing_class",),
}


def read_class(path):
    """The class column (last attribute) and the row weights of an ARFF file:
    (codes with -1 missing, number of classes) or (floats with NaN, None)."""
    decl, values, weights, data = None, [], [], False
    for line in path.read_text().splitlines():
        text = line.strip()
        if not text or text.startswith("%"):
            continue
        if not data:
            if text.lower().startswith("@attribute"):
                decl = text
            data = text.lower().startswith("@data")
            continue
        cells = next(csv.reader([text], quotechar="'", skipinitialspace=True))
        weight = 1.0
        if cells[-1].strip().startswith("{"):
            weight = float(cells.pop().strip().strip("{}"))
        values.append(cells[-1].strip())
        weights.append(weight)
    weights = np.array(weights)
    if "{" not in decl:
        return np.array([math.nan if v == "?" else float(v) for v in values]), weights, None
    names = [n.strip().strip("'\"") for n in decl[decl.index("{") + 1:decl.index("}")].split(",")]
    codes = np.array([-1 if v == "?" else names.index(v.strip("'\"")) for v in values])
    return codes, weights, len(names)


def weka_digits(value, decimals):
    """The integer Weka's ``Utils.doubleToString`` rounds ``value * 10^d`` to."""
    scaled = value * 10.0**decimals
    return int(scaled + 0.5) if scaled > 0 else -int(abs(scaled) + 0.5)


def printed_digits(text, decimals):
    return int(Decimal(text) * 10**decimals)


def check_printed(summary, ours):
    """Every figure of a printed summary equals ours rounded as Weka rounds."""
    seen = set()
    for line in summary.splitlines():
        for label, keys in LABELS.items():
            if line.startswith(label):
                numbers = re.findall(r"-?(?:\d+\.?\d*|NaN|Infinity)", line[len(label):])
                assert len(numbers) == len(keys), line
                for key, text in zip(keys, numbers):
                    seen.add(key)
                    if text in ("NaN", "Infinity", "-Infinity"):
                        assert str(ours[key]).lower().endswith(text.lower()[-3:]), key
                    else:
                        assert weka_digits(ours[key], 4) == printed_digits(text, 4), \
                            (key, ours[key], text)
    assert {"instances", "mean_absolute_error"} <= seen
    if "confusion" in ours:
        check_matrix(summary, ours["confusion"])
    if "missing_class" not in seen:
        assert ours["missing_class"] == 0
    if "unclassified" not in seen:
        assert ours["unclassified"] == 0


def check_matrix(summary, confusion):
    lines = summary.split("=== Confusion Matrix ===")[1].strip().splitlines()[1:]
    rows = [line.split("|")[0].split() for line in lines[:len(confusion)]]
    decimals = 2 if any("." in cell for row in rows for cell in row) else 0
    printed = [[printed_digits(c, decimals) for c in row] for row in rows]
    assert printed == [[weka_digits(v, decimals) for v in row] for row in confusion]


def cv_block(text):
    """The cross-validation part of a Weka command-line output."""
    return re.split(r"=== (?:Stratified c|C)ross-validation ===\n", text)[1]


def zeror(y, w, num_classes):
    """weka.classifiers.rules.ZeroR: Laplace-corrected class counts, or the
    weighted mean, over the rows with a known class, summed in row order."""

    def fit(train):
        cls, wt = y[train], w[train]
        if num_classes is None:
            known = ~np.isnan(cls)
            total = np.cumsum(np.concatenate([[0.0], wt[known]]))[-1]
            value = np.cumsum(np.concatenate([[0.0], wt[known] * cls[known]]))[-1]
            return value / total if total > 1e-6 else value
        counts = np.array([np.cumsum(np.concatenate([[1.0], wt[cls == c]]))[-1]
                           for c in range(num_classes)])
        total = np.cumsum(np.concatenate([[float(num_classes)], wt[cls >= 0]]))[-1]
        return counts / total

    def predict(model, test):
        if num_classes is None:
            return np.full(len(test), model)
        return np.tile(model, (len(test), 1))

    return fit, predict


ZEROR_FILES = sorted(GOLDEN.glob("zeror__*.txt"))
RECORDED = sorted(GOLDEN.glob("cv__*.json"))


def test_golden_files_present():
    assert len(ZEROR_FILES) >= 50 and len(RECORDED) >= 25


@pytest.mark.parametrize("path", ZEROR_FILES, ids=lambda p: p.stem)
def test_zeror_matches_weka(path):
    name, run = path.stem.split("__")[1:]
    folds, seed = map(int, re.fullmatch(r"x(\d+)_s(\d+)", run).groups())
    y, w, k = read_class(DATA / f"{name}.arff")
    fit, predict = zeror(y, w, k)
    ours = cross_validate(fit, predict, y, w, folds=folds, seed=seed, num_classes=k)
    check_printed(cv_block(path.read_text()), ours)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_recorded_folds_and_figures(path):
    """Weka's own fold orders and full-precision figures, for its own
    predictions replayed through our evaluation."""
    name, learner, run = path.stem.split("__")[1:]
    folds, seed = map(int, re.match(r"x(\d+)_s(\d+)", run).groups())
    record = json.loads(path.read_text())
    y, w, k = read_class(DATA / f"{name}.arff")
    done = []

    def fit(train):
        fold = record["folds"][len(done)]
        assert train.tolist() == fold["train"]
        done.append(fold)
        return fold

    def predict(fold, test):
        assert test.tolist() == fold["test"]
        return np.array(fold["pred"], dtype=np.float64)

    ours = cross_validate(fit, predict, y, w, folds=folds, seed=seed, num_classes=k)
    assert len(done) == folds
    for key, value in record["stats"].items():
        if key == "confusion":
            assert ours[key].tolist() == value
        else:
            assert same(ours[key], value), (key, ours[key], value)
    check_printed(record["summary"], ours)
    cli = GOLDEN / f"cli__{name}__{learner}__{run}.txt"
    if cli.exists():
        check_printed(cv_block(cli.read_text()), ours)


def test_java_random():
    for case in json.loads((GOLDEN / "java_random.json").read_text()):
        rng = JavaRandom(case["seed"])
        assert [rng.next_int() for _ in case["ints"]] == case["ints"]
        assert [[b, rng.next_int(b)] for b, _ in case["bounded"]] == case["bounded"]
        assert [rng.next_double() for _ in case["doubles"]] == case["doubles"]
        assert [str(rng.next_long()) for _ in case["longs"]] == case["longs"]


def naive_stratify(order, y, folds):
    rows, n, i = list(order), len(order), 1
    while i < n:
        ref = max(y[rows[i - 1]], -1)
        for j in range(i, n):
            if max(y[rows[j]], -1) == ref:
                rows[i], rows[j] = rows[j], rows[i]
                i += 1
        i += 1
    return [r for start in range(folds) for r in rows[start::folds]]


def test_shuffle_and_stratify_match_plain_loops():
    gen = np.random.default_rng(5)
    for _ in range(300):
        n = int(gen.integers(1, 50))
        y = gen.integers(-2, int(gen.integers(1, 6)), n)
        order = gen.permutation(n)
        folds = int(gen.integers(2, 12))
        assert stratify(order, y, folds).tolist() == naive_stratify(order, y, folds)
        seed = int(gen.integers(-99, 99))
        a, b = JavaRandom(seed), JavaRandom(seed)
        rows = list(order)
        for j in range(n - 1, 0, -1):
            k = b.next_int(j + 1)
            rows[j], rows[k] = rows[k], rows[j]
        assert randomize(order, a).tolist() == rows and a.seed == b.seed


def test_fold_sizes_and_errors():
    y = np.array([0, 1] * 7)
    splits = list(cv_splits(y, folds=4))
    assert [len(test) for _, test in splits] == [4, 4, 3, 3]
    for train, test in splits:
        assert sorted(train.tolist() + test.tolist()) == list(range(14))
    with pytest.raises(ValueError):
        list(cv_splits(y, folds=15))
    with pytest.raises(ValueError):
        list(cv_splits(y, folds=1))


def test_predicted_class_rule():
    ev = Evaluation(3)
    ev.set_priors(np.array([0, 1, 2]), None)
    probs = np.array([
        [0.4, 0.4, 0.2],        # tie: the first wins -> 0, correct
        [0.0, 0.0, 0.0],        # nothing positive: unclassified
        [np.nan, 0.3, 0.7],     # NaN never wins -> 2, wrong
        [0.2, 0.5, 0.3],        # class missing: ignored
    ])
    ev.add(np.array([0, 1, 0, -1]), np.array([1.0, 2.0, 0.5, 3.0]), probs)
    out = ev.summary()
    assert (out["correct"], out["incorrect"], out["unclassified"]) == (1.0, 0.5, 2.0)
    assert out["instances"] == 3.5 and out["missing_class"] == 3.0
    assert out["confusion"].tolist() == [[1, 0, 0.5], [0, 0, 0], [0, 0, 0]]
    assert math.isnan(out["mean_absolute_error"])  # the NaN row's error


def test_numeric_priors_are_the_weighted_training_mean():
    ev = Evaluation()
    ev.set_priors(np.array([1.0, 3.0, np.nan]), np.array([1.0, 3.0, 5.0]))
    ev.add(np.array([2.0, 4.0]), np.ones(2), np.array([2.5, 2.5]))
    assert ev.class_priors[0] / ev.class_priors_sum == 2.5
    assert ev.summary()["relative_absolute_error"] == 100.0
