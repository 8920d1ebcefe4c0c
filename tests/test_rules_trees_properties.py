"""Property tests of the trees on small random data without missing values, against
brute force: every node of an unpruned REPTree holds exactly the rows its path's
tests select, with their class weights (nominal target) or their weight, mean and
sum of squared errors (numeric target)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from duckmine.algorithms import contract
from duckmine.algorithms.dataset import Attribute, Dataset

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


def fit(data):
    decl = contract.learners()["rep_tree"]
    options = decl.options("rep_tree", {"pruned": False, "min_leaf": 1})
    return decl.train("rep_tree", data, "y", options)


@given(tables(numeric_target=False))
@SETTINGS
def test_nodes_hold_their_rows_class_weights(table):
    a, b, y, w, k = table
    data = dataset(*table, numeric_target=False)
    model = fit(data)
    for i, mask in node_rows(model, data).items():
        want = np.bincount(np.array(y)[mask], np.array(w)[mask], minlength=k)
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
