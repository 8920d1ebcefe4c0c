"""C4.5 (``c45``) of a Spark DataFrame too large for one worker: J48's tree grown a
level at a time, Spark moving the rows and the driver choosing the splits
(``algorithms/c45/levels.py``).

- **A level** is one pass: every partition routes its rows that have a class down
  the partial tree (``levels.route``) and sends, per open node and attribute, the
  values, classes and weights of the node's rows as arrays; Spark gathers each
  attribute's arrays (in ``buckets`` groups of nodes) on one worker, which scores
  the attribute at each node with the single-machine kernels
  (``levels.best_split``). The driver picks each node's split (``grow.chosen``),
  and one small pass over the whole table moves each numeric threshold onto a
  value of the table (``levels.snapped``); where J48 instead walks the rows in
  their order, the table is sorted in the single-machine order once and walked
  part by part (``_walk``).
- **Pruning** runs on the driver with the single-machine kernels (``grow.collapse``,
  ``grow.prune``) from the grown tree's class weights. Subtree raising passes a
  node's rows down its largest branch, so it needs the rows again: one pass per
  wave of nodes whose branches are pruned (``_Raiser``), and more where a row's
  value is missing at a node the rows have not reached before.

The tree is ``c45_fit``'s (see ``levels``). Each level moves the rows' values once
through Spark, and a worker holds one attribute's rows of a level's nodes: the
table's rows at the first level.
"""

import numpy as np
import pyarrow as pa

from ..algorithms import contract, memory
from ..algorithms.c45 import grow as c45
from ..algorithms.c45 import levels
from ..algorithms.c45.model import C45Model, Tree
from ..algorithms.classes import class_codes
from ..algorithms.dataset import NUMERIC
from ..udfs.models import value
from . import frames, settings

FN = "c45"
# bytes a row of one attribute on the worker that scores it at the first level: the
# 28 bytes sent at most, their concatenation and the sorted copies
WORKER_ROW = 120
ADVICE = ("at the first level one worker scores an attribute over every row: fit one "
          "model per group (c45_fit(TABLE(t) PARTITION BY (g), ...)), a sample, or "
          "raise the limit")
SPLITS = ("node long, attr int, gain double, ratio double, mid double, val int, "
          "rows long, per_class array<double>, dist array<double>, tot array<double>, "
          "low double, high double, left double, missing long")
LAST = {}  # the last fit's work: levels, thresholds walked, pruning passes, raisings
ROWS = "attr int, bucket int, node binary, value binary, cls binary, weight binary, " \
    "key binary"


def fitted(df, target, confidence=0.25, min_leaf=2, pruned=True, subtree_raising=True,
           binary_splits=False, mdl_correction=True, collapse=True, weight=None,
           buckets=None):
    """The model value (as DuckDB's ``c45_fit`` gives it) of ``df``. ``buckets``:
    how many groups a level's nodes are dealt to per attribute (by default twice
    the task slots)."""
    decl = contract.get(FN, FN)
    opt = c45.Options(**decl.options(FN, {
        "confidence": confidence, "min_leaf": min_leaf, "pruned": pruned,
        "subtree_raising": subtree_raising, "binary_splits": binary_splits,
        "mdl_correction": mdl_correction, "collapse": collapse}))
    frame = frames.Frame(FN, df, weight=weight)
    t = frame.target_index(decl, target)
    try:
        total = frame.open()
        frame.check_target(decl, t, total)
        memory.check(FN, WORKER_ROW, total["n"], 1, settings(df.sparkSession)[
            "memory_limit"], advice=ADVICE, what="spark.duckmine.memoryLimit")
        buckets = buckets or 2 * df.sparkSession.sparkContext.defaultParallelism
        exact = _exact(frame, total, t)

        def grown(at_nodes, runs=True):
            LAST.update(walked=0, below_top=0, crossed=at_nodes, run=0)
            grower = _Grower(frame, t, opt, total["n"], buckets, exact, runs)
            grower.grow(at_nodes)
            LAST["run"] = grower.deepest
            return grower

        LAST.clear()
        LAST.update(passes=0, raised=0)
        try:
            grower = grown(False)
        except levels.Crossing:  # a walk crossed a value of its node: grown again,
            grower = grown(True)  # each threshold walked at its level
            if grower.deepest >= c45.CHAIN:  # a run J48 makes without end: none
                grower = grown(True, False)
        nodes, thresholds, dists = grower.flat()
        k = grower.k
        if opt.collapse:
            c45.collapse(len(nodes), nodes, dists, k)
        if opt.pruned:
            cf, z = c45.confidence_quantile(opt.confidence)
            if opt.subtree_raising:
                raiser = _Raiser(grower, nodes, thresholds, dists, cf, z)
                nodes, thresholds, dists = raiser.prune()
                LAST.update(passes=raiser.passes, raised=raiser.raised)
            else:
                nodes = c45.prune(np.empty((0, 0)), class_codes(np.empty(0), k), nodes,
                                  thresholds, dists, np.empty(0, np.int32), np.empty(0),
                                  k, cf, z, False)
    finally:
        frame.close()
    attributes = frame.attributes
    tree = Tree.from_flat(nodes, thresholds, dists, k, opt.binary_splits)
    return value(C45Model(attributes[t].name, attributes[t].values,
                          [attributes[j] for j in grower.cols], tree, vars(opt),
                          grower.instances))


def _exact(frame, total, t):
    """Whether every weight is whole and no row of positive weight lacks a value of
    an attribute: then no row is ever spread into fractions, every sum is exact in
    any order, and a node's rows need no order of their own (no hash of them)."""
    if total["whole"] != total["sw"]:
        return False
    for j, c in enumerate(total["cols"]):
        known = c[0] if frame.kinds[j] == NUMERIC else sum(v[0] for v in c.values())
        if j != t and known != total["sw"]:
            return False
    return True


class _Grower:
    """The tree as ``grow.grow`` lays it out (a row of ``nodes`` per node, its
    children consecutive, each node's class weights per branch), grown a level of
    open nodes at a time."""

    def __init__(self, frame, t, opt, n_all, buckets, exact, runs=True):
        self.frame, self.t, self.opt, self.buckets = frame, t, opt, buckets
        self.exact = exact  # no fractions: a node's rows need no order (``_exact``)
        attributes = frame.attributes
        self.cols = np.array([j for j in range(frame.p) if j != t], np.int64)
        self.n_values = np.array([len(attributes[j].values) if attributes[j].nominal
                                  else 0 for j in self.cols], np.int64)
        self.k = len(attributes[t].values)
        self.n_all = n_all
        self.multi_valued = bool(len(self.n_values)) and all(
            v > 0 and not 0.3 * n_all - v > c45.SMALL for v in self.n_values)
        self.nodes = np.full((1, 7), -1, np.int64)
        self.nodes[0, c45.ATTR] = levels.OPEN
        self.thresholds = np.zeros(1)
        self.dists = [None]
        self.fracs = {}
        self.walks = {}  # node: (column, midpoint, top, low, high, left, missing) to walk
        self.chain = [0]  # one-way splits in a run above each node (grow.split_point)
        self.runs = runs  # whether a run may be made, up to grow.CHAIN splits
        self.deepest = 0  # the longest run made
        self.instances = 0

    def grow(self, at_nodes=False):
        """Level by level; the thresholds J48 walks to are walked at the end, or,
        ``at_nodes``, at their level, and the rows then go by them."""
        open_nodes = [0]
        LAST["levels"] = 0
        while open_nodes:
            LAST["levels"] += 1
            found = self._level()
            if 0 in open_nodes:
                self.instances = int(found.get((0, 0), {}).get("rows", 0))
            splits, wanted = {}, []
            for i in open_nodes:
                split = self._choose(i, [found.get((i, a)) for a in range(len(self.cols))])
                if split is not None:
                    splits[i] = split
                    if split[1] == c45.NUMERIC_SPLIT:
                        wanted.append((i, split[0], split[2]))
            thresholds = self._snapped(wanted)
            first = len(self.nodes)
            self._more(sum(len(split[4]) for split in splits.values()))
            open_nodes = []
            for i in sorted(splits):
                a, kind, mid, val, dist, rows, tot = splits[i]
                threshold, walk = thresholds.get(i, (mid, False))
                if walk:
                    self.walks[i] = (int(self.cols[a]), mid, threshold, *rows)
                self._split(i, a, kind, threshold, val, dist, tot, first)
                open_nodes += range(first, first + len(dist))
                first += len(dist)
            if at_nodes:
                self._walk(across=True)
        self._walk()

    def _choose(self, i, found):
        """(attribute, kind, midpoint, value, class weights per branch, and the
        node's least, greatest and largest-left values of a numeric attribute) of
        node ``i``'s split, or None for a leaf (made here), from each attribute's
        best."""
        k = self.k
        if found[0] is None:  # no row reaches the node
            self._leaf(i, np.zeros(k))
            return None
        per_class = np.array(found[0]["per_class"])
        if c45.unsplittable(per_class, float(self.opt.min_leaf)):
            self._leaf(i, per_class)
            return None
        gains = np.array([f["gain"] for f in found])
        ratios = np.array([f["ratio"] for f in found])
        a = c45.chosen(gains, ratios, self.n_values, self.multi_valued, float(self.n_all))
        if a < 0:
            self._leaf(i, per_class)
            return None
        f = found[a]
        kind = c45.NUMERIC_SPLIT if self.n_values[a] == 0 else \
            c45.VALUE_SPLIT if self.opt.binary_splits else c45.NOMINAL_SPLIT
        return a, kind, f["mid"], f["val"], np.array(f["dist"]).reshape(-1, k), \
            (f["low"], f["high"], f["left"], f["missing"]), np.array(f["tot"])

    def _leaf(self, i, per_class):
        self.nodes[i, c45.ATTR] = -1
        self.nodes[i, c45.BAGS] = 1
        self.nodes[i, c45.EMPTY] = 1 if abs(per_class.sum()) < 1e-6 else 0
        self.dists[i] = np.append(per_class, per_class.sum())  # and its total

    def _more(self, n):
        """Room for a level's ``n`` new (open) nodes, made once per level."""
        more = np.full((n, 7), -1, np.int64)
        more[:, c45.ATTR] = levels.OPEN
        self.nodes = np.vstack([self.nodes, more])
        self.thresholds = np.concatenate([self.thresholds, np.zeros(n)])
        self.dists += [None] * n
        self.chain += [0] * n

    def _split(self, i, a, kind, threshold, val, dist, tot, first):
        """Node ``i`` split, its children the open nodes from ``first`` on."""
        row = self.nodes[i]
        row[c45.ATTR], row[c45.KIND], row[c45.VALUE] = a, kind, val
        row[c45.BAGS], row[c45.CHILD], row[c45.EMPTY] = len(dist), first, 0
        self.thresholds[i] = threshold
        self.dists[i] = np.concatenate([dist.ravel(), tot])  # as ``grow`` lays them out
        self.fracs[i] = c45.shares(tot, len(dist))

    def flat(self):
        """(nodes, thresholds, dists) as ``grow.fit`` returns them."""
        offsets = np.cumsum([0] + [d.size for d in self.dists])
        nodes = self.nodes.copy()
        nodes[:, c45.DIST] = offsets[:-1]
        return nodes, self.thresholds.copy(), np.concatenate(
            [d.ravel() for d in self.dists])

    def route(self):
        """The routing of a block's rows (``levels.route``) by the tree as it is: a
        plain function to ship to the workers."""
        cols, nodes, thresholds = self.cols, self.nodes.copy(), self.thresholds.copy()
        fracs = dict(self.fracs)
        return lambda X, w: levels.route(X, w, cols, nodes, thresholds, fracs)

    def _level(self):
        """{(node, attribute): that attribute's best split at that open node}."""
        p, t, cols, buckets = self.frame.p, self.t, self.cols, self.buckets
        n_values, k, opt, exact = self.n_values, self.k, self.opt, self.exact
        route = self.route()

        def rows(batches):
            for X, w in frames.matrices(batches, p):
                X, w = frames.labelled(X, w, t)
                if not len(X):
                    continue
                key = None if exact else frames.hashed(X, w)
                at, node, wt = route(X, w)
                if not len(at):
                    continue
                bucket = node % buckets
                cls = X[at, t].astype(np.int32)
                for b in np.unique(bucket):
                    here = bucket == b
                    r, w_ = at[here], wt[here]
                    same = {"bucket": pa.array([b], pa.int32()),
                            "node": [node[here].astype(np.int32).tobytes()],
                            "cls": [cls[here].tobytes()],
                            # weights of one are not sent: most rows' (see scored)
                            "weight": [b"" if (w_ == 1.0).all() else w_.tobytes()],
                            "key": [b"" if key is None else key[r].tobytes()]}
                    for a, j in enumerate(cols):
                        yield pa.RecordBatch.from_pydict({  # in the order of ROWS
                            "attr": pa.array([a], pa.int32()), "bucket": same["bucket"],
                            "node": same["node"], "value": [X[r, j].tobytes()],
                            **{name: same[name] for name in ("cls", "weight", "key")}})

        def scored(table):  # one attribute's rows of a bucket of nodes, on a worker
            a = table.column("attr")[0].as_py()
            nodes_ = [np.frombuffer(b, np.int32) for b in table.column("node").to_pylist()]
            value_, cls, key = (
                np.concatenate([np.frombuffer(b, dtype) for b in table.column(name)
                                .to_pylist()])
                for name, dtype in (("value", np.float64), ("cls", np.int32),
                                    ("key", np.uint64)))
            node = np.concatenate(nodes_)
            weight = np.concatenate([np.frombuffer(b, np.float64) if b else np.ones(len(n))
                                     for b, n in zip(table.column("weight").to_pylist(),
                                                     nodes_)])
            # a node's rows together; in an order of their values (the hash, sent
            # unless the table is exact) where their weights are not whole, so that
            # their sums come out the same
            order = np.argsort(node, kind="stable")
            node, value_, cls, weight = node[order], value_[order], cls[order], \
                weight[order]
            key = None if exact else key[order]
            starts = np.flatnonzero(np.r_[True, node[1:] != node[:-1]])
            node = node.astype(np.int64)
            out = {name: [] for name in ("node", "gain", "ratio", "mid", "val", "rows",
                                         "per_class", "dist", "tot", "low", "high",
                                         "left", "missing")}
            for s, e in zip(starts, np.r_[starts[1:], len(node)]):
                here = slice(s, e)
                whole = bool((weight[here] == np.floor(weight[here])).all())
                if not whole:
                    here = s + np.argsort(key[here], kind="stable")
                got = levels.best_split(value_[here], cls[here], weight[here],
                                        int(n_values[a]), k, float(opt.min_leaf),
                                        opt.mdl_correction, opt.binary_splits, whole)
                dist, tot = got.pop("dist"), got.pop("tot")
                got.update(node=int(node[s]), rows=e - s, val=int(got["val"]),
                           per_class=got["per_class"].tolist(),
                           dist=[] if dist is None else dist.ravel().tolist(),
                           tot=[] if tot is None else tot.tolist())
                for name in out:
                    out[name].append(got[name])
            return pa.table({"node": pa.array(out["node"], pa.int64()),
                             "attr": pa.array([a] * len(out["node"]), pa.int32()),
                             **{name: pa.array(out[name], pa.float64())
                                for name in ("gain", "ratio", "mid")},
                             "val": pa.array(out["val"], pa.int32()),
                             "rows": pa.array(out["rows"], pa.int64()),
                             **{name: pa.array(out[name], pa.list_(pa.float64()))
                                for name in ("per_class", "dist", "tot")},
                             **{name: pa.array(out[name], pa.float64())
                                for name in ("low", "high", "left")},
                             "missing": pa.array(out["missing"], pa.int64())})

        got = self.frame.blocks.mapInArrow(rows, ROWS).groupBy("attr", "bucket") \
            .applyInArrow(scored, SPLITS).collect()
        return {(r["node"], r["attr"]): r.asDict() for r in got}

    def _snapped(self, wanted):
        """{node: threshold} for the numeric splits ``wanted`` (node, attribute,
        midpoint): each midpoint moved onto a value of the whole table."""
        if not wanted:
            return {}
        p, cols = self.frame.p, self.cols
        asks = [(int(cols[a]), mid) for _, a, mid in wanted]

        def tops(batches):  # per ask, this partition's two largest values <= mid + 1e-6
            found = [[None, None] for _ in asks]
            for X, _ in frames.matrices(batches, p):
                for j in {j for j, _ in asks}:
                    u = np.unique(X[:, j])  # sorted, NaN last
                    u = u[:len(u) - int(np.isnan(u).sum())]
                    for q, (jq, mid) in enumerate(asks):
                        if jq != j:
                            continue
                        at = int(np.searchsorted(u, mid, "right"))
                        while at < len(u) and u[at] - mid < c45.SMALL:
                            at += 1
                        while at > 0 and not u[at - 1] - mid < c45.SMALL:
                            at -= 1
                        for x in u[max(at - 2, 0):at][::-1]:
                            found[q] = _top_two(found[q], float(x))
            return {"found": found}

        parts = frames.run_pass(self.frame.blocks, tops)
        out = {}
        for q, (i, _, _) in enumerate(wanted):
            best = [None, None]
            for part in parts:
                for x in part["found"][q]:
                    if x is not None:
                        best = _top_two(best, x)
            out[i] = levels.snapped(best[0], best[1])
        return out

    def _walk(self, across=False):
        """The thresholds J48 places by walking the table's rows in order
        (``levels.walk_steps``) at the nodes waiting for one: the rows sorted as a
        single-machine fit orders them (``dataset.canonical_order``: by the bits of
        the numeric columns, the nominal codes, then the weight), each part walked
        on its own worker, the parts composed in order on the driver. ``across``:
        ``levels.walked``'s."""
        if not self.walks:
            return
        frame, p = self.frame, self.frame.p
        keys = sorted(range(p), key=lambda j: frame.kinds[j] != NUMERIC)
        names = [f"k{q}" for q in range(p + 1)]
        asks = [(keys.index(j), mid) for j, mid, *_ in self.walks.values()]

        def bits(batches):
            for X, w in frames.matrices(batches, p):
                b = np.column_stack([X[:, keys], w]).view(np.int64)
                yield pa.RecordBatch.from_arrays([pa.array(b[:, q]) for q in
                                                  range(p + 1)], names=names)

        def steps(batches):
            parts = [np.column_stack([b.column(q).to_numpy() for q in range(p + 1)])
                     for b in batches]
            b = np.concatenate(parts) if parts else np.empty((0, p + 1), np.int64)
            out = []
            for q, mid in asks:
                v = np.ascontiguousarray(b[:, q]).view(np.float64)
                bounds, results = levels.walk_steps(v[v - mid < c45.SMALL])
                out.append([bounds.tolist(), results.tolist()])
            return {"steps": out}

        schema = ", ".join(f"{n} long" for n in names)
        def sort():
            return frame.blocks.mapInArrow(bits, schema).orderBy(*names)

        # a tree whose thresholds are walked at their levels (``across``) walks at each:
        # the rows are then sorted once and kept
        ordered = frame.keep("c45 order", sort) if across or "c45 order" in frame.kept \
            else sort()
        parts = frames.run_pass(ordered, steps)
        LAST["walked"] += len(self.walks)
        for q, (i, (_, _, top, low, high, left, missing)) in enumerate(self.walks.items()):
            run = self.runs and missing > 0 and self.chain[i] < c45.CHAIN
            self.thresholds[i], one_way = levels.walked(
                [part["steps"][q] for part in parts], left, low, high, top, across, run)
            LAST["below_top"] += bool(self.thresholds[i] != top)
            if one_way:
                child = self.nodes[i, c45.CHILD]
                for c in range(child, child + self.nodes[i, c45.BAGS]):
                    self.chain[c] = self.chain[i] + 1
                self.deepest = max(self.deepest, self.chain[i] + 1)
        self.walks.clear()


def _top_two(best, x):
    """The two largest distinct values of ``best`` and ``x``."""
    top, second = best
    if top is None or x > top:
        return [x, top]
    if x < top and (second is None or x > second):
        return [top, x]
    return best


class _Raiser:
    """``grow.prune`` with subtree raising, on the driver. J48 prunes a node once
    its branches are pruned, and nodes of disjoint subtrees do not depend on each
    other, so the nodes are taken in waves: every node whose branches are done.
    A wave's raising tests need each node's rows passed down its largest branch:
    passes over the table (``_through``). A node that raises its branch takes the
    branch's split, its subtree's class weights become the node's rows', and its
    subtree is pruned again, as J48 does."""

    def __init__(self, grower, nodes, thresholds, dists, cf, z):
        self.grower, self.cf, self.z, self.k = grower, cf, z, grower.k
        self.nodes, self.thresholds, self.dists = nodes, thresholds, dists
        self.raised = self.passes = 0

    def prune(self):
        nodes, k, cf, z = self.nodes, self.k, self.cf, self.z
        done = set()
        while True:
            inner = self._inner()
            wave = [i for i in inner if i not in done and all(
                c in done or nodes[c, c45.ATTR] < 0 for c in self._children(i))]
            if not wave:
                return self.nodes, self.thresholds, self.dists
            largest = {i: c45.largest_branch(self.dists, nodes, i, k) for i in wave}
            passed = self._through({i: c for i, c in largest.items()
                                    if nodes[c, c45.ATTR] >= 0})
            for i in wave:
                as_leaf = c45.estimated_errors(c45.node_classes(self.dists, nodes, i, k),
                                               cf, z)
                c = largest[i]
                branch = passed[i][0] if i in passed else as_leaf
                as_tree = c45._subtree_errors(nodes, self.dists, i, k, cf, z)
                if as_leaf - (as_tree + 0.1) < 1e-6 and as_leaf - (branch + 0.1) < 1e-6:
                    c45._make_leaf(nodes, self.dists, i, k)
                elif branch - (as_tree + 0.1) < 1e-6:
                    c45.take_split(nodes, self.thresholds, i, c)
                    for s, d in passed[i][1].items():
                        at = i if s == c else s
                        self.dists[nodes[at, c45.DIST]:nodes[at, c45.DIST] + d.size] = \
                            d.ravel()
                        if nodes[at, c45.ATTR] < 0 and abs(d[-1]) >= 1e-6:
                            nodes[at, c45.EMPTY] = 0
                    done -= set(self._below(i))  # pruned again, with the node's rows
                    self.raised += 1
                    continue
                done.add(i)

    def _children(self, i):
        first = self.nodes[i, c45.CHILD]
        return range(first, first + self.nodes[i, c45.BAGS])

    def _below(self, i):
        """Node ``i`` and every node under it."""
        out, stack = [], [i]
        while stack:
            j = stack.pop()
            out.append(j)
            if self.nodes[j, c45.ATTR] >= 0:
                stack.extend(self._children(j))
        return out

    def _inner(self):
        return [j for j in self._below(0) if self.nodes[j, c45.ATTR] >= 0]

    def _through(self, asks):
        """{node i: (estimated errors of i's rows passed down subtree c, {each node
        of that subtree: the class weights those rows give it (per branch where it
        splits)})} for ``asks`` {i: c}. A row whose value is missing at a node of
        the subtree is spread by the shares of the weight that the node's rows
        give its branches: the first pass waits at such a node until those shares
        are known, the next takes the row further."""
        if not asks:
            return {}
        shares = {}  # (i, node of the subtree): shares of its branches, known
        while True:
            sums = self._pass(asks, shares)
            more = False
            for i, c in asks.items():
                for s in self._complete(c, i, sums, shares):
                    stat = sums.get((i, s))
                    if stat is not None and "missing" in stat and \
                            (i, s) not in shares and stat["missing"].sum() > 0:
                        shares[(i, s)] = c45.shares(c45.totals_of(stat["known"]),
                                                    len(stat["known"]))
                        more = True
            if not more:
                break
        out = {}
        for i, c in asks.items():
            errors, dists = 0.0, {}
            for s in self._below(c):
                stat = sums.get((i, s))
                if self.nodes[s, c45.ATTR] < 0:
                    per_class = np.zeros(self.k) if stat is None else stat["leaf"]
                    errors += c45.estimated_errors(per_class, self.cf, self.z)
                    dists[s] = np.append(per_class, per_class.sum())  # and its total
                else:  # the matrix and its totals, as ``grow`` lays them out
                    nb = self.nodes[s, c45.BAGS]
                    known = np.zeros((nb, self.k)) if stat is None else stat["known"]
                    missing = np.zeros(self.k) if stat is None else stat["missing"]
                    dist, tot = known, c45.totals_of(known)
                    if missing.sum() > 0:
                        share = c45.shares(tot, nb)
                        dist = known + share[:, None] * missing[None, :]
                        tot[:nb] += share * missing.sum()
                        tot[nb:] += np.append(missing, missing.sum())
                    dists[s] = np.concatenate([dist.ravel(), tot])
            out[i] = errors, dists
        return out

    def _complete(self, c, i, sums, shares):
        """The internal nodes of subtree ``c`` whose rows (of node ``i``) have all
        arrived: none waits at a node above them."""
        out, stack = [], [c]
        while stack:
            s = stack.pop()
            if self.nodes[s, c45.ATTR] < 0:
                continue
            out.append(s)
            stat = sums.get((i, s))
            waiting = stat is not None and stat["missing"].sum() > 0 and \
                (i, s) not in shares
            if not waiting:
                stack.extend(self._children(s))
        return out

    def _pass(self, asks, shares):
        """One pass: {(i, node): its sums} for the rows of each asked node ``i``
        passed down ``asks[i]``'s subtree, ``shares`` spreading missing values."""
        g = self.grower
        self.passes += 1
        p, t, k, cols = g.frame.p, g.t, self.k, g.cols
        nodes, thresholds = self.nodes.copy(), self.thresholds.copy()
        fracs = {j: c45.node_shares(self.dists, nodes, j, k)
                 for j in range(len(nodes)) if nodes[j, c45.ATTR] >= 0}
        stops = nodes.copy()
        for i in asks:
            stops[i, c45.ATTR] = levels.OPEN
        asks, shares = dict(asks), dict(shares)
        branch_of = np.full(len(nodes), -1, np.int64)  # an asked node's largest branch
        branch_of[list(asks)] = list(asks.values())

        def part(batches):
            got = {}
            for X, w in frames.matrices(batches, p):
                X, w = frames.labelled(X, w, t)
                rows, at, wt = levels.route(X, w, cols, stops, thresholds, fracs)
                start = branch_of[at]
                levels.through(X, X[:, t].astype(np.int64), cols, nodes, thresholds,
                               rows, at, start, wt, shares, k, got)
            return {"sums": [[i, s, {key: v.tolist() for key, v in stat.items()}]
                             for (i, s), stat in got.items()]}

        out = {}
        for q in frames.run_pass(g.frame.blocks, part):
            for i, s, stat in q["sums"]:
                for key, v in stat.items():
                    levels.added(out, (i, s), key, np.array(v))
        return {key: levels.totals(stat) for key, stat in out.items()}
