"""Trees beyond C4.5: REPTree (Weka's REPTree), for a nominal or a numeric target,
and CART (Weka's SimpleCart)."""

from ..contract import Learner, flag, number, whole

LEARNERS = (
    Learner(
        memory=21,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="rep_tree", kind="predictor", package=__name__,
        doc="a fast tree grown by information gain or variance reduction and pruned "
            "by reduced error on a held-out fold, as Weka's REPTree",
        params=(
            number("min_leaf", 2, "least total weight of the rows at a leaf (REPTree -M)",
                   low=0),
            number("min_variance", 0.001, "least share of the training variance a node "
                   "needs to be split, numeric target (-V)", low=0),
            whole("folds", 3, "folds of the data; one of them is held out for pruning (-N)",
                  low=2),
            whole("seed", 1, "seed of the shuffle into folds (-S)", low=-2**31,
                  high=2**31 - 1),
            flag("pruned", True, "prune by reduced error (false: -P, every row grows "
                 "the tree)"),
            whole("max_depth", -1, "deepest level of the tree, -1 for no limit (-L)",
                  low=-1),
        ),
        fit="model:fit", model="model:RepTreeModel", to_sql="sql:expression",
        capabilities=("predict", "predict_proba", "predict_value", "model_text",
                      "model_to_sql", "model_dot"),
        relation=(("node", "INTEGER"), ("parent", "INTEGER"), ("depth", "INTEGER"),
                  ("attribute", "VARCHAR"), ("operator", "VARCHAR"), ("value", "VARCHAR"),
                  ("is_leaf", "BOOLEAN"), ("class", "VARCHAR"), ("mean", "DOUBLE"),
                  ("weight", "DOUBLE"), ("errors", "DOUBLE"), ("holdout_weight", "DOUBLE"),
                  ("holdout_errors", "DOUBLE")),
        order_by=("node",)),
    Learner(
        memory=27,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="cart", kind="classifier", package=__name__,
        doc="CART: binary splits by the Gini index, minimal cost-complexity pruning "
            "chosen by internal cross-validation, as Weka's SimpleCart",
        params=(
            whole("seed", 1, "seed of the shuffle into pruning folds (SimpleCart -S)",
                  low=-2**31, high=2**31 - 1),
            number("min_leaf", 2, "least rows in each branch of a split (-M)", low=1),
            whole("folds", 5, "folds of the internal cross-validation (-N)", low=2),
            flag("pruned", True, "prune by cost complexity (false: -U)"),
            flag("heuristic", True, "order the values of a nominal attribute by their "
                 "first principal component for more than two classes, instead of trying "
                 "every subset (false: -H)"),
            flag("one_se_rule", False, "the most pruned tree within one standard error "
                 "of the least cross-validated error (-A)"),
            number("train_fraction", 1.0, "share of the rows the internal "
                   "cross-validation uses (-C)", low=0, high=1, low_open=True),
        ),
        fit="cart:fit", model="cart:CartModel", to_sql="sql:cart",
        capabilities=("predict", "predict_proba", "model_text", "model_to_sql", "model_dot"),
        relation=(("node", "INTEGER"), ("parent", "INTEGER"), ("depth", "INTEGER"),
                  ("test", "VARCHAR"), ("is_leaf", "BOOLEAN"), ("class", "VARCHAR"),
                  ("weight", "DOUBLE"), ("errors", "DOUBLE")),
        order_by=("node",)),
)
