"""Trees beyond C4.5: REPTree (Weka's REPTree), for a nominal or a numeric target."""

from ..contract import Learner, flag, number, whole

LEARNERS = (
    Learner(
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
                      "model_to_sql"),
        relation=(("node", "INTEGER"), ("parent", "INTEGER"), ("depth", "INTEGER"),
                  ("attribute", "VARCHAR"), ("operator", "VARCHAR"), ("value", "VARCHAR"),
                  ("is_leaf", "BOOLEAN"), ("class", "VARCHAR"), ("mean", "DOUBLE"),
                  ("weight", "DOUBLE"), ("errors", "DOUBLE"), ("holdout_weight", "DOUBLE"),
                  ("holdout_errors", "DOUBLE")),
        order_by=("node",)),
)
