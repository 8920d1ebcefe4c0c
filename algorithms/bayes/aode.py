"""Averaged one-dependence estimators (Webb, Boughton & Wang 2005), as the
reference's AODE (3.6.14) computes them, as a model value.

Every attribute whose value a row has, and which has that value in at least
``min_frequency`` training rows, serves as a superparent: the estimate
P(y, x_p) prod_a P(x_a | y, x_p), Laplace-corrected, is averaged over them. The
corrections count missing values as the reference does: a superparent's
denominator leaves out the rows missing it, a child's leaves out the rows of
the superparent's value missing the child. Without any superparent the row is
scored by naive Bayes.

All counts are contingency tables of (class, attribute) and (class, attribute,
attribute), from one AD-tree over the training rows (weighted rows: by a
weighted pass). Numeric attributes are discretised against the class first, as
for the Bayesian networks.
"""

import numpy as np

from ..dataset import Attribute
from ..filters import Discretize
from ..javafmt import double_to_string
from ..jit import njit
from ..models import MAX_WEIGHT, check_array
from ..stop import checkpoint
from . import net as bn
from .model import Coding


@njit(cache=True)
def _scores(X, cls_counts, total, freq, cond, sum_for, nvals, offs, miss, limit,
            out):
    """Class probabilities of the coded rows ``X`` (-1 = missing)."""
    n, p = X.shape
    n_classes = len(cls_counts)
    for i in range(n):
        for c in range(n_classes):
            s = 0.0
            parents = 0
            for q in range(p):
                if X[i, q] < 0:
                    continue
                pv = offs[q] + X[i, q]
                if freq[pv] < limit:
                    continue
                parents += 1
                cp = cond[c, pv, pv]
                spode = (cp + 1) / ((total - freq[miss[q]]) + n_classes * nvals[q])
                for a in range(p):
                    if a == q or X[i, a] < 0:
                        continue
                    miss_a = cond[c, pv, miss[a]]
                    spode *= (cond[c, pv, offs[a] + X[i, a]] + 1) / ((cp - miss_a) + nvals[a])
                s += spode
            if parents >= 1:
                out[i, c] = s / parents
            else:
                prob = (cls_counts[c] + 1) / (total + n_classes)
                for a in range(p):
                    if X[i, a] < 0:
                        continue
                    va = offs[a] + X[i, a]
                    prob *= (cond[c, va, va] + 1) / (sum_for[c, a] + nvals[a])
                out[i, c] = prob
        row = 0.0
        for c in range(n_classes):
            row += out[i, c]
        for c in range(n_classes):
            out[i, c] /= row


def _counts(codes, w, nvals, n_classes, use_tree):
    """(class counts, total, freq, cond, sum_for) of ``codes`` (the attributes' codes,
    -1 for missing, then the class: the counting kernels' integers), with one slot
    more per attribute for a missing value (its counts derived by subtraction)."""
    p = len(nvals)
    slots = nvals + 1
    offs = np.concatenate([[0], np.cumsum(slots)[:-1]]).astype(np.int64)
    S = int(slots.sum())
    cls = p  # the class is the last column of the counted matrix
    card = np.append(nvals, n_classes)
    for a in range(p):  # a missing value in the attribute's extra slot
        col = codes[:, a]
        col[col < 0] = nvals[a]
    counts = bn.Counts(codes, card, use_tree, min(3, p + 1))
    weights = None if use_tree else w
    cls_counts = counts.weighted(cls, [], weights)[0]
    total = float(cls_counts.sum())
    cond = np.zeros((n_classes, S, S))
    sum_for = np.zeros((n_classes, p))
    freq = np.zeros(S)
    single = [counts.weighted(a, [cls], weights) for a in range(p)]  # (class, value)
    for a in range(p):
        t = single[a]
        sl = slice(offs[a], offs[a] + nvals[a])
        sum_for[:, a] = t.sum(axis=1)
        freq[sl] = t.sum(axis=0)
        freq[offs[a] + nvals[a]] = total - t.sum()
        for c in range(n_classes):
            cond[c, sl, sl] = np.diag(t[c])
            cond[c, offs[a] + nvals[a], offs[a] + nvals[a]] = cls_counts[c] - sum_for[c, a]
    for a1 in range(p):
        checkpoint()
        for a2 in range(a1 + 1, p):
            t = counts.weighted(a2, [cls, a1], weights).reshape(n_classes, nvals[a1],
                                                                 nvals[a2])
            r1 = slice(offs[a1], offs[a1] + nvals[a1])
            r2 = slice(offs[a2], offs[a2] + nvals[a2])
            m1, m2 = offs[a1] + nvals[a1], offs[a2] + nvals[a2]
            for c in range(n_classes):
                cond[c, r1, r2] = t[c]
                cond[c, r2, r1] = t[c].T
                # a value of one with the other missing
                cond[c, r1, m2] = single[a1][c] - t[c].sum(axis=1)
                cond[c, m2, r1] = cond[c, r1, m2]
                cond[c, r2, m1] = single[a2][c] - t[c].sum(axis=0)
                cond[c, m1, r2] = cond[c, r2, m1]
    return cls_counts, total, freq, cond, sum_for


class AODEModel:
    """An AODE classifier: its counts and how to read rows."""

    learner = "aode"

    def __init__(self, target, coding, counts, min_frequency, instances):
        self.class_index = int(target)  # the class among the attributes
        self.coding = coding
        self.attributes = coding.attributes
        self.classes = tuple(self.attributes[self.class_index].values)
        self.target = self.attributes[self.class_index].name
        self.used = [i for i in range(len(self.attributes)) if i != self.class_index]
        self.counts = {k: np.asarray(v, np.float64) for k, v in counts.items()}
        self.min_frequency = int(min_frequency)
        self.instances = int(instances)
        self.options = {"min_frequency": self.min_frequency}

    def to_json(self):
        return {"target": self.class_index,
                "attributes": [a.to_json() for a in self.attributes],
                "coding": self.coding.to_json(),
                "counts": {k: v.tolist() for k, v in self.counts.items()},
                "min_frequency": self.min_frequency, "instances": self.instances}

    @classmethod
    def from_json(cls, d):
        attributes = [Attribute.from_json(a) for a in d["attributes"]]
        return cls(d["target"], Coding.from_json(attributes, d["target"], d["coding"]), d["counts"],
                   d["min_frequency"], d["instances"])

    def validate(self):
        """The coding, and counts of the shapes its attributes make (one slot more
        per attribute, for a missing value), all finite and none below zero."""
        k = self.coding.validate()
        slots = sum(len(self.coding.values[j]) + 1 for j in self.used)
        p = len(self.used)
        c = self.counts
        if set(c) != {"classes", "total", "freq", "cond", "sum_for"}:
            raise ValueError("its counts are not those of AODE")
        for key, shape in (("classes", (k,)), ("total", (1,)), ("freq", (slots,)),
                           ("cond", (k, slots, slots)), ("sum_for", (k, p))):
            check_array(c[key], f"its {key} counts", shape, low=-1e-6, high=MAX_WEIGHT)
        if c["total"][0] <= 0 or self.min_frequency < 0:
            raise ValueError("its total or frequency limit is not positive")

    def proba(self, columns, n):
        """Class probabilities of ``n`` rows; ``columns`` holds the attributes in
        ``used``, in that order."""
        X = np.ascontiguousarray(self.coding.codes(columns, n)[:, self.used])  # (one kernel)
        nvals = np.array([len(self.coding.values[j]) for j in self.used], np.int64)
        c = self.counts
        offs = np.concatenate([[0], np.cumsum(nvals + 1)[:-1]]).astype(np.int64)
        out = np.empty((n, len(self.classes)))
        _scores(X, c["classes"], float(c["total"][0]), c["freq"], c["cond"],
                c["sum_for"], nvals, offs, offs + nvals, float(self.min_frequency), out)
        return out

    def rows(self):
        """Per class and attribute value: the class prior, the weight of training
        rows with that class and value, and whether the value serves as a
        superparent (it is frequent enough)."""
        c = self.counts
        total = c["total"][0]
        out = []
        pos = 0
        for j in self.used:
            for v, name in enumerate(self.coding.values[j]):
                for k, cls in enumerate(self.classes):
                    out.append({"class": cls,
                                "prior": (c["classes"][k] + 1) / (total + len(self.classes)),
                                "attribute": self.attributes[j].name, "value": name,
                                "count": float(c["cond"][k, pos + v, pos + v]),
                                "superparent": bool(c["freq"][pos + v] >= self.min_frequency)})
            pos += len(self.coding.values[j]) + 1
        return out

    def text(self):
        total = self.counts["total"][0]
        lines = ["The AODE Classifier"]
        for i, (name, count) in enumerate(zip(self.classes, self.counts["classes"])):
            prior = double_to_string((count + 1) / (total + len(self.classes)), 2)
            lines += ([""] if i else []) + [
                f"Class {name}: Prior probability = {_width4(prior)}", ""]
        lines += [f"Instances: {self.instances}", f"Attributes: {len(self.attributes)}",
                  f"Frequency limit for superParents: {self.min_frequency}",
                  "Correction: laplace"]
        return "\n".join(lines) + "\n"


def _width4(text):
    """The reference's alignment of a 2-decimal number in width 4: the decimal
    point (if any) at position 1, digits around it, spaces elsewhere."""
    out = [" "] * 4
    dot = text.find(".")
    if dot < 0:
        dot = len(text)
    else:
        out[1] = "."
    offset = 4 - 2 - dot - 1
    if offset < 0 or offset + len(text) > 4:  # too wide to align: as it is
        return text
    for i, ch in enumerate(text):
        if i != dot:
            out[offset + i] = ch
    return "".join(out)


def fit_aode(data, target, min_frequency):
    """An AODEModel of ``data`` (a Dataset) predicting attribute ``target``."""
    keep, coding, codes = Coding.fitted(data, target, (Discretize,))
    w = data.weights[keep]
    n_classes = len(data.attributes[target].values)
    # the attributes, then the class: one gather, in the codes' narrow integers
    counted = codes[:, [*coding.used, target]]
    del codes
    nvals = np.array([len(coding.values[j]) for j in coding.used], np.int64)
    unit = bool((w == 1).all())
    cls_counts, total, freq, cond, sum_for = _counts(counted, w, nvals, n_classes, unit)
    counts = {"classes": cls_counts, "total": np.array([total]), "freq": freq,
              "cond": cond, "sum_for": sum_for}
    return AODEModel(target, coding, counts, min_frequency, int(keep.sum()))


def fit(data, target, options, settings):
    """The contract's fit for aode."""
    return fit_aode(data, target, options["min_frequency"])
