"""Clustering: EM (finite mixture models, Weka's EM) and k-means (SimpleKMeans)."""

from ..contract import REQUIRED, Learner, choice, names, number, whole

EXCLUDE = names("exclude", (), "columns left out of the clustering")

LEARNERS = (
    Learner(
        name="em", kind="clusterer", package=__name__,
        doc="a finite mixture model fitted by EM, as Weka's EM",
        params=(
            whole("k", -1, "number of clusters; -1 chooses it by 10-fold "
                  "cross-validated log-likelihood (EM -N)", low=-1),
            whole("max_iterations", 100, "most EM iterations (EM -I)", low=1),
            whole("seed", 100, "random seed of the k-means starts (EM -S)"),
            number("min_stddev", 1e-6, "least standard deviation of a normal (EM -M)",
                   low=0, low_open=True),
            EXCLUDE),
        fit="model:fit", model="model:EMModel",
        # bytes a cell fed, measured at 10M rows (benchmarks/memory.py, the own
        # table: 148-149 bytes a row over 7 columns; --data em_*): a million rows'
        # peak holds more a cell, less than 50 MB a fit, in any size
        memory=13,
        capabilities=("predict", "predict_proba", "log_likelihood", "model_text"),
        relation=(("cluster", "INTEGER"), ("prior", "DOUBLE"), ("attribute", "VARCHAR"),
                  ("value", "VARCHAR"), ("mean", "DOUBLE"), ("std_dev", "DOUBLE"),
                  ("count", "DOUBLE"), ("probability", "DOUBLE"),
                  ("log_likelihood", "DOUBLE"), ("num_clusters", "INTEGER"))),
    Learner(
        name="kmeans", kind="clusterer", package=__name__,
        doc="k-means clustering, as Weka's SimpleKMeans",
        params=(
            whole("k", REQUIRED, "number of clusters (SimpleKMeans -N)", low=1),
            whole("seed", 10, "random seed of the starting centres (SimpleKMeans -S)"),
            choice("init", "k-means++", ("k-means++", "random"),
                   "starting centres: D² sampling, or Weka's random rows"),
            whole("max_iterations", 500, "most Lloyd iterations (SimpleKMeans -I)", low=1),
            EXCLUDE),
        fit="model:fit_k", model="model:KMeansModel",
        # bytes a cell fed, measured at 10M rows (benchmarks/memory.py, the own
        # table: 148-149 bytes a row over 7 columns; --data em_*): a million rows'
        # peak holds more a cell, less than 50 MB a fit, in any size
        memory=13,
        capabilities=("predict", "predict_proba", "model_text"),
        relation=(("cluster", "INTEGER"), ("size", "BIGINT"), ("attribute", "VARCHAR"),
                  ("value", "DOUBLE"), ("label", "VARCHAR"), ("sse", "DOUBLE"))),
)
