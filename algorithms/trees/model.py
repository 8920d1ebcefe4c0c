"""REPTree models as values: the pruned tree's nodes in depth-first order, scored
by a numba kernel, printed as the reference prints them, listed as rows."""

import math

import numpy as np

from .. import pictures
from ..javafmt import double_to_string
from ..jit import njit
from ..models import attributes_of, body, check_array, check_tree, preorder
from . import reptree


class RepTreeModel:
    learner = "rep_tree"

    def __init__(self, attributes, target, nodes, options, instances):
        self.attributes = list(attributes)
        self.target = target
        self.class_index = next(i for i, a in enumerate(self.attributes) if a.name == target)
        attr = self.attributes[self.class_index]
        self.classes = tuple(attr.values) if attr.nominal else None
        self.nodes = {key: list(v) for key, v in nodes.items()}
        self.options = dict(options)
        self.instances = int(instances)
        self.used = sorted({a for a in self.nodes["attr"] if a >= 0})
        self._flat = None

    @classmethod
    def of(cls, attributes, target, tree, held, error, options, instances):
        """The model of a grown (and pruned) ``reptree.Grown``: only the nodes still
        reachable, renumbered depth first."""
        order, number = reptree.depth_first(tree.attr, tree.first, tree.kids)
        attr = tree.attr[order]
        kids = np.where(attr >= 0, tree.kids[order], 0)
        cut = [None if a < 0 or math.isnan(c) else c
               for a, c in zip(attr.tolist(), tree.cut[order].tolist())]
        has = tree.has[order].tolist()
        nodes = {"attr": attr.tolist(), "cut": cut,
                 "props": [p[:b] if b else None
                           for p, b in zip(tree.props[order].tolist(), kids.tolist())],
                 "children": [number[f:f + b].tolist() for f, b in
                              zip(tree.first[order].tolist(), kids.tolist())],
                 "probs": [p if h else None for p, h in zip(tree.probs[order].tolist(), has)],
                 "dist": tree.dist[order].tolist(), "held": held[order].tolist(),
                 "held_error": error[order].tolist()}
        return cls(attributes, target, nodes, options, instances)

    def to_json(self):
        return body(self, nodes=self.nodes)

    @classmethod
    def from_json(cls, d):
        return cls(attributes_of(d), d["target"], d["nodes"],
                   d["options"], d["instances"])

    def validate(self):
        nd = self.nodes
        keys = ("attr", "cut", "props", "children", "probs", "dist", "held", "held_error")
        if set(nd) != set(keys) or any(not isinstance(nd[k], list)
                                       or len(nd[k]) != len(nd["attr"]) for k in keys):
            raise ValueError("its nodes are not the lists of a tree")
        width = 1 if self.classes is None else len(self.classes)
        check_tree(self.attributes, nd["attr"], nd["children"], nd["props"], nd["probs"],
                   width, lambda a: len(a.values) if a.nominal else 2, self.target)
        sizes = {"dist": width if self.classes else 2, "held": width if self.classes else 2}
        for i, a in enumerate(nd["attr"]):
            if not isinstance(nd["children"][i], list):
                raise ValueError(f"node {i}'s children are not a list")
            if (a >= 0 or i == 0) and nd["probs"][i] is None:
                raise ValueError(f"node {i} has no probabilities for its leaves to fall "
                                 "back on")
            cut = nd["cut"][i]
            number = isinstance(cut, (int, float)) and not isinstance(cut, bool) \
                and math.isfinite(cut)
            if not (number or cut is None) or (
                    a >= 0 and not self.attributes[a].nominal and not number):
                raise ValueError(f"node {i} has no finite cut")
            for key, size in sizes.items():
                check_array(nd[key][i], f"node {i}'s {key}", (size,))
            check_array([nd["held_error"][i]], f"node {i}'s held-out error", (1,))

    # -------------------------------------------------------------- scoring

    def _arrays(self):
        if self._flat is None:
            nd = self.nodes
            n = len(nd["attr"])
            width = 1 if self.classes is None else len(self.classes)
            offsets = np.zeros(n + 1, np.int64)
            offsets[1:] = np.cumsum([len(c) for c in nd["children"]])
            probs = np.zeros((n, width))
            known = np.zeros(n, np.bool_)
            for i, p in enumerate(nd["probs"]):
                if p is not None:
                    probs[i] = p
                    known[i] = True
            where = {a: j for j, a in enumerate(self.used)}
            self._flat = (
                np.array([where.get(a, -1) for a in nd["attr"]], np.int64),
                np.array([np.nan if c is None else c for c in nd["cut"]], np.float64),
                np.array([self.attributes[a].nominal if a >= 0 else False
                          for a in nd["attr"]], np.bool_),
                offsets,
                np.array([c for cs in nd["children"] for c in cs], np.int64),
                np.array([x for p in nd["props"] if p is not None for x in p], np.float64),
                probs, known)
        return self._flat

    def _scores(self, columns, n):
        X = np.empty((max(len(columns), 1), n))
        for j, c in enumerate(columns):
            X[j] = c
        out = np.zeros((n, 1 if self.classes is None else len(self.classes)))
        _distribution(X, *self._arrays(), out)
        return out

    def proba(self, columns, n):
        return self._scores(columns, n)

    def predict(self, columns, n):
        return self._scores(columns, n)[:, 0]

    # -------------------------------------------------------------- printing

    def _leaf(self, i, parent):
        nd = self.nodes
        probs = nd["probs"][i] if nd["probs"][i] is not None else nd["probs"][parent]
        dist, held = nd["dist"][i], nd["held"][i]
        if self.classes is None:
            error = dist[0] / dist[1] if dist[1] > 0 else 0.0
            held_error = nd["held_error"][i] / held[0] if held[0] > 0 else 0.0
            return (f" : {_dts(probs[0])} ({_dts(dist[1])}/{_dts(error)})"
                    f" [{_dts(held[0])}/{_dts(held_error)}]")
        best = int(np.argmax(probs))
        total, held_total = reptree._sum(np.array(dist)), reptree._sum(np.array(held))
        return (f" : {self.classes[best]} ({_dts(total)}/{_dts(total - dist[best])})"
                f" [{_dts(held_total)}/{_dts(held_total - held[best])}]")

    def text(self):
        nd, out = self.nodes, []
        for i, parent, b, level in preorder(nd["children"]):
            if parent is not None:  # the test that leads to it
                attr = self.attributes[nd["attr"][parent]]
                test = (f"{attr.name} = {attr.values[b]}" if attr.nominal else
                        f"{attr.name} {'<' if b == 0 else '>='} {_dts(nd['cut'][parent])}")
                out.append("\n" + "|   " * (level - 1) + test)
            if nd["attr"][i] < 0:
                out.append(self._leaf(i, parent))
        return ("\nREPTree\n============\n" + "".join(out) + "\n"
                + f"\nSize of the tree : {len(self.nodes['attr'])}")

    def picture(self):
        return pictures.tree(self.rows(), "rep_tree")

    def rows(self):
        """One row per node, depth first (see the rep_tree declaration)."""
        nd = self.nodes
        parent = [None] * len(nd["attr"])
        depth = [0] * len(nd["attr"])
        test = [(None, None, None)] * len(nd["attr"])
        for i, kids in enumerate(nd["children"]):
            attr = self.attributes[nd["attr"][i]] if nd["attr"][i] >= 0 else None
            for b, c in enumerate(kids):
                parent[c], depth[c] = i, depth[i] + 1
                if attr.nominal:
                    test[c] = (attr.name, "=", attr.values[b])
                else:
                    test[c] = (attr.name, "<" if b == 0 else ">=", repr(nd["cut"][i]))
        out = []
        for i in range(len(nd["attr"])):
            probs = nd["probs"][i] if nd["probs"][i] is not None else nd["probs"][parent[i]]
            dist, held = nd["dist"][i], nd["held"][i]
            row = {"node": i, "parent": parent[i], "depth": depth[i],
                   "attribute": test[i][0], "operator": test[i][1], "value": test[i][2],
                   "is_leaf": nd["attr"][i] < 0, "holdout_weight": None,
                   "holdout_errors": nd["held_error"][i]}
            if self.classes is None:
                row.update({"class": None, "mean": probs[0], "weight": dist[1],
                            "errors": dist[0], "holdout_weight": held[0]})
            else:
                best = int(np.argmax(probs))
                row.update({"class": self.classes[best], "mean": None, "weight": sum(dist),
                            "errors": sum(dist) - dist[best], "holdout_weight": sum(held)})
            out.append(row)
        return out


def _dts(x):
    return double_to_string(float(x), 2)


@njit(cache=True)
def _distribution(X, col, cut, nominal, offsets, children, props, probs, known, out):
    """The reference's distributionForInstance of every row: a missing value goes
    down every branch weighted by its proportion (an empty leaf adding nothing);
    a known one down its branch (an empty leaf answering with its parent's
    probabilities)."""
    n = X.shape[1]
    m = len(col)
    stack_node = np.empty(m, np.int64)
    stack_w = np.empty(m)
    for r in range(n):
        top = 0
        stack_node[0] = 0
        stack_w[0] = 1.0
        top = 1
        while top > 0:
            top -= 1
            i = stack_node[top]
            wt = stack_w[top]
            j = col[i]
            if j < 0:
                for c in range(out.shape[1]):
                    out[r, c] += wt * probs[i, c]
                continue
            v = X[j, r]
            lo = offsets[i]
            if np.isnan(v):
                for b in range(offsets[i + 1] - lo - 1, -1, -1):
                    child = children[lo + b]
                    if props[lo + b] > 0 and (col[child] >= 0 or known[child]):
                        stack_node[top] = child
                        stack_w[top] = wt * props[lo + b]
                        top += 1
                continue
            b = int(v) if nominal[i] else (0 if v < cut[i] else 1)
            child = children[lo + b]
            if col[child] < 0 and not known[child]:
                for c in range(out.shape[1]):
                    out[r, c] += wt * probs[i, c]
            else:
                stack_node[top] = child
                stack_w[top] = wt
                top += 1


def fit(data, target, options, settings):
    """The contract's fit for rep_tree."""
    a = data.attributes[target]
    k = len(a.values) if a.nominal else 0
    nominal = [x.nominal for x in data.attributes]
    n_values = [len(x.values) for x in data.attributes]
    instances = int((~np.isnan(data.columns[target])).sum())
    data.put_last(target)  # the others stacked as a view, not a copy
    # the target is not held here: the table's columns go once presorted
    tree, held, error = reptree.build(data.columns, nominal, n_values,
                                      data.columns[target], data.weights, target, k,
                                      options, data.release if data.spare else None)
    return RepTreeModel.of(data.attributes, a.name, tree, held, error, options, instances)
