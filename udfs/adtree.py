"""Arrow adapters for AD-trees beyond the contract's ad_tree_fit: count queries
against a tree, and full contingency tables."""

import itertools

import numpy as np
import pyarrow as pa

from ..algorithms import contract
from . import feed
from .models import _groups
from .registry import arrow_type, column, scalars, udf


def _query(model, cond):
    """(attribute indices increasing, value codes) of one conditions value."""
    pairs = cond.items() if isinstance(cond, dict) else cond
    found = {}
    for name, val in pairs:
        j = model.index(str(name))
        if j is None:
            raise ValueError(f"ad_count: {name!r} is not an attribute of the AD-tree "
                             f"(its attributes: "
                             f"{', '.join(a.name for a in model.attributes)})")
        a = model.attributes[j]
        if val is None:
            raise ValueError(f"ad_count: the condition on {a.name!r} is NULL; give one "
                             f"of its values ({', '.join(a.values)})")
        text = ("true" if val else "false") if isinstance(val, bool) else str(val)
        if text not in a.values:
            raise ValueError(f"ad_count: {text!r} is not a value of {a.name!r} (its "
                             f"values: {', '.join(a.values)})")
        code = a.values.index(text)
        if found.get(j, code) != code:
            return None  # two different values of one attribute: nothing matches
        found[j] = code
    if len(found) > model.tree.max_depth:
        raise ValueError(f"ad_count: the AD-tree answers at most {model.tree.max_depth} "
                         f"conditions (it was fitted with max_depth := "
                         f"{model.tree.max_depth}), got {len(found)}")
    attrs = sorted(found)
    return attrs, [found[j] for j in attrs]


@udf("_dm_ad_count", None, "BIGINT")
def ad_count(ids, bodies, conditions):
    kind = column(conditions).type
    if not (pa.types.is_struct(kind) or pa.types.is_map(kind)):
        raise ValueError("ad_count: conditions must be a STRUCT or MAP of attribute to "
                         f"value, such as {{'humidity': 'high'}}, got {kind}")
    conds = scalars(conditions)
    out = np.zeros(len(conds), np.int64)
    null = np.zeros(len(conds), np.bool_)
    for model, at in _groups("ad_count", ids, bodies):
        if model.learner != "ad_tree":
            raise ValueError(f"ad_count: expected an ad_tree model, got a "
                             f"{model.learner} model")
        q_off, q_attr, q_val, asked = [0], [], [], []
        for i in at:
            if conds[i] is None:
                null[i] = True
                continue
            q = _query(model, conds[i])
            if q is None:
                continue
            q_attr += q[0]
            q_val += q[1]
            q_off.append(len(q_attr))
            asked.append(i)
        if asked:
            try:
                out[asked] = model.tree.counts(np.array(q_off, np.int64),
                                               np.array(q_attr, np.int64),
                                               np.array(q_val, np.int64))
            except ValueError as err:  # an edited tree's counts
                raise ValueError(f"ad_count: {err}") from None
    return pa.array(out, pa.int64(), mask=null)


CELL_SQL = "STRUCT(combination MAP(VARCHAR, VARCHAR), count BIGINT)[]"


@udf("_dm_ad_counts", None, CELL_SQL, stoppable=True)
def ad_counts(rows, cutoff, max_mb):
    """The full table needs a tree as deep as the columns are many. ``rows`` were
    fed with the named columns alone, in their order."""
    out = []
    for fed, cut, mb in zip(scalars(rows), scalars(cutoff), scalars(max_mb)):
        data = feed.take("ad_counts", fed["job"], fed["rows"]).dataset()
        out.append(contingency(data, cut, mb))
    return pa.array(out, arrow_type(CELL_SQL))


def contingency(data, cutoff, max_mb):
    """Every combination of the values of ``data``'s columns with its count, through
    an AD-tree (as ``ad_counts`` gives them on either engine)."""
    decl = contract.get("ad_counts", "ad_tree")
    options = decl.options("ad_counts", {"leaf_list_cutoff": cutoff})
    model = decl.train("ad_counts", data, None, options, {"ad_tree_max_mb": max_mb})
    table = model.tree.table(np.arange(len(data.attributes)))
    keys = [a.name for a in data.attributes]
    cells = itertools.product(*(a.values for a in data.attributes))
    return [{"combination": list(zip(keys, combo)), "count": int(c)}
            for combo, c in zip(cells, table.ravel().tolist())]
