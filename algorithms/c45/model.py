"""A decision tree as a value: flat node arrays that serialise to JSON, score rows
with a numba kernel, print as the reference prints them, and list as rows.

Node ``i`` hangs below ``parent[i]`` on branch ``branch[i]``; nodes are in
depth-first order. ``dist[i]`` is a leaf's class distribution (one row) or a split's
distribution per branch, with missing values spread across the branches;
``totals[i]`` J48's running totals of it (``grow.distribution``): a leaf's overall
weight, a split's weight per branch, per class and overall. J48 scores from them (a
row lacking a tested value spread by each branch's share of the overall weight, a
leaf's probabilities its class weights over its overall weight), and sums of the
matrix's cells differ from them in their last bits where rows were spread.
"""

import numpy as np

from .. import pictures
from ..classes import class_codes
from ..dataset import Attribute
from ..javafmt import counts, double_to_string, java_double
from ..jit import njit
from . import grow as c45

NUMERIC_SPLIT, NOMINAL_SPLIT, VALUE_SPLIT = c45.NUMERIC_SPLIT, c45.NOMINAL_SPLIT, \
    c45.VALUE_SPLIT


class Tree:
    """``binary`` marks a tree grown with binary splits only, which the reference
    prints with full-precision thresholds."""

    def __init__(self, attr, kind, threshold, value, parent, branch, dist, empty,
                 binary=False, totals=None):
        self.binary = bool(binary)
        self.attr = np.asarray(attr, np.int64)
        self.kind = np.asarray(kind, np.int64)
        self.threshold = np.asarray(threshold, np.float64)
        self.value = np.asarray(value, np.int64)
        self.parent = np.asarray(parent, np.int64)
        self.branch = np.asarray(branch, np.int64)
        self.dist = [np.asarray(d, np.float64).reshape(-1, len(d[0])) for d in dist]
        self.empty = np.asarray(empty, np.bool_)
        if totals is None:  # a model from before the totals were kept
            totals = [[d.sum()] if a < 0 else c45.totals_of(d)
                      for a, d in zip(self.attr, self.dist)]
        self.totals = [np.asarray(t, np.float64) for t in totals]
        self.used = sorted({int(a) for a in self.attr if a >= 0})  # attributes tested
        n = len(self.attr)
        self.n_classes = self.dist[0].shape[1]
        self.children = [[] for _ in range(n)]
        for i in range(1, n):
            if 0 <= self.parent[i] < n:  # (validate refuses any other parent)
                self.children[self.parent[i]].append(i)
        for c in self.children:
            c.sort(key=lambda i: self.branch[i])

    @classmethod
    def from_flat(cls, nodes, thresholds, dists, k, binary=False):
        """From the arrays ``c45.fit`` returns, walking down from the root."""
        cols = ([], [], [], [], [], [], [], [])
        totals = []
        stack = [(0, -1, -1)]
        while stack:
            i, parent, branch = stack.pop()
            nb = int(nodes[i, c45.BAGS])
            d = dists[nodes[i, c45.DIST]:nodes[i, c45.DIST] + nb * k].reshape(nb, k)
            leaf = nodes[i, c45.ATTR] < 0
            for col, v in zip(cols, (int(nodes[i, c45.ATTR]),
                                     -1 if leaf else int(nodes[i, c45.KIND]),
                                     0.0 if leaf else float(thresholds[i]),
                                     int(nodes[i, c45.VALUE]), parent, branch,
                                     d.tolist(), bool(nodes[i, c45.EMPTY] == 1))):
                col.append(v)
            at = nodes[i, c45.DIST] + nb * k  # J48's totals, after the matrix
            totals.append(dists[at:at + (1 if leaf else nb + k + 1)].tolist())
            if not leaf:
                me = len(cols[0]) - 1
                first = nodes[i, c45.CHILD]
                stack.extend((first + b, me, b) for b in range(nb - 1, -1, -1))
        return cls(*cols, binary=binary, totals=totals)

    def to_json(self):
        return {"attr": self.attr.tolist(), "kind": self.kind.tolist(),
                "threshold": self.threshold.tolist(), "value": self.value.tolist(),
                "parent": self.parent.tolist(), "branch": self.branch.tolist(),
                "dist": [d.tolist() for d in self.dist], "empty": self.empty.tolist(),
                "binary": self.binary, "totals": [t.tolist() for t in self.totals]}

    @classmethod
    def from_json(cls, d):
        return cls(d["attr"], d["kind"], d["threshold"], d["value"], d["parent"],
                   d["branch"], d["dist"], d["empty"], d.get("binary", False),
                   d.get("totals"))

    def is_leaf(self, i):
        return self.attr[i] < 0

    def validate(self, attributes, n_classes, target):
        """Raise ValueError unless the arrays make a tree the scoring kernel can walk:
        equal lengths, parents before their children, every test on an attribute
        (not the target) of the right kind with one branch per distribution row,
        each branch taken once, and finite non-negative class weights."""
        n = len(self.attr)
        if n == 0 or any(len(a) != n for a in (self.kind, self.threshold, self.value,
                                                self.parent, self.branch, self.dist,
                                                self.empty, self.totals)):
            raise ValueError("its tree's node arrays differ in length")
        if self.parent[0] != -1:
            raise ValueError("its tree's first node is not the root")
        for i in range(1, n):
            if not 0 <= self.parent[i] < i:
                raise ValueError(f"node {i} hangs below node {self.parent[i]}")
        for i in range(n):
            d = self.dist[i]
            if d.ndim != 2 or d.shape[0] < 1 or d.shape[1] != n_classes \
                    or not np.all(np.isfinite(d)) or (d < 0).any():
                raise ValueError(f"node {i} does not hold finite class weights for "
                                 f"{n_classes} classes")
            a, t = self.attr[i], self.totals[i]
            size = 1 if a < 0 else d.shape[0] + n_classes + 1
            if t.shape != (size,) or not np.all(np.isfinite(t)) or (t < 0).any():
                raise ValueError(f"node {i} does not hold {size} finite total weights")
            if a < 0:
                if a != -1 or self.children[i]:
                    raise ValueError(f"leaf {i} has children")
                continue
            if a >= len(attributes) or attributes[a].name == target:
                raise ValueError(f"node {i} tests attribute {a}, which it does not have")
            nominal = attributes[a].nominal
            k = self.kind[i]
            if k == NUMERIC_SPLIT:
                ok = not nominal and np.isfinite(self.threshold[i]) and d.shape[0] == 2
            elif k == NOMINAL_SPLIT:
                ok = nominal and d.shape[0] == len(attributes[a].values)
            elif k == VALUE_SPLIT:
                ok = nominal and 0 <= self.value[i] < len(attributes[a].values) \
                    and d.shape[0] == 2
            else:
                ok = False
            if not ok:
                raise ValueError(f"node {i}'s test does not fit attribute "
                                 f"{attributes[a].name!r}")
            branches = sorted(self.branch[c] for c in self.children[i])
            if branches != list(range(d.shape[0])):
                raise ValueError(f"node {i}'s children are not its {d.shape[0]} branches")

    # scoring

    def arrays(self):
        """The flat arrays the scoring kernel reads (cached)."""
        if not hasattr(self, "_arrays"):
            n, k = len(self.attr), self.n_classes
            start = np.zeros(n + 1, np.int64)
            start[1:] = np.cumsum([len(c) for c in self.children])
            flat = np.array([c for cs in self.children for c in cs], np.int64)
            frac = np.zeros(len(flat))
            fallback = np.zeros((len(flat), k))
            leaf_prob = np.zeros((n, k))
            for i in range(n):  # J48's probabilities from its totals
                d, t = self.dist[i], self.totals[i]
                if self.is_leaf(i):
                    leaf_prob[i] = _prob(d[0], t[0])
                    continue
                nb = d.shape[0]
                frac[start[i]:start[i + 1]] = c45.shares(t, nb)
                for b in range(nb):
                    fallback[start[i] + b] = _prob(d[b], t[b]) if c45.gr(t[b], 0) \
                        else _prob(t[nb:nb + k], t[-1])
            column = np.full(max(self.used, default=-1) + 1, -1, np.int64)
            column[self.used] = np.arange(len(self.used))
            # ``_column`` first: a thread that finds ``_arrays`` set (DuckDB scores
            # chunks of one model on several threads) must find it too
            self._column = column
            self._arrays = (self.attr, self.kind, self.threshold, self.value, start,
                            flat, frac, fallback, leaf_prob, self.empty)
        return self._arrays

    def proba(self, columns, n):
        """Class probabilities for ``n`` rows; ``columns`` holds the attributes the
        tree tests (``used``), in that order."""
        arrays = self.arrays()
        x = np.ascontiguousarray(np.vstack(columns)) if columns else np.empty((0, n))
        return _proba(x, self._column, *arrays)

    # printing

    def text(self, attributes, classes):
        """The tree as J48 prints it (from the line after its heading)."""
        if self.is_leaf(0):
            return ": " + _label(self.dist[0], 0, classes) + self._footer()
        lines = []
        self._dump(0, attributes, classes, lines)
        return "\n" + "\n".join(lines) + self._footer()

    def _footer(self):
        leaves = int(sum(self.is_leaf(i) for i in range(len(self.attr))))
        return (f"\n\nNumber of Leaves  : \t{leaves}\n"
                f"\nSize of the tree : \t{len(self.attr)}\n")

    def _dump(self, root, attributes, classes, lines):
        """One line per branch, depth first (a stack, for trees of any depth)."""
        stack = [(c, 0) for c in reversed(self.children[root])]
        while stack:
            child, depth = stack.pop()
            i, b = self.parent[child], self.branch[child]
            line = "|   " * depth + self.test(i, b, attributes)
            if self.is_leaf(child):
                lines.append(line + ": " + _label(self.dist[i], b, classes))
            else:
                lines.append(line)
                stack.extend((c, depth + 1) for c in reversed(self.children[child]))

    def test(self, i, b, attributes):
        """The text of branch ``b`` of node ``i``, e.g. ``humidity <= 75``."""
        attr, op, value = self.condition(i, b, attributes, printed=True)
        return f"{attr} {op} {value}"

    def condition(self, i, b, attributes, printed=False):
        """(attribute, operator, value text) of branch ``b`` of node ``i``; a
        threshold as the reference prints it, or else in full precision."""
        a = attributes[self.attr[i]]
        kind = self.kind[i]
        if kind == NUMERIC_SPLIT:
            t = float(self.threshold[i])
            if not printed:
                text = repr(t)
                text = text[:-2] if text.endswith(".0") else text
            else:
                text = java_double(t) if self.binary else double_to_string(t, 6)
            return a.name, "<=" if b == 0 else ">", text
        if kind == NOMINAL_SPLIT:
            return a.name, "=", a.values[b]
        return a.name, "=" if b == 0 else "!=", a.values[self.value[i]]

    # relation

    def rows(self, attributes, classes):
        """One dict per node, as the tree relation lists them."""
        out = []
        depth = np.zeros(len(self.attr), np.int64)
        for i in range(len(self.attr)):
            p = self.parent[i]
            if p >= 0:
                depth[i] = depth[p] + 1
                b = self.branch[i]
                attr, op, value = self.condition(p, b, attributes)
                per_class = self.dist[p][b]
                cls = c45.bag_class(self.dist[p], b)
            else:
                attr = op = value = None
                per_class = self.dist[i].sum(axis=0)
                cls = c45.max_class(per_class)
            weight = float(per_class.sum())
            out.append({
                "node": i, "parent": None if p < 0 else int(p), "depth": int(depth[i]),
                "attribute": attr, "operator": op, "value": value,
                "is_leaf": bool(self.is_leaf(i)), "class": classes[cls],
                "weight": weight, "errors": float(weight - per_class[cls]),
                "distribution": dict(zip(classes, map(float, per_class)))})
        return out


def _prob(per_class, total):
    if c45.eq(total, 0):
        return np.zeros_like(per_class)
    return per_class / total


def _label(dist, b, classes):
    """A leaf as J48 prints it: class (weight/errors)."""
    cls = c45.bag_class(dist, b)
    weight = dist[b].sum()
    wrong = weight - dist[b][cls]
    text = f"{classes[cls]} ({counts(weight)}"
    if c45.gr(wrong, 0):
        text += "/" + counts(wrong)
    return text + ")"


@njit(cache=True)
def _proba(x, column, attr, kind, threshold, value, start, flat, frac, fallback,
           leaf_prob, empty):
    """Row ``r`` of attribute ``a`` is ``x[column[a], r]``. Each row's probabilities
    are J48's to the bit: where a value is missing, a node's sum adds its non-empty
    branches' results in branch order, each already summed below, as J48's recursion
    does (a stack of open nodes, each with its sum so far)."""
    n = x.shape[1]
    k = leaf_prob.shape[1]
    out = np.zeros((n, k))
    node_at = np.empty(64, np.int64)  # the open nodes, root first
    weight = np.empty(64)  # the weight the row reaches each with
    next_j = np.empty(64, np.int64)  # the branch each takes up next
    acc = np.zeros((64, k))  # the sum of the branches each has added
    got = np.empty(k)
    for r in range(n):
        depth = 0
        node_at[0], weight[0] = 0, 1.0
        entering = True
        while True:
            node, wt = node_at[depth], weight[depth]
            done = False
            if entering:
                if attr[node] < 0:
                    for c in range(k):
                        got[c] = wt * leaf_prob[node, c]
                    done = True
                else:
                    v = x[column[attr[node]], r]
                    if not np.isnan(v):
                        if kind[node] == 0:
                            b = 0 if c45.below(v, threshold[node]) else 1
                        elif kind[node] == 1:
                            b = int(v)
                        else:
                            b = 0 if int(v) == value[node] else 1
                        j = start[node] + b
                        if empty[flat[j]]:
                            for c in range(k):
                                got[c] = wt * fallback[j, c]
                            done = True
                        else:  # the branch's result is the node's
                            node_at[depth] = flat[j]
                            continue
                    else:
                        acc[depth] = 0.0
                        next_j[depth] = start[node]
            if not done:  # spread: the next non-empty branch, or the node's sum
                j = next_j[depth]
                while j < start[node + 1] and empty[flat[j]]:
                    j += 1
                if j < start[node + 1]:
                    next_j[depth] = j + 1
                    if depth + 1 == node_at.shape[0]:
                        node_at = np.concatenate((node_at, np.empty(depth + 1, np.int64)))
                        weight = np.concatenate((weight, np.empty(depth + 1)))
                        next_j = np.concatenate((next_j, np.empty(depth + 1, np.int64)))
                        acc = np.concatenate((acc, np.zeros((depth + 1, k))))
                    depth += 1
                    node_at[depth], weight[depth] = flat[j], frac[j] * wt
                    entering = True
                    continue
                got[:] = acc[depth]
            if depth == 0:
                out[r] = got
                break
            depth -= 1
            for c in range(k):
                acc[depth, c] += got[c]
            entering = False
    return out


class C45Model:
    """A C4.5 classifier: the tree, the attributes it was trained on and the
    classes."""

    learner = "c45"

    def __init__(self, target, classes, attributes, tree, options, instances):
        self.target = target
        self.classes = tuple(classes)
        self.attributes = list(attributes)
        self.tree = tree
        self.options = dict(options)
        self.instances = instances
        self.used = tree.used

    def to_json(self):
        return {"target": self.target, "classes": list(self.classes),
                "attributes": [a.to_json() for a in self.attributes],
                "options": self.options, "instances": self.instances,
                "tree": self.tree.to_json()}

    @classmethod
    def from_json(cls, d):
        return cls(d["target"], d["classes"], [Attribute.from_json(a) for a in d["attributes"]],
                   Tree.from_json(d["tree"]), d["options"], d["instances"])

    def validate(self):
        if len(self.classes) < 1 or any(not isinstance(c, str) for c in self.classes):
            raise ValueError("its classes are not a list of names")
        self.tree.validate(self.attributes, len(self.classes), self.target)

    def proba(self, columns, n):
        """Class probabilities of ``n`` rows; ``columns`` holds the attributes in
        ``used``, in that order."""
        return self.tree.proba(columns, n)

    def picture(self):
        return pictures.tree(self.rows(), "c45")

    def rows(self):
        """One row per node (see the c45 declaration's relation)."""
        return self.tree.rows(self.attributes, self.classes)

    def text(self):
        kind = "pruned" if self.options.get("pruned", True) else "unpruned"
        return (f"J48 {kind} tree\n------------------\n"
                + self.tree.text(self.attributes, self.classes))


def fit_c45(data, target, options):
    """A C45Model of ``data`` (a Dataset) predicting attribute ``target`` (its index),
    and the class codes (-1 missing) that stand for the target's column, spent once
    they are made (``Dataset.spend``)."""
    attributes = [a for i, a in enumerate(data.attributes) if i != target]
    columns = data.others(target)
    y = data.columns[target]
    classes = data.attributes[target].values
    y = class_codes(np.where(np.isnan(y), -1, y), len(classes))
    data.spend(target)
    n_values = [len(a.values) if a.nominal else 0 for a in attributes]
    flat = c45.fit(columns, n_values, y, len(classes), data.weights, options)
    tree = Tree.from_flat(*flat, len(classes), options.binary_splits)
    return C45Model(data.attributes[target].name, classes, attributes, tree,
                    vars(options), int((y >= 0).sum())), y


def fit(data, target, options, settings):
    """The contract's fit: options checked by the c45 declaration."""
    return fit_c45(data, target, c45.Options(**options))[0]
