"""Bayesian network classifiers as model values: fitting (``fit_bayes_net``),
scoring, the reference's printed form and the network as rows."""

from dataclasses import dataclass

import numpy as np

from .. import pictures
from ..adtree.tree import code_type, memory_limit
from ..dataset import Attribute
from ..filters import Discretize, Pipeline, ReplaceMissing
from ..javafmt import java_double
from ..models import check_array, check_class
from . import net as bn

SEARCH_MAX_MB = 4096  # what a network search's AD-tree may take by default


@dataclass(frozen=True)
class Options:
    search: str = "k2"
    max_parents: int = 1
    score: str = "bayes"
    alpha: float = 0.5
    use_ad_tree: bool = True

    @classmethod
    def of(cls, options):
        """The search's options among the checked ``options`` (a model given apart)."""
        return cls(**{name: options[name] for name in cls.__dataclass_fields__})


class Coding:
    """How a classifier over nominal attributes reads rows: filters fitted on its
    training rows over the attributes other than the class (supervised Discretize,
    then for a network ReplaceMissing, so that no value is missing), and each
    attribute's values after them."""

    def __init__(self, attributes, class_index, pipeline):
        self.attributes = list(attributes)
        self.class_index = int(class_index)
        self.pipeline = pipeline
        self.used = [j for j in range(len(self.attributes)) if j != self.class_index]
        outputs = iter(pipeline.outputs)
        cuts = iter(pipeline.filters[0].cuts)
        self.values, self.cuts = [], []
        for j, a in enumerate(self.attributes):
            at_class = j == self.class_index
            self.values.append(tuple(a.values if at_class else next(outputs).values))
            self.cuts.append(None if at_class else next(cuts))

    @classmethod
    def fitted(cls, data, target, steps):
        """(the rows with a class, the Coding fitted on them with the filters
        ``steps``, their codes (n, p), -1 for a missing value, in the narrowest
        integers that hold every code and one more: the counting kernels' type)."""
        keep, columns, y, w = data.labelled(target)
        yk = y.astype(np.int64)
        used = [j for j in range(len(data.attributes)) if j != target]
        pipeline, cols = Pipeline.fitted([data.attributes[j] for j in used], steps,
                                         columns, w, yk)
        coding = cls(data.attributes, target, pipeline)
        dtype = code_type([len(v) + 1 for v in coding.values])
        return keep, coding, coding._matrix(cols, yk, dtype)

    def codes(self, columns, n):
        """(n, p) codes of rows given as the ``used`` columns (the class column 0;
        -1 for a missing value)."""
        return self._matrix(self.pipeline.apply(columns), np.zeros(n, np.int64), np.int64)

    def _matrix(self, columns, y, dtype):
        X = np.empty((len(y), len(self.attributes)), dtype)
        X[:, self.class_index] = y
        for j, col in zip(self.used, columns):
            X[:, j] = np.where(np.isnan(col), -1, np.nan_to_num(col))
        return X

    def to_json(self):
        return self.pipeline.to_json()

    def validate(self):
        """The class a nominal attribute with values, and the filters' states."""
        k = check_class(self.attributes, self.class_index)
        self.pipeline.validate()
        if any(not v for v in self.values):
            raise ValueError("an attribute of it has no values")
        return k

    @classmethod
    def from_json(cls, attributes, class_index, d):
        inputs = [a for j, a in enumerate(attributes) if j != class_index]
        return cls(attributes, class_index, Pipeline.from_json(inputs, d))


def coded_training_data(data, target):
    """(rows with a class, Coding, codes) of a Dataset: numeric attributes
    discretised against the class, missing values filled with the mode."""
    for a in data.attributes:
        if a.nominal and not a.values:
            raise ValueError(f"column {a.name!r} has no values (all NULL)")
    return Coding.fitted(data, target, (Discretize, ReplaceMissing))


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
        coding = Coding.from_json(attributes, d["target"], d["coding"])
        return cls(d["target"], coding, d["parents"], d["cpts"], d["options"], d["scores"],
                   d["instances"])

    def validate(self):
        """The coding, and per node its parents (other nodes, each once) and a
        table of probabilities: a row per configuration of the parents' values,
        each a distribution over the node's values."""
        self.coding.validate()
        card = [len(v) for v in self.coding.values]
        p = len(card)
        if len(self.parents) != p or len(self.cpts) != p:
            raise ValueError("its network does not have a node per attribute")
        for i, (ps, cpt) in enumerate(zip(self.parents, self.cpts)):
            if len(set(ps)) != len(ps) or any(not 0 <= q < p or q == i for q in ps):
                raise ValueError(f"node {i}'s parents are not other nodes")
            rows = int(np.prod([card[q] for q in ps]))
            check_array(cpt, f"node {i}'s table", (rows, card[i]), low=1e-300)
            if (abs(cpt.sum(axis=1) - 1) > 1e-6).any():
                raise ValueError(f"node {i}'s table does not hold distributions")
        for key in ("bayes", "bdeu", "mdl", "loglik", "aic"):
            check_array([self.scores[key]], f"its {key} score", (1,))

    def proba(self, columns, n):
        """Class probabilities of ``n`` rows; ``columns`` holds the attributes in
        ``used``, in that order."""
        X = self.coding.codes(columns, n)
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

    def picture(self):
        return pictures.network([a.name for a in self.attributes], self.parents, "bayes_net")

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
    w = data.weights[keep]
    return network(coding, X, options, None if (w == 1).all() else w, max_bytes=max_bytes)


def network(coding, X, options, weights, times=None, max_bytes=4 << 30):
    """The network searched and estimated on the coded rows ``X`` (complete): each
    row stands for ``times`` rows (None: one) and weighs ``weights`` in the tables
    (None: as many as it stands for)."""
    card = [len(v) for v in coding.values]
    counts = bn.Counts(X, card, options.use_ad_tree, _largest_table(options, len(card)),
                       max_bytes, times)
    return searched(coding, counts, options, weights)


def _largest_table(options, p):
    """The most attributes a table of the search has (and at least two)."""
    size = 3 if options.search == "tan" else options.max_parents + 1
    return min(max(size, 2), p)


def searched(coding, counts, options, weights=None):
    """The network searched and estimated on ``counts`` (``bn.Counts`` or
    ``bn.TreeCounts``)."""
    card = [len(v) for v in coding.values]
    score = bn.Scorer(counts, options.score)
    p, target = len(card), coding.class_index
    if options.search == "k2":
        parents = bn.k2(p, target, options.max_parents, score)
    elif options.search == "tan":
        parents = bn.tan(p, target, score)
    else:
        parents = bn.hill_climb(p, target, options.max_parents, score)
    cells = bn.estimator_counts(counts, parents, options.alpha, weights)
    cpts = bn.estimate(cells)
    scores = bn.network_scores(cells, options.alpha, counts.n)
    return BayesNetModel(target, coding, parents, cpts, vars(options), scores, counts.n)


def from_tree(data, target, options, held):
    """The network of the rows that ``held`` (an ADTreeModel) counts, searched and
    estimated on its counts alone: the same model as a fit on those rows, whose
    attributes are the tree's. ``data`` holds the rows' target column, which must
    agree with the tree's counts of it."""
    if not options.use_ad_tree:
        raise ValueError("use_ad_tree := false asks for scans of the rows, and ad_tree "
                         "gives an AD-tree to count with; leave one of them out")
    if not (data.weights == 1).all():
        raise ValueError("an AD-tree counts rows, not weights: leave out weight or "
                         "ad_tree")
    mine = data.attributes[target]
    c = held.index(mine.name)
    names = [a.name for a in held.attributes]
    if c is None:
        raise ValueError(f"ad_tree: the target {mine.name!r} is not one of the AD-tree's "
                         f"attributes ({', '.join(names)})")
    attributes = held.attributes
    for a in attributes:
        if not a.values:
            raise ValueError(f"ad_tree: column {a.name!r} has no values (all NULL)")
    if tuple(attributes[c].values) != tuple(mine.values):
        raise ValueError(f"ad_tree: the AD-tree's values of {mine.name!r} "
                         f"({', '.join(attributes[c].values)}) are not the table's "
                         f"({', '.join(mine.values)}); fit the tree on the same table")
    tree = held.tree
    y = data.columns[target]
    classes = np.bincount(y[~np.isnan(y)].astype(np.int64), minlength=len(mine.values))
    theirs = tree.table([c])
    if tree.count[0] != data.n or (theirs != classes).any():
        raise ValueError(f"ad_tree does not count the table's rows: its {tree.count[0]:,} "
                         f"rows have the classes {theirs.tolist()}, the table's {data.n:,} "
                         f"rows {classes.tolist()}; fit the tree on the same rows")
    p = len(attributes)
    unlabelled = classes.sum() < data.n
    need = _largest_table(options, p)
    if unlabelled and options.search == "hill_climb":
        need = min(need + 1, p)  # a table without the class sums it out
    if tree.max_depth < need:
        raise ValueError(f"ad_tree answers tables of at most {tree.max_depth} attributes "
                         f"(it was fitted with max_depth := {tree.max_depth}), and this "
                         f"search needs {need}: fit it with max_depth := {need} or more")
    # the modes among the rows with a class, and where a value is missing there
    fill, missing = np.zeros(p, np.int64), np.zeros(p, np.bool_)
    for a in range(p):
        if a != c:
            pair = tree.table([a, c], missing=[True, False]).sum(axis=1)
            fill[a] = int(np.argmax(pair[:-1]))  # the first of the most common
            missing[a] = pair[-1] > 0
    used = [a for a in range(p) if a != c]
    inputs = [attributes[a] for a in used]
    cuts = Discretize(inputs, cuts=[None] * len(inputs))  # nominal: kept as they are
    pipeline = Pipeline(inputs, [cuts, ReplaceMissing(cuts.outputs, fill=fill[used])])
    coding = Coding(attributes, c, pipeline)
    return searched(coding, bn.TreeCounts(tree, c, fill, missing, unlabelled), options)


def fit(data, target, options, settings):
    """The contract's fit for bayes_net: a network search may build an AD-tree as
    large as ``settings['ad_tree_max_mb']`` allows (4 GiB by default), or count
    with the one given as ``ad_tree``."""
    if options["ad_tree"] is not None:
        return from_tree(data, target, Options.of(options), options["ad_tree"])
    limit = memory_limit(settings, SEARCH_MAX_MB)
    try:
        return fit_bayes_net(data, target, Options.of(options), limit)
    except MemoryError:
        raise ValueError(
            f"the AD-tree would take more than {limit / 2**20:,.0f} MiB; count by scans "
            "(use_ad_tree := false), allow fewer parents, or SET VARIABLE "
            "duckmine_ad_tree_max_mb") from None
