"""C4.5 decision trees (J48) and the rules read off them (C4.5rules)."""

from ..contract import Learner, flag, number, whole

PARAMS = (
    number("confidence", 0.25, "confidence factor of pessimistic pruning (J48 -C)",
           low=0, high=0.5, low_open=True),
    whole("min_leaf", 2, "least weight of two branches of a split (J48 -M)", low=1),
    flag("pruned", True, "prune the tree (false: J48 -U)"),
    flag("subtree_raising", True, "raise subtrees while pruning (false: J48 -S)"),
    flag("binary_splits", False, "binary splits on nominal attributes (J48 -B)"),
    flag("mdl_correction", True, "MDL correction of numeric split gains (false: J48 -J)"),
    flag("collapse", True, "collapse subtrees that do not lower training error"),
)

LEARNERS = (
    Learner(
        memory=21,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="c45", kind="classifier", package=__name__, params=PARAMS,
        doc="C4.5 decision tree, as Weka's J48 grows and prunes it",
        fit="model:fit", model="model:C45Model", to_sql="sql:expression",
        capabilities=("predict", "predict_proba", "model_text", "model_to_sql", "model_dot"),
        relation=(("node", "INTEGER"), ("parent", "INTEGER"), ("depth", "INTEGER"),
                  ("attribute", "VARCHAR"), ("operator", "VARCHAR"), ("value", "VARCHAR"),
                  ("is_leaf", "BOOLEAN"), ("class", "VARCHAR"), ("weight", "DOUBLE"),
                  ("errors", "DOUBLE"), ("distribution", "MAP(VARCHAR, DOUBLE)")),
        order_by=("node",)),
    Learner(
        memory=26,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="c45_rules", kind="classifier", package=__name__, params=PARAMS,
        doc="rules from a C4.5 tree: one per leaf, conditions dropped greedily while "
            "the pessimistic error does not grow, duplicates removed",
        fit="rules:fit", model="rules:C45RulesModel", capabilities=("model_dot",),
        relation=(("rule", "INTEGER"), ("conditions", "VARCHAR[]"), ("class", "VARCHAR"),
                  ("coverage", "DOUBLE"), ("errors", "DOUBLE"),
                  ("error_estimate", "DOUBLE")),
        order_by=("rule",)),
)
