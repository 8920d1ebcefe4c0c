"""Every declared learner through three Arrow functions: fit (rows to a model
value), its relation (a model value to the rows of its table form) and
cross-validation. They read the learner's declaration, so a new learner needs
nothing here."""

import math

import numpy as np
import pyarrow as pa

from ..algorithms import contract, stop
from ..algorithms.stop import checkpoint
from . import feed, grouped, stash
from .models import MODEL, MODEL_SQL, model_list, option_models, value
from .registry import Udf, arrow_type, column, scalars, udf


def _settings(v):
    """The engine settings a fit reads (NULL fields: defaults)."""
    v = v or {}
    return {"max_values": v.get("max_values"), "ad_tree_max_mb": v.get("ad_tree_max_mb"),
            "memory_limit": v.get("memory_limit")}


def training(decl, fn, rows, i, settings, only=None, group=None):
    """The Dataset of the ``i``-th value of ``rows``: ``{job, rows}``, the rows fed
    to a job as DuckDB scanned them (``feed``), or (``group``) the store key and
    places of a group's rows held for it (an aggregate form; only the columns
    ``only`` and the weight, in no order, when ``only`` names some: a fit that reads
    their counts alone). An empty relation is refused."""
    if group is None:
        fed = rows[i].as_py()
        data = feed.take(fn, fed["job"], fed["rows"]).dataset()
    else:
        key, places = group
        if not len(places):
            raise ValueError(f"{fn}: the table is empty")
        data = stash.taken(fn, key, places, settings, decl.memory, only,
                           ordered=only is None)
    data.spare = True  # read for this fit alone
    return data


@udf("_dm_fit", None, MODEL_SQL, stoppable=True)
def fit(learner, rows, target, options, weight, settings):
    """One model per row: the learner named, fitted on that row's list of rows."""
    rows = column(rows)
    out = []
    args = zip(scalars(learner), scalars(target), scalars(options), scalars(weight),
               scalars(settings))
    # each group's store and places of the rows held for it (udfs/stash.py), or the
    # rows fed ({job, rows})
    groups = stash.groups_of(rows) if rows.type.get_field_index("places") >= 0 else None
    for i, (name, tgt, opts, w, s) in enumerate(args):
        checkpoint()
        decl = contract.get("fit", name)
        fn = decl.name
        key = group = None
        if groups is not None:
            where, places = groups[i]
            group = stash.store_key(decl, w, *where), places
        if group is not None and len(places):
            key = stash.fitted_key(*group, name, tgt, _option_keys(decl, opts), w, s)
            model = stash.fitted(key)
            if model is not None:
                out.append(model)
                continue
        opts = decl.options(fn, option_models(decl, fn, opts))
        s = _settings(s)
        data = training(decl, fn, rows, i, s, [tgt] if decl.held(opts) else None, group)
        model = value(decl.train(fn, data, tgt, opts, s))
        if key is not None:
            stash.keep(key, model, len(model["body"]))
        out.append(model)
    return pa.array(out, MODEL)


def _option_keys(decl, opts):
    """The options as given, a model by its key alone (its value may come or not)."""
    models = {p.name for p in decl.params if p.type == "model"}
    return sorted((k, v.get("key") if k in models and isinstance(v, dict) else v)
                  for k, v in (opts or {}).items())


GROUPED_SQL = f"STRUCT(first BIGINT, model {MODEL_SQL})[]"


@udf("_dm_fit_groups", None, GROUPED_SQL, stoppable=True)
def fit_groups(learner, fed, firsts, counts, target, group_by, options, settings):
    """A model per group of the rows fed to a job grouped by ``group_by``: the
    groups as DuckDB found them, each by its first row's number (``firsts``) and
    its number of rows (``counts``), and each group's model fitted on its rows in
    the relation's order, as ``fit`` fits the group's rows alone. Returned as
    ``{first, model}`` per group."""
    out = []
    args = zip(scalars(learner), scalars(fed), scalars(firsts), scalars(counts),
               scalars(target), scalars(group_by), scalars(options), scalars(settings))
    for name, f, first, count, tgt, by, opts, s in args:
        checkpoint()
        decl = contract.get("fit_groups", name)
        fn = decl.name
        opts = decl.options(fn, option_models(decl, fn, opts))
        if decl.held(opts):
            raise ValueError(f"fit_groups: {decl.held(opts)} holds the counts of every "
                             "row, not of one group's; fit each group without it")
        s = _settings(s)
        # (the weight column is refused by the job, as the rows are read)
        if isinstance(by, str) and isinstance(tgt, str) and by.lower() == tgt.lower():
            raise ValueError(f"fit_groups: group_by must not be the target column ({tgt!r})")
        if not first:
            raise ValueError(f"{fn}: the table is empty")
        rows = feed.take(fn, f["job"], f["rows"])
        data = rows.dataset()
        fitted = _each_group(decl, grouped.parts(rows, data, by, first, count),
                             max(count, default=0), tgt, opts, s, by)
        out.append([{"first": a, "model": value(m)} for a, m in zip(first, fitted)])
    return pa.array(out, arrow_type(GROUPED_SQL))


def _each_group(decl, groups, largest, target, options, settings, by):
    """The model of each of ``groups`` (its Dataset and its value as text), two at a
    time where even the ``largest`` group's fit runs on one thread (a larger one's
    has threads of its own); each group is made as it is taken."""
    def fit(group):
        part, label = group
        checkpoint()  # an interrupt stops between groups too
        try:
            return decl.train(decl.name, part, target, options, settings)
        except ValueError as err:  # which group failed, and why
            raise ValueError(f"fit_groups: group {by} = {label}: {err}") from None

    return stop.each(fit, groups, threads=2 if largest < stop.SERIAL_ROWS else 1)


def relation_sql(decl):
    """The SQL type of the list of rows a model's relation gives."""
    fields = ", ".join(f'"{name}" {typ}' for name, typ in decl.relation)
    return f"STRUCT({fields})[]"


def _relation(decl):
    row = arrow_type(relation_sql(decl)).value_type
    maps = [name for name, typ in decl.relation if typ.upper().startswith("MAP(")]
    # a whole number past 2^53 (a forged figure) is no double Arrow converts exactly
    doubles = [name for name, typ in decl.relation if typ.upper() == "DOUBLE"]
    wholes = {name: 2**31 if typ.upper() == "INTEGER" else 2**63
              for name, typ in decl.relation if typ.upper() in ("INTEGER", "BIGINT")}

    def rows(models_):
        out = []
        for m in model_list(decl.name, models_):
            if m is None:
                out.append(None)
                continue
            if m.learner != decl.name:
                raise ValueError(f"{decl.name}: expected a {decl.name} model, got a "
                                 f"{m.learner} model")
            listed = []
            for r in m.rows():
                # a column a row does not carry is the model's attribute of that name
                r = {name: r[name] if name in r else getattr(m, name)
                     for name, _ in decl.relation}
                for name in maps:
                    if isinstance(r[name], dict):
                        r[name] = list(r[name].items())
                for name in doubles:
                    if isinstance(r[name], int):
                        r[name] = float(r[name])
                for name, top in wholes.items():
                    r[name] = _whole(decl.name, name, r[name], top)
                listed.append(r)
            out.append(listed)
        return pa.array(out, pa.list_(row))

    return rows


def _whole(fn, name, x, top):
    """``x`` for a whole-number column of a model's rows; a forged figure (not whole,
    or past the column's range) is refused by name."""
    if x is None or (isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                     and -top <= x < top):
        return x
    if isinstance(x, (float, np.floating)) and math.isfinite(x) and x == int(x) \
            and -top <= x < top:
        return int(x)
    raise ValueError(f"{fn}: the model value is corrupt: its {name} {str(x)[:30]} is not "
                     f"a whole number below {top:,}")


def relation_name(decl):
    return f"_dm_rows_{decl.name}"


def relation_udfs():
    """One UDF per learner with a table form: its model's rows."""
    return [Udf(relation_name(d), _relation(d), None, relation_sql(d))
            for d in contract.learners().values() if d.relation]


SUMMARY = ("correct", "incorrect", "pct_correct", "pct_incorrect", "kappa", "correlation",
           "mean_absolute_error", "root_mean_squared_error", "relative_absolute_error",
           "root_relative_squared_error", "instances", "unclassified", "missing_class",
           "log_likelihood")
RESULT_SQL = ("STRUCT(" + ", ".join(f"{name} DOUBLE" for name in SUMMARY)
              + ", confusion STRUCT(actual VARCHAR, predicted VARCHAR, weight DOUBLE)[])")
RESULT = arrow_type(RESULT_SQL)


@udf("_dm_cross_validate", None, RESULT_SQL, stoppable=True)
def cross_validate(learner, rows, target, folds, seed, options, weight, fns, settings):
    """One evaluation a row; ``fns`` names the macro called (cross_validate or
    confusion_matrix), for its errors."""
    from ..algorithms.evaluation import evaluate

    rows = column(rows)
    out = []
    args = zip(scalars(learner), scalars(target), scalars(folds), scalars(seed),
               scalars(options), scalars(weight), scalars(fns), scalars(settings))
    for i, (name, tgt, k, sd, opts, _w, fn, s) in enumerate(args):
        decl = contract.get(fn, name)
        opts = decl.options(fn, option_models(decl, fn, opts))
        if decl.held(opts):
            raise ValueError(f"{fn}: {decl.held(opts)} holds the counts of every "
                             "row, so no fold can leave rows out; cross-validate "
                             "without it")
        s = _settings(s)
        data = training(decl, fn, rows, i, s)
        result = evaluate(decl, fn, data, tgt, opts, k, sd, s)
        row = {key: float(result[key]) if key in result else None for key in SUMMARY}
        if "confusion" in result:
            confusion, classes = result["confusion"], result["classes"]
            row["confusion"] = [{"actual": classes[a], "predicted": classes[p],
                                 "weight": float(confusion[a, p])}
                                for a, p in np.ndindex(*confusion.shape)]
        out.append(row)
    return pa.array(out, RESULT)
