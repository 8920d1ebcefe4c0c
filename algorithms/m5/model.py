"""M5' model trees and M5 rules as values: they serialise to JSON, predict numbers
with a numba kernel, print as the reference prints them and list as rows.

Both hold the fitted ``Filters`` (so raw rows are coded as in training) and linear
models over the coded attributes, stored sparsely (the non-zero coefficients in
attribute order, which is also the order the prediction sums them in).
"""

import numpy as np

from .. import pictures
from ..dataset import Attribute
from ..javafmt import double_to_string
from ..jit import njit
from ..models import check_array
from . import grow as m5p
from .grow import ATTR, COUNT, LEFT, RIGHT, Filters, Options


class LinearModel:
    """``intercept + sum(coef * coded column)`` over the non-zero coefficients."""

    def __init__(self, terms, intercept):
        self.terms = [(int(j), float(c)) for j, c in terms]
        self.intercept = float(intercept)

    @classmethod
    def of(cls, coef, intercept):
        return cls([(j, c) for j, c in enumerate(coef) if c != 0.0], intercept)

    def to_json(self):
        return {"terms": self.terms, "intercept": self.intercept}

    @classmethod
    def from_json(cls, d):
        return cls(d["terms"], d["intercept"])

    def validate(self, p, where):
        """Terms on distinct coded columns below ``p`` in ascending order, finite
        coefficients and intercept."""
        cols = [j for j, _ in self.terms]
        if any(not 0 <= j < p for j in cols) or sorted(set(cols)) != cols:
            raise ValueError(f"{where}'s linear model has terms on columns it does not have")
        check_array([c for _, c in self.terms] + [self.intercept],
                    f"{where}'s linear model", (len(self.terms) + 1,))

    def text(self, names, target):
        """The reference's printout: one signed term per line, intercept last."""
        out = ["\n" + target + " = "]
        for i, (j, c) in enumerate(self.terms):
            if i == 0:
                out.append("\n\t" + double_to_string(c, 4) + " * " + names[j] + " ")
            else:
                out.append("\n\t" + ("- " if c < 0 else "+ ")
                           + double_to_string(abs(c), 4) + " * " + names[j] + " ")
        b = self.intercept
        out.append("\n\t" + ("- " if b < 0 else "+ ") + double_to_string(abs(b), 4))
        return "".join(out)

    def mapping(self, names):
        return {names[j]: c for j, c in self.terms}


@njit(cache=True, error_model="numpy")
def _tree_predict(x, attr, split, left, right, leaf_of, coef, intercept):
    n = x.shape[1]
    out = np.empty(n)
    p = coef.shape[1]
    for r in range(n):
        u = 0
        while attr[u] >= 0:
            u = left[u] if x[attr[u], r] <= split[u] else right[u]
        k = leaf_of[u]
        s = 0.0
        for j in range(p):
            if coef[k, j] != 0.0:
                s += coef[k, j] * x[j, r]
        out[r] = s + intercept[k]
    return out


@njit(cache=True, error_model="numpy")
def _rules_predict(x, cond_off, cond_attr, cond_value, cond_left, coef, intercept):
    n = x.shape[1]
    out = np.full(n, np.nan)
    p = coef.shape[1]
    for r in range(n):
        for k in range(len(cond_off) - 1):
            ok = True
            for c in range(cond_off[k], cond_off[k + 1]):
                v = x[cond_attr[c], r]
                if (v <= cond_value[c]) != cond_left[c]:
                    ok = False
                    break
            if ok:
                s = 0.0
                for j in range(p):
                    if coef[k, j] != 0.0:
                        s += coef[k, j] * x[j, r]
                out[r] = s + intercept[k]
                break
    return out


class _Numeric:
    """What both learners share: the target, raw attributes, filters, options."""

    def __init__(self, target, attributes, filters, options, instances):
        self.target = target
        self.attributes = list(attributes)
        self.filters = filters
        self.options = dict(options)
        self.instances = instances

    def _base_json(self):
        return {"target": self.target, "attributes": [a.to_json() for a in self.attributes],
                "filters": self.filters.to_json(), "options": self.options,
                "instances": self.instances}

    @staticmethod
    def _base_args(d):
        attributes = [Attribute.from_json(a) for a in d["attributes"]]
        return (d["target"], attributes, Filters.from_json(attributes, d["filters"]),
                d["options"], d["instances"])

    def _validate_base(self):
        """The target (a numeric attribute), the filters, and the kept columns."""
        if not isinstance(self.target, str) or any(a.name == self.target and a.nominal
                                                    for a in self.attributes):
            raise ValueError("its target is not the name of a numeric attribute")
        f = self.filters
        f.pipeline.validate()
        width = len(f.pipeline.outputs)
        if sorted(set(f.keep)) != f.keep or any(not 0 <= k < width for k in f.keep):
            raise ValueError("its kept columns are not distinct coded columns")
        return len(f.keep)

    def _used(self, coded):
        """Raw attributes behind the coded columns ``coded``."""
        return sorted({self.filters.sources[j] for j in coded})

    def coded(self, columns, n):
        """The coded matrix of rows given as the ``used`` raw columns."""
        raw = [np.zeros(n)] * len(self.attributes)
        for a, col in zip(self.used, columns):
            raw[a] = col
        return self.filters.apply(raw, n)

    def header(self, what):
        kind = "pruned" if self.options["pruned"] else "unpruned"
        form = "regression" if self.options["regression_tree"] else "model"
        return f"M5 {kind} {form} {what}"


class M5Model(_Numeric):
    """An M5' model tree: nodes in preorder (left subtree first), split values on
    the coded attributes, and each leaf's (smoothed) linear model."""

    learner = "m5p"

    def __init__(self, target, attributes, filters, options, instances, tree):
        super().__init__(target, attributes, filters, options, instances)
        self.tree = {k: list(v) for k, v in tree.items()}
        t = self.tree
        self.models = [LinearModel.from_json(m) if m is not None else None
                       for m in t["model"]]
        self.leaves = [i for i, a in enumerate(t["attr"]) if a < 0]
        coded = {a for a in t["attr"] if a >= 0}
        for i in self.leaves:
            coded |= {j for j, _ in self.models[i].terms}
        self.used = self._used(coded)
        p = len(filters.keep)
        self._arrays = (np.asarray(t["attr"], np.int64), np.asarray(t["split"], np.float64),
                        np.asarray(t["left"], np.int64), np.asarray(t["right"], np.int64))
        leaf_of = np.full(len(t["attr"]), -1, np.int64)
        leaf_of[self.leaves] = np.arange(len(self.leaves))
        self._leaf_of = leaf_of
        self._coef = _dense([self.models[i] for i in self.leaves], p)
        self._intercept = np.array([self.models[i].intercept for i in self.leaves])

    def validate(self):
        """Nodes in preorder: a split on a kept column at a finite value with two
        children after it, each below one node; a linear model at every leaf."""
        p = self._validate_base()
        t = self.tree
        n = len(t["attr"])
        if n == 0 or any(len(t[k]) != n for k in ("split", "left", "right", "count", "rms",
                                                  "model")):
            raise ValueError("its tree's node lists differ in length")
        below = [False] * n
        below[0] = True
        for u in range(n):
            a = t["attr"][u]
            if type(a) is not int:
                raise ValueError(f"node {u} does not name a column")
            if a < 0:
                if a != -1 or self.models[u] is None:
                    raise ValueError(f"leaf {u} has no linear model")
                self.models[u].validate(p, f"leaf {u}")
                continue
            if a >= p:
                raise ValueError(f"node {u} splits on column {a}, which it does not have")
            check_array([t["split"][u]], f"node {u}'s split value", (1,))
            for c in (t["left"][u], t["right"][u]):
                if type(c) is not int or not u < c < n or below[c]:
                    raise ValueError(f"node {u}'s child {c} is not a node after it")
                below[c] = True
        if not all(below):
            raise ValueError(f"node {below.index(False)} hangs below no node")
        check_array(t["count"], "its node counts", (n,), low=0)
        check_array(t["rms"], "its node errors", (n,), low=0)
        check_array(t["global_sd"], "its deviation", (1,), low=0)

    @classmethod
    def build(cls, target, attributes, filters, options, instances, built):
        order = built.preorder()
        new = {u: i for i, u in enumerate(order)}
        tree = {"attr": [], "split": [], "left": [], "right": [], "count": [], "rms": [],
                "model": []}
        for u in order:
            leaf = bool(built.leaf[u])
            tree["attr"].append(-1 if leaf else int(built.nodes[u, ATTR]))
            tree["split"].append(0.0 if leaf else float(built.split[u]))
            tree["left"].append(-1 if leaf else new[int(built.nodes[u, LEFT])])
            tree["right"].append(-1 if leaf else new[int(built.nodes[u, RIGHT])])
            tree["count"].append(int(built.nodes[u, COUNT]))
            tree["rms"].append(float(built.rms[u]))
            tree["model"].append(LinearModel.of(built.coef[u], built.intercept[u]).to_json()
                                 if leaf else None)
        tree["global_sd"] = [float(built.global_sd)]
        return cls(target, attributes, filters, options, instances, tree)

    def to_json(self):
        return {**self._base_json(), "tree": self.tree}

    @classmethod
    def from_json(cls, d):
        return cls(*cls._base_args(d), d["tree"])

    def predict(self, columns, n):
        """Predictions for ``n`` rows given as the ``used`` raw columns."""
        x = self.coded(columns, n)
        return _tree_predict(x, *self._arrays, self._leaf_of, self._coef, self._intercept)

    # printing

    def text(self):
        names, t = self.filters.names, self.tree
        number = {u: k + 1 for k, u in enumerate(self.leaves)}
        gsd = t["global_sd"][0]
        lines = []
        stack = [(0, 0, None)]  # (node, depth, the line to print before it)
        while stack:
            u, level, before = stack.pop()
            if before is not None:
                lines.append(before)
            if t["attr"][u] < 0:
                label = (f"({t['count'][u]}/"
                         f"{double_to_string(100.0 * t['rms'][u] / gsd, 3)}%)"
                         if gsd > 0 else f"({t['count'][u]})")
                lines.append(f"LM{number[u]} {label}\n")
                continue
            name, bar = names[t["attr"][u]], "|   " * level
            v = double_to_string(t["split"][u], 3)
            tests = ((" false : ", " true : ") if name.startswith("[")
                     else (" <= " + v + " : ", " >  " + v + " : "))
            stack.append((t["right"][u], level + 1, bar + name + tests[1]))
            stack.append((t["left"][u], level + 1, "\n" + bar + name + tests[0]))
        head = self.header("tree:\n")
        if self.options["smoothed"]:
            head += "(using smoothed linear models)\n"
        models = "".join(f"\nLM num: {number[u]}" + self.models[u].text(names, self.target)
                         + "\n" for u in self.leaves)
        return head + "".join(lines) + models + f"\nNumber of Rules : {len(self.leaves)}"

    def picture(self):
        return pictures.tree(self.rows(), "m5p")

    def rows(self):
        """One dict per node, as the m5p relation lists them."""
        names, t = self.filters.names, self.tree
        number = {u: k + 1 for k, u in enumerate(self.leaves)}
        gsd = t["global_sd"][0]
        parent = [-1] * len(t["attr"])
        side = [None] * len(t["attr"])
        depth = [0] * len(t["attr"])
        out = []
        for u in range(len(t["attr"])):
            p = parent[u]
            if p >= 0:
                depth[u] = depth[p] + 1
            attr = None if p < 0 else names[t["attr"][p]]
            if t["attr"][u] >= 0:
                for c, s in ((t["left"][u], "<="), (t["right"][u], ">")):
                    parent[c], side[c] = u, s
            leaf = t["attr"][u] < 0
            m = self.models[u]
            out.append({
                "node": u, "parent": None if p < 0 else p, "depth": depth[u],
                "attribute": attr, "operator": side[u],
                "value": None if p < 0 else t["split"][p], "is_leaf": leaf,
                "model": f"LM{number[u]}" if leaf else None, "instances": t["count"][u],
                "error_pct": 100.0 * t["rms"][u] / gsd if gsd > 0 else None,
                "intercept": m.intercept if leaf else None,
                "coefficients": list(m.mapping(names).items()) if leaf else None})
        return out


def _dense(models, p):
    """The coefficients of ``models`` as a (models, p) matrix."""
    out = np.zeros((len(models), p))
    for k, m in enumerate(models):
        for j, c in m.terms:
            out[k, j] = c
    return out


class M5RulesModel(_Numeric):
    """A decision list of rules, each a conjunction of tests on coded attributes
    (root first) and the linear model of the best leaf of that round's tree."""

    learner = "m5_rules"

    def __init__(self, target, attributes, filters, options, instances, rules):
        super().__init__(target, attributes, filters, options, instances)
        self.rules = [dict(r) for r in rules]
        self.models = [LinearModel.from_json(r["model"]) for r in self.rules]
        coded = {c[0] for r in self.rules for c in r["conditions"]}
        for m in self.models:
            coded |= {j for j, _ in m.terms}
        self.used = self._used(coded)
        p = len(filters.keep)
        conds = [c for r in self.rules for c in r["conditions"]]
        self._arrays = (
            np.cumsum([0] + [len(r["conditions"]) for r in self.rules]).astype(np.int64),
            np.array([c[0] for c in conds], np.int64),
            np.array([c[1] for c in conds], np.float64),
            np.array([bool(c[2]) for c in conds], np.bool_),
            _dense(self.models, p),
            np.array([m.intercept for m in self.models], np.float64))

    def to_json(self):
        return {**self._base_json(), "rules": self.rules}

    @classmethod
    def from_json(cls, d):
        return cls(*cls._base_args(d), d["rules"])

    def validate(self):
        """Rules whose conditions test kept columns against finite values, each
        with a linear model and its figures."""
        p = self._validate_base()
        if not self.rules:
            raise ValueError("it has no rule")
        for k, (r, m) in enumerate(zip(self.rules, self.models), 1):
            for c in r["conditions"]:
                if len(c) != 3 or type(c[0]) is not int or not 0 <= c[0] < p \
                        or type(c[2]) is not bool:
                    raise ValueError(f"rule {k} tests a column it does not have")
                check_array([c[1]], f"rule {k}'s test value", (1,))
            m.validate(p, f"rule {k}")
            check_array([r[key] for key in ("coverage", "rms", "global_sd", "abs_dev")],
                        f"rule {k}'s figures", (4,), low=0)

    def predict(self, columns, n):
        """Predictions of the first rule covering each row (NaN where none does)."""
        return _rules_predict(self.coded(columns, n), *self._arrays)

    def condition_text(self, c, printed=False):
        name = self.filters.names[c[0]]
        op = ("<= " if c[2] else "> ") if printed else ("<=" if c[2] else ">")
        return f"{name} {op}{'' if printed else ' '}{double_to_string(c[1], 3)}"

    def text(self):
        names = self.filters.names
        out = [self.header("rules ")]
        if self.options["smoothed"]:
            out.append("\n(using smoothed linear models) ")
        out.append(f":\nNumber of Rules : {len(self.rules)}\n\n")
        for k, (r, m) in enumerate(zip(self.rules, self.models), 1):
            out.append(f"Rule: {k}\n")
            if r["conditions"]:
                out.append("IF\n" + "".join("\t" + self.condition_text(c, True) + "\n"
                                            for c in r["conditions"]) + "THEN\n")
            out.append(m.text(names, self.target) + f" [{r['coverage']}")
            out.append(f"/{double_to_string(100.0 * r['rms'] / r['global_sd'], 3)}%]\n\n"
                       if r["abs_dev"] > 0 and r["global_sd"] > 0 else "]\n\n")
        return "".join(out).rstrip("\n")

    def picture(self):
        return pictures.decision_list(self.rows(), "m5_rules")

    def rows(self):
        names = self.filters.names
        return [{"rule": k, "conditions": [self.condition_text(c) for c in r["conditions"]],
                 "intercept": m.intercept, "coefficients": list(m.mapping(names).items()),
                 "coverage": r["coverage"],
                 "error_pct": (100.0 * r["rms"] / r["global_sd"]
                               if r["global_sd"] > 0 else None)}
                for k, (r, m) in enumerate(zip(self.rules, self.models), 1)]


# ------------------------------------------------------------------ fitting

def _prepare(data, target):
    """(attributes, filters, coded matrix, target, weights) of the rows with a
    target value. The table's columns are let go once coded, when they are spare."""
    _, columns, y, w = data.labelled(target)
    attributes = [a for i, a in enumerate(data.attributes) if i != target]
    filters, x = Filters.fit(attributes, columns, y, w)
    del columns
    y, w = data.own(y), data.own(w)
    data.release()
    return attributes, filters, x, y, w


def fit_m5p(data, target, options):
    """An M5Model of ``data`` (a Dataset) predicting attribute ``target`` (its index)."""
    attributes, filters, x, y, w = _prepare(data, target)
    built = m5p.build_tree(x, y, w, m5p.shuffled(len(y)), options)
    return M5Model.build(data.attributes[target].name, attributes, filters, vars(options),
                         len(y), built)


def fit_m5_rules(data, target, options):
    """An M5RulesModel: repeatedly grow a model tree on the rows not yet covered,
    keep its leaf with the most rows as a rule, and remove the rows it covers."""
    attributes, filters, x, y, w = _prepare(data, target)
    rest = m5p.shuffled(len(y))
    rules = []
    while len(rest):
        abs_dev = float(np.mean(np.abs(y[rest] - np.mean(y[rest]))))  # in the rows' order
        built = m5p.build_tree(x, y, w, rest, options)  # which it leaves in the root's
        leaves = [u for u in built.preorder() if built.leaf[u]]
        best = max(leaves, key=lambda u: built.nodes[u, COUNT])  # first on ties
        conditions, cur = [], best
        while built.nodes[cur, m5p.PARENT] >= 0:
            par = int(built.nodes[cur, m5p.PARENT])
            conditions.append([int(built.nodes[par, ATTR]), float(built.split[par]),
                               bool(built.nodes[par, LEFT] == cur)])
            cur = par
        conditions.reverse()
        order = built.root_rows
        covered = np.ones(len(order), np.bool_)
        for a, v, is_left in conditions:
            covered &= (x[a, order] <= v) == is_left
        rules.append({"conditions": conditions,
                      "model": LinearModel.of(built.coef[best],
                                              built.intercept[best]).to_json(),
                      "coverage": int(covered.sum()), "rms": float(built.rms[best]),
                      "global_sd": float(built.global_sd),
                      "abs_dev": abs_dev})
        rest = order[~covered]
    return M5RulesModel(data.attributes[target].name, attributes, filters, vars(options),
                        len(y), rules)


__all__ = ["M5Model", "M5RulesModel", "LinearModel", "Options", "fit_m5p", "fit_m5_rules"]


def fit(data, target, options, settings):
    """The contract's fit for m5p: options checked by its declaration."""
    return fit_m5p(data, target, m5p.Options(**options))


def fit_rules(data, target, options, settings):
    """The contract's fit for m5_rules."""
    return fit_m5_rules(data, target, m5p.Options(**options))
