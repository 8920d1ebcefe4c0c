"""Arrow adapters for clustering: EM and k-means fitted from rows, their models as
relations."""

import pyarrow as pa

from ..algorithms.dataset import Dataset
from ..algorithms.em_model import fit_em, fit_kmeans
from .models import MODEL_SQL, model_rows, values
from .registry import column, scalars, udf
from .table import dataset


def _clustering_data(fn, rows, exclude, weight, max_values):
    """The Dataset of one group's rows, without the excluded columns."""
    if rows is None or len(rows) == 0:
        raise ValueError(f"{fn}: the table is empty")
    data = dataset(rows, fn, max_values, weight)
    names = [a.name for a in data.attributes]
    exclude = list(exclude or [])
    unknown = [e for e in exclude if e not in names]
    if unknown:
        raise ValueError(f"{fn}: exclude names {', '.join(map(repr, unknown))}, not a "
                         f"column of the table (its columns: {', '.join(names)})")
    keep = [i for i, a in enumerate(data.attributes) if a.name not in exclude]
    if not keep:
        raise ValueError(f"{fn}: no attributes are left to cluster")
    return Dataset([data.attributes[i] for i in keep], [data.columns[i] for i in keep],
                   data.weights)


def _fit(fn, fit, rows, options, exclude, weight, max_values):
    rows = column(rows)
    out = []
    args = zip(*map(scalars, options), scalars(exclude), scalars(weight),
               scalars(max_values))
    for i, (*opts, exc, w, mv) in enumerate(args):
        group = rows[i].values if rows[i].is_valid else None
        data = _clustering_data(fn, group, exc, w, mv)
        try:
            out.append(fit(data, *opts))
        except ValueError as err:
            raise ValueError(f"{fn}: {err}") from None
    return values(out)


@udf("_dm_em_fit", None, MODEL_SQL)
def em_fit(rows, k, max_iterations, seed, min_stddev, exclude, weight, max_values):
    return _fit("em", fit_em, rows, (k, max_iterations, seed, min_stddev), exclude,
                weight, max_values)


@udf("_dm_kmeans_fit", None, MODEL_SQL)
def kmeans_fit(rows, k, seed, init, max_iterations, exclude, weight, max_values):
    return _fit("kmeans", fit_kmeans, rows, (k, seed, init, max_iterations), exclude,
                weight, max_values)


EM_ROW = pa.struct([("cluster", pa.int32()), ("prior", pa.float64()),
                    ("attribute", pa.string()), ("value", pa.string()),
                    ("mean", pa.float64()), ("std_dev", pa.float64()),
                    ("count", pa.float64()), ("probability", pa.float64()),
                    ("log_likelihood", pa.float64()), ("num_clusters", pa.int32())])
EM_ROW_SQL = ("STRUCT(cluster INTEGER, prior DOUBLE, attribute VARCHAR, value VARCHAR, "
              "mean DOUBLE, std_dev DOUBLE, count DOUBLE, probability DOUBLE, "
              "log_likelihood DOUBLE, num_clusters INTEGER)[]")
KMEANS_ROW = pa.struct([("cluster", pa.int32()), ("size", pa.int64()),
                        ("attribute", pa.string()), ("value", pa.float64()),
                        ("label", pa.string()), ("sse", pa.float64())])
KMEANS_ROW_SQL = ("STRUCT(cluster INTEGER, size BIGINT, attribute VARCHAR, value DOUBLE, "
                  "label VARCHAR, sse DOUBLE)[]")


@udf("_dm_em_rows", None, EM_ROW_SQL)
def em_rows(models_):
    return model_rows("em", "em", models_, EM_ROW, lambda m: {
        "log_likelihood": m.log_likelihood, "num_clusters": m.num_clusters})


@udf("_dm_kmeans_rows", None, KMEANS_ROW_SQL)
def kmeans_rows(models_):
    return model_rows("kmeans", "kmeans", models_, KMEANS_ROW, lambda m: {"sse": m.sse})
