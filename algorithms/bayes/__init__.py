"""Bayesian network classifiers (Weka's BayesNet) and AODE, counted from AD-trees
or scans."""

from ..contract import Learner, choice, flag, number, whole

SEARCHES = ("k2", "tan", "hill_climb")
SCORES = ("bayes", "bdeu", "mdl", "aic", "loglik")

LEARNERS = (
    Learner(
        name="bayes_net", kind="classifier", package=__name__,
        doc="a Bayesian network classifier by local score search, as Weka's BayesNet",
        params=(
            choice("search", "k2", SEARCHES, "structure search (K2, TAN, HillClimber)"),
            whole("max_parents", 1, "most parents of a node, the class included (-P)",
                  low=0),
            choice("score", "bayes", SCORES, "local score of the search (-S)"),
            number("alpha", 0.5, "prior count of the probability tables (-A)", low=0),
            flag("use_ad_tree", True, "count through an AD-tree rather than scans (-D)")),
        fit="model:fit", model="model:BayesNetModel", to_sql="sql:expression",
        capabilities=("predict", "predict_proba", "model_text", "model_to_sql"),
        relation=(("node", "VARCHAR"), ("parents", "VARCHAR[]"),
                  ("parent_values", "VARCHAR[]"), ("value", "VARCHAR"),
                  ("probability", "DOUBLE"))),
    Learner(
        name="aode", kind="classifier", package=__name__,
        doc="averaged one-dependence estimators, as Weka's AODE",
        params=(
            whole("min_frequency", 1, "least count of a value to serve as a superparent "
                  "(AODE -F)", low=0),),
        fit="aode:fit", model="aode:AODEModel",
        capabilities=("predict", "predict_proba", "model_text"),
        relation=(("class", "VARCHAR"), ("prior", "DOUBLE"), ("attribute", "VARCHAR"),
                  ("value", "VARCHAR"), ("count", "DOUBLE"), ("superparent", "BOOLEAN"))),
)
