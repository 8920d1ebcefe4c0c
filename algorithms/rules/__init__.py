"""Classification rules: the book's baselines ZeroR and 1R (Weka's ZeroR and OneR)."""

from ..contract import Learner, whole

LEARNERS = (
    Learner(
        name="zero_r", kind="predictor", package=__name__, params=(),
        doc="the majority class (a nominal target) or the mean (a numeric one), as "
            "Weka's ZeroR",
        fit="zero_r:fit", model="zero_r:ZeroRModel", to_sql="sql:zero_r",
        capabilities=("predict", "predict_proba", "predict_value", "model_text",
                      "model_to_sql"),
        relation=(("class", "VARCHAR"), ("probability", "DOUBLE"), ("value", "DOUBLE")),
        order_by=()),
    Learner(
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
)
