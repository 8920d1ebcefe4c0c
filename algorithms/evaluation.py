"""Cross-validation and evaluation statistics that match Weka 3.6 exactly.

Everything here is numpy (and one numba kernel) over row indices: a learner is a
pair of callables, ``fit(train_idx) -> model`` and ``predict(model, test_idx)``, and
the rows are identified by their position in the data as read.

Three pieces reproduce what ``weka.classifiers.Evaluation`` does for
``-t file`` (stratified ten-fold cross-validation, seed 1 by default):

- ``java.util.Random`` (``javautil.JavaRandom``), which draws every split;
- :func:`cv_splits`, the fold construction: the data is shuffled once, grouped
  by class and dealt round-robin into folds (nominal class only), and every
  training fold is shuffled again with the same generator, so that the per-fold
  training order is the one Weka's learners see;
- :class:`Evaluation`, the statistics: class priors per training fold (counts
  that start at 1 for a nominal class, the weighted mean for a numeric one),
  the predicted class (the first class with the largest positive probability,
  otherwise unclassified), instance weights, and rows whose class is missing
  (kept in the folds, skipped by the statistics and counted apart).

Sums are accumulated in Weka's order, one instance after the other, so the
figures agree with Weka's to the last bit rather than to a tolerance.
"""

from __future__ import annotations

import math

import numpy as np

from . import contract, progress
from .dataset import Dataset
from .javautil import JavaRandom, randomize
from .jit import njit
from .stop import checkpoint

__all__ = [
    "Evaluation",
    "cross_validate",
    "cv_splits",
    "stratify",
    "test_cv",
    "train_cv",
]


def stratify(order: np.ndarray, y: np.ndarray, folds: int) -> np.ndarray:
    """``Instances.stratify`` for a nominal class: the grouping pass (take the
    row in front, swap the later rows of its class up behind it) and then the
    round-robin deal ``stratStep``. ``y`` holds class codes by row; all missing
    codes (any negative value) count as one class, as in Weka."""
    if folds <= 1:
        raise ValueError("Number of folds must be greater than 1")
    codes = np.asarray(y)
    codes = np.where(codes < 0, -1, codes).astype(np.int64)
    return stratified(np.asarray(order), codes, folds)


@njit(cache=True)
def stratified(order, codes, folds):
    """The kernel of :func:`stratify`: ``codes`` by row, missing as -1; the rows
    come back as numbers of ``order``'s width."""
    rows = order.copy()
    n = len(rows)
    index = 1
    while index < n:
        c = codes[rows[index - 1]]
        for j in range(index, n):
            if codes[rows[j]] == c:
                t = rows[index]
                rows[index] = rows[j]
                rows[j] = t
                index += 1
        index += 1
    out = np.empty(n, rows.dtype)
    p = 0
    for k in range(folds):
        for j in range(k, n, folds):
            out[p] = rows[j]
            p += 1
    return out


def _fold_bounds(n: int, folds: int, fold: int) -> tuple[int, int]:
    if folds < 2:
        raise ValueError("Number of folds must be at least 2!")
    if folds > n:
        raise ValueError("Can't have more folds than instances!")
    size = n // folds
    if fold < n % folds:
        size += 1
        offset = fold
    else:
        offset = n % folds
    first = fold * (n // folds) + offset
    return first, size


def test_cv(order: np.ndarray, folds: int, fold: int) -> np.ndarray:
    """``Instances.testCV``: the fold-th contiguous block of ``order`` (a view)."""
    first, size = _fold_bounds(len(order), folds, fold)
    return order[first:first + size]


def train_cv(order: np.ndarray, folds: int, fold: int, rng: JavaRandom | None = None):
    """``Instances.trainCV``: everything but the test block, shuffled with
    ``rng`` when one is given (which advances it)."""
    first, size = _fold_bounds(len(order), folds, fold)
    train = np.concatenate([order[:first], order[first + size:]])
    return train if rng is None else randomize(train, rng)


def cv_splits(y, folds: int = 10, seed: int = 1, nominal: bool = True):
    """Yield ``(train_idx, test_idx)`` per fold, as ``crossValidateModel`` builds
    them: shuffle, stratify (nominal class), then ``trainCV`` with the shared
    generator and ``testCV``. Lazily, since the generator is shared."""
    n = len(y)
    _fold_bounds(n, folds, 0)
    rng = JavaRandom(seed)
    order = randomize(np.arange(n, dtype=np.int64), rng)
    if nominal:
        order = stratify(order, np.asarray(y), folds)
    for fold in range(folds):
        train = train_cv(order, folds, fold, rng)
        yield train, test_cv(order, folds, fold)


def _total(start: float, values) -> float:
    """``start`` plus ``values`` added one at a time, left to right."""
    values = np.asarray(values, dtype=np.float64).ravel()
    if len(values) == 0:
        return float(start)
    return float(np.cumsum(np.concatenate([[start], values]))[-1])


def _row_total(values: np.ndarray) -> np.ndarray:
    """Per row, the columns added left to right from 0."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    return np.cumsum(values, axis=1)[:, -1] + 0.0


def _div(a: float, b: float) -> float:
    """Java's double division: no exception, infinities and NaN instead."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(a) / np.float64(b))


def _sqrt(a: float) -> float:
    return math.sqrt(a) if a >= 0 else math.nan


class Evaluation:
    """The running statistics of ``weka.classifiers.Evaluation``.

    ``num_classes`` given: a nominal class, ``y`` holds codes ``0..K-1`` and a
    negative code is missing, predictions are ``(m, K)`` probability rows.
    ``num_classes`` None: a numeric class, ``y`` is float with NaN missing, and
    predictions are ``(m,)`` floats with NaN for no prediction.

    Call :meth:`set_priors` with the training rows before :meth:`add` of the
    test rows predicted by the model built from them, as Weka does per fold.
    """

    def __init__(self, num_classes: int | None = None):
        self.nominal = num_classes is not None
        self.num_classes = int(num_classes) if self.nominal else 1
        k = self.num_classes
        self.confusion = np.zeros((k, k)) if self.nominal else None
        self.with_class = 0.0
        self.missing_class = 0.0
        self.unclassified = 0.0
        self.correct = 0.0
        self.incorrect = 0.0
        self.sum_err = 0.0
        self.sum_abs_err = 0.0
        self.sum_sqr_err = 0.0
        self.sum_prior_abs_err = 0.0
        self.sum_prior_sqr_err = 0.0
        self.sum_class = 0.0
        self.sum_sqr_class = 0.0
        self.sum_class_predicted = 0.0
        self.sum_predicted = 0.0
        self.sum_sqr_predicted = 0.0
        self.class_priors = np.zeros(k)
        self.class_priors_sum = 0.0
        self._train = None  # numeric class: (values, weights) not yet turned into priors

    def set_priors(self, y, weights=None) -> None:
        """Priors from training rows (in training order). Nominal: each class
        starts at 1 and adds its weights. Numeric: the weighted mean, taken
        from these rows when the first numeric prediction comes in."""
        y = np.asarray(y)
        w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
        if self.nominal:
            known = y >= 0
            self.class_priors = np.array(
                [_total(1.0, w[known & (y == c)]) for c in range(self.num_classes)])
            self.class_priors_sum = _total(float(self.num_classes), w[known])
        else:
            known = ~np.isnan(y)
            self._train = (y[known].astype(np.float64), w[known])

    def _numeric_priors(self) -> None:
        values, weights = self._train
        self.class_priors = np.array([_total(0.0, values * weights)])
        self.class_priors_sum = _total(0.0, weights)
        self._train = None

    def add(self, y, weights, predictions) -> None:
        """Record predictions for test rows, in the order Weka evaluates them."""
        y = np.asarray(y)
        n = len(y)
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
        pred = np.asarray(predictions, dtype=np.float64)
        missing = (y < 0) if self.nominal else np.isnan(y)
        self.missing_class = _total(self.missing_class, w[missing])
        keep = ~missing
        y, w, pred = y[keep], w[keep], pred[keep]
        self.with_class = _total(self.with_class, w)
        if self.nominal:
            self._add_nominal(y.astype(np.int64), w, pred.reshape(len(y), self.num_classes))
        else:
            self._add_numeric(y.astype(np.float64), w, pred.reshape(len(y)))

    def _add_nominal(self, y, w, probs) -> None:
        # the first class whose probability beats all before it, from 0 up
        score = np.where(np.isnan(probs), -np.inf, probs)
        best = np.argmax(score, axis=1)
        ok = score[np.arange(len(y)), best] > 0
        self.unclassified = _total(self.unclassified, w[~ok])
        y, w, probs, best = y[ok], w[ok], probs[ok], best[ok]
        actual = np.zeros_like(probs)
        actual[np.arange(len(y)), y] = 1.0
        self._add_errors(w, probs, actual, self.class_priors / self.class_priors_sum)
        np.add.at(self.confusion, (y, best), w)
        right = best == y
        self.incorrect = _total(self.incorrect, w[~right])
        self.correct = _total(self.correct, w[right])

    def _add_numeric(self, y, w, pred) -> None:
        ok = ~np.isnan(pred)
        self.unclassified = _total(self.unclassified, w[~ok])
        y, w, pred = y[ok], w[ok], pred[ok]
        if len(y) == 0:
            return
        if self._train is not None:
            self._numeric_priors()
        self.sum_class = _total(self.sum_class, w * y)
        self.sum_sqr_class = _total(self.sum_sqr_class, w * y * y)
        self.sum_class_predicted = _total(self.sum_class_predicted, w * y * pred)
        self.sum_predicted = _total(self.sum_predicted, w * pred)
        self.sum_sqr_predicted = _total(self.sum_sqr_predicted, w * pred * pred)
        prior = self.class_priors / self.class_priors_sum
        self._add_errors(w, pred[:, None], y[:, None], prior)

    def _add_errors(self, w, predicted, actual, prior) -> None:
        k = float(self.num_classes)
        diff = predicted - actual
        self.sum_err = _total(self.sum_err, w * _row_total(diff) / k)
        self.sum_abs_err = _total(self.sum_abs_err, w * _row_total(np.abs(diff)) / k)
        self.sum_sqr_err = _total(self.sum_sqr_err, w * _row_total(diff * diff) / k)
        diff = prior[None, :] - actual
        self.sum_prior_abs_err = _total(self.sum_prior_abs_err,
                                        w * _row_total(np.abs(diff)) / k)
        self.sum_prior_sqr_err = _total(self.sum_prior_sqr_err,
                                        w * _row_total(diff * diff) / k)

    # -- the figures ---------------------------------------------------------

    def kappa(self) -> float:
        m = self.confusion
        k = len(m)
        rows, cols, total = [0.0] * k, [0.0] * k, 0.0
        for i in range(k):
            for j in range(k):
                rows[i] += m[i, j]
                cols[j] += m[i, j]
                total += m[i, j]
        agree = chance = 0.0
        for i in range(k):
            chance += rows[i] * cols[i]
            agree += m[i, i]
        chance = _div(chance, total * total)
        agree = _div(agree, total)
        return _div(agree - chance, 1 - chance) if chance < 1 else 1.0

    def correlation(self) -> float:
        n = self.with_class - self.unclassified
        var_actual = self.sum_sqr_class - _div(self.sum_class * self.sum_class, n)
        var_pred = self.sum_sqr_predicted - _div(self.sum_predicted * self.sum_predicted, n)
        covar = self.sum_class_predicted - _div(self.sum_class * self.sum_predicted, n)
        product = var_actual * var_pred
        if product > 0 or math.isnan(product):
            return _div(covar, _sqrt(product))
        return 0.0

    def summary(self) -> dict:
        """The figures Weka prints, by name (percentages in percent)."""
        classified = self.with_class - self.unclassified
        mae = _div(self.sum_abs_err, classified)
        rmse = _sqrt(_div(self.sum_sqr_err, classified))
        prior_mae = _div(self.sum_prior_abs_err, self.with_class)
        prior_rmse = _sqrt(_div(self.sum_prior_sqr_err, self.with_class))
        out = {}
        if self.nominal:
            out.update(
                correct=self.correct,
                incorrect=self.incorrect,
                pct_correct=_div(100 * self.correct, self.with_class),
                pct_incorrect=_div(100 * self.incorrect, self.with_class),
                kappa=self.kappa(),
            )
        else:
            out["correlation"] = self.correlation()
        out.update(
            mean_absolute_error=mae,
            root_mean_squared_error=rmse,
            relative_absolute_error=_div(100 * mae, prior_mae),
            root_relative_squared_error=_div(100 * rmse, prior_rmse),
            instances=self.with_class,
            unclassified=self.unclassified,
            pct_unclassified=_div(100 * self.unclassified, self.with_class),
            missing_class=self.missing_class,
        )
        if self.nominal:
            out["confusion"] = self.confusion.copy()
        return out


def cross_validate(fit, predict, y, weights=None, folds=10, seed=1, num_classes=None):
    """Weka's cross-validation of a learner, as ``-t file [-x folds] [-s seed]``.

    ``fit(train_idx)`` builds a model from rows ``train_idx`` (int64, in Weka's
    per-fold training order, rows with a missing class included);
    ``predict(model, test_idx)`` returns ``(len(test_idx), num_classes)``
    probabilities for a nominal class (``num_classes`` given, ``y`` int codes,
    -1 missing) or ``(len(test_idx),)`` floats for a numeric class
    (``num_classes`` None, ``y`` float, NaN missing; NaN predicts nothing).

    Returns :meth:`Evaluation.summary`: ``correct, incorrect, pct_correct,
    pct_incorrect, kappa`` (nominal) or ``correlation`` (numeric), then
    ``mean_absolute_error, root_mean_squared_error, relative_absolute_error,
    root_relative_squared_error, instances, unclassified, pct_unclassified,
    missing_class`` and, nominal, the ``confusion`` matrix (rows actual,
    columns predicted).
    """
    y = np.asarray(y)
    if num_classes is None:
        y = y.astype(np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    evaluation = Evaluation(num_classes)
    for k, (train, test) in enumerate(cv_splits(y, folds, seed,
                                                nominal=num_classes is not None)):
        checkpoint()
        progress.report("cross-validation folds", k, folds)
        evaluation.set_priors(y[train], w[train])
        model = fit(train)
        evaluation.add(y[test], w[test], predict(model, test))
    progress.report("cross-validation folds", folds, folds)
    return evaluation.summary()


FOLDS = contract.whole("folds", 10, "number of folds", low=2)
SEED = contract.whole("seed", 1, "seed of the fold shuffle")


def check_folds(folds, n, what="rows with a class", fn=None):
    """Refuse more folds than rows: cross-validation's, or a learner's own holdout
    folds (REPTree, PART's reduced-error pruning, Ridor)."""
    if folds > n:
        raise ValueError(f"{fn + ': ' if fn else ''}folds ({folds}) cannot exceed the "
                         f"number of {what} ({n})")


def _scoring_columns(data, model, rows):
    """The columns of ``data`` at ``rows`` that ``model`` scores with (its ``used``
    attributes, found by name)."""
    where = {a.name: i for i, a in enumerate(data.attributes)}
    return [data.columns[where[model.attributes[j].name]][rows] for j in model.used]


def evaluate(decl, fn, data, target, options, folds=10, seed=1, settings=None):
    """Cross-validation of a declared learner on ``data`` (a Dataset), as Weka's
    command line evaluates it: a classifier's or regressor's summary (see
    ``cross_validate``), or a density clusterer's mean held-out log-likelihood
    (``ClusterEvaluation.crossValidateModel``). A clusterer given a target leaves
    that column out. A classifier's result also names its ``classes``, the rows
    and columns of ``confusion``."""
    folds, seed = FOLDS.check(fn, folds), SEED.check(fn, seed)
    if data.n == 0:
        raise ValueError(f"{fn}: the table is empty")
    if decl.kind == "clusterer":
        return _cluster_cv(decl, fn, data, target, options, folds, seed, settings)
    if not decl.has_target or "predict" not in decl.capabilities:
        raise ValueError(f"{fn}: a {decl.name} model ({decl.kind}) makes no predictions "
                         "to cross-validate")
    t = decl.target_index(fn, data, target)
    y = data.columns[t]
    check_folds(folds, data.n, "rows", fn)  # as the reference: rows missing the class count

    def fit(train):
        return decl.fit_at(fn, data.select(train, spare=True), t, options, settings)

    if data.attributes[t].nominal:  # a classifier, or a predictor of a nominal target
        def predict(model, test):
            return model.proba(_scoring_columns(data, model, test), len(test))
        classes = data.attributes[t].values
        result = cross_validate(fit, predict,
                                np.where(np.isnan(y), -1, y).astype(np.int64),
                                data.weights, folds, seed, len(classes))
        return {**result, "classes": classes}

    def predict_value(model, test):
        return model.predict(_scoring_columns(data, model, test), len(test))
    return cross_validate(fit, predict_value, y, data.weights, folds, seed)


def _cluster_cv(decl, fn, data, target, options, folds, seed, settings):
    if "log_likelihood" not in decl.capabilities:
        raise ValueError(f"{fn}: a {decl.name} model has no likelihood to "
                         "cross-validate (it is not a density model, as em is)")
    if target is not None:
        t = contract.column_index(fn, data.attributes, target)
        keep = [i for i in range(len(data.attributes)) if i != t]
        data = Dataset([data.attributes[i] for i in keep], [data.columns[i] for i in keep],
                       data.weights)
    n = data.n
    check_folds(folds, n, "rows", fn)
    rng = JavaRandom(seed)
    # the command line shuffles the rows, then crossValidateModel shuffles them again
    order = randomize(randomize(np.arange(n), rng), rng)
    total = 0.0
    for f in range(folds):
        train = train_cv(order, folds, f, rng)
        test = test_cv(order, folds, f)
        model = decl.fit_at(fn, data.select(train, spare=True), None, options, settings)
        for v in model.log_density(_scoring_columns(data, model, test), len(test)).tolist():
            total += v
    return {"log_likelihood": total / n, "instances": float(n)}
