"""Cross-validation of any learner from SQL, with the reference's folds and figures.

Rows arrive in the relation's order (numbered before they are listed), because the
folds depend on it as they do on a file's order in the reference.
"""

import numpy as np
import pyarrow as pa

from ..algorithms.aode import fit_aode
from ..algorithms.bayes_model import fit_bayes_net
from ..algorithms.evaluation import cross_validate
from ..algorithms.tree_model import fit_c45
from .bayes import aode_options, bayes_options
from .c45 import c45_options, check_class, training_data
from .m5p import FITS, check_target, m5_options
from .registry import column, scalars, udf

FN = "cross_validate"


def _callables(data, t, build, score):
    """fit/predict callables over row indices of ``data``."""
    others = [i for i in range(len(data.attributes)) if i != t]

    def fit(train):
        return build(data.select(train), t)

    def predict(model, test):
        return score(model)([data.columns[others[j]][test] for j in model.used], len(test))

    return fit, predict


def _c45(data, t, options):
    o = {**options, "min_leaf": 2 if options["min_leaf"] is None else options["min_leaf"]}
    opts = c45_options(FN, *(o[k] for k in ("confidence", "min_leaf", "pruned",
                                            "subtree_raising", "binary_splits",
                                            "mdl_correction", "collapse")))
    return _callables(data, t, lambda d, i: fit_c45(d, i, opts), lambda m: m.proba)


def _m5(name):
    def make(data, t, options):
        min_leaf = 4 if options["min_leaf"] is None else options["min_leaf"]
        opts = m5_options(FN, min_leaf, options["pruned"], options["smoothed"],
                          options["regression_tree"])
        return _callables(data, t, lambda d, i: FITS[name](d, i, opts), lambda m: m.predict)
    return make


def _bayes_net(data, t, options):
    opts = bayes_options(FN, *(options[k] for k in ("search", "max_parents", "score",
                                                     "alpha", "use_ad_tree")))
    return _callables(data, t, lambda d, i: fit_bayes_net(d, i, opts), lambda m: m.proba)


def _aode(data, t, options):
    limit = aode_options(FN, options["min_frequency"])
    return _callables(data, t, lambda d, i: fit_aode(d, i, limit), lambda m: m.proba)


# learner: (its fit/predict callables, its target check, nominal target)
LEARNERS = {"c45": (_c45, check_class, True),
            "m5p": (_m5("m5p"), check_target, False),
            "m5_rules": (_m5("m5_rules"), check_target, False),
            "bayes_net": (_bayes_net, check_class, True),
            "aode": (_aode, check_class, True)}

SUMMARY = [("correct", pa.float64()), ("incorrect", pa.float64()),
           ("pct_correct", pa.float64()), ("pct_incorrect", pa.float64()),
           ("kappa", pa.float64()), ("correlation", pa.float64()),
           ("mean_absolute_error", pa.float64()), ("root_mean_squared_error", pa.float64()),
           ("relative_absolute_error", pa.float64()),
           ("root_relative_squared_error", pa.float64()), ("instances", pa.float64()),
           ("unclassified", pa.float64()), ("missing_class", pa.float64())]
CELL = pa.struct([("actual", pa.string()), ("predicted", pa.string()),
                  ("weight", pa.float64())])
RESULT = pa.struct(SUMMARY + [("confusion", pa.list_(CELL))])
RESULT_SQL = ("STRUCT(" + ", ".join(f"{name} DOUBLE" for name, _ in SUMMARY)
              + ", confusion STRUCT(actual VARCHAR, predicted VARCHAR, weight DOUBLE)[])")


def _check(fn, learner, folds, seed, n):
    if learner not in LEARNERS:
        raise ValueError(f"{fn}: learner must be one of {', '.join(map(repr, LEARNERS))}, "
                         f"got {learner!r}")
    if folds is None or folds < 2 or folds != int(folds):
        raise ValueError(f"{fn}: folds must be a whole number >= 2, got {folds}")
    if folds > n:
        raise ValueError(f"{fn}: folds ({folds}) cannot exceed the number of rows "
                         f"with a class ({n})")
    if seed is None or seed != int(seed):
        raise ValueError(f"{fn}: seed must be a whole number, got {seed}")


@udf("_dm_cross_validate", None, RESULT_SQL)
def cross_validate_udf(learner, rows, target, folds, seed, options, weight, max_values):
    fn = FN
    rows = column(rows)
    out = []
    args = zip(scalars(learner), scalars(target), scalars(folds), scalars(seed),
               scalars(options), scalars(weight), scalars(max_values))
    for i, (lrn, tgt, k, s, opts, w, mv) in enumerate(args):
        group = rows[i].values if rows[i].is_valid else None
        if lrn not in LEARNERS:
            _check(fn, lrn, 2, 0, 2)
        make, check, nominal = LEARNERS[lrn]
        data, t = training_data(fn, group, tgt, w, mv, check)
        y = data.columns[t]
        _check(fn, lrn, k, s, int((~np.isnan(y)).sum()))
        fit, predict = make(data, t, opts)
        if nominal:
            classes = data.attributes[t].values
            result = cross_validate(fit, predict, np.where(np.isnan(y), -1, y).astype(
                np.int64), data.weights, int(k), int(s), len(classes))
        else:
            result = cross_validate(fit, predict, y, data.weights, int(k), int(s))
        confusion = result.pop("confusion", None)
        row = {name: float(result[name]) if name in result else None
               for name, _ in SUMMARY}
        row["confusion"] = None if confusion is None else [
            {"actual": classes[a], "predicted": classes[p], "weight": float(confusion[a, p])}
            for a in range(len(classes)) for p in range(len(classes))]
        out.append(row)
    return pa.array(out, RESULT)
