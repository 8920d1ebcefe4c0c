"""From trees to rules (the book's section 6.2): one rule per leaf, made of the
tests on the path to it, then generalised by deleting conditions greedily while
the pessimistic error estimate of the rule does not get worse; duplicates go.

A condition on a missing value is not satisfied, so a rule covers the training
instances that meet every one of its conditions.
"""

import numpy as np

from .. import pictures
from ..dataset import Attribute, row_numbers
from ..jit import frozen, njit
from ..models import check_array
from . import grow as c45
from .model import fit_c45


@njit(cache=True)
def _coverage(sat, active, y, w, cls):
    """Covered and wrong weight of the rule made of the ``active`` conditions, and of
    each rule with one active condition dropped (columns of ``sat``)."""
    d = sat.shape[1]
    n_cov, n_err = 0.0, 0.0
    drop_cov = np.zeros(d)
    drop_err = np.zeros(d)
    for i in range(sat.shape[0]):
        fails, last = 0, -1
        for j in range(d):
            if active[j] and not sat[i, j]:
                fails += 1
                last = j
                if fails > 1:
                    break
        if fails == 0:
            n_cov += w[i]
            if y[i] != cls:
                n_err += w[i]
        elif fails == 1:
            drop_cov[last] += w[i]
            if y[i] != cls:
                drop_err[last] += w[i]
    return n_cov, n_err, drop_cov, drop_err


def estimate(covered, wrong, cf, z):
    """The pessimistic error rate of a rule; 1 when it covers nothing."""
    if c45.eq(covered, 0):
        return 1.0
    return (wrong + c45.add_errors(covered, wrong, cf, z)) / covered


def rules(tree, attributes, columns, y, w, confidence):
    """The simplified rules of ``tree`` on training data (rows with a class, the
    columns float64 with NaN missing):
    a list of (condition texts, class, covered, wrong, estimate). Rules with the
    same conditions and class are duplicates."""
    cf, z = c45.confidence_quantile(confidence)
    rows = row_numbers(len(y))
    # node: each row's branch there (-1 missing), a row's length each, kept for the
    # nodes on the path to the leaf at hand only: the leaves come in depth-first
    # order, so that a node left behind is not met again
    branch = {}

    def meets(node, b):
        if node not in branch:
            branch[node] = c45.subsets(frozen(columns[tree.attr[node]]), rows, tree.kind[node],
                                       tree.threshold[node], tree.value[node])
        return branch[node] == b

    out, seen = [], set()
    for leaf in range(len(tree.attr)):
        if not tree.is_leaf(leaf) or tree.parent[leaf] < 0:
            continue
        p, b = tree.parent[leaf], tree.branch[leaf]
        if c45.eq(tree.dist[p][b].sum(), 0):
            continue  # an empty leaf makes no rule
        cls = c45.bag_class(tree.dist[p], b)
        path = []
        node = leaf
        while tree.parent[node] >= 0:
            path.append((int(tree.parent[node]), int(tree.branch[node])))
            node = tree.parent[node]
        path.reverse()
        on_path = {n for n, _ in path}
        for n in [n for n in branch if n not in on_path]:
            del branch[n]
        sat = np.column_stack([meets(n, br) for n, br in path])
        active = np.ones(len(path), np.bool_)
        cov, err, d_cov, d_err = _coverage(sat, active, y, w, cls)
        current = estimate(cov, err, cf, z)
        while active.any():
            best, best_j = None, -1
            for j in np.flatnonzero(active):
                e = estimate(cov + d_cov[j], err + d_err[j], cf, z)
                if best is None or e < best:
                    best, best_j = e, j
            if best > current:
                break
            active[best_j] = False
            current = best
            cov, err, d_cov, d_err = _coverage(sat, active, y, w, cls)
        kept = [tree.test(*path[j], attributes) for j in np.flatnonzero(active)]
        key = (frozenset(kept), cls)
        if key in seen:
            continue
        seen.add(key)
        out.append((kept, cls, cov, err, current))
    return out


class C45RulesModel:
    """The rule list of a C4.5 tree: what the c45_rules relation shows."""

    learner = "c45_rules"

    def __init__(self, target, classes, attributes, rules_, options, instances):
        self.target = target
        self.classes = tuple(classes)
        self.attributes = list(attributes)
        self.rules = [dict(r) for r in rules_]
        self.options = dict(options)
        self.instances = int(instances)
        self.used = []

    def to_json(self):
        return {"target": self.target, "classes": list(self.classes),
                "attributes": [a.to_json() for a in self.attributes],
                "rules": self.rules, "options": self.options, "instances": self.instances}

    @classmethod
    def from_json(cls, d):
        return cls(d["target"], d["classes"],
                   [Attribute.from_json(a) for a in d["attributes"]], d["rules"],
                   d["options"], d["instances"])

    def validate(self):
        """Rules of text conditions, one of its classes, and finite figures."""
        if not self.classes or any(not isinstance(c, str) for c in self.classes):
            raise ValueError("its classes are not a list of names")
        for i, r in enumerate(self.rules, 1):
            if set(r) != {"conditions", "class", "coverage", "errors", "error_estimate"} \
                    or not isinstance(r["conditions"], list) \
                    or any(not isinstance(c, str) for c in r["conditions"]) \
                    or r["class"] not in self.classes:
                raise ValueError(f"rule {i} is not conditions, a class and its figures")
            check_array([r["coverage"], r["errors"], r["error_estimate"]],
                        f"rule {i}'s figures", (3,), low=0)

    def picture(self):
        return pictures.decision_list(self.rows(), "c45_rules")

    def rows(self):
        return [{"rule": i + 1, **r} for i, r in enumerate(self.rules)]


def fit(data, target, options, settings):
    """The contract's fit: a C4.5 tree, then its rules on the same training rows."""
    model, codes = fit_c45(data, target, c45.Options(**options))
    _, columns, y, w = data.labelled(target, codes)
    found = rules(model.tree, model.attributes, columns, y.astype(np.int64), w,
                  model.options["confidence"])
    return C45RulesModel(model.target, model.classes, model.attributes,
                         [{"conditions": cond, "class": model.classes[c], "coverage": cov,
                           "errors": err, "error_estimate": est}
                          for cond, c, cov, err, est in found],
                         model.options, model.instances)
