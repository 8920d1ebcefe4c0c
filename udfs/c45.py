"""Arrow adapters for C4.5: fitting from rows, the tree as a relation."""

import math

import numpy as np
import pyarrow as pa

from ..algorithms.c45 import Options
from ..algorithms.c45_rules import rules
from ..algorithms.dataset import find_name
from ..algorithms.tree_model import fit_c45
from .models import MODEL_SQL, model_list, values
from .registry import column, scalars, udf
from .table import dataset


def find_target(fn, data, target):
    """The index of the target column (exact name first, then ignoring case)."""
    if target is None:
        raise ValueError(f"{fn}: target must name a column, got NULL")
    names = [a.name for a in data.attributes]
    t = find_name(names, target)
    if t is not None:
        return t
    raise ValueError(f"{fn}: target column {target!r} is not in the table (its columns: "
                     f"{', '.join(names)})")


def check_class(fn, data, t):
    """A nominal target with at least two classes present, and other attributes."""
    a = data.attributes[t]
    if not a.nominal:
        raise ValueError(f"{fn}: target column {a.name!r} is numeric; {fn} predicts a "
                         "nominal class (use m5p for a numeric target, or cast the column "
                         "to VARCHAR)")
    y = data.columns[t]
    present = np.unique(y[~np.isnan(y)])
    if len(present) == 0:
        raise ValueError(f"{fn}: target column {a.name!r} has no values (all NULL)")
    if len(present) == 1:
        raise ValueError(f"{fn}: target column {a.name!r} has a single class "
                         f"({a.values[int(present[0])]!r}); a classifier needs two or more")
    if len(data.attributes) == 1:
        raise ValueError(f"{fn}: the table has no attributes besides the target "
                         f"{a.name!r}")


def c45_options(fn, confidence, min_leaf, pruned, subtree_raising, binary_splits,
                mdl_correction, collapse):
    flags = dict(pruned=pruned, subtree_raising=subtree_raising,
                 binary_splits=binary_splits, mdl_correction=mdl_correction,
                 collapse=collapse)
    for name, v in flags.items():
        if v is None:
            raise ValueError(f"{fn}: {name} must be true or false, got NULL")
    if confidence is None or not (0 < confidence <= 0.5) or math.isnan(confidence):
        raise ValueError(f"{fn}: confidence must be in (0, 0.5], got {confidence}")
    if min_leaf is None or min_leaf < 1 or min_leaf != int(min_leaf):
        raise ValueError(f"{fn}: min_leaf must be a whole number >= 1, got {min_leaf}")
    return Options(float(confidence), int(min_leaf), **{k: bool(v) for k, v in flags.items()})


def training_data(fn, rows, target, weight, max_values, check=check_class):
    """(Dataset, target index) of one group's rows, its target checked by ``check``
    (a classifier's by default)."""
    if rows is None or len(rows) == 0:
        raise ValueError(f"{fn}: the table is empty")
    data = dataset(rows, fn, max_values, weight)
    t = find_target(fn, data, target)
    check(fn, data, t)
    return data, t


def fit_groups(fn, rows, target, options, weight, max_values, make_options=c45_options,
               check=check_class, fit=fit_c45):
    """Per input row (a group of rows each): its training data, target index and
    the model ``fit`` makes with the options ``make_options`` reads."""
    rows = column(rows)
    args = zip(scalars(target), *map(scalars, options), scalars(weight), scalars(max_values))
    for i, (tgt, *opts, w, mv) in enumerate(args):
        group = rows[i].values if rows[i].is_valid else None
        opts = make_options(fn, *opts)
        data, t = training_data(fn, group, tgt, w, mv, check)
        yield data, t, fit(data, t, opts)


@udf("_dm_c45_fit", None, MODEL_SQL)
def c45_fit(rows, target, confidence, min_leaf, pruned, subtree_raising, binary_splits,
            mdl_correction, collapse, weight, max_values):
    options = (confidence, min_leaf, pruned, subtree_raising, binary_splits,
               mdl_correction, collapse)
    return values([m for _, _, m in fit_groups("c45", rows, target, options, weight,
                                                 max_values)])


RULE = pa.struct([("rule", pa.int32()), ("conditions", pa.list_(pa.string())),
                  ("class", pa.string()), ("coverage", pa.float64()),
                  ("errors", pa.float64()), ("error_estimate", pa.float64())])
RULE_SQL = ("STRUCT(rule INTEGER, conditions VARCHAR[], class VARCHAR, coverage DOUBLE, "
            "errors DOUBLE, error_estimate DOUBLE)[]")


@udf("_dm_c45_rules", None, RULE_SQL)
def c45_rules(rows, target, confidence, min_leaf, pruned, subtree_raising, binary_splits,
              mdl_correction, collapse, weight, max_values):
    options = (confidence, min_leaf, pruned, subtree_raising, binary_splits,
               mdl_correction, collapse)
    out = []
    for data, t, model in fit_groups("c45_rules", rows, target, options, weight,
                                     max_values):
        y = data.columns[t]
        keep = ~np.isnan(y)
        columns = [c[keep] for i, c in enumerate(data.columns) if i != t]
        found = rules(model.tree, model.attributes, columns, y[keep].astype(np.int64),
                      data.weights[keep], model.options["confidence"])
        out.append([{"rule": i + 1, "conditions": cond, "class": model.classes[cls],
                     "coverage": cov, "errors": err, "error_estimate": est}
                    for i, (cond, cls, cov, err, est) in enumerate(found)])
    return pa.array(out, pa.list_(RULE))


NODE = pa.struct([("node", pa.int32()), ("parent", pa.int32()), ("depth", pa.int32()),
                  ("attribute", pa.string()), ("operator", pa.string()),
                  ("value", pa.string()), ("is_leaf", pa.bool_()), ("class", pa.string()),
                  ("weight", pa.float64()), ("errors", pa.float64()),
                  ("distribution", pa.map_(pa.string(), pa.float64()))])
NODE_SQL = ("STRUCT(node INTEGER, parent INTEGER, depth INTEGER, attribute VARCHAR, "
            "operator VARCHAR, value VARCHAR, is_leaf BOOLEAN, class VARCHAR, "
            "weight DOUBLE, errors DOUBLE, distribution MAP(VARCHAR, DOUBLE))[]")


@udf("_dm_tree_nodes", None, NODE_SQL)
def tree_nodes(models_):
    out = []
    for m in model_list("c45", models_):
        if m is None:
            out.append(None)
            continue
        if m.learner != "c45":
            raise ValueError(f"c45: expected a c45 model, got a {m.learner} model")
        rows = m.tree.rows(m.attributes, m.classes)
        for r in rows:
            r["distribution"] = list(r["distribution"].items())
        out.append(rows)
    return pa.array(out, pa.list_(NODE))
