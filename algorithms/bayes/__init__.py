"""Bayesian classifiers: networks (Weka's BayesNet), counted from AD-trees or
scans; AODE; and naive Bayes (Weka's NaiveBayes)."""

from ..contract import Learner, choice, flag, model_value, number, whole

SEARCHES = ("k2", "tan", "hill_climb")
SCORES = ("bayes", "bdeu", "mdl", "aic", "loglik")

LEARNERS = (
    Learner(
        memory=24,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="bayes_net", kind="classifier", package=__name__,
        doc="a Bayesian network classifier by local score search, as Weka's BayesNet",
        params=(
            choice("search", "k2", SEARCHES, "structure search (K2, TAN, HillClimber)"),
            whole("max_parents", 1, "most parents of a node, the class included (-P)",
                  low=0),
            choice("score", "bayes", SCORES, "local score of the search (-S)"),
            number("alpha", 0.5, "prior count of the probability tables (-A)", low=0,
                   low_open=True),
            flag("use_ad_tree", True, "count through an AD-tree rather than scans (-D)"),
            model_value("ad_tree", "ad_tree", "an AD-tree of the table (ad_tree_fit) to "
                        "count with instead of the rows, reused across searches",
                        instead_of_rows=True)),
        fit="model:fit", model="model:BayesNetModel", to_sql="sql:expression",
        capabilities=("predict", "predict_proba", "model_text", "model_to_sql", "model_dot"),
        version=2,
        relation=(("node", "VARCHAR"), ("parents", "VARCHAR[]"),
                  ("parent_values", "VARCHAR[]"), ("value", "VARCHAR"),
                  ("probability", "DOUBLE"))),
    Learner(
        memory=24,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="aode", kind="classifier", package=__name__,
        doc="averaged one-dependence estimators, as Weka's AODE",
        params=(
            whole("min_frequency", 1, "least count of a value to serve as a superparent "
                  "(AODE -F)", low=0),),
        fit="aode:fit", model="aode:AODEModel",
        capabilities=("predict", "predict_proba", "model_text"), version=2,
        relation=(("class", "VARCHAR"), ("prior", "DOUBLE"), ("attribute", "VARCHAR"),
                  ("value", "VARCHAR"), ("count", "DOUBLE"), ("superparent", "BOOLEAN"))),
    Learner(
        memory=17,  # bytes a cell fed, measured at 1M rows (benchmarks/memory.py)
        name="naive_bayes", kind="classifier", package=__name__,
        doc="naive Bayes with normal or kernel estimates or discretisation of numeric "
            "attributes, as Weka's NaiveBayes",
        params=(choice("numeric", "normal", ("normal", "kernel", "discretize"),
                       "how a numeric attribute is modelled per class: a normal "
                       "distribution, normal kernels (-K), or supervised "
                       "discretisation (-D)"),),
        fit="naive:fit", model="naive:NaiveBayesModel",
        capabilities=("predict", "predict_proba", "model_text"),
        relation=(("attribute", "VARCHAR"), ("class", "VARCHAR"), ("value", "VARCHAR"),
                  ("count", "DOUBLE"), ("mean", "DOUBLE"), ("std_dev", "DOUBLE"),
                  ("weight_sum", "DOUBLE"), ("precision", "DOUBLE"))),
)
