"""Bayesian network classifiers as model values: fitting (``fit_bayes_net``),
scoring, the reference's printed form and the network as rows."""

from dataclasses import dataclass

import numpy as np

from ..adtree.tree import memory_limit
from ..dataset import Attribute
from ..discretize import bins
from ..javafmt import java_double
from . import net as bn

SEARCH_MAX_MB = 4096  # what a network search's AD-tree may take by default


@dataclass(frozen=True)
class Options:
    search: str = "k2"
    max_parents: int = 1
    score: str = "bayes"
    alpha: float = 0.5
    use_ad_tree: bool = True


class Coding:
    """How a trained network reads rows: each attribute's cut points (numeric
    ones) and the value that stands in for a missing one."""

    def __init__(self, attributes, values, cuts, fill):
        self.attributes = list(attributes)
        self.values = [tuple(v) for v in values]
        self.cuts = [None if c is None else np.asarray(c, np.float64) for c in cuts]
        self.fill = np.asarray(fill, np.int64)

    def codes(self, columns, at, n, missing=None):
        """(n, p) codes of the attributes ``at`` read from ``columns`` (the rest
        0); a missing value is the attribute's fill code, or ``missing``."""
        X = np.zeros((n, len(self.attributes)), np.int64)
        for j, col in zip(at, columns):
            x = np.asarray(col, np.float64)
            if self.cuts[j] is not None:
                x = bins(x, self.cuts[j])
            X[:, j] = np.where(np.isnan(x), self.fill[j] if missing is None else missing,
                               np.nan_to_num(x))
        return X

    def to_json(self):
        return {"values": [list(v) for v in self.values],
                "cuts": [None if c is None else c.tolist() for c in self.cuts],
                "fill": self.fill.tolist()}

    @classmethod
    def from_json(cls, attributes, d):
        return cls(attributes, d["values"], d["cuts"], d["fill"])


def coded_training_data(data, target):
    """(rows with a class, Coding, codes) of a Dataset: numeric attributes
    discretised against the class, missing values filled with the mode."""
    y = data.columns[target]
    keep = ~np.isnan(y)
    cols = [c[keep] for c in data.columns]
    X, values, cuts, fill = bn.nominal_codes(cols, data.attributes,
                                             y[keep].astype(np.int64), data.weights[keep])
    return keep, Coding(data.attributes, values, cuts, fill), X


class BayesNetModel:
    """A Bayesian network classifier: structure, tables and how to read rows."""

    learner = "bayes_net"

    def __init__(self, target, coding, parents, cpts, options, scores, instances):
        self.class_index = int(target)  # the class among the attributes
        self.coding = coding
        self.attributes = coding.attributes
        self.classes = tuple(self.attributes[self.class_index].values)
        self.target = self.attributes[self.class_index].name
        self.parents = [list(map(int, ps)) for ps in parents]
        self.cpts = [np.asarray(c, np.float64) for c in cpts]
        self.options = dict(options)
        self.scores = dict(scores)
        self.instances = int(instances)
        self.used = [i for i in range(len(self.attributes)) if i != self.class_index]

    def to_json(self):
        return {"target": self.class_index,
                "attributes": [a.to_json() for a in self.attributes],
                "coding": self.coding.to_json(), "parents": self.parents,
                "cpts": [c.tolist() for c in self.cpts], "options": self.options,
                "scores": self.scores, "instances": self.instances}

    @classmethod
    def from_json(cls, d):
        attributes = [Attribute.from_json(a) for a in d["attributes"]]
        return cls(d["target"], Coding.from_json(attributes, d["coding"]), d["parents"],
                   d["cpts"], d["options"], d["scores"], d["instances"])

    def proba(self, columns, n):
        """Class probabilities of ``n`` rows; ``columns`` holds the attributes in
        ``used``, in that order."""
        X = self.coding.codes(columns, self.used, n)
        card = np.array([len(v) for v in self.coding.values], np.int64)
        flat = np.concatenate([c.ravel() for c in self.cpts])
        offsets = np.zeros(len(self.cpts) + 1, np.int64)
        np.cumsum([c.size for c in self.cpts], out=offsets[1:])
        par = np.array([q for ps in self.parents for q in ps], np.int64)
        par_off = np.zeros(len(self.parents) + 1, np.int64)
        np.cumsum([len(ps) for ps in self.parents], out=par_off[1:])
        out = np.empty((n, len(self.classes)))
        bn.log_joint(X, self.class_index, len(self.classes), flat, offsets, par, par_off,
                     card, out)
        out = np.exp(out - out.max(axis=1, keepdims=True))
        return out / out.sum(axis=1, keepdims=True)

    def text(self):
        names = [a.name for a in self.attributes]
        lines = ["Bayes Network Classifier",
                 "Using ADTree" if self.options["use_ad_tree"] else "not using ADTree",
                 f"#attributes={len(names)} #classindex={self.class_index}",
                 "Network structure (nodes followed by parents)"]
        for i, ps in enumerate(self.parents):
            lines.append(f"{names[i]}({len(self.coding.values[i])}): "
                         + "".join(names[q] + " " for q in ps))
        for label, key in (("Bayes", "bayes"), ("BDeu", "bdeu"), ("MDL", "mdl"),
                           ("ENTROPY", "loglik"), ("AIC", "aic")):
            lines.append(f"LogScore {label}: {java_double(self.scores[key])}")
        return "\n".join(lines) + "\n"

    def rows(self):
        """One row per entry of each node's table: the node, its parents and their
        values, the node's value and its probability."""
        names = [a.name for a in self.attributes]
        values = self.coding.values
        out = []
        for i, (ps, cpt) in enumerate(zip(self.parents, self.cpts)):
            configs = np.ndindex(*[len(values[q]) for q in ps]) if ps else [()]
            for row, config in zip(cpt, configs):
                pv = [values[q][v] for q, v in zip(ps, config)]
                for v, prob in enumerate(row.tolist()):
                    out.append({"node": names[i], "parents": [names[q] for q in ps],
                                "parent_values": pv, "value": values[i][v],
                                "probability": prob})
        return out


def fit_bayes_net(data, target, options, max_bytes=4 << 30):
    """A BayesNetModel of ``data`` (a Dataset) predicting attribute ``target``."""
    keep, coding, X = coded_training_data(data, target)
    card = [len(v) for v in coding.values]
    size = 3 if options.search == "tan" else options.max_parents + 1
    counts = bn.Counts(X, card, options.use_ad_tree, min(max(size, 2), len(card)),
                       max_bytes)
    score = bn.Scorer(counts, options.score)
    p = len(card)
    if options.search == "k2":
        parents = bn.k2(p, target, options.max_parents, score)
    elif options.search == "tan":
        parents = bn.tan(p, target, score)
    else:
        parents = bn.hill_climb(p, target, options.max_parents, score)
    w = data.weights[keep]
    w = None if (w == 1).all() else w
    cells = bn.estimator_counts(counts, parents, options.alpha, w)
    cpts = bn.estimate(cells)
    scores = bn.network_scores(cells, options.alpha, counts.n)
    return BayesNetModel(target, coding, parents, cpts, vars(options), scores,
                         int(keep.sum()))


def fit(data, target, options, settings):
    """The contract's fit for bayes_net: a network search may build an AD-tree as
    large as ``settings['ad_tree_max_mb']`` allows (4 GiB by default)."""
    limit = memory_limit(settings, SEARCH_MAX_MB)
    try:
        return fit_bayes_net(data, target, Options(**options), limit)
    except MemoryError:
        raise ValueError(
            f"the AD-tree would take more than {limit / 2**20:,.0f} MiB; count by scans "
            "(use_ad_tree := false), allow fewer parents, or SET VARIABLE "
            "duckmine_ad_tree_max_mb") from None
