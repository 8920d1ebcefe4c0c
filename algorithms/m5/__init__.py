"""M5' model trees (Weka's M5P) and the rules read off them (M5Rules)."""

from ..contract import Learner, flag, number

PARAMS = (
    number("min_leaf", 4, "least number of rows at a leaf (M5P -M)", low=1),
    flag("pruned", True, "prune the tree (false: M5P -N)"),
    flag("smoothed", True, "smooth the leaf models along the path (false: M5P -U)"),
    flag("regression_tree", False, "constant leaves: a regression tree (M5P -R)"),
)
CAPABILITIES = ("predict", "predict_value", "model_text", "model_to_sql", "model_dot")
COEFFICIENTS = "MAP(VARCHAR, DOUBLE)"

LEARNERS = (
    Learner(
        memory=22,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="m5p", kind="regressor", package=__name__, params=PARAMS,
        doc="M5' model tree for a numeric target, as Weka's M5P builds it",
        fit="model:fit", model="model:M5Model", to_sql="sql:expression",
        capabilities=CAPABILITIES, version=2,
        relation=(("node", "INTEGER"), ("parent", "INTEGER"), ("depth", "INTEGER"),
                  ("attribute", "VARCHAR"), ("operator", "VARCHAR"), ("value", "DOUBLE"),
                  ("is_leaf", "BOOLEAN"), ("model", "VARCHAR"), ("instances", "BIGINT"),
                  ("error_pct", "DOUBLE"), ("intercept", "DOUBLE"),
                  ("coefficients", COEFFICIENTS)),
        order_by=("node",)),
    Learner(
        memory=22,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="m5_rules", kind="regressor", package=__name__, params=PARAMS,
        doc="a decision list of linear models, one M5' tree per rule, as Weka's M5Rules",
        fit="model:fit_rules", model="model:M5RulesModel", to_sql="sql:expression",
        capabilities=CAPABILITIES, version=2,
        relation=(("rule", "INTEGER"), ("conditions", "VARCHAR[]"),
                  ("intercept", "DOUBLE"), ("coefficients", COEFFICIENTS),
                  ("coverage", "BIGINT"), ("error_pct", "DOUBLE")),
        order_by=("rule",)),
)
