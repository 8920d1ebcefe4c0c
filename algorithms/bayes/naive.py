"""Naive Bayes (the book's section 4.2), as the reference's NaiveBayes estimates and
scores it.

Per class, each nominal attribute gets value counts that start at 1 (Laplace), and
each numeric one a normal distribution (``numeric='normal'``), a sum of normal
kernels, one per distinct value (``'kernel'``, NaiveBayes -K), or is discretised
against the class first and counted (``'discretize'``, -D, the supervised
Discretize filter). The class prior counts start at 1 too.

A numeric value is rounded to the attribute's precision: the mean gap between its
distinct sorted training values (0.01 without any gap). The reference sorts its
copy of the rows by each numeric attribute in turn (its quicksort, which is not
stable) and then adds the rows in that order, so the sums of the estimators are
taken in that order here too. A normal estimator's deviation is updated row by
row and kept when the running deviation falls to 1e-10 or below; it is never below
precision / 6. A value's probability is the mass of the (rounded) value's
precision-wide interval; every factor is at least 1e-75, and the product is
rescaled when it underflows, as in the reference. A missing value adds nothing;
rows with a missing class are left out.
"""

import math

import numpy as np

from ..dataset import Attribute
from ..filters import Discretize, Pipeline
from ..javafmt import double_to_string, java_double
from ..javautil import weka_order
from ..jit import PRANGE_ONLY, njit, prange
from ..models import check_array, check_class

PRECISION = 0.01  # without two distinct values
SMALL = 1e-6  # the least kernel precision
PARALLEL_ROWS = 10_000  # rows from which scoring pays for numba's threads
SQRTH = 0.70710678118654752440  # sqrt(1/2)
DISCRETE, NORMAL, KERNEL = 0, 1, 2
ESTIMATORS = ("normal", "kernel", "discretize")


class NaiveBayesModel:
    learner = "naive_bayes"

    def __init__(self, attributes, class_index, pipeline, prior, estimators, options,
                 instances):
        self.attributes = list(attributes)
        self.class_index = int(class_index)
        self.target = self.attributes[self.class_index].name
        self.classes = tuple(self.attributes[self.class_index].values)
        self.used = [j for j in range(len(self.attributes)) if j != self.class_index]
        self.pipeline = pipeline
        self.prior = {"counts": np.asarray(prior["counts"], np.float64),
                      "total": float(prior["total"])}
        self.estimators = [_arrays(e) for e in estimators]
        self.options = dict(options)
        self.instances = int(instances)
        self._flat = None

    # -------------------------------------------------------------- values

    def to_json(self):
        return {"target": self.class_index,
                "attributes": [a.to_json() for a in self.attributes],
                "pipeline": self.pipeline.to_json(),
                "prior": {"counts": self.prior["counts"].tolist(),
                          "total": self.prior["total"]},
                "estimators": [_lists(e) for e in self.estimators],
                "options": self.options, "instances": self.instances}

    @classmethod
    def from_json(cls, d):
        attributes = [Attribute.from_json(a) for a in d["attributes"]]
        inputs = [a for j, a in enumerate(attributes) if j != d["target"]]
        return cls(attributes, d["target"], Pipeline.from_json(inputs, d["pipeline"]),
                   d["prior"], d["estimators"], d["options"], d["instances"])

    def validate(self):
        """The filters, the class counts, and per filtered attribute an estimator of
        its kind with one entry per class (a nominal one's counts per value)."""
        k = check_class(self.attributes, self.class_index)
        self.pipeline.validate()
        check_array(self.prior["counts"], "its class counts", (k,), low=0)
        check_array([self.prior["total"]], "its class total", (1,), low=1e-300)
        outputs = self.pipeline.outputs
        if len(self.estimators) != len(outputs):
            raise ValueError("its estimators are not one per attribute")
        for a, e in zip(outputs, self.estimators):
            where = f"the estimator of {a.name!r}"
            kind = e.get("kind")
            if a.nominal and kind == DISCRETE:
                check_array(e["counts"], f"{where}'s counts", (k, len(a.values)), low=0)
                check_array(e["total"], f"{where}'s totals", (k,), low=1e-300)
                continue
            if a.nominal or kind not in (NORMAL, KERNEL):
                raise ValueError(f"{where} is not of a kind its attribute takes")
            check_array([e["precision"]], f"{where}'s precision", (1,), low=1e-300)
            check_array(e["sd"], f"{where}'s deviations", (k,), low=1e-300)
            check_array(e["weight"], f"{where}'s weights", (k,), low=0)
            if kind == NORMAL:
                check_array(e["mean"], f"{where}'s means", (k,))
                continue
            values = check_array(e["values"], f"{where}'s values", (None,))
            check_array(e["weights"], f"{where}'s value weights", (len(values),), low=0)
            offsets = check_array(e["offsets"], f"{where}'s offsets", (k + 1,), 0,
                                  len(values) + 1, whole=True)
            if offsets[0] != 0 or offsets[-1] != len(values) or (np.diff(offsets) < 0).any():
                raise ValueError(f"{where}'s offsets do not divide its values by class")

    # -------------------------------------------------------------- scoring

    def proba(self, columns, n):
        """Class probabilities of ``n`` rows given as the ``used`` columns."""
        cols = self.pipeline.apply([np.asarray(c, np.float64) for c in columns])
        X = np.empty((len(cols), n))
        for j, c in enumerate(cols):
            X[j] = c
        if self._flat is None:
            self._flat = _flatten(self.estimators, len(self.classes))
        out = np.empty((n, len(self.classes)))
        score = _scores_wide if n >= PARALLEL_ROWS else _scores
        score(X, self.prior["counts"] / self.prior["total"], *self._flat, out)
        return out

    # -------------------------------------------------------------- printing

    def _value_names(self, j):
        """The values of filtered attribute ``j`` as the reference names them (a
        discretised attribute's intervals in quotes)."""
        a = self.pipeline.outputs[j]
        cut = self.pipeline.filters[0].cuts[j] if self.pipeline.filters else None
        return [f"'{v}'" for v in a.values] if cut is not None else list(a.values)

    def text(self):
        k = len(self.classes)
        outputs = self.pipeline.outputs
        width = max(len(c) for c in self.classes)
        att_width = 0
        for j, a in enumerate(outputs):
            att_width = max(att_width, len(a.name))
            if a.nominal:
                att_width = max([att_width] + [len(v) + 2 for v in self._value_names(j)])
        kernel = False
        for e in self.estimators:
            for c in range(k):
                if e["kind"] == NORMAL:
                    mean = _log10(abs(e["mean"][c]))
                    prec = _log10(abs(e["precision"]))
                    w = mean if mean > prec else prec
                    width = max(width, int((1 if w < 0 else w) + 6.0))
                elif e["kind"] == KERNEL:
                    kernel = True
                    means, weights = _kernels(e, c)
                    att_width = max(att_width, len(f"K{len(means)}: mean (weight)"))
                    for m, wt in zip(means, weights):
                        width = max(width, len(f"{_dts(m, 4)} ({_dts(wt, 1)})"))
                else:
                    counts = e["counts"][c]
                    width = max([width] + [len(java_double(x)) for x in counts]
                                + [len(java_double(e["total"][c]))])
        priors = ["(" + _dts(p, 2) + ")"
                  for p in self.prior["counts"] / self.prior["total"]]
        width = max([width] + [len(p) for p in priors])
        att_width = max(att_width, len("Attribute"), len("  weight sum"),
                        len("  [precision]") if kernel else 0) + 2

        def cells(texts):
            return "".join(" " * (width + 1 - len(t)) + t for t in texts)

        def label(t):
            return t + " " * (att_width + 1 - len(t))

        out = ["Naive Bayes Classifier\n\n",
               " " * (att_width + width + 1 - len("Class")) + "Class\n",
               "Attribute" + " " * (att_width - len("Attribute")) + cells(self.classes) + "\n",
               " " * att_width + cells(priors) + "\n",
               "=" * (att_width + width * k + k + 1) + "\n"]
        for j, (a, e) in enumerate(zip(outputs, self.estimators)):
            out.append(a.name + "\n")
            if e["kind"] == NORMAL:
                for name, key in (("  mean", "mean"), ("  std. dev.", "sd"),
                                  ("  weight sum", "weight")):
                    out.append(label(name) + cells([_dts(x, 4) for x in e[key]]) + "\n")
                out.append(label("  precision") + cells([_dts(e["precision"], 4)] * k)
                           + "\n\n")
            elif e["kind"] == DISCRETE:
                for v, name in enumerate(self._value_names(j)):
                    out.append(label("  " + name)
                               + cells([java_double(e["counts"][c][v]) for c in range(k)])
                               + "\n")
                out.append(label("  [total]") + cells([java_double(x) for x in e["total"]])
                           + "\n\n")
            else:
                kernels = [_kernels(e, c) for c in range(k)]
                out.append(label("  [# kernels]") + cells([str(len(m)) for m, _ in kernels])
                           + "\n")
                out.append(label("  [std. dev]") + cells([_dts(x, 4) for x in e["sd"]])
                           + "\n")
                out.append(label("  [precision]") + cells([_dts(e["precision"], 4)] * k)
                           + "\n")
                for i in range(max(len(m) for m, _ in kernels)):
                    row = []
                    for m, wt in kernels:
                        if len(m) == 0:
                            row.append("0")
                        elif i < len(m):
                            row.append(f"{_dts(m[i], 4)} ({_dts(wt[i], 1)})")
                        else:
                            row.append("--")
                    out.append(label(f"  K{i + 1}: mean (weight)") + cells(row) + "\n")
                out.append("\n")
        return "".join(out)

    def rows(self):
        """The model as rows: the class priors (no attribute), then per attribute and
        class its counts (nominal), its normal distribution, or its kernels."""
        out = []
        nothing = {"value": None, "count": None, "mean": None, "std_dev": None,
                   "weight_sum": None, "precision": None}
        for c, name in enumerate(self.classes):
            out.append({**nothing, "attribute": None, "class": name,
                        "count": float(self.prior["counts"][c]),
                        "weight_sum": self.prior["total"]})
        for a, e in zip(self.pipeline.outputs, self.estimators):
            for c, name in enumerate(self.classes):
                base = {**nothing, "attribute": a.name, "class": name}
                if e["kind"] == DISCRETE:
                    for v, value in enumerate(a.values):
                        out.append({**base, "value": value,
                                    "count": float(e["counts"][c][v]),
                                    "weight_sum": float(e["total"][c])})
                    continue
                common = {**base, "std_dev": float(e["sd"][c]),
                          "weight_sum": float(e["weight"][c]),
                          "precision": float(e["precision"])}
                if e["kind"] == NORMAL:
                    out.append({**common, "mean": float(e["mean"][c])})
                else:
                    for m, wt in zip(*_kernels(e, c)):
                        out.append({**common, "mean": float(m), "count": float(wt)})
        return out


def _dts(x, places):
    return double_to_string(float(x), places)


def _log10(x):
    return math.log(x) / math.log(10.0) if x > 0 else -math.inf


def _kernels(e, c):
    lo, hi = e["offsets"][c], e["offsets"][c + 1]
    return e["values"][lo:hi], e["weights"][lo:hi]


def _arrays(e):
    return {key: (np.asarray(v, np.float64) if key in ("counts", "total", "mean", "sd",
                                                        "weight", "values", "weights")
                  else np.asarray(v, np.int64) if key == "offsets" else v)
            for key, v in e.items()}


def _lists(e):
    return {key: (v.tolist() if isinstance(v, np.ndarray) else v) for key, v in e.items()}


# ------------------------------------------------------------------ fitting

def fit(data, target, options, settings):
    """The contract's fit for naive_bayes."""
    _, columns, y, w = data.labelled(target)
    yk = y.astype(np.int64)
    k = len(data.attributes[target].values)
    inputs = [a for j, a in enumerate(data.attributes) if j != target]
    steps = (Discretize,) if options["numeric"] == "discretize" else ()
    pipeline, cols = Pipeline.fitted(inputs, steps, columns, w, yk)
    attributes = pipeline.outputs
    # the reference's row order: sorted by each numeric attribute in turn
    order = np.arange(len(yk))
    precision = []
    for a, col in zip(attributes, cols):
        if a.nominal:
            precision.append(None)
            continue
        x = col[order]
        order = order[weka_order(np.where(np.isnan(x), np.finfo(np.float64).max, x))]
        precision.append(_precision(col[order]))
    yo, wo = yk[order], w[order]
    counts, total = _prior(yo, wo, k)
    prior = {"counts": counts, "total": total}
    estimators = []
    for a, col, prec in zip(attributes, cols, precision):
        x = col[order]
        if a.nominal:
            c, t = _discrete(x, wo, yo, k, max(len(a.values), 0))
            estimators.append({"kind": DISCRETE, "counts": c, "total": t})
        elif options["numeric"] == "kernel":
            estimators.append(_kernel_estimator(x, wo, yo, k, max(prec, SMALL)))
        else:
            mean, sd, weight = _normal(x, wo, yo, k, prec)
            estimators.append({"kind": NORMAL, "mean": mean, "sd": sd, "weight": weight,
                               "precision": prec})
    return NaiveBayesModel(data.attributes, target, pipeline, prior, estimators,
                           options, len(yk))


@njit(cache=True)
def _precision(x):
    """The mean gap between the distinct values of sorted ``x`` (missing last)."""
    if len(x) == 0 or np.isnan(x[0]):
        return PRECISION
    last = x[0]
    total = 0.0
    distinct = 0
    for i in range(1, len(x)):
        if np.isnan(x[i]):
            break
        if x[i] != last:
            total += x[i] - last
            last = x[i]
            distinct += 1
    return total / distinct if distinct > 0 else PRECISION


@njit(cache=True)
def _prior(y, w, k):
    """Class counts from 1 and their total from ``k``, the rows added in order."""
    counts = np.ones(k)
    total = float(k)
    for i in range(len(y)):
        counts[y[i]] += w[i]
        total += w[i]
    return counts, total


@njit(cache=True)
def _discrete(x, w, y, k, n_values):
    """Laplace counts (k, n_values) and their totals (k,), the rows added in order
    (a missing value adds nothing)."""
    counts = np.ones((k, n_values))
    total = np.full(k, float(n_values))
    for i in range(len(x)):
        if not np.isnan(x[i]):
            counts[y[i], int(x[i])] += w[i]
            total[y[i]] += w[i]
    return counts, total


@njit(cache=True)
def _normal(x, w, y, k, prec):
    """The reference's normal estimator per class, updated row by row: (mean, sd,
    weight sum) per class."""
    sw = np.zeros(k)
    sv = np.zeros(k)
    sq = np.zeros(k)
    mean = np.zeros(k)
    sd = np.full(k, prec / (2 * 3))
    for i in range(len(x)):
        if np.isnan(x[i]) or w[i] == 0:
            continue
        c = y[i]
        v = np.rint(x[i] / prec) * prec
        sw[c] += w[i]
        sv[c] += v * w[i]
        sq[c] += v * v * w[i]
        if sw[c] > 0:
            mean[c] = sv[c] / sw[c]
            dev = math.sqrt(abs(sq[c] - mean[c] * sv[c]) / sw[c])
            if dev > 1e-10:
                sd[c] = max(prec / (2 * 3), dev)
    return mean, sd, sw


def _kernel_estimator(x, w, y, k, prec):
    """One kernel per distinct rounded value and class, weights summed in row order;
    the deviation is the range over the root of the weight, at least precision / 6."""
    values, weights, offsets, sd, weight = [], [], [0], [], []
    for c in range(k):
        rows = (y == c) & ~np.isnan(x) & (w != 0)
        v = np.rint(x[rows] / prec) * prec
        wc = w[rows]
        distinct, at = np.unique(v, return_inverse=True)
        sums = np.bincount(at, wc, len(distinct))  # each value's weights in row order
        total = float(np.cumsum(wc)[-1]) if len(wc) else 0.0
        spread = distinct[-1] - distinct[0] if len(distinct) else 0.0
        sd.append(max(spread / math.sqrt(total), prec / (2 * 3)) if spread > 0
                  else prec / (2 * 3))
        values.extend(distinct.tolist())
        weights.extend(sums.tolist())
        offsets.append(len(values))
        weight.append(total)
    return {"kind": KERNEL, "values": values, "weights": weights, "offsets": offsets,
            "sd": sd, "weight": weight, "precision": prec}


# ------------------------------------------------------------------ scoring

def _flatten(estimators, k):
    """The estimators as the flat arrays the scoring kernel reads."""
    p = len(estimators)
    kind = np.array([e["kind"] for e in estimators], np.int64)
    prec = np.array([e.get("precision", 0.0) for e in estimators], np.float64)
    mean = np.zeros((p, k))
    sd = np.ones((p, k))
    weight = np.zeros((p, k))
    counts, c_off = [], np.zeros(p + 1, np.int64)
    kv, kw, k_off = [], [], np.zeros((p, k + 1), np.int64)
    for j, e in enumerate(estimators):
        if e["kind"] == DISCRETE:
            counts.append((e["counts"] / e["total"][:, None]).ravel())
            c_off[j + 1] = c_off[j] + e["counts"].size
            continue
        c_off[j + 1] = c_off[j]
        sd[j] = e["sd"]
        weight[j] = e["weight"]
        if e["kind"] == NORMAL:
            mean[j] = e["mean"]
        else:
            k_off[j] = len(kv) + e["offsets"]
            kv.extend(e["values"].tolist())
            kw.extend(e["weights"].tolist())
    flat = np.concatenate(counts) if counts else np.zeros(0)
    return (kind, prec, mean, sd, weight, flat, c_off, np.array(kv, np.float64),
            np.array(kw, np.float64), k_off)


@njit(cache=True)
def _normal_probability(a):
    """P(Z <= a) for a standard normal Z, by the reference's case split."""
    x = a * SQRTH
    z = abs(x)
    if z < SQRTH:
        return 0.5 + 0.5 * math.erf(x)
    y = 0.5 * ((1.0 - math.erf(z)) if z < 1.0 else math.erfc(z))
    return 1.0 - y if x > 0 else y


@njit(cache=True)
def _interval(delta, prec, sd):
    return _normal_probability((delta + prec / 2) / sd) - \
        _normal_probability((delta - prec / 2) / sd)


@njit(cache=True)
def _kernel_probability(x, values, weights, total, sd, prec):
    n = len(values)
    if n == 0:
        return _interval(x, prec, sd)
    lo = 0
    hi = n
    while lo < hi:  # the nearest value's index
        mid = (lo + hi) // 2
        if values[mid] == x:
            lo = mid
            break
        if values[mid] > x:
            hi = mid
        else:
            lo = mid + 1
    s = 0.0
    seen = 0.0
    for i in range(lo, n):
        p = _interval(values[i] - x, prec, sd)
        s += p * weights[i]
        seen += weights[i]
        if p * (total - seen) < s * 0.01:
            break
    for i in range(lo - 1, -1, -1):
        p = _interval(values[i] - x, prec, sd)
        s += p * weights[i]
        seen += weights[i]
        if p * (total - seen) < s * 0.01:
            break
    return s / total


def _class_scores(X, prior, kind, prec, mean, sd, weight, counts, c_off, kv, kw, k_off, out):
    """Each row's class scores into ``out`` (``_wide``: the rows on numba's threads)."""
    p, n = X.shape
    k = len(prior)
    for r in prange(n):
        probs = prior.copy()
        for j in range(p):
            x = X[j, r]
            if np.isnan(x):
                continue
            top = 0.0
            for c in range(k):
                if kind[j] == DISCRETE:
                    n_values = (c_off[j + 1] - c_off[j]) // k
                    q = counts[c_off[j] + c * n_values + int(x)]
                elif kind[j] == NORMAL:
                    v = np.rint(x / prec[j]) * prec[j]
                    q = _interval(v - mean[j, c], prec[j], sd[j, c])
                else:
                    q = _kernel_probability(x, kv[k_off[j, c]:k_off[j, c + 1]],
                                            kw[k_off[j, c]:k_off[j, c + 1]],
                                            weight[j, c], sd[j, c], prec[j])
                probs[c] *= max(1e-75, q)
                if probs[c] > top:
                    top = probs[c]
            if 0 < top < 1e-75:  # rescue the product from underflow
                for c in range(k):
                    probs[c] *= 1e75
        total = 0.0
        for c in range(k):
            total += probs[c]
        for c in range(k):
            out[r, c] = probs[c] / total


_scores = njit(cache=True)(_class_scores)
# called from Python only (see jit); scoring a few rows compiles no parallel code
_scores_wide = njit(cache=True, parallel=PRANGE_ONLY)(_class_scores)
