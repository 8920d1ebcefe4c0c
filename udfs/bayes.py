"""Arrow adapters for Bayesian network classifiers: fitting from rows, the network
as a relation."""

import math

import pyarrow as pa

from ..algorithms.aode import fit_aode
from ..algorithms.bayes_model import Options, fit_bayes_net
from ..algorithms.bayes_net import SCORES, SEARCHES
from .adtree import SEARCH_MAX_MB, max_bytes
from .c45 import fit_groups
from .models import MODEL_SQL, model_rows, values
from .registry import scalars, udf


def bayes_options(fn, search, max_parents, score, alpha, use_ad_tree):
    if search not in SEARCHES:
        raise ValueError(f"{fn}: search must be one of {', '.join(map(repr, SEARCHES))}, "
                         f"got {search!r}")
    if score not in SCORES:
        raise ValueError(f"{fn}: score must be one of {', '.join(map(repr, SCORES))}, "
                         f"got {score!r}")
    if max_parents is None or max_parents < 0 or max_parents != int(max_parents):
        raise ValueError(f"{fn}: max_parents must be a whole number >= 0, got "
                         f"{max_parents}")
    if alpha is None or not alpha >= 0 or math.isinf(alpha):
        raise ValueError(f"{fn}: alpha must be a finite number >= 0, got {alpha}")
    if use_ad_tree is None:
        raise ValueError(f"{fn}: use_ad_tree must be true or false, got NULL")
    return Options(search, int(max_parents), score, float(alpha), bool(use_ad_tree))


def _fit(data, t, options, limit):
    try:
        return fit_bayes_net(data, t, options, limit)
    except MemoryError:
        raise ValueError(
            f"bayes_net: the AD-tree would take more than {limit / 2**20:,.0f} MiB; "
            "count by scans (use_ad_tree := false), allow fewer parents, or SET "
            "VARIABLE duckmine_ad_tree_max_mb") from None
    except ValueError as err:
        raise ValueError(f"bayes_net: {err}") from None


@udf("_dm_bayes_net_fit", None, MODEL_SQL)
def bayes_net_fit(rows, target, search, max_parents, score, alpha, use_ad_tree, weight,
                  max_values, max_mb):
    limit = max_bytes("bayes_net", scalars(max_mb)[0] if len(max_mb) else None,
                      SEARCH_MAX_MB)
    options = (search, max_parents, score, alpha, use_ad_tree)
    return values([m for _, _, m in fit_groups(
        "bayes_net", rows, target, options, weight, max_values,
        make_options=bayes_options, fit=lambda d, t, o: _fit(d, t, o, limit))])


NODE = pa.struct([("node", pa.string()), ("parents", pa.list_(pa.string())),
                  ("parent_values", pa.list_(pa.string())), ("value", pa.string()),
                  ("probability", pa.float64())])
NODE_SQL = ("STRUCT(node VARCHAR, parents VARCHAR[], parent_values VARCHAR[], "
            "value VARCHAR, probability DOUBLE)[]")


@udf("_dm_bayes_net_rows", None, NODE_SQL)
def bayes_net_rows(models_):
    return model_rows("bayes_net", "bayes_net", models_, NODE)


def aode_options(fn, min_frequency):
    if min_frequency is None or min_frequency < 0 or min_frequency != int(min_frequency):
        raise ValueError(f"{fn}: min_frequency must be a whole number >= 0, got "
                         f"{min_frequency}")
    return int(min_frequency)


@udf("_dm_aode_fit", None, MODEL_SQL)
def aode_fit(rows, target, min_frequency, weight, max_values):
    return values([m for _, _, m in fit_groups(
        "aode", rows, target, (min_frequency,), weight, max_values,
        make_options=aode_options, fit=fit_aode)])


SUPERPARENT = pa.struct([("class", pa.string()), ("prior", pa.float64()),
                         ("attribute", pa.string()), ("value", pa.string()),
                         ("count", pa.float64()), ("superparent", pa.bool_())])
SUPERPARENT_SQL = ("STRUCT(class VARCHAR, prior DOUBLE, attribute VARCHAR, value VARCHAR, "
                   "count DOUBLE, superparent BOOLEAN)[]")


@udf("_dm_aode_rows", None, SUPERPARENT_SQL)
def aode_rows(models_):
    return model_rows("aode", "aode", models_, SUPERPARENT)
