"""Property tests of M5' model trees on small random tables (ties, missing values,
nominal attributes, weights) against brute-force computations: node counts,
leaf means of regression trees, the routing and formulas behind every prediction,
and the covering of M5 rules."""

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from duckmine.algorithms.dataset import NOMINAL, NUMERIC, Attribute, Dataset
from duckmine.algorithms.m5.grow import Options
from duckmine.algorithms.m5.model import fit_m5_rules, fit_m5p

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def tables(draw):
    n = draw(st.integers(2, 60))
    cells = st.one_of(st.none(), st.integers(0, 4))
    numeric = draw(st.integers(1, 3))
    cols = [np.array([np.nan if v is None else float(v)
                      for v in draw(st.lists(cells, min_size=n, max_size=n))])
            for _ in range(numeric)]
    attrs = [Attribute(f"x{i}", NUMERIC) for i in range(numeric)]
    if draw(st.booleans()):
        codes = draw(st.lists(st.one_of(st.none(), st.integers(0, 2)), min_size=n,
                              max_size=n))
        cols.append(np.array([np.nan if v is None else float(v) for v in codes]))
        attrs.append(Attribute("c", NOMINAL, ("p", "q", "r")))
    y = np.array(draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)), float)
    y[: draw(st.integers(0, 2))] = np.nan  # a few rows without a target
    w = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n, max_size=n)))
    return Dataset(attrs + [Attribute("y", NUMERIC)], cols + [y], w)


def coded(model, data):
    t = len(data.attributes) - 1
    keep = ~np.isnan(data.columns[t])
    return model.filters.apply([c[keep] for c in data.columns[:t]], int(keep.sum())), \
        data.columns[t][keep], data.weights[keep]


def paths(model, x):
    """Per node of the tree, the mask of coded rows whose path reaches it."""
    t = model.tree
    reach = [None] * len(t["attr"])
    reach[0] = np.ones(x.shape[1], bool)
    for u in range(len(t["attr"])):
        a = t["attr"][u]
        if a >= 0:
            go_left = x[a] <= t["split"][u]
            reach[t["left"][u]] = reach[u] & go_left
            reach[t["right"][u]] = reach[u] & ~go_left
    return reach


@SETTINGS
@given(tables(), st.sampled_from([1.0, 2.0, 4.0, 10.0]))
def test_regression_tree_counts_and_means_are_brute_force(data, min_leaf):
    y_all = data.columns[-1]
    if (~np.isnan(y_all)).sum() < 2:
        return
    model = fit_m5p(data, len(data.attributes) - 1,
                    Options(min_leaf, pruned=False, smoothed=False, regression_tree=True))
    x, y, w = coded(model, data)
    reach = paths(model, x)
    for u, mask in enumerate(reach):
        assert model.tree["count"][u] == mask.sum()
        if model.tree["attr"][u] < 0:  # a leaf: the weighted mean of its rows
            mean = np.sum(w[mask] * y[mask]) / np.sum(w[mask]) if w[mask].sum() > 0 else 0.0
            assert model.models[u].terms == []
            assert abs(model.models[u].intercept - mean) <= 1e-9 * max(1.0, abs(mean))
            assert mask.sum() >= 1


@SETTINGS
@given(tables(), st.booleans(), st.booleans())
def test_predictions_follow_the_tree_and_its_formulas(data, pruned, smoothed):
    if (~np.isnan(data.columns[-1])).sum() < 2:
        return
    model = fit_m5p(data, len(data.attributes) - 1, Options(4.0, pruned, smoothed))
    x, y, _ = coded(model, data)
    reach = paths(model, x)
    expected = np.full(x.shape[1], np.nan)
    for u, mask in enumerate(reach):
        if model.tree["attr"][u] < 0:
            lm = model.models[u]
            value = np.zeros(x.shape[1])
            for j, c in lm.terms:
                value += c * x[j]
            expected[mask] = (value + lm.intercept)[mask]
    keep = ~np.isnan(data.columns[-1])
    got = model.predict([c[keep] for c in
                         (data.columns[a] for a in model.used)], int(keep.sum()))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert sum(model.tree["count"][u] for u in model.leaves) == keep.sum()


@SETTINGS
@given(tables())
def test_rules_cover_every_training_row_once_in_order(data):
    if (~np.isnan(data.columns[-1])).sum() < 2:
        return
    model = fit_m5_rules(data, len(data.attributes) - 1, Options())
    x, _, _ = coded(model, data)
    left = np.ones(x.shape[1], bool)
    for r in model.rules:
        holds = np.ones(x.shape[1], bool)
        for a, v, is_left in r["conditions"]:
            holds &= (x[a] <= v) == is_left
        assert r["coverage"] == (holds & left).sum() > 0
        left &= ~holds
    assert not left.any()  # the list ends when every row is covered


@SETTINGS
@given(tables(), st.booleans(), st.booleans(), st.sampled_from([1.0, 2.0, 4.0]),
       st.booleans())
def test_wide_nodes_and_subtrees_build_the_one_tree(data, pruned, smoothed, min_leaf,
                                                    rules):
    """However many nodes are grown as the top (a depth at a time, their models on
    the coded table arranged in place) and however many as subtrees (depth first),
    and however the table is coded (at once or a column at a time), the model is the
    one value; a spare Dataset gives it too, and is let go."""
    from duckmine.algorithms.m5 import grow

    def fit(data):  # as text: a node without known targets has rms NaN, and nan != nan
        learner = fit_m5_rules if rules else fit_m5p
        return json.dumps(learner(data, len(data.attributes) - 1, options).to_json())

    options = Options(min_leaf=min_leaf, pruned=pruned, smoothed=smoothed)
    whole = fit(data)
    saved = grow.SUBTREE_ROWS, grow.CODED_WHOLE_ROWS
    try:
        grow.SUBTREE_ROWS = 1  # every node of over an eighth of the rows is a top node
        grow.CODED_WHOLE_ROWS = 0  # and the table coded a column at a time
        assert fit(data) == whole
        spare = Dataset(data.attributes, list(data.columns), data.weights, spare=True)
        assert fit(spare) == whole
        assert spare.columns == []
    finally:
        grow.SUBTREE_ROWS, grow.CODED_WHOLE_ROWS = saved
