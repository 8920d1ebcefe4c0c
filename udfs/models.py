"""The generic model functions: predict, predict_proba, predict_value,
log_likelihood, model_text, model_to_sql and model_info, each dispatched on the
capabilities the model's learner declares; and the model value itself.

A model value is a STRUCT: a format tag and version, the learner, an id (a digest
of the body) and the JSON body. Scoring macros pass the body only for the first row
of each model a chunk meets (see ``model_needed``), so a large model is not
copied for every scored row; parsed models (and small models just fitted) are
cached by id and body length.
"""

import gc
import json
import threading
from collections import OrderedDict
from contextlib import contextmanager
from functools import cached_property
from typing import NamedTuple

import numpy as np
import pyarrow as pa

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
FITTED_BYTES = CACHE_BYTES // CACHE_SIZE  # (32 KiB)
_cached_bytes = 0

_cache = OrderedDict()
# DuckDB calls the scoring functions from several threads at once: one may parse
# and store a model while another looks the same key up, so every read and change
# of the cache holds this lock (parsing does not)
_LOCK = threading.Lock()


def value(model):
    """A model as the Python form of its SQL value. A model just fitted is cached
    under its value's key, if its body is at most FITTED_BYTES: scoring in the same
    session (a per-group fit, then a JOIN on the group) then reads no body, and
    fits alone hold at most CACHE_SIZE such models. It is the model the body
    describes: the contract's tests check that each learner's fitted model scores,
    prints and serialises as the one read back from its body, and keeps nothing
    more."""
    body, version, model_id = models.dumps(model)
    v = {"format": FORMAT, "version": version, "learner": model.learner,
         "id": model_id, "body": body}
    if len(body) <= FITTED_BYTES:
        _store(v, Scorer(model))
    return v


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
    """The Scorer of the model value ``v``, parsed, checked and cached."""
    if not isinstance(v, dict) or v.get("format") != FORMAT:
        raise ValueError(f"{fn}: expected a model value (from a *_fit function), got "
                         f"{str(v)[:60]!r}")
    try:
        model = models.loads(v.get("learner"), v.get("version"), v.get("body"), v.get("id"))
    except models.ModelError as err:
        raise ValueError(f"{fn}: {err}") from None
    scorer = Scorer(model)
    _store(v, scorer)
    return scorer


def _store(v, scorer):
    """Cache ``scorer`` under the key of the model value ``v``; the least recently
    used go beyond CACHE_SIZE models and CACHE_BYTES of bodies."""
    global _cached_bytes
    key = cache_key(v)
    with _LOCK:  # replaced in place: the key is never missing meanwhile
        old = _cache.get(key)
        if old is not None:
            _cached_bytes -= len(old[1][3])
        _cache[key] = (scorer, _key(v))
        _cache.move_to_end(key)
        _cached_bytes += len(v.get("body"))
        while len(_cache) > CACHE_SIZE and _cached_bytes > CACHE_BYTES:
            _cached_bytes -= len(_cache.popitem(last=False)[1][1][3])


def forget():
    """Empty the cache of models (the next scoring of each reads its body)."""
    global _cached_bytes
    with _LOCK:
        _cache.clear()
        _cached_bytes = 0


def _lookup(keys, want=None):
    """The cached Scorers of ``keys`` (a list), each made the most recent, under one
    lock; None for a key not cached (or, given ``want``, cached for another value)."""
    out = []
    with _LOCK:
        for key in keys:
            hit = _cache.get(key)
            if hit is None or want is not None and hit[1] != want:
                out.append(None)
            else:
                _cache.move_to_end(key)
                out.append(hit[0])
    return out


def model_of(fn, v):
    """The model of one SQL model value (a dict), parsed once per id and body."""
    if isinstance(v, dict):
        hit = _lookup([cache_key(v)], _key(v))[0]
        if hit is not None:
            return hit.model
    return _parse(fn, v).model


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
            hit = _lookup([v["key"]])[0]
            if hit is None:
                raise ValueError(f"{fn}: {name}: expected a model value, got one without "
                                 "a known body")
            out[name] = hit.model
    return out


def model_list(fn, arg):
    return [None if v is None else model_of(fn, v) for v in scalars(arg)]


def _keys(ids):
    """The distinct keys of a column of model keys, and each row's index among them
    (-1 for NULL)."""
    coded = column(ids).dictionary_encode()
    return (coded.dictionary.to_pylist(),
            np.asarray(coded.indices.fill_null(-1), np.int64))


@udf("_dm_model_needed", None, "BOOLEAN", side_effects=True)
def model_needed(ids):
    """True at the first row of each model key (``cache_key``) in the chunk that is
    not cached; NULL for no key."""
    keys, codes = _keys(ids)
    out = np.zeros(len(codes), np.bool_)
    if keys:
        _, first = np.unique(codes, return_index=True)
        first = first[-len(keys):]  # (past the -1 of NULL keys)
        out[first[[j for j, s in enumerate(_lookup(keys)) if s is None]]] = True
    return pa.array(out, mask=codes < 0)


# One thread parses at a time: parsing is Python, so two threads would only take
# turns at the interpreter's lock, and cost a third more time doing so (DuckDB
# scores chunks on several threads); a thread that waits for another's parse also
# finds the models they share already cached. Scoring itself (numba kernels that
# release the interpreter's lock) is not held back.
_PARSING = threading.Lock()


@contextmanager
def _parsing():
    """Hold ``_PARSING``, with Python's cyclic garbage collector paused (if it was
    on): each parse makes many small objects, and with thousands of models already
    cached the collections they set off traverse them all again, a third of the
    time of a first scoring against 20,000 models. Whatever garbage a parse leaves
    is collected once the collector is back on."""
    with _PARSING:
        paused = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            if paused:
                gc.enable()


def _models(fn, ids, bodies):
    """The chunk's Scorers (the bodies it carries parsed first), and each row's index
    among them (-1 for no model)."""
    bodies = column(bodies)
    if bodies.null_count < len(bodies):
        with _parsing():
            for v in bodies.filter(bodies.is_valid()).to_pylist():
                model_of(fn, v)
    keys, codes = _keys(ids)
    found = _lookup(keys)
    if any(s is None for s in found):
        raise ValueError(f"{fn}: expected a model value, got one without a known body")
    return found, codes


def _groups(fn, ids, bodies):
    """Rows grouped by model, each model's in row order: [(model, row indices)]."""
    found, codes = _models(fn, ids, bodies)
    return [(members[0].model, at) for members, at, _ in _partition(found, codes, None)]


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


_BATCHES = {}  # (model class, the columns it reads) -> a small int, one per schema met


class Scorer:
    """A parsed model and what scoring asks of it, worked out once when the model is
    parsed rather than once per chunk (a chunk scored against per-group models meets
    thousands): whether it is a regressor, what it offers, the attributes it reads,
    its classes as an array, and its batch: the models that score many models'
    rows in one call (``proba_many``) and read the same columns share one."""

    def __init__(self, model):
        decl = declaration(model)
        self.model = model
        self.regressor = decl.kind_of(model) == "regressor"
        self.offers = frozenset(decl.capabilities_of(model))

    @cached_property
    def reads(self):  # (asked only of a model that scores rows)
        return [self.model.attributes[i] for i in self.model.used]

    @cached_property
    def classes(self):
        return tuple(self.model.classes)

    @cached_property
    def class_array(self):
        return np.asarray(self.classes, object)

    @cached_property
    def batch(self):
        """The batch's number, or -1 for a model scored alone."""
        if self.regressor or not hasattr(self.model, "proba_many"):
            return -1
        reads = (type(self.model), tuple((a.name, a.kind, a.values) for a in self.reads))
        with _LOCK:  # (two threads must not number two batches alike)
            return _BATCHES.setdefault(reads, len(_BATCHES))


class Part(NamedTuple):
    """The rows of a chunk that one call scored: ``members``' rows in turn (``at``:
    their indices in the chunk, None for all of it; ``counts``: how many of each),
    and the capability's output for them: for many classifiers, their class
    probabilities padded with zeros to the most classes among them."""
    members: list
    at: np.ndarray | None
    counts: list
    result: np.ndarray


def _scored(fn, ids, bodies, rows, capability):
    """The chunk's rows scored, as Parts: the rows of each batch of models in one
    call, those of any other model in one call of its own. Class probabilities are
    checked once for the whole chunk."""
    chunk = Encoder(rows, fn)
    found, codes = _models(fn, ids, bodies)
    for s in found:
        if capability not in s.offers:
            require(fn, s.model, capability)  # refuses, naming what it offers
    if len(found) == 1 and (codes >= 0).all():
        parts = [_part(found, None, [len(codes)], chunk, capability)]
    else:
        parts = [_part(members, at, counts, chunk, capability)
                 for members, at, counts in _partition(found, codes, capability)]
    if capability in ("predict", "predict_proba"):
        _check_distributions(fn, [p.result for p in parts if not p.members[0].regressor])
    return parts


def _partition(found, codes, capability):
    """[(members, their rows in turn, rows per member)]: a part per batch of two or
    more models, and one per other model (every model, for a ``capability`` that
    no batch scores)."""
    scored_together = capability in ("predict", "predict_proba")
    batch = np.array([s.batch if scored_together else -1 for s in found], np.int64)
    models_in = np.bincount(batch + 1)  # [0]: the models alone
    alone = (batch < 0) | (models_in[batch + 1] < 2)
    # a part's number: its batch's, and past the batches one per model alone
    part = np.where(alone, len(models_in) + np.arange(len(found)), batch)
    valid = np.flatnonzero(codes >= 0)
    row_part = part[codes[valid]]
    rows = valid[np.lexsort((codes[valid], row_part))]  # by part, model, then row
    by_part = np.argsort(part, kind="stable").tolist()
    n = len(models_in) + len(found)
    m_count, r_count = np.bincount(part, minlength=n), np.bincount(row_part, minlength=n)
    m_end, r_end = np.cumsum(m_count).tolist(), np.cumsum(r_count).tolist()
    counts = np.bincount(codes[valid], minlength=len(found)).tolist()
    m_count, r_count = m_count.tolist(), r_count.tolist()
    out = []  # (in Python numbers: a chunk may hold thousands of parts)
    for p in np.flatnonzero(m_count).tolist():
        members = by_part[m_end[p] - m_count[p]:m_end[p]]
        out.append(([found[j] for j in members], rows[r_end[p] - r_count[p]:r_end[p]],
                    [counts[j] for j in members]))
    return out


def _part(members, at, counts, chunk, capability):
    first = members[0]
    cols = chunk.columns(first.reads, at)
    n = sum(counts)
    if len(members) > 1:
        result = type(first.model).proba_many([s.model for s in members], cols, counts)
    else:
        result = _output(first.model, first.regressor, capability)(cols, n)
    return Part(members, at, counts, result)


def _output(model, regressor, capability):
    """What scoring gives for ``capability``: a classifier's (or clusterer's) class
    probabilities for predict, else the model method the capability names."""
    if capability == "predict":
        return model.predict if regressor else model.proba
    return getattr(model, contract.METHODS[capability])


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
    weight), and so is a probability a rounding error below zero (a CART leaf whose
    class weight was subtracted down to -2e-16)."""
    for _, p in _by_width(arrays).values():
        total = p.sum(axis=1) if len(p) else p
        if len(p) and not (np.isfinite(p).all() and (p >= -1e-9).all()
                           and ((np.abs(total - 1) < 1e-6) | (total == 0)).all()):
            corrupt = models.corrupt("its probabilities are not distributions")
            raise ValueError(f"{fn}: {corrupt}")


def _labels(parts):
    """Each part's predicted class codes, worked out once per width of the chunk
    (the padding of a part of many classifiers is never the largest: it is 0, and a
    class must beat the first by more than a margin)."""
    out = [None] * len(parts)
    for at, p in _by_width([part.result for part in parts]).values():
        codes = labels(p)
        ends = np.cumsum([len(parts[i].result) for i in at])
        for i, lab in zip(at, np.split(codes, ends[:-1])):
            out[i] = lab
    return out


def _class_names(part):
    """(the names of the part's classes, each row's offset into them): one list when
    its models share their classes (as they mostly do), else one after another."""
    members = part.members
    first = members[0].classes
    if len(members) == 1 or all(s.classes == first for s in members):
        return members[0].class_array, 0
    sizes = [len(s.classes) for s in members]
    starts = np.cumsum([0, *sizes[:-1]])
    return (np.concatenate([s.class_array for s in members]),
            np.repeat(starts, part.counts))


def _where(at):
    return slice(None) if at is None else at


def _numbers_text(out):
    """A numeric model's numbers as text that reads back to the same double."""
    return np.array([None if v != v else repr(float(v)) for v in out.tolist()], object)


@udf("_dm_predict", None, "VARCHAR")
def predict(ids, bodies, rows):
    parts = _scored("predict", ids, bodies, rows, "predict")
    first = parts[0].members[0]
    if len(parts) == 1 and parts[0].at is None and not first.regressor:
        return pa.DictionaryArray.from_arrays(pa.array(labels(parts[0].result), pa.int32()),
                                              pa.array(first.model.classes, pa.string())
                                              ).cast(pa.string())
    out = np.full(len(column(ids)), None, object)
    classified = []
    for p in parts:
        if p.members[0].regressor:
            out[_where(p.at)] = _numbers_text(p.result)
        else:
            classified.append(p)
    for p, codes in zip(classified, _labels(classified)):
        names, offsets = _class_names(p)
        out[_where(p.at)] = names[offsets + codes]
    return pa.array(out, pa.string())


def _numbers(fn, ids, bodies, rows):
    out = np.full(len(column(ids)), np.nan)
    for p in _scored(fn, ids, bodies, rows, fn):
        out[_where(p.at)] = p.result
    return pa.array(out, pa.float64(), mask=np.isnan(out))


@udf("_dm_predict_value", None, "DOUBLE")
def predict_value(ids, bodies, rows):
    return _numbers("predict_value", ids, bodies, rows)


@udf("_dm_log_likelihood", None, "DOUBLE")
def log_likelihood(ids, bodies, rows):
    """The log density of each row under a density model."""
    return _numbers("log_likelihood", ids, bodies, rows)


PROBA_SQL = "MAP(VARCHAR, DOUBLE)"
PROBA = arrow_type(PROBA_SQL)


@udf("_dm_predict_proba", None, PROBA_SQL)
def predict_proba(ids, bodies, rows):
    """Each row's map of class to probability, built as flat arrays: each part's
    rows in turn, then put in row order (NULL for a row without a model)."""
    n = len(column(ids))
    parts = _scored("predict_proba", ids, bodies, rows, "predict_proba")
    names, keys, values, widths, at = [], [], [], [], []
    base = 0
    for p in parts:
        part_names, offsets = _class_names(p)
        width = np.repeat([len(s.classes) for s in p.members], p.counts)  # per row
        columns = np.arange(p.result.shape[1])
        key = base + np.broadcast_to(offsets, width.shape)[:, None] + columns
        if (width == len(columns)).all():  # no padding (one model, or alike ones)
            keys.append(key.ravel())
            values.append(p.result.ravel())
        else:
            cells = columns < width[:, None]
            keys.append(key[cells])
            values.append(p.result[cells])
        widths.append(width)
        at.append(np.arange(n) if p.at is None else p.at)
        names.append(part_names)
        base += len(part_names)
    width, at = np.concatenate(widths), np.concatenate(at)
    offsets = np.zeros(len(width) + 1, np.int32)
    np.cumsum(width, out=offsets[1:])
    maps = pa.MapArray.from_arrays(
        pa.array(offsets),
        pa.DictionaryArray.from_arrays(pa.array(np.concatenate(keys), pa.int32()),
                                       pa.array(np.concatenate(names), pa.string())
                                       ).cast(pa.string()),
        pa.array(np.concatenate(values), pa.float64()))
    if len(parts) == 1 and parts[0].at is None:  # one model for the whole chunk
        return maps
    where = np.full(n, -1, np.int64)  # each row's place among the parts' rows
    where[at] = np.arange(len(at))
    return maps.take(pa.array(where, mask=where < 0))


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
