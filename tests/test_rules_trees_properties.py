"""Property tests of the trees and rule learners on small random data, against
brute force: every node of an unpruned REPTree holds exactly the rows its path's
tests select, with their class weights (nominal target) or their weight, mean and
sum of squared errors (numeric target); each PART rule holds the class weights of
the rows its conditions select among those the rules before it left; Ridor's
default rule holds the weight of every other class; each RIPPER rule's coverage,
errors and class distribution are those of the rows it is the first rule to cover;
every node of a CART tree, pruned or not, holds the class weights of the rows its
path selects, and its numeric split is the reference's cut with rows missing the
value spread at every cut; and the SQL of a PART, Ridor, RIPPER or CART model gives
what scoring gives, missing values included."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duckmine
from duckmine.algorithms import contract
from duckmine.algorithms.c45 import grow as c45
from duckmine.algorithms.dataset import Attribute, Dataset
from duckmine.algorithms.trees import reptree

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def tables(draw, numeric_target):
    n = draw(st.integers(4, 40))
    k = draw(st.integers(2, 3))
    a = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    b = draw(st.lists(st.sampled_from([0.0, 1.5, 2.0, 3.25, 7.0]), min_size=n, max_size=n))
    if numeric_target:
        y = draw(st.lists(st.sampled_from([0.0, 1.0, 2.5, 10.0]), min_size=n, max_size=n)
                 .filter(lambda v: len(set(v)) > 1))
    else:
        y = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)
                 .filter(lambda v: len(set(v)) > 1))
    w = draw(st.lists(st.sampled_from([1.0, 0.5, 2.0]), min_size=n, max_size=n))
    return a, b, y, w, k


def dataset(a, b, y, w, k, numeric_target):
    target = Attribute("y", "numeric") if numeric_target else \
        Attribute("y", "nominal", tuple(f"c{c}" for c in range(k)))
    attributes = [Attribute("a", "nominal", ("p", "q", "r")), Attribute("b", "numeric"),
                  target]
    columns = [np.array(a, np.float64), np.array(b, np.float64), np.array(y, np.float64)]
    return Dataset(attributes, columns, np.array(w, np.float64))


def node_rows(model, data):
    """Per node, the mask of training rows its path's tests select."""
    nd = model.nodes
    masks = {0: np.ones(data.n, np.bool_)}
    for i, kids in enumerate(nd["children"]):
        a = nd["attr"][i]
        for branch, c in enumerate(kids):
            x = data.columns[a]
            if data.attributes[a].nominal:
                test = x == branch
            else:
                test = x < nd["cut"][i] if branch == 0 else x >= nd["cut"][i]
            masks[c] = masks[i] & test
    return masks


def fit(data, learner="rep_tree", **given):
    decl = contract.learners()[learner]
    options = decl.options(learner, given or {"pruned": False, "min_leaf": 1})
    return decl.train(learner, data, "y", options)


@given(tables(numeric_target=False))
@SETTINGS
def test_nodes_hold_their_rows_class_weights(table):
    a, b, y, w, k = table
    data = dataset(*table, numeric_target=False)
    model = fit(data)
    for i, mask in node_rows(model, data).items():
        want = np.bincount(np.array(y)[mask], np.array(w)[mask], minlength=k)
        np.testing.assert_allclose(model.nodes["dist"][i], want, atol=1e-9)


@given(st.integers(0, 2**31))
@settings(max_examples=5, deadline=None)
def test_rep_tree_of_an_attribute_of_many_values_holds_its_rows(seed):
    """A nominal attribute of more values than a byte numbers: the growth's row
    branches take 32 bits, and every node still holds its rows' class weights."""
    rng = np.random.default_rng(seed)
    n, m = 600, 150
    a = rng.integers(0, m, n)
    b = rng.choice([0.0, 1.5, 2.0, 3.25, 7.0], n)
    y = (a % 2 + (rng.random(n) < 0.1)) % 2
    attributes = [Attribute("a", "nominal", tuple(f"v{v}" for v in range(m))),
                  Attribute("b", "numeric"), Attribute("y", "nominal", ("c0", "c1"))]
    data = Dataset(attributes, [a.astype(float), b, y.astype(float)], np.ones(n))
    model = fit(data)
    assert 0 in model.nodes["attr"]  # split on the attribute of many values
    for i, mask in node_rows(model, data).items():
        want = np.bincount(y[mask], minlength=2)
        np.testing.assert_allclose(model.nodes["dist"][i], want, atol=1e-9)


@given(tables(numeric_target=True))
@SETTINGS
def test_nodes_hold_their_rows_weight_mean_and_squared_error(table):
    a, b, y, w, k = table
    data = dataset(*table, numeric_target=True)
    model = fit(data)
    y, w = np.array(y), np.array(w)
    for i, mask in node_rows(model, data).items():
        weight = w[mask].sum()
        sse, total = model.nodes["dist"][i]
        assert abs(total - weight) < 1e-9
        if weight > 0:
            mean = (w[mask] * y[mask]).sum() / weight
            assert abs(model.nodes["probs"][i][0] - mean) < 1e-9
            assert abs(sse - (w[mask] * (y[mask] - mean) ** 2).sum()) < 1e-6


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 2), st.integers(1, 3)),
                min_size=1, max_size=60),
       st.integers(0, 10), st.booleans())
@SETTINGS
def test_rep_tree_sweep_of_counts_is_the_sweep_of_logarithms(rows, missing, totals):
    """On whole weights, the sweep that looks x log x up and passes over cuts
    without dividing chooses REPTree's cut of largest gain as the sweep of
    logarithms does: the same cut, the same class weights on each side (ties of
    values and of gains, and missing values, included)."""
    rows = sorted(rows)
    x = np.array([v for v, _, _ in rows], float)
    y = np.array([c for _, c, _ in rows], float)
    w = np.array([u for _, _, u in rows], float)
    x[len(x) - min(missing, len(x)):] = np.nan
    table = reptree.xlogx_table(int(w.sum()))
    node = np.bincount(y.astype(int), w, minlength=3) if totals and missing == 0 \
        else np.empty(0)
    want, got = np.full((2, 3), np.nan), np.full((2, 3), np.nan)  # (filled whole)
    by_gain = reptree._best_cut_by_gain(x, y, w, want, np.empty((2, 3)))
    by_counts = reptree._best_cut_by_counts(x, y, w, 3, table, node, got,
                                            np.full((2, 3), -1))
    assert np.array_equal(by_counts, by_gain, equal_nan=True)  # the cut, the end
    assert np.array_equal(got, want)


def satisfies(condition, x):
    """Whether the values ``x`` (none missing) meet one PART condition."""
    a, kind, threshold, value, branch, _ = condition
    if kind == c45.NUMERIC_SPLIT:
        return x <= threshold if branch == 0 else x > threshold
    if kind == c45.NOMINAL_SPLIT:
        return x == branch
    return x == value if branch == 0 else x != value


@given(tables(numeric_target=False), st.booleans(), st.booleans())
@SETTINGS
def test_part_rules_hold_the_rows_they_select(table, pruned, binary):
    a, b, y, w, k = table
    data = dataset(*table, numeric_target=False)
    model = fit(data, "part", pruned=pruned, binary_splits=binary, min_leaf=1)
    left = np.ones(data.n, np.bool_)
    for rule in model.rules:
        mask = left.copy()
        for c in rule["conditions"]:
            mask &= satisfies(c, data.columns[c[0]])
        want = np.bincount(np.array(y)[mask], np.array(w)[mask], minlength=k)
        np.testing.assert_allclose(rule["leaf"], want, atol=1e-9)
        left &= ~mask
    assert not left.any()  # the last rule takes what is left


@given(tables(numeric_target=False), st.booleans())
@SETTINGS
def test_ridor_default_rule_counts_the_other_classes(table, majority):
    a, b, y, w, k = table
    data = dataset(*table, numeric_target=False)
    model = fit(data, "ridor", majority_class=majority, min_weight=1.0)
    y, w = np.array(y), np.array(w)
    assert model.cover == pytest.approx(w.sum(), abs=1e-9)
    if model.root["rules"]:
        default = model.root["default"]
        assert model.error == pytest.approx(w[y != default].sum(), abs=1e-9)


@pytest.fixture(scope="module")
def con():
    c = duckmine.connect()
    yield c
    c.close()


@given(tables(numeric_target=False), st.sampled_from(["part", "ridor", "ripper", "cart"]),
       st.lists(st.sampled_from([None, "nan", "null_a"]), min_size=1, max_size=6))
@settings(max_examples=40, deadline=None)
def test_model_to_sql_gives_what_scoring_gives(con, table, learner, holes):
    """With NULLs, NaN and values training never saw among the scored rows."""
    a, b, y, w, k = table
    con.execute("CREATE OR REPLACE TEMP TABLE t (a VARCHAR, b DOUBLE, y VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                    [("pqr"[i], j, f"c{c}") for i, j, c in zip(a, b, y)])
    options = {"ridor": ", min_weight := 1.0", "ripper": ", min_weight := 1.0",
               "cart": ", min_leaf := 1, folds := 2"}.get(learner, ", min_leaf := 1")
    con.execute(f"CREATE OR REPLACE TEMP TABLE m AS SELECT {learner}_fit(t, 'y'{options}) "
                "AS m FROM t")
    scored = [("z", 1.5)] + [("p", None) if h is None else ("q", float(h))
                             if h == "nan" else (None, 2.0) for h in holes]
    con.executemany("INSERT INTO t VALUES (?, ?, NULL)", scored)
    expr = con.sql("SELECT model_to_sql(m, 'duckdb') FROM m").fetchall()[0][0]
    got = con.sql(f"SELECT {expr}, predict(m.m, t) FROM t, m").fetchall()
    assert [g for g, _ in got] == [p for _, p in got]


def whole(w, unit):
    """Whole weights: every one 1 (the presorted lists then keep none), or 1 and 2."""
    return [1.0] * len(w) if unit else [2.0 if x == 2.0 else 1.0 for x in w]


@given(tables(numeric_target=False), st.booleans(), st.booleans())
@SETTINGS
def test_ridor_presorted_rows_give_the_quicksorts_rules(table, all_data_error, unit):
    """With whole weights the presorted path and the reference's quicksort at every
    step give the same rules."""
    from duckmine.algorithms.rules import ridor

    a, b, y, w, k = table
    data = dataset(a, b, y, whole(w, unit), k, numeric_target=False)
    decl = contract.learners()["ridor"]
    options = decl.options("ridor", {"min_weight": 1.0, "all_data_error": all_data_error})
    keep = np.flatnonzero(~np.isnan(data.columns[2]))
    by_class = [keep[data.columns[2][keep] == c] for c in range(k)]
    roots = []
    for exact in (True, False):
        learner = ridor.Learner(data.columns, [x.nominal for x in data.attributes],
                                [len(x.values) for x in data.attributes], 2, data.weights,
                                options)
        assert learner.exact
        learner.exact = exact
        roots.append((learner.find_rules(by_class, 0), learner.error))
    assert roots[0] == roots[1]


def covers(rule, data):
    """Which rows (none missing) meet every condition of a RIPPER rule."""
    hit = np.ones(data.n, np.bool_)
    for a, value, split in rule["antds"]:
        x = data.columns[a]
        if data.attributes[a].nominal:
            hit &= x == value
        else:
            hit &= x <= split if value == 0 else x >= split
    return hit


@given(tables(numeric_target=False), st.booleans(), st.integers(0, 2))
@SETTINGS
def test_ripper_rules_hold_the_rows_they_cover_first(table, pruned, optimizations):
    a, b, y, w, k = table
    data = dataset(*table, numeric_target=False)
    model = fit(data, "ripper", pruned=pruned, optimizations=optimizations, folds=2,
                min_weight=1.0)
    y, w = np.array(y), np.array(w)
    left = np.ones(data.n, np.bool_)
    for rule in model.rules:
        mask = left & covers(rule, data)
        dist = np.bincount(y[mask], w[mask], minlength=k)
        assert rule["cover"] == pytest.approx(w[mask].sum(), abs=1e-9)
        assert rule["errors"] == pytest.approx(w[mask & (y != rule["class"])].sum(), abs=1e-9)
        np.testing.assert_allclose(rule["dist"], dist, atol=1e-9)
        left &= ~mask
    assert not left.any() and not model.rules[-1]["antds"]  # the default takes the rest
    proba = model.proba([data.columns[u] for u in model.used], data.n)
    taken = np.zeros(data.n, np.bool_)
    for rule, probs in zip(model.rules, model.probs()):
        mask = ~taken & covers(rule, data)
        np.testing.assert_allclose(proba[mask], np.tile(probs, (mask.sum(), 1)))
        taken |= mask


@given(tables(numeric_target=False), st.booleans(), st.booleans(), st.data())
@SETTINGS
def test_ripper_presorted_rows_give_the_quicksorts_rules(table, pruned, unit, draw):
    """With whole weights the presorted path and the reference's quicksort at every
    step give the same rules; the nominal attribute, missing in some rows, is
    counted from its list of rows with a value where at most half have one; the
    numeric one, read as ranks, has missing values and zeros of both signs."""
    from duckmine.algorithms.rules import ripper

    a, b, y, w, k = table
    holes = draw.draw(st.lists(st.booleans(), min_size=len(a), max_size=len(a)))
    a = [np.nan if h else v for v, h in zip(a, holes)]
    marks = draw.draw(st.lists(st.sampled_from(["", "", "", "?", "-"]), min_size=len(b),
                               max_size=len(b)))
    b = [np.nan if m == "?" else -v if m == "-" else v for v, m in zip(b, marks)]
    sparse = 2 * holes.count(False) <= len(a)
    data = dataset(a, b, y, whole(w, unit), k, numeric_target=False)
    decl = contract.learners()["ripper"]
    options = decl.options("ripper", {"min_weight": 1.0, "folds": 2, "pruned": pruned})
    models = []
    real = ripper.Fit.__init__
    for exact in (True, False):
        def init(self, *args, exact=exact):
            real(self, *args)
            assert self.presorted[0] and list(self.sparse) == [sparse, False, False]
            assert (len(self.presorted[5]) == 0) == (unit or max(self.w) == 1.0)
            self.presorted = (exact,) + self.presorted[1:]
        ripper.Fit.__init__ = init
        try:
            models.append(decl.train("ripper", data, "y", options).rules)
        finally:
            ripper.Fit.__init__ = real
    assert models[0] == models[1]


def cart_node_rows(model, data):
    """Per node of a CART model, the mask of training rows its path selects."""
    masks = {0: np.ones(data.n, np.bool_)}
    for i, node in enumerate(model.nodes):
        if node["attr"] < 0:
            continue
        x = data.columns[node["attr"]]
        if node["lefts"] is not None:
            left = np.asarray(node["lefts"])[x.astype(np.int64)]
        else:
            left = x < node["cut"]
        masks[node["children"][0]] = masks[i] & left
        masks[node["children"][1]] = masks[i] & ~left
    return masks


@given(tables(numeric_target=False), st.booleans(), st.booleans())
@SETTINGS
def test_cart_nodes_hold_their_rows_class_weights(table, pruned, heuristic):
    a, b, y, w, k = table
    data = dataset(*table, numeric_target=False)
    model = fit(data, "cart", pruned=pruned, heuristic=heuristic, min_leaf=1, folds=2)
    y, w = np.array(y), np.array(w)
    for i, mask in cart_node_rows(model, data).items():
        want = np.bincount(y[mask], w[mask], minlength=k)
        np.testing.assert_allclose(model.nodes[i]["dist"], want, atol=1e-9)


def spread_at_every_cut(x, y, w, k):
    """CART's numeric split as the reference finds it, in plain Python: at every
    cut the rows missing the value are spread over both sides one by one."""
    order = sorted(range(len(x)), key=lambda i: (np.isnan(x[i]), x[i]))
    known = [i for i in order if not np.isnan(x[i])]
    missing = [i for i in order if np.isnan(x[i])]

    def gini(d):
        t = sum(d)
        return 0.0 if t == 0 else 1 - sum((v / t) * (v / t) for v in d)

    parent = [0.0] * k
    right = [0.0] * k
    for i in order:
        parent[y[i]] += w[i]
        if not np.isnan(x[i]):
            right[y[i]] += w[i]
    total, pg = sum(parent), gini(parent)
    sides = [[0.0] * k, right]
    best, cut, dist = -np.finfo(float).max, np.nan, None
    current = x[known[0]]
    for i in known:
        if x[i] > current:
            temp = [list(s) for s in sides]
            if missing:
                shares = [sum(s) for s in sides]
                t = sum(shares)
                shares = [v / t for v in shares] if t != 0 else shares
                for m in missing:
                    for s in range(2):
                        temp[s][y[m]] += shares[s] * w[m]
            gain = 0.0 if total == 0 else (pg - sum(temp[0]) / total * gini(temp[0])
                                           - sum(temp[1]) / total * gini(temp[1]))
            if gain > best:
                best, cut, dist = gain, (x[i] + current) / 2.0, temp
        current = x[i]
        sides[0][y[i]] += w[i]
        sides[1][y[i]] -= w[i]
    return best, cut, dist


@given(st.integers(2, 4), st.data())
@settings(max_examples=200, deadline=None)
def test_cart_numeric_split_spreads_missing_rows_as_the_reference(k, data):
    """Cuts are weighed first from the missing rows' weight by class, and spread
    one by one only where they may win: the best cut, its gain and its sides' class
    weights are still those of spreading at every cut, to the bit."""
    from duckmine.algorithms.classes import class_codes
    from duckmine.algorithms.trees.cart import _numeric_split

    n = data.draw(st.integers(2, 60))
    x = data.draw(st.lists(st.one_of(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]),
                                     st.just(np.nan)), min_size=n, max_size=n))
    if all(np.isnan(v) for v in x):
        x[0] = 1.0
    y = data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    w = data.draw(st.lists(st.sampled_from([1.0, 0.1, 1 / 3, 2.5, 0.7]), min_size=n,
                           max_size=n))
    x, y, w = np.array(x), class_codes(y, k), np.array(w)  # as a fit holds them
    order = np.array(sorted(range(n), key=lambda i: (np.isnan(x[i]), x[i])), np.int32)
    gain, cut, dist = _numeric_split(x, y, order, w, k)
    want_gain, want_cut, want_dist = spread_at_every_cut(x, y, w, k)
    assert gain == want_gain
    assert cut == want_cut or (np.isnan(cut) and np.isnan(want_cut))
    if want_dist is not None:
        assert dist.tolist() == want_dist


def random_nodes(draw, max_nodes=120):
    """CART ``Nodes`` of random shape (grown depth first) whose nodes' errors as a
    leaf are their children's plus a few values, so that alphas tie, and splits
    save nothing at first or once a node below is cut."""
    from duckmine.algorithms.trees.cart import Nodes

    nodes = Nodes(2, 1)
    work = [(-1, 0, 0)]
    while work:
        parent, side, depth = work.pop()
        at = nodes.add(parent, side)
        nodes.has_probs[at] = True
        nodes.probs[at] = [0.5, 0.5]
        if depth < 9 and nodes.n + len(work) < max_nodes and draw(st.integers(0, 3)) > 0:
            nodes.cut[at] = 1.0
            work += [(at, 1, depth + 1), (at, 0, depth + 1)]
    for i in range(nodes.n - 1, -1, -1):  # children first
        extra = draw(st.sampled_from([0.0, 0.5, 1.0, 1.5, 3.0, 0.1, 0.2, 0.3, 1 / 3]))
        below = 0.0 if nodes.left[i] < 0 else \
            nodes.model_err[nodes.left[i]] + nodes.model_err[nodes.right[i]]
        nodes.model_err[i] = below + extra
    return nodes


def random_tree(draw, max_nodes=120):
    """A CART ``Tree`` of ``random_nodes``."""
    from duckmine.algorithms.trees.cost_complexity import Tree

    tree = Tree(random_nodes(draw, max_nodes), np.arange(1))
    # many rows round alphas (to 1e-10) alike, and a split may save nothing once
    # the link below it is cut
    tree.total = draw(st.sampled_from([1.0, 7.0, 50.0, 1e9, 3e10]))
    return tree


def pruned_by_whole_passes(tree, alpha=None):
    """The sequence of alphas (or, given ``alpha``, the tree pruned to it) as the
    reference works it out: every pass over the whole tree, after every cut."""
    from duckmine.algorithms.trees import cost_complexity as cc

    n = len(tree.left)
    tree.tree_err, tree.leaves = np.zeros(n), np.zeros(n, np.int64)
    tree.alpha, tree.changed = np.zeros(n), np.zeros(n, np.int64)

    def passes():
        cc._subtree_pass(tree.left, tree.right, tree.is_leaf, tree.model_err,
                         tree.tree_err, tree.leaves)
        count = cc._alphas_pass(tree.left, tree.right, tree.is_leaf, tree.attr_none,
                                tree.model_err, tree.tree_err, tree.leaves, tree.total,
                                tree.alpha, tree.changed)
        if count:
            cc._subtree_pass(tree.left, tree.right, tree.is_leaf, tree.model_err,
                             tree.tree_err, tree.leaves)

    def weakest():
        pick, stack = -1, [0]
        while stack:
            i = stack.pop()
            if tree.is_leaf[i]:
                continue
            if pick < 0 or tree.alpha[i] < tree.alpha[pick] or (
                    tree.alpha[i] == tree.alpha[pick] and tree.leaves[i] > tree.leaves[pick]):
                pick = i
            stack += [tree.right[i], tree.left[i]]
        return pick

    passes()
    alphas, previous = [0.0], None
    while (i := weakest()) >= 0 and (alpha is None or tree.alpha[i] <= alpha):
        if alpha is None and tree.alpha[i] != previous:
            alphas.append(tree.alpha[i])
            previous = tree.alpha[i]
        tree.is_leaf[i] = True
        if alpha is not None:
            tree.attr_none[i] = True
        passes()
    return alphas + [1.0]


@given(st.data())
@settings(max_examples=150, deadline=None)
def test_cart_pruning_cuts_what_whole_passes_cut(data):
    """Cutting the weakest link and updating only what the cut changes gives the
    sequence of alphas, and the tree pruned to an alpha, that passes over the
    whole tree after every cut give."""
    import copy

    tree = random_tree(data.draw)
    want = copy.deepcopy(tree)
    alphas, _, _ = tree.sequence(None)
    assert alphas == pruned_by_whole_passes(want)
    assert (tree.attr_none == want.attr_none).all()
    alpha = data.draw(st.sampled_from(alphas))
    tree.unprune()
    want.is_leaf[:] = want.left < 0
    tree.prune_to(alpha)
    pruned_by_whole_passes(want, alpha)
    assert (tree.is_leaf == want.is_leaf).all() and (tree.attr_none == want.attr_none).all()


def _subtree(nodes, i):
    """The Nodes of node ``i``'s subtree (numbered depth first: nodes i..end-1)."""
    from duckmine.algorithms.trees.cart import Nodes

    end, at = i + 1, i
    while at < end:  # a preorder subtree is a run of nodes: extend it to its last
        for child in (nodes.left[at], nodes.right[at]):
            end = max(end, child + 1) if child >= 0 else end
        at += 1
    out = Nodes(nodes.k, nodes.width)
    for _ in range(end - i):
        out.add(-1, 0)
    for name in nodes.columns:
        column = getattr(out, name)[:end - i]
        column[:] = getattr(nodes, name)[i:end]
        if name in ("left", "right"):
            column[column >= 0] -= i
    out.texts = {j - i: t for j, t in nodes.texts.items() if i <= j < end}
    return out, end


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_cart_subtrees_joined_into_their_holes_give_the_whole_tree(data):
    """The two growers' pieces, joined: a tree cut into a top, whose chosen nodes are
    holes, and the subtrees under them (each maybe with holes of its own), joins back
    into the same nodes, numbers and split texts."""
    from duckmine.algorithms.trees.cart import _Hole

    whole = random_nodes(data.draw)
    for i in range(whole.n):
        whole.dist[i] = [i, 2 * i]
        if whole.left[i] >= 0 and data.draw(st.booleans()):
            whole.texts[i] = f"(v{i})"

    def cut(nodes):  # a hole whose grown pieces are ``nodes`` cut again
        holes, keep, i = [], np.ones(nodes.n, bool), 1
        while i < nodes.n:
            if data.draw(st.integers(0, 5)) == 0:
                sub, end = _subtree(nodes, i)
                holes.append((i, cut(sub)))
                keep[i + 1:end] = False
                i = end
            else:
                i += 1
        top, _ = _subtree(nodes, 0)
        number = np.cumsum(keep) - 1  # the top's own numbers, holes kept
        for name in top.columns:
            column = getattr(top, name)[:top.n][keep]
            if name in ("left", "right"):
                column = np.where(column >= 0, number[np.maximum(column, 0)], -1)
            setattr(top, name, column.copy())
        top.texts = {int(number[j]): t for j, t in top.texts.items() if keep[j]}
        for j, _ in holes:  # a hole is a node not grown
            for name, (_, _, fill) in top.columns.items():
                getattr(top, name)[number[j]] = fill
            top.texts.pop(int(number[j]), None)
        top.n = int(keep.sum())
        hole = _Hole(None)
        hole.grown = (top, [(int(number[j]), h) for j, h in holes])
        return hole

    joined = cut(whole).filled()
    assert joined.n == whole.n and joined.texts == whole.texts
    for name in whole.columns:
        assert np.array_equal(getattr(joined, name)[:whole.n], getattr(whole, name)[:whole.n],
                              equal_nan=name in ("cut",)), name


@pytest.mark.parametrize("numeric_target,missing", [(False, False), (False, True),
                                                    (True, True)])
def test_rep_tree_hands_back_spare_columns_as_it_presorts_them(numeric_target, missing):
    """A spare Dataset's columns (read for this fit alone) go back to the system an
    attribute at a time as the presort finishes with each: the model is the one a
    Dataset that keeps its columns gives, so nothing reads a column handed back
    (its pages then read as zeros), and the columns are let go."""
    import sys

    rng = np.random.default_rng(7)
    n = 20_000  # each column spans whole pages
    a = rng.integers(0, 3, n).astype(np.float64)
    b = np.round(rng.normal(size=n), 2)
    c = rng.random(n)
    if missing:
        b[rng.random(n) < 0.05] = np.nan
        a[rng.random(n) < 0.05] = np.nan
    if numeric_target:
        y = 2 * b + c  # missing where b is
    else:
        y = (b + c > 0.8).astype(np.float64)
        flip = rng.random(n) < 0.1
        y[flip] = 1.0 - y[flip]
    target = Attribute("y", "numeric") if numeric_target else \
        Attribute("y", "nominal", ("p", "q"))
    attributes = [Attribute("a", "nominal", ("p", "q", "r")), Attribute("b", "numeric"),
                  Attribute("c", "numeric"), target]
    matrix = np.empty((4, n))  # a matrix of its own, as the rows a scan feeds are
    matrix[:] = [a, b, c, y]
    kept = Dataset(attributes, [row.copy() for row in matrix], np.ones(n))
    spare = Dataset(attributes, list(matrix), np.ones(n), spare=True)
    options = {"seed": 3}
    assert fit(spare, **options).text() == fit(kept, **options).text()
    assert spare.columns == []
    if sys.platform.startswith("linux"):  # the attributes' pages were handed back
        assert not matrix[1, 1024:2048].any() and not matrix[2, 1024:2048].any()
