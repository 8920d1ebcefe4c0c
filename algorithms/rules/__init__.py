"""Classification rules: the book's baselines ZeroR and 1R (Weka's ZeroR and OneR),
PART's rules from partial decision trees, RIPPER's rule sets (Weka's JRip) and
Ridor's rules with exceptions."""

from ..contract import Learner, flag, number, whole

LEARNERS = (
    Learner(
        memory=14,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="zero_r", kind="predictor", package=__name__, params=(),
        doc="the majority class (a nominal target) or the mean (a numeric one), as "
            "Weka's ZeroR",
        fit="zero_r:fit", model="zero_r:ZeroRModel", to_sql="sql:zero_r",
        capabilities=("predict", "predict_proba", "predict_value", "model_text",
                      "model_to_sql"),
        relation=(("class", "VARCHAR"), ("probability", "DOUBLE"), ("value", "DOUBLE")),
        order_by=()),
    Learner(
        memory=22,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="one_r", kind="classifier", package=__name__,
        params=(whole("min_bucket", 6, "least count of the majority class in an interval "
                      "of a numeric attribute (OneR -B)", low=1),),
        doc="1R: the one attribute whose value (numeric: interval) predicts the class "
            "best, as Weka's OneR",
        fit="one_r:fit", model="one_r:OneRModel", to_sql="sql:one_r",
        capabilities=("predict", "predict_proba", "model_text", "model_to_sql"),
        relation=(("branch", "INTEGER"), ("attribute", "VARCHAR"), ("value", "VARCHAR"),
                  ("low", "DOUBLE"), ("high", "DOUBLE"), ("class", "VARCHAR"),
                  ("instances", "BIGINT"), ("correct", "BIGINT")),
        order_by=("branch",)),
    Learner(
        memory=25,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="part", kind="classifier", package=__name__,
        doc="a decision list read off partial C4.5 trees, as Weka's PART builds it",
        params=(
            number("confidence", 0.25, "confidence factor of pessimistic pruning (PART -C)",
                   low=0, high=0.5, low_open=True),
            whole("min_leaf", 2, "least weight of two branches of a split (-M)", low=1),
            flag("reduced_error_pruning", False, "prune by reduced error on a held-out "
                 "fold instead (-R)"),
            whole("folds", 3, "folds for reduced-error pruning; one is held out (-N)",
                  low=2),
            flag("binary_splits", False, "binary splits on nominal attributes (-B)"),
            flag("pruned", True, "prune the partial trees (false: -U)"),
            whole("seed", 1, "seed of the shuffle into folds (-Q)", low=-2**31,
                  high=2**31 - 1),
        ),
        fit="part:fit", model="part:PartModel", to_sql="sql:part",
        capabilities=("predict", "predict_proba", "model_text", "model_to_sql", "model_dot"),
        relation=(("rule", "INTEGER"), ("conditions", "VARCHAR[]"), ("class", "VARCHAR"),
                  ("coverage", "DOUBLE"), ("errors", "DOUBLE")),
        order_by=("rule",)),
    Learner(
        memory=21,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="ridor", kind="classifier", package=__name__,
        doc="ripple-down rules: a default class with exceptions, grown by IREP, as "
            "Weka's Ridor",
        params=(
            whole("folds", 3, "folds of IREP; one is held out for pruning (Ridor -F)",
                  low=2),
            whole("shuffles", 1, "shuffles of the data per rule, the best rule kept (-S)",
                  low=1),
            flag("all_data_error", False, "judge a rule by its error on all the data, "
                 "not only the held-out fold (-A)"),
            flag("majority_class", False, "take the majority class as each default "
                 "instead of the best (-M)"),
            number("min_weight", 2.0, "least weight on each side of a condition (-N)",
                   low=0),
            whole("seed", 1, "seed of the shuffles (-s)", low=-2**31, high=2**31 - 1),
        ),
        fit="ridor:fit", model="ridor:RidorModel", to_sql="sql:ridor",
        capabilities=("predict", "predict_proba", "model_text", "model_to_sql", "model_dot"),
        relation=(("rule", "INTEGER"), ("parent", "INTEGER"), ("depth", "INTEGER"),
                  ("conditions", "VARCHAR[]"), ("class", "VARCHAR"), ("coverage", "DOUBLE"),
                  ("errors", "DOUBLE")),
        order_by=("rule",)),
    Learner(
        memory=22,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="ripper", kind="classifier", package=__name__,
        doc="RIPPER: per class, from the rarest, rules grown and pruned by IREP, kept "
            "by description length and optimised, as Weka's JRip",
        params=(
            whole("folds", 3, "folds of IREP; one is held out for pruning (JRip -F)",
                  low=2),
            number("min_weight", 2.0, "least positive weight a condition must cover (-N)",
                   low=0),
            whole("optimizations", 2, "optimisation passes over each rule set (-O)",
                  low=0, high=100),
            whole("seed", 1, "seed of the shuffles (-S)", low=-2**31, high=2**31 - 1),
            flag("check_error_rate", True, "stop at a rule whose error is at least one "
                 "half (false: -E)"),
            flag("pruned", True, "prune by IREP and optimise (false: -P, rules grown on "
                 "all the rows)"),
        ),
        fit="ripper:fit", model="ripper:RipperModel", to_sql="sql:ripper",
        capabilities=("predict", "predict_proba", "model_text", "model_to_sql", "model_dot"),
        relation=(("rule", "INTEGER"), ("conditions", "VARCHAR[]"), ("class", "VARCHAR"),
                  ("coverage", "DOUBLE"), ("errors", "DOUBLE")),
        order_by=("rule",)),
)
