"""The generic model functions: predict, predict_proba, predict_value,
log_likelihood, model_text, model_to_sql and model_info, each dispatched on the
capabilities the model's learner declares; and the model value itself.

A model value is a STRUCT: a format tag and version, the learner, an id (a digest
of the body) and the JSON body. Scoring macros pass the body only for the first row
of each model a chunk meets (see ``model_needed``), so a large model is not
copied for every scored row; parsed models are cached by id and body length.
"""

import json
import threading
import weakref
from collections import OrderedDict
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms import contract, models
from ..algorithms.classes import labels
from .registry import arrow_type, column, scalars, udf
from .table import Encoder

FORMAT = "duckmine.model"
MODEL_SQL = ("STRUCT(format VARCHAR, version INTEGER, learner VARCHAR, id VARCHAR, "
             "body VARCHAR)")
MODEL = arrow_type(MODEL_SQL)
# Parsed models are kept by key: always the last CACHE_SIZE (more than the distinct
# models one chunk can hold, twice over), and beyond that as many as fit in
# CACHE_BYTES of bodies, so that rows scored against tens of thousands of per-group
# models (a JOIN on the group) do not parse each model again for every chunk.
CACHE_SIZE = 8192
CACHE_BYTES = 256 * 2**20
_cached_bytes = 0

_cache = OrderedDict()
# DuckDB calls the scoring functions from several threads at once: one may parse
# and store a model while another looks the same key up, so every read and change
# of the cache holds this lock (parsing does not)
_LOCK = threading.Lock()


def value(model):
    """A model as the Python form of its SQL value."""
    body, version, model_id = models.dumps(model)
    return {"format": FORMAT, "version": version, "learner": model.learner,
            "id": model_id, "body": body}


def values(items):
    """A StructArray of model values (None for a missing model)."""
    return pa.array([None if m is None else value(m) for m in items], MODEL)


def _key(v):
    """What must equal for a cached model to be reused."""
    return v.get("format"), v.get("version"), v.get("learner"), v.get("body")


def cache_key(v):
    """What the cache is keyed on: the id and the body's length in bytes, as the
    SQL macros compute it (``_dm_model_key``), so that a body edited to another
    length under its old id is parsed (and refused) rather than answered from the
    cache of the original."""
    body = v.get("body")
    return f"{v.get('id')}:{len(body.encode()) if isinstance(body, str) else ''}"


def _parse(fn, v):
    if not isinstance(v, dict) or v.get("format") != FORMAT:
        raise ValueError(f"{fn}: expected a model value (from a *_fit function), got "
                         f"{str(v)[:60]!r}")
    try:
        model = models.loads(v.get("learner"), v.get("version"), v.get("body"), v.get("id"))
    except models.ModelError as err:
        raise ValueError(f"{fn}: {err}") from None
    global _cached_bytes
    key = cache_key(v)
    with _LOCK:  # replaced in place: the key is never missing meanwhile
        old = _cache.get(key)
        if old is not None:
            _cached_bytes -= len(old[1][3])
        _cache[key] = (model, _key(v))
        _cache.move_to_end(key)
        _cached_bytes += len(v.get("body"))
        while len(_cache) > CACHE_SIZE and _cached_bytes > CACHE_BYTES:
            _cached_bytes -= len(_cache.popitem(last=False)[1][1][3])
    return model


def _lookup(key, want=None):
    """The cached model of ``key``, made the most recent; None when it is not cached
    (or, given ``want``, cached for another value)."""
    with _LOCK:
        hit = _cache.get(key)
        if hit is None or want is not None and hit[1] != want:
            return None
        _cache.move_to_end(key)
        return hit[0]


def model_of(fn, v):
    """The model of one SQL model value (a dict), parsed once per id and body."""
    if isinstance(v, dict):
        hit = _lookup(cache_key(v), _key(v))
        if hit is not None:
            return hit
    return _parse(fn, v)


def option_models(decl, fn, options):
    """``options`` (as SQL gives them) with the value of each model option parsed:
    a model value, or as the macros pass one, ``{key, model}`` whose model is there
    only where ``_dm_model_needed`` found its key not cached."""
    wanted = [p.name for p in decl.params if p.type == "model"]
    if not wanted or not isinstance(options, dict):
        return options
    out = dict(options)
    for name in wanted:
        v = out.get(name)
        if not isinstance(v, dict):  # NULL, or no model: the contract refuses it
            continue
        if set(v) != {"key", "model"}:  # a value as it is
            out[name] = model_of(fn, v) if "format" in v else v
        elif isinstance(v.get("model"), dict) and "format" in v["model"]:
            out[name] = model_of(fn, v["model"])
        elif v.get("model") is not None:  # no model value: the contract refuses it
            out[name] = v["model"]
        elif v.get("key") is None:
            out[name] = None
        else:
            out[name] = _lookup(v["key"])
            if out[name] is None:
                raise ValueError(f"{fn}: {name}: expected a model value, got one without "
                                 "a known body")
    return out


def model_list(fn, arg):
    return [None if v is None else model_of(fn, v) for v in scalars(arg)]


@udf("_dm_model_needed", None, "BOOLEAN", side_effects=True)
def model_needed(ids):
    """True at the first row of each model key (``cache_key``) in the chunk that is
    not cached; NULL for no key."""
    ids = column(ids)
    out = np.zeros(len(ids), np.bool_)
    for k in pc.unique(ids.drop_null()).to_pylist():
        if _lookup(k) is None:
            out[pc.index(ids, k).as_py()] = True
    return pa.array(out, mask=ids.is_null().to_numpy(zero_copy_only=False))


def _groups(fn, ids, bodies):
    """Rows grouped by model: [(model, row indices or None for all rows)]."""
    ids, bodies = column(ids), column(bodies)
    if bodies.null_count < len(bodies):
        for v in bodies.filter(bodies.is_valid()).to_pylist():
            model_of(fn, v)
    coded = ids.dictionary_encode()
    keys = coded.dictionary.to_pylist()
    found = [_lookup(k) for k in keys]
    if any(model is None for model in found):
        raise ValueError(f"{fn}: expected a model value, got one without a known body")
    if len(keys) == 1 and ids.null_count == 0:
        return [(found[0], None)]
    codes = np.asarray(coded.indices.fill_null(-1), np.int64)
    order = np.argsort(codes, kind="stable")  # each model's rows, in row order
    ends = np.cumsum(np.bincount(codes + 1, minlength=len(keys) + 1))
    return [(model, order[ends[j]:ends[j + 1]]) for j, model in enumerate(found)]


def declaration(model):
    return contract.learners()[model.learner]


def require(fn, model, capability):
    """The model, if its learner declares ``capability``; else one clear error
    naming the learner, what it does offer, and the learners that offer it."""
    decl = declaration(model)
    if capability not in decl.capabilities_of(model):
        others = [d.name for d in contract.learners().values()
                  if capability in d.capabilities]
        raise ValueError(f"{fn}: a {decl.name} model ({decl.kind_of(model)}) does not "
                         f"offer {fn}; it offers {', '.join(decl.offers(model))}; the "
                         f"learners whose models offer it are {', '.join(others)}")
    return model


class _Facts:
    """What scoring asks of one parsed model, worked out once per model rather than
    once per model and chunk (a chunk scored against per-group models meets
    thousands): whether it is a regressor, what it offers, the attributes it reads,
    its classes as an array."""

    def __init__(self, model):
        decl = declaration(model)
        self.model = weakref.ref(model)
        self.regressor = decl.kind_of(model) == "regressor"
        self.offers = set(decl.capabilities_of(model))

    @cached_property
    def reads(self):  # (asked only of a model that scores rows)
        model = self.model()
        return [model.attributes[i] for i in model.used]

    @cached_property
    def classes(self):
        return np.asarray(self.model().classes, object)


_facts = weakref.WeakKeyDictionary()


def facts(model):
    out = _facts.get(model)
    if out is None:
        out = _facts[model] = _Facts(model)
    return out


def _regressor(model):
    return facts(model).regressor


def _output(model, regressor, capability):
    """What scoring gives for ``capability``: a classifier's (or clusterer's) class
    probabilities for predict, else the model method the capability names."""
    if capability == "predict":
        return model.predict if regressor else model.proba
    return getattr(model, contract.METHODS[capability])


def _scored(fn, ids, bodies, rows, capability):
    """[(model, row indices or None for all, the capability's output for its rows)]
    per model; class probabilities are checked once for the whole chunk."""
    chunk = Encoder(rows, fn)
    parts, probabilities = [], []
    groups = _groups(fn, ids, bodies)
    batched = _batched(groups, chunk, capability)
    for i, (model, at) in enumerate(groups):
        f = facts(model)
        if capability not in f.offers:
            require(fn, model, capability)  # refuses, naming what it offers
        result = batched.get(i)
        if result is None:
            cols = chunk.columns(f.reads, at)
            result = _output(model, f.regressor, capability)(
                cols, len(rows) if at is None else len(at))
        if capability == "predict_proba" or capability == "predict" and not f.regressor:
            probabilities.append(result)
        parts.append((model, at, result))
    _check_distributions(fn, probabilities)
    return parts


def _batched(groups, chunk, capability):
    """{group: class probabilities} of the models whose class scores many models'
    rows in one call (``proba_many``), by class and the columns they read: a chunk
    scored against per-group models meets thousands of them."""
    if capability not in ("predict", "predict_proba"):
        return {}
    batches = {}
    for i, (model, at) in enumerate(groups):
        if at is not None and hasattr(model, "proba_many"):
            f = facts(model)
            if capability in f.offers and not f.regressor:
                batches.setdefault((type(model), tuple(f.reads)), []).append(i)
    out = {}
    for (cls, reads), members in batches.items():
        if len(members) > 1:
            ats = [groups[i][1] for i in members]
            results = cls.proba_many([groups[i][0] for i in members],
                                     chunk.columns(list(reads), np.concatenate(ats)),
                                     [len(at) for at in ats])
            out.update(zip(members, results))
    return out


def _by_width(arrays):
    """{k: (the arrays of k columns, stacked), ...}, for work done once per width."""
    widths = {}
    for i, p in enumerate(arrays):
        widths.setdefault(p.shape[1], []).append(i)
    return {k: (at, np.concatenate([arrays[i] for i in at]) if len(at) > 1
                else arrays[at[0]]) for k, at in widths.items()}


def _check_distributions(fn, arrays):
    """A last guard behind the checks of a body: class probabilities that are not
    distributions (a forged body that passed them) are refused, never returned. A
    row of zeros is the reference's answer where a model knows nothing (a leaf of no
    weight)."""
    for _, p in _by_width(arrays).values():
        total = p.sum(axis=1) if len(p) else p
        if len(p) and not (np.isfinite(p).all() and (p >= 0).all()
                           and ((np.abs(total - 1) < 1e-6) | (total == 0)).all()):
            corrupt = models.corrupt("its probabilities are not distributions")
            raise ValueError(f"{fn}: {corrupt}")


def _labels(parts):
    """Each part's predicted class codes, worked out once per width of the chunk."""
    out = [None] * len(parts)
    for at, p in _by_width([result for _, _, result in parts]).values():
        codes = labels(p)
        ends = np.cumsum([len(parts[i][2]) for i in at])
        for i, lab in zip(at, np.split(codes, ends[:-1])):
            out[i] = lab
    return out


def _numbers_text(out):
    """A numeric model's numbers as text that reads back to the same double."""
    return np.array([None if v != v else repr(float(v)) for v in out.tolist()], object)


@udf("_dm_predict", None, "VARCHAR")
def predict(ids, bodies, rows):
    parts = _scored("predict", ids, bodies, rows, "predict")
    if len(parts) == 1 and parts[0][1] is None and not _regressor(parts[0][0]):
        model, _, proba = parts[0]
        return pa.DictionaryArray.from_arrays(pa.array(labels(proba), pa.int32()),
                                              pa.array(model.classes, pa.string())
                                              ).cast(pa.string())
    known = [facts(model) for model, _, _ in parts]
    classified = [i for i, f in enumerate(known) if not f.regressor]
    codes = dict(zip(classified, _labels([parts[i] for i in classified])))
    out = np.full(len(ids), None, object)
    for i, (f, (_, at, result)) in enumerate(zip(known, parts)):
        text = _numbers_text(result) if f.regressor else f.classes[codes[i]]
        out[slice(None) if at is None else at] = text
    return pa.array(out, pa.string())


@udf("_dm_predict_value", None, "DOUBLE")
def predict_value(ids, bodies, rows):
    out = np.full(len(ids), np.nan)
    for _, at, result in _scored("predict_value", ids, bodies, rows, "predict_value"):
        out[slice(None) if at is None else at] = result
    return pa.array(out, pa.float64(), mask=np.isnan(out))


@udf("_dm_log_likelihood", None, "DOUBLE")
def log_likelihood(ids, bodies, rows):
    """The log density of each row under a density model."""
    out = np.full(len(ids), np.nan)
    for _, at, result in _scored("log_likelihood", ids, bodies, rows, "log_likelihood"):
        out[slice(None) if at is None else at] = result
    return pa.array(out, pa.float64(), mask=np.isnan(out))


PROBA_SQL = "MAP(VARCHAR, DOUBLE)"
PROBA = arrow_type(PROBA_SQL)


@udf("_dm_predict_proba", None, PROBA_SQL)
def predict_proba(ids, bodies, rows):
    n = len(ids)
    parts = _scored("predict_proba", ids, bodies, rows, "predict_proba")
    if len(parts) == 1 and parts[0][1] is None:  # one model for the whole chunk
        model, _, proba = parts[0]
        k = len(model.classes)
        offsets = pa.array(np.arange(n + 1, dtype=np.int32) * k)
        keys = pa.DictionaryArray.from_arrays(
            pa.array(np.tile(np.arange(k, dtype=np.int32), n)),
            pa.array(model.classes, pa.string())).cast(pa.string())
        return pa.MapArray.from_arrays(offsets, keys, pa.array(proba.ravel()))
    out = [None] * n
    for model, at, proba in parts:
        for i, p in zip(range(n) if at is None else at, proba.tolist()):
            out[i] = list(zip(model.classes, p))
    return pa.array(out, PROBA)


@udf("_dm_model_text", None, "VARCHAR")
def model_text(models_):
    return pa.array([None if m is None else require("model_text", m, "model_text").text()
                     for m in model_list("model_text", models_)], pa.string())


def _drawn(fn, write):
    def picture(m):
        model = require(fn, m, fn)
        try:
            return model.picture()
        except ValueError as err:  # too large to draw
            raise ValueError(f"{fn}: {err}") from None
        except (KeyError, IndexError, TypeError) as err:  # links a forged model broke
            raise ValueError(f"{fn}: {models.corrupt(str(err) or type(err).__name__)}"
                             ) from None

    def draw(models_):
        return pa.array([None if m is None else write(picture(m))
                         for m in model_list(fn, models_)], pa.string())
    draw.__doc__ = f"{fn}: each model's structure; a model with none is refused with " \
        "the learners that have one."
    return draw


model_dot = udf("_dm_model_dot", None, "VARCHAR")(_drawn("model_dot", lambda p: p.dot()))
model_svg = udf("_dm_model_svg", None, "VARCHAR")(_drawn("model_svg", lambda p: p.svg()))


INFO_SQL = ("STRUCT(learner VARCHAR, version INTEGER, kind VARCHAR, "
            "options MAP(VARCHAR, VARCHAR), instances BIGINT, "
            "attributes STRUCT(name VARCHAR, kind VARCHAR, \"values\" VARCHAR[])[], "
            "target VARCHAR, classes VARCHAR[], capabilities VARCHAR[])")
INFO = arrow_type(INFO_SQL)


@udf("_dm_model_info", None, INFO_SQL)
def model_info(models_):
    """What a model is: its learner, format version, options (as JSON texts),
    training rows, attributes, target and what it offers."""
    out = []
    for m in model_list("model_info", models_):
        if m is None:
            out.append(None)
            continue
        d = contract.info(declaration(m), m)
        d["options"] = [(k, json.dumps(v)) for k, v in d["options"].items()]
        out.append(d)
    return pa.array(out, INFO)


SQL_CACHE_SIZE = 64
_sql_cache = OrderedDict()
# The largest body model_to_sql writes. Its SQL is about twice the body and takes
# about 13 s per megabyte of body to write (measured on a C4.5 tree), and writing
# cannot be stopped once begun.
MAX_SQL_BODY = 4 << 20


@udf("_dm_model_to_sql", None, "VARCHAR")
def model_to_sql(models_, dialects):
    from ..algorithms.sqlgen import model_sql

    fn = "model_to_sql"
    out = []
    for v, d in zip(scalars(models_), scalars(dialects)):
        if v is None:
            out.append(None)
            continue
        body = v.get("body") if isinstance(v, dict) else None
        if isinstance(body, str) and len(body) > MAX_SQL_BODY:  # before parsing it
            raise ValueError(f"{fn}: the model is too large to write as SQL (its body is "
                             f"{len(body) / 2**20:.1f} MB; the limit is "
                             f"{MAX_SQL_BODY >> 20} MB); score it with predict")
        m = require(fn, model_of(fn, v), "model_to_sql")
        if d is None:
            raise ValueError(f"{fn}: dialect must name a SQL dialect, got NULL")
        key = (v["id"], d)
        if key not in _sql_cache:
            _sql_cache[key] = model_sql(declaration(m).sql_writer(), m, d)
            while len(_sql_cache) > SQL_CACHE_SIZE:
                _sql_cache.popitem(last=False)
        _sql_cache.move_to_end(key)
        out.append(_sql_cache[key])
    return pa.array(out, pa.string())
