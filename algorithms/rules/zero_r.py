"""ZeroR, the baseline every scheme must beat: the majority class of a nominal
target, the mean of a numeric one, whatever the other attributes say.

As the reference computes it: class counts start at 1 (a Laplace prior) and add
each row's weight in row order, the class is the first with the largest count, and
the probabilities are the counts over their sum; a numeric target's prediction is
the weighted mean (0 for a total weight of at most 1e-6). Rows with a missing
target are left out."""

import numpy as np

from ..dataset import Attribute
from ..javafmt import java_double
from ..jit import frozen, njit
from ..models import check_array

SMALL = 1e-6  # the reference's tolerance for "greater than"


class ZeroRModel:
    learner = "zero_r"

    def __init__(self, attributes, target, counts, total, mean, instances):
        self.attributes = list(attributes)
        self.target = target
        self.used = []  # no attribute is read
        self.options = {}
        self.instances = int(instances)
        self.counts = None if counts is None else np.asarray(counts, np.float64)
        self.total = None if total is None else float(total)  # summed as the rows came
        self.mean = None if mean is None else float(mean)
        attr = next(a for a in self.attributes if a.name == target)
        self.classes = tuple(attr.values) if attr.nominal else None

    @property
    def best(self):
        """The class predicted: the first of the largest count."""
        return int(np.argmax(self.counts))

    @property
    def dist(self):
        return self.counts / self.total

    def to_json(self):
        return {"attributes": [a.to_json() for a in self.attributes], "target": self.target,
                "counts": None if self.counts is None else self.counts.tolist(),
                "total": self.total, "mean": self.mean, "instances": self.instances}

    @classmethod
    def from_json(cls, d):
        return cls([Attribute.from_json(a) for a in d["attributes"]], d["target"],
                   d["counts"], d["total"], d["mean"], d["instances"])

    def validate(self):
        """A nominal target's class counts (one each, and a positive total), or a
        numeric target's mean."""
        if self.target not in [a.name for a in self.attributes]:
            raise ValueError(f"its target {str(self.target)[:60]} is not one of its "
                             "attributes")
        if self.classes is None:
            check_array([self.mean], "its mean", (1,))
        else:
            check_array(self.counts, "its class counts", (len(self.classes),), low=0)
            check_array([self.total], "its total", (1,), low=1e-300)

    def proba(self, columns, n):
        return np.tile(self.dist, (n, 1))

    def predict(self, columns, n):
        return np.full(n, self.mean)

    def text(self):
        what = java_double(self.mean) if self.classes is None else self.classes[self.best]
        return f"ZeroR predicts class value: {what}"

    def rows(self):
        if self.classes is None:
            return [{"class": None, "probability": None, "value": self.mean}]
        return [{"class": c, "probability": float(p), "value": None}
                for c, p in zip(self.classes, self.dist)]


@njit(cache=True)
def _counts(y, w, k):
    """Counts from 1 per class and their total from ``k``, each known row's weight
    added in order."""
    c = np.ones(k)
    total = float(k)
    for i in range(len(y)):
        if not np.isnan(y[i]):
            c[int(y[i])] += w[i]
            total += w[i]
    return c, total


@njit(cache=True)
def _mean(y, w):
    s = 0.0
    sw = 0.0
    for i in range(len(y)):
        if not np.isnan(y[i]):
            s += w[i] * y[i]
            sw += w[i]
    return s / sw if sw > SMALL else s


def fit(data, target, options, settings):
    """The contract's fit for zero_r."""
    a = data.attributes[target]
    y, w = frozen(data.columns[target]), frozen(data.weights)  # (one kernel: see jit)
    known = int((~np.isnan(y)).sum())
    if a.nominal:
        counts, total = _counts(y, w, len(a.values))
        return ZeroRModel(data.attributes, a.name, counts, total, None, known)
    return ZeroRModel(data.attributes, a.name, None, None, _mean(y, w), known)
