"""Clusterings as values: EM mixtures and k-means partitions. Both serialise to
JSON, score rows with numba kernels (missing values count as the training mean or
mode), print as the reference prints them, and list their parameters as rows.

Cluster labels are the cluster numbers as text ("0", "1", ...), so the generic
``predict`` gives a row's cluster: the most probable one for EM, the nearest
centre for k-means.
"""

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import contract, memory
from ..dataset import Attribute, stacked
from ..filters import ReplaceMissing, fill_values
from ..javafmt import double_to_string, java_double
from ..jit import frozen, njit, threads
from ..models import check_array
from . import em, kmeans
from .kmeans import Layout

_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _enc(a):
    """Nested lists of JSON-safe numbers: non-finite floats become strings."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0:
        x = float(a)
        if math.isfinite(x):
            return x
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return [_enc(v) for v in a]


def _dec(v):
    """What ``_enc`` wrote, as float64 arrays. Lists of plain numbers (the common
    case) are converted in one call; anything else (the special values' names, or a
    forged body's text, NULL or truth values) goes value by value, so that
    only numbers and those names are read."""
    if isinstance(v, list):
        x = np.array(v) if v else np.zeros(0)
        if x.dtype.kind in "if":
            return x.astype(np.float64)
        return np.array([_dec(x) for x in v], dtype=np.float64)
    if isinstance(v, str):
        return _SPECIAL[v]
    return float(v)


def _java_int(x):
    if math.isnan(x):
        return 0
    return int(max(-2147483648.0, min(2147483647.0, x)))


def _log10(x):
    x = abs(x)
    if x == 0:
        return -math.inf
    if math.isnan(x):
        return math.nan
    return math.log(x) / math.log(10.0)


def _left(s, width):
    return " " * max(width - len(s), 0) + s


def _right(s, width):
    return s + " " * max(width - len(s), 0)


def _dts(x, places):
    return double_to_string(float(x), places)


class _Clustering:
    """What both clusterers share: the attributes, the training means/modes that
    replace missing values, and the matrix of rows to score."""

    def __init__(self, attributes, fill, options, instances):
        self.attributes = list(attributes)
        self.layout = Layout.of(self.attributes)
        self.missing = fill if isinstance(fill, ReplaceMissing) else \
            ReplaceMissing(self.attributes, fill)
        self.options = dict(options)
        self.instances = int(instances)
        self.used = list(range(len(self.attributes)))

    @property
    def classes(self):
        return tuple(str(c) for c in range(self.num_clusters))

    def _base_json(self):
        return {"attributes": [a.to_json() for a in self.attributes],
                "fill": _enc(self.missing.fill), "options": self.options,
                "instances": self.instances}

    @staticmethod
    def _base_args(d):
        return ([Attribute.from_json(a) for a in d["attributes"]], _dec(d["fill"]),
                d["options"], d["instances"])

    def _validate_base(self):
        """What both share: attributes with values, and their fill values."""
        if any(a.nominal and not a.values for a in self.attributes):
            raise ValueError("a nominal attribute of it has no values")
        self.missing.validate()

    def matrix(self, columns, n):
        """The missing-free (n, p) matrix of rows given as the ``used`` columns."""
        p = len(self.attributes)
        if len(columns) != p:
            raise ValueError(f"expected {p} columns, got {len(columns)}")
        X = np.empty((p, n)).T  # the kernels' rows (kmeans.rows_of)
        for j, col in enumerate(columns):
            X[:, j] = col
        return self.missing.fill_in(X)


class EMModel(_Clustering):
    """A finite mixture: per cluster a prior, and per attribute a normal
    distribution (numeric) or Laplace-corrected value counts (nominal)."""

    learner = "em"

    def __init__(self, attributes, fill, options, instances, params, log_likelihood,
                 iterations, reverted=False, cv=None):
        super().__init__(attributes, fill, options, instances)
        self.params = params
        self.log_likelihood = float(log_likelihood)
        self.iterations = int(iterations)
        self.reverted = bool(reverted)
        self.cv = cv

    @property
    def num_clusters(self):
        return self.params.k

    @property
    def priors(self):
        return self.params.priors

    @property
    def means(self):
        """(K, p) cluster means of the numeric attributes (NaN for nominal ones)."""
        return np.where(self.layout.nominal, np.nan, self.params.mean)

    @property
    def std_devs(self):
        """(K, p) cluster standard deviations (NaN for nominal attributes)."""
        return np.where(self.layout.nominal, np.nan, self.params.sd)

    def value_counts(self, c, j):
        """The estimator's counts (Laplace ones included) of nominal attribute
        ``j``'s values in cluster ``c``."""
        lay = self.layout
        return self.params.counts[c, lay.offs[j]:lay.offs[j] + lay.nvals[j]].copy()

    @property
    def chosen_by_cv(self):
        return self.options.get("k", -1) < 0

    def proba(self, columns, n):
        """(n, K) membership probabilities."""
        return em.densities(self.matrix(columns, n), self.layout, self.params)[0]

    def log_density(self, columns, n):
        """(n,) log density of each row under the mixture."""
        return em.densities(self.matrix(columns, n), self.layout, self.params)[1]

    def to_json(self):
        P = self.params
        return {**self._base_json(), "priors": _enc(P.priors), "mean": _enc(P.mean),
                "sd": _enc(P.sd), "counts": _enc(P.counts), "total": _enc(P.total),
                "log_likelihood": _enc(self.log_likelihood), "iterations": self.iterations,
                "reverted": self.reverted,
                "cv": None if self.cv is None else [
                    {"k": c["k"], "folds": _enc(c["folds"]), "mean": _enc(c["mean"])}
                    for c in self.cv]}

    @classmethod
    def from_json(cls, d):
        attributes, fill, options, instances = cls._base_args(d)
        K = len(d["priors"])
        p, V = len(attributes), Layout.of(attributes).V
        params = em.Params(_dec(d["priors"]), _dec(d["mean"]).reshape(K, p),
                           _dec(d["sd"]).reshape(K, p), _dec(d["counts"]).reshape(K, V),
                           _dec(d["total"]).reshape(K, p))
        cv = None if d["cv"] is None else [
            {"k": c["k"], "folds": _dec(c["folds"]).tolist(), "mean": float(_dec(c["mean"]))}
            for c in d["cv"]]
        return cls(attributes, fill, options, instances, params,
                   _dec(d["log_likelihood"]), d["iterations"], d["reverted"], cv)

    def validate(self):
        """Per cluster a prior, and per attribute a normal distribution (a finite
        mean, a positive deviation) or value counts with their total."""
        self._validate_base()
        P, lay = self.params, self.layout
        k, p = P.k, len(self.attributes)
        if k < 1:
            raise ValueError("it has no cluster")
        check_array(P.priors, "its priors", (k,), 0, 1 + 1e-9)
        numeric = ~lay.nominal
        check_array(P.mean[:, numeric], "its means", (k, None))
        check_array(P.sd[:, numeric], "its deviations", (k, None), low=1e-300)
        check_array(P.counts, "its value counts", (k, lay.V), low=0)
        check_array(P.total[:, lay.nominal], "its value totals", (k, None), low=1e-300)
        if P.total.shape != (k, p):
            raise ValueError("its value totals are not one per cluster and attribute")

    def value_probabilities(self, c, j):
        """P(value) of nominal attribute ``j`` in cluster ``c``."""
        counts = self.value_counts(c, j)
        total = self.params.total[c, j]
        return counts / total if total != 0 else np.zeros(len(counts))

    def rows(self):
        """One dict per cluster and numeric attribute (mean, std. dev.) or nominal
        value (count, probability)."""
        P, lay = self.params, self.layout
        out = []
        for c in range(P.k):
            for j, a in enumerate(self.attributes):
                base = {"cluster": c, "prior": float(P.priors[c]), "attribute": a.name}
                if a.nominal:
                    probs = self.value_probabilities(c, j)
                    for v, label in enumerate(a.values):
                        out.append({**base, "value": label, "mean": None, "std_dev": None,
                                    "count": float(P.counts[c, lay.offs[j] + v]),
                                    "probability": float(probs[v])})
                else:
                    out.append({**base, "value": None, "mean": float(P.mean[c, j]),
                                "std_dev": float(P.sd[c, j]), "count": None,
                                "probability": None})
        return out

    def text(self):
        P, lay, K = self.params, self.layout, self.params.k
        attrs = self.attributes
        head = "\nEM\n==\n"
        if self.chosen_by_cv:
            head += f"\nNumber of clusters selected by cross validation: {K}\n"
        else:
            head += f"\nNumber of clusters: {K}\n"
        max_w = 0
        max_aw = 0
        for a in attrs:
            max_aw = max(max_aw, len(a.name))
            if a.nominal:
                for v in a.values:
                    max_aw = max(max_aw, len(v) + 2)
        for c in range(K):
            for j, a in enumerate(attrs):
                if a.nominal:
                    for v in range(lay.offs[j], lay.offs[j] + lay.nvals[j]):
                        max_w = max(max_w, len(_dts(P.counts[c, v], 4)))
                    max_w = max(max_w, len(_dts(P.total[c, j], 4)))
                else:
                    lm, ls = _log10(P.mean[c, j]), _log10(P.sd[c, j])
                    t = lm if lm > ls else ls
                    if t < 0:
                        t = 1
                    max_w = max(max_w, _java_int(t + 6.0))
        max_aw = max(max_aw, len("Attribute")) + 2
        cell = max_w + 1
        out = [head, "\n\n", _left("Cluster", max_aw + max_w + 1), "\n",
               _right("Attribute", max_aw)]
        out += [_left(str(c), cell) for c in range(K)]
        out += ["\n", " " * max_aw]
        out += [_left("(" + _dts(P.priors[c], 2) + ")", cell) for c in range(K)]
        out += ["\n", "=" * (max_aw + max_w * K + K + 1), "\n"]
        for j, a in enumerate(attrs):
            out.append(a.name + "\n")
            if a.nominal:
                for v, label in enumerate(a.values):
                    out.append(_right("  " + label, max_aw + 1))
                    out += [_left(_dts(P.counts[c, lay.offs[j] + v], 4), cell)
                            for c in range(K)]
                    out.append("\n")
                out.append(_right("  [total]", max_aw + 1))
                out += [_left(_dts(P.total[c, j], 4), cell) for c in range(K)]
                out.append("\n")
            else:
                for label, row in (("  mean", P.mean[:, j]), ("  std. dev.", P.sd[:, j])):
                    out.append(_right(label, max_aw + 1))
                    out += [_left(_dts(row[c], 4), cell) for c in range(K)]
                    out.append("\n")
                out.append("\n")
        return "".join(out)


class KMeansModel(_Clustering):
    """Cluster centres (numeric means, nominal modes) with the training ranges
    that scale distances."""

    learner = "kmeans"

    def __init__(self, attributes, fill, options, instances, lo, width, full, centroids,
                 sizes, sse, squared_errors, iterations):
        super().__init__(attributes, fill, options, instances)
        self.lo = np.asarray(lo, dtype=np.float64)
        self.width = np.asarray(width, dtype=np.float64)
        self.full = np.asarray(full, dtype=np.float64)
        self.centroids = np.asarray(centroids, dtype=np.float64).reshape(-1, len(attributes))
        self.sizes = [int(s) for s in sizes]
        self.sse = float(sse)
        self.squared_errors = np.asarray(squared_errors, dtype=np.float64)
        self.iterations = int(iterations)

    @property
    def num_clusters(self):
        return len(self.centroids)

    @cached_property
    def scaling(self):
        """The ranges and the fill values as one (3, attributes) array: what
        ``proba_many`` stacks, once per model rather than three times per chunk."""
        return np.stack([self.lo, self.width, self.missing.fill])

    def assign(self, columns, n):
        """The nearest centre of each row."""
        return kmeans.nearest(self.matrix(columns, n).T, self.layout.nominal, self.lo,
                              self.width, self.centroids, kmeans.CHUNK,
                              threads(n > kmeans.CHUNK))

    def proba(self, columns, n):
        """(n, K) one-hot rows: 1 for the nearest centre."""
        out = np.zeros((n, self.num_clusters))
        out[np.arange(n), self.assign(columns, n)] = 1.0
        return out

    @staticmethod
    def proba_many(models, columns, counts):
        """``proba`` of many models that read the same attributes, in one kernel call:
        ``columns`` holds each model's rows in turn, ``counts[j]`` of them for model
        ``j``. One-hot rows in that order, as wide as the most clusters among the
        models (a model of fewer has zeros past its own)."""
        first = models[0]
        ends = np.zeros(len(models) + 1, np.int64)
        np.cumsum(counts, out=ends[1:])
        cols = np.empty((len(first.attributes), ends[-1]))  # as kernels take rows
        for j, col in enumerate(columns):
            cols[j] = col
        sizes = [len(m.centroids) for m in models]
        c_ends = np.zeros(len(models) + 1, np.int64)
        np.cumsum(sizes, out=c_ends[1:])
        lo, width, fill = np.stack([m.scaling for m in models], axis=1)
        assign = kmeans.nearest_many(cols, first.layout.nominal, ends, lo, width, fill,
                                     np.concatenate([m.centroids for m in models]), c_ends)
        hot = np.zeros((len(assign), max(sizes)))
        hot[np.arange(len(assign)), assign] = 1.0
        return hot

    def log_density(self, columns, n):
        raise ValueError("k-means has no likelihood (it is not a density model; use em)")

    def to_json(self):
        return {**self._base_json(), "lo": _enc(self.lo), "width": _enc(self.width),
                "full": _enc(self.full), "centroids": _enc(self.centroids),
                "sizes": self.sizes, "sse": _enc(self.sse),
                "squared_errors": _enc(self.squared_errors), "iterations": self.iterations}

    @classmethod
    def from_json(cls, d):
        return cls(*cls._base_args(d), _dec(d["lo"]), _dec(d["width"]), _dec(d["full"]),
                   _dec(d["centroids"]), d["sizes"], _dec(d["sse"]),
                   _dec(d["squared_errors"]), d["iterations"])

    def validate(self):
        """Per attribute a range, and per cluster a centre: a number, or a value of a
        nominal attribute (NaN where it has none)."""
        self._validate_base()
        p = len(self.attributes)
        k = len(self.centroids)
        if k < 1:
            raise ValueError("its clusters do not each have a centre and a size")
        check_array(self.sizes, "its cluster sizes", (k,), 0, 2**62, whole=True)
        ranges = (("minima", self.lo), ("ranges", self.width), ("full", self.full))
        for name, x in ranges:
            if x.shape != (p,):
                raise ValueError(f"its {name} are not one per attribute")
        check_array(self.squared_errors, "its squared errors", (k,), low=0)
        check_array([self.sse], "its squared error", (1,), low=0)
        # all the ranges and centres checked at once; where that fails, one by one
        # for the error (NaN: an attribute never seen, or a centre without a value)
        centres = np.vstack([self.centroids, self.full])  # and the whole data's centre
        known = ~np.isnan(centres)
        nominal, values = self.layout.nominal, self.layout.nvals
        if not (np.isinf(np.concatenate([self.lo, self.width, self.full])).any()
                or np.isinf(centres).any() or (known & nominal & (
                    (centres < 0) | (centres >= values) | (centres != np.round(centres))
                )).any()):
            return
        for name, x in ranges:
            check_array(x[~np.isnan(x)], f"its {name}")
        for j, a in enumerate(self.attributes):
            check_array(centres[known[:, j], j], f"its centres' {a.name!r}", None,
                        *((0, len(a.values)) if a.nominal else (None, None)),
                        whole=a.nominal)
        raise ValueError("its centres or ranges do not hold finite numbers")

    def value_text(self, j, x):
        a = self.attributes[j]
        if math.isnan(x):
            return "missing"
        return a.values[int(x)] if a.nominal else _dts(x, 4)

    def rows(self):
        """One dict per cluster and attribute: the centre's value (a number, or the
        nominal label)."""
        out = []
        for c in range(self.num_clusters):
            for j, a in enumerate(self.attributes):
                x = float(self.centroids[c, j])
                out.append({"cluster": c, "size": self.sizes[c], "attribute": a.name,
                            "value": None if a.nominal or math.isnan(x) else x,
                            "label": (a.values[int(x)] if a.nominal and not math.isnan(x)
                                      else None)})
        return out

    def text(self):
        attrs, C, K = self.attributes, self.centroids, self.num_clusters
        max_w = 0
        max_aw = 0
        for c in range(K):
            for j, a in enumerate(attrs):
                max_aw = max(max_aw, len(a.name))
                if not a.nominal:
                    t = _log10(C[c, j])
                    if t < 0:
                        t = 1
                    max_w = max(max_w, _java_int(t + 6.0))
        for j, a in enumerate(attrs):
            if a.nominal:
                for c in range(K):
                    max_w = max(max_w, len(self.value_text(j, C[c, j])))
                for v in a.values:
                    max_aw = max(max_aw, len(v) + 1)
        for s in self.sizes:
            max_w = max(max_w, len(f"({s})"))
        max_aw = max(max_aw + 2, len("Attribute") + 2)
        if max_w < len("Full Data"):
            max_w = len("Full Data") + 1
        if max_w < len("missing"):
            max_w = len("missing") + 1
        cell = max_w + 1
        out = ["\nkMeans\n======\n", f"\nNumber of iterations: {self.iterations}\n",
               "Within cluster sum of squared errors: " + java_double(self.sse),
               "\nMissing values globally replaced with mean/mode", "\n\nCluster centroids:\n",
               _left("Cluster#", max_aw + max_w * 2 + 2), "\n",
               _right("Attribute", max_aw), _left("Full Data", cell)]
        out += [_left(str(c), cell) for c in range(K)]
        out += ["\n", _left(f"({self.instances})", max_aw + max_w + 1)]
        out += [_left(f"({s})", cell) for s in self.sizes]
        out += ["\n", "=" * (max_aw + max_w * (K + 1) + K + 1), "\n"]
        for j, a in enumerate(attrs):
            out.append(_right(a.name, max_aw))
            out.append(_left(self.value_text(j, self.full[j]), cell))
            out += [_left(self.value_text(j, C[c, j]), cell) for c in range(K)]
            out.append("\n")
        out.append("\n\n")
        return "".join(out)


# ------------------------------------------------------------------ fitting

@njit(cache=True)
def _distinct_at_least(cols, k):
    """Whether ``cols`` has at least ``k`` distinct rows (stops once it has seen k)."""
    n = cols.shape[1]
    seen = np.empty(k, np.int64)
    m = 0
    for i in range(n):
        if not kmeans.seen_row(cols, i, seen, np.int64(m)):
            seen[m] = i
            m += 1
            if m == k:
                return True
    return False


def _declared(name, **given):
    """The options of a direct call, checked by the learner's declaration."""
    if isinstance(given.get("exclude"), str):
        given["exclude"] = (given["exclude"],)
    return contract.learners()[name].options(name, given)


@dataclass
class _Prepared:
    attributes: list
    layout: Layout
    fill: ReplaceMissing  # fitted
    X: np.ndarray  # (n, p) the clustered attributes, missing cells filled
    w: np.ndarray
    lo: np.ndarray  # per attribute, the filled column's minimum and width
    width: np.ndarray
    centre: np.ndarray  # per attribute, the filled column's mean or mode


FILLED = 8  # bytes a cell the filled copy of a table with missing cells takes more


def _prepare(data, exclude, name=None, limit=None):
    """The clustered attributes of ``data`` as one matrix of rows, the transpose of
    the Dataset's columns (copied only where cells are missing, to fill them with
    the training mean or mode), and every column's range and mean or mode
    (``kmeans.described``, one pass). The copy is refused when, on top of what the
    learner ``name`` declares for rows fed from a scan, it would take the fit over
    ``limit`` (a size: the session's memory limit; None: no check)."""
    if isinstance(exclude, str):
        exclude = (exclude,)
    names = [a.name for a in data.attributes]
    for e in exclude:
        if e not in names:
            raise ValueError(f"exclude: there is no attribute named {e!r}")
    keep = [j for j, a in enumerate(data.attributes) if a.name not in set(exclude)]
    if not keep:
        raise ValueError("no attributes left to cluster (exclude removed them all)")
    if data.n == 0:
        raise ValueError("no rows to cluster")
    attributes = [data.attributes[j] for j in keep]
    for a in attributes:
        if a.kind not in ("numeric", "nominal"):
            raise ValueError(f"attribute {a.name!r} is {a.kind}; only numeric and "
                             "nominal attributes can be clustered")
    w = np.ascontiguousarray(data.weights, dtype=np.float64)
    lay = Layout.of(attributes)
    M = stacked([np.asarray(data.columns[j], np.float64) for j in keep], data.n)
    fill = np.nan_to_num(fill_values(frozen(M), w, lay.nominal, lay.nvals))  # none: 0
    lo, width, centre, missing = kmeans.described(M, w, fill, lay.nominal, lay.nvals)
    for a, m in zip(attributes, missing):
        if m == data.n:
            raise ValueError(f"attribute {a.name!r} has only missing values")
    if missing.any():  # the filled columns: a copy, the Dataset's are left as they are
        if name is not None:
            per_cell = contract.learners()[name].memory + FILLED
            memory.check(name, per_cell, data.n, len(keep), limit)
        M = M.copy()
        for t in np.flatnonzero(missing):
            M[t][np.isnan(M[t])] = fill[t]
    X = M.T  # the kernels' rows (kmeans.rows_of): no copy of the columns
    return _Prepared(attributes, lay, ReplaceMissing(attributes, fill), X, w, lo, width,
                     centre)


def _check_k(k, Xr):
    if k > Xr.shape[0] or not _distinct_at_least(Xr.T, k):
        raise ValueError(f"k = {k} is larger than the number of distinct rows")


def fit_em(data, k=-1, max_iterations=100, seed=100, min_stddev=1e-6, exclude=()):
    """An EMModel of ``data`` (a Dataset). ``k=-1`` chooses the number of clusters
    by ten-fold cross-validated log-likelihood."""
    return _em(data, _declared("em", k=k, max_iterations=max_iterations, seed=seed,
                               min_stddev=min_stddev, exclude=exclude))


def _em(data, o, limit=None):
    k = o["k"]
    if k == 0:
        raise ValueError("k must be a positive number of clusters, or -1 to choose it by "
                         "cross-validation, got 0")
    d = _prepare(data, o["exclude"], "em", limit)
    if k > 0:
        _check_k(k, d.X)
    try:
        fitted = em.fit(em.Rows(d.X, d.w, d.layout, (d.lo, d.width)), k,
                        o["max_iterations"], o["seed"], o["min_stddev"])
    except em.StepFailed as err:
        raise ValueError(str(err)) from None
    t = fitted.trained
    options = {"k": k, "max_iterations": o["max_iterations"], "seed": o["seed"],
               "min_stddev": o["min_stddev"]}
    return EMModel(d.attributes, d.fill, options, data.n, t.params, t.loglik, t.steps,
                   t.reverted, fitted.cv)


def fit_kmeans(data, k, seed=10, init="k-means++", max_iterations=500, exclude=()):
    """A KMeansModel of ``data`` (a Dataset) with ``k`` clusters. ``init='random'``
    is the reference's seeding (with java.util.Random(seed)); 'k-means++' draws
    from numpy's default_rng(seed)."""
    return _kmeans(data, _declared("kmeans", k=k, seed=seed, init=init,
                                   max_iterations=max_iterations, exclude=exclude))


def _kmeans(data, o, limit=None):
    k, seed, init = o["k"], o["seed"], o["init"]
    if init == "k-means++" and seed < 0:
        raise ValueError(f"seed must be at least 0 with init='k-means++', got {seed}")
    d = _prepare(data, o["exclude"], "kmeans", limit)
    _check_k(k, d.X)
    run = kmeans.run(d.X, d.w, d.layout, k, seed, init, o["max_iterations"], d.lo, d.width,
                     in_place=True)
    options = {"k": k, "seed": seed, "init": init, "max_iterations": o["max_iterations"]}
    return KMeansModel(d.attributes, d.fill, options, data.n, d.lo, d.width, d.centre,
                       run.centroids, run.sizes, run.sse, run.squared_errors,
                       run.iterations)


__all__ = ["EMModel", "KMeansModel", "fit_em", "fit_kmeans"]


def fit(data, target, options, settings):
    """The contract's fit for em: options already checked by its declaration."""
    return _em(data, options, settings.get("memory_limit"))


def fit_k(data, target, options, settings):
    """The contract's fit for kmeans."""
    return _kmeans(data, options, settings.get("memory_limit"))
