"""Arrow adapters for M5' model trees and M5 rules: fitting from rows, the tree and
the rule list as relations."""

import math

import numpy as np
import pyarrow as pa

from ..algorithms.m5_model import fit_m5_rules, fit_m5p
from ..algorithms.m5p import Options
from .c45 import fit_groups
from .models import MODEL_SQL, model_rows, values
from .registry import udf

FITS = {"m5p": fit_m5p, "m5_rules": fit_m5_rules}


def check_target(fn, data, t):
    """A numeric target with at least two values present, and other attributes."""
    a = data.attributes[t]
    if a.nominal:
        raise ValueError(f"{fn}: target column {a.name!r} is nominal; {fn} predicts a "
                         "number (use c45 for a nominal target, or cast the column to "
                         "DOUBLE)")
    present = int((~np.isnan(data.columns[t])).sum())
    if present == 0:
        raise ValueError(f"{fn}: target column {a.name!r} has no values (all NULL)")
    if present < 2:
        raise ValueError(f"{fn}: target column {a.name!r} has a value in only "
                         f"{present} row; a model needs at least 2")
    if len(data.attributes) == 1:
        raise ValueError(f"{fn}: the table has no attributes besides the target "
                         f"{a.name!r}")


def m5_options(fn, min_leaf, pruned, smoothed, regression_tree):
    flags = dict(pruned=pruned, smoothed=smoothed, regression_tree=regression_tree)
    for name, v in flags.items():
        if v is None:
            raise ValueError(f"{fn}: {name} must be true or false, got NULL")
    if min_leaf is None or isinstance(min_leaf, bool) or math.isnan(min_leaf) \
            or min_leaf < 1 or math.isinf(min_leaf):
        raise ValueError(f"{fn}: min_leaf must be a number >= 1, got {min_leaf}")
    return Options(float(min_leaf), **{k: bool(v) for k, v in flags.items()})


def _fit(fn, rows, target, min_leaf, pruned, smoothed, regression_tree, weight,
         max_values):
    options = (min_leaf, pruned, smoothed, regression_tree)
    return values([m for _, _, m in fit_groups(fn, rows, target, options, weight,
                                                 max_values, m5_options, check_target,
                                                 FITS[fn])])


@udf("_dm_m5p_fit", None, MODEL_SQL)
def m5p_fit(rows, target, min_leaf, pruned, smoothed, regression_tree, weight, max_values):
    return _fit("m5p", rows, target, min_leaf, pruned, smoothed, regression_tree, weight,
                max_values)


@udf("_dm_m5_rules_fit", None, MODEL_SQL)
def m5_rules_fit(rows, target, min_leaf, pruned, smoothed, regression_tree, weight,
                 max_values):
    return _fit("m5_rules", rows, target, min_leaf, pruned, smoothed, regression_tree,
                weight, max_values)


COEFFICIENTS = pa.map_(pa.string(), pa.float64())
NODE = pa.struct([("node", pa.int32()), ("parent", pa.int32()), ("depth", pa.int32()),
                  ("attribute", pa.string()), ("operator", pa.string()),
                  ("value", pa.float64()), ("is_leaf", pa.bool_()), ("model", pa.string()),
                  ("instances", pa.int64()), ("error_pct", pa.float64()),
                  ("intercept", pa.float64()), ("coefficients", COEFFICIENTS)])
NODE_SQL = ("STRUCT(node INTEGER, parent INTEGER, depth INTEGER, attribute VARCHAR, "
            "operator VARCHAR, value DOUBLE, is_leaf BOOLEAN, model VARCHAR, "
            "instances BIGINT, error_pct DOUBLE, intercept DOUBLE, "
            "coefficients MAP(VARCHAR, DOUBLE))[]")
RULE = pa.struct([("rule", pa.int32()), ("conditions", pa.list_(pa.string())),
                  ("intercept", pa.float64()), ("coefficients", COEFFICIENTS),
                  ("coverage", pa.int64()), ("error_pct", pa.float64())])
RULE_SQL = ("STRUCT(rule INTEGER, conditions VARCHAR[], intercept DOUBLE, "
            "coefficients MAP(VARCHAR, DOUBLE), coverage BIGINT, error_pct DOUBLE)[]")


@udf("_dm_m5p_nodes", None, NODE_SQL)
def m5p_nodes(models_):
    return model_rows("m5p", "m5p", models_, NODE)


@udf("_dm_m5_rules_list", None, RULE_SQL)
def m5_rules_list(models_):
    return model_rows("m5_rules", "m5_rules", models_, RULE)
