"""The generic model functions every learner answers: predict, predict_proba,
model_text and model_to_sql, and the model value itself.

A model value is a STRUCT: a format tag and version, the learner, an id (a digest
of the body) and the JSON body. Scoring macros pass the body only for the first row
of each model id a chunk meets (see ``model_needed``), so a large model is not
copied for every scored row; parsed models are cached by id.
"""

from collections import OrderedDict

import numpy as np
import pyarrow as pa

from ..algorithms import models
from ..algorithms.tree_model import labels
from .registry import column, scalars, udf
from .table import encode

FORMAT = "duckmine.model"
MODEL = pa.struct([("format", pa.string()), ("version", pa.int32()),
                   ("learner", pa.string()), ("id", pa.string()), ("body", pa.string())])
MODEL_SQL = ("STRUCT(format VARCHAR, version INTEGER, learner VARCHAR, id VARCHAR, "
             "body VARCHAR)")
CACHE_SIZE = 8192  # more than the distinct models one chunk can hold, twice over

_cache = OrderedDict()


def value(model):
    """A model as the Python form of its SQL value."""
    body, model_id = models.dumps(model)
    return {"format": FORMAT, "version": models.VERSION, "learner": model.learner,
            "id": model_id, "body": body}


def values(items):
    """A StructArray of model values (None for a missing model)."""
    return pa.array([None if m is None else value(m) for m in items], MODEL)


def _key(v):
    """What must equal for a cached model to be reused."""
    return v.get("format"), v.get("version"), v.get("learner"), v.get("body")


def _parse(fn, v):
    if not isinstance(v, dict) or v.get("format") != FORMAT:
        raise ValueError(f"{fn}: expected a model value (from a *_fit function), got "
                         f"{str(v)[:60]!r}")
    try:
        model = models.loads(v.get("learner"), v.get("version"), v.get("body"), v.get("id"))
    except models.ModelError as err:
        raise ValueError(f"{fn}: {err}") from None
    _cache[v["id"]] = (model, _key(v))
    _cache.move_to_end(v["id"])
    while len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return model


def model_of(fn, v):
    """The model of one SQL model value (a dict), parsed once per id and body."""
    hit = _cache.get(v.get("id")) if isinstance(v, dict) else None
    if hit is not None and hit[1] == _key(v):
        _cache.move_to_end(v["id"])
        return hit[0]
    return _parse(fn, v)


def model_list(fn, arg):
    return [None if v is None else model_of(fn, v) for v in scalars(arg)]


@udf("_dm_model_needed", None, "BOOLEAN", side_effects=True)
def model_needed(ids):
    """True at the first row of each model id in the chunk that is not cached."""
    out = np.zeros(len(ids), np.bool_)
    seen = set()
    for i, k in enumerate(scalars(ids)):
        if k in _cache:
            _cache.move_to_end(k)
        elif k not in seen:
            seen.add(k)
            out[i] = True
    return pa.array(out)


def _groups(fn, ids, bodies):
    """Rows grouped by model: {model id: (model, row indices)}."""
    ids = scalars(ids)
    for v in scalars(bodies):
        if v is not None:
            model_of(fn, v)
    groups = {}
    for i, k in enumerate(ids):
        if k is None:
            continue
        if k not in groups:
            if k not in _cache:
                raise ValueError(f"{fn}: expected a model value, got one without a "
                                 "known body")
            groups[k] = (_cache[k][0], [])
        groups[k][1].append(i)
    return groups


def _classifier(fn, model):
    if not hasattr(model, "classes"):
        raise ValueError(f"{fn}: the {model.learner} model does not predict classes")
    return model


def _proba_groups(fn, ids, bodies, rows):
    rows = column(rows)
    for model, at in _groups(fn, ids, bodies).values():
        _classifier(fn, model)
        at = np.asarray(at, np.int64)
        part = rows.take(pa.array(at)) if len(at) != len(rows) else rows
        used = model.used
        cols = encode(part, [model.attributes[i] for i in used], fn)
        yield model, at, model.proba(dict(zip(used, cols)), len(at))


@udf("_dm_predict", None, "VARCHAR")
def predict(ids, bodies, rows):
    out = np.full(len(ids), None, object)
    for model, at, proba in _proba_groups("predict", ids, bodies, rows):
        out[at] = np.asarray(model.classes, object)[labels(proba)]
    return pa.array(out, pa.string())


PROBA = pa.map_(pa.string(), pa.float64())


@udf("_dm_predict_proba", None, "MAP(VARCHAR, DOUBLE)")
def predict_proba(ids, bodies, rows):
    out = [None] * len(ids)
    for model, at, proba in _proba_groups("predict_proba", ids, bodies, rows):
        for i, p in zip(at, proba.tolist()):
            out[i] = list(zip(model.classes, p))
    return pa.array(out, PROBA)


@udf("_dm_model_text", None, "VARCHAR")
def model_text(models_):
    return pa.array([None if m is None else m.text()
                     for m in model_list("model_text", models_)], pa.string())
