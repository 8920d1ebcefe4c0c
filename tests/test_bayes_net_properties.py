"""Property tests of the Bayesian network classifiers on small random nominal
tables with missing values: the AD-tree and scans learn the same network, every
table entry is (count + alpha) / (row total + values * alpha) counted by brute
force, and probabilities of a row are the normalised product over the nodes."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from duckmine.algorithms.bayes import SCORES, SEARCHES
from duckmine.algorithms.bayes.model import Options, fit_bayes_net
from duckmine.algorithms.dataset import NOMINAL, Attribute, Dataset

SETTINGS = settings(max_examples=40, deadline=None)


@st.composite
def tables(draw):
    n = draw(st.integers(4, 50))
    p = draw(st.integers(1, 4))
    cards = [draw(st.integers(1, 3)) for _ in range(p)]
    cols = [np.array([np.nan if v is None else float(v) for v in draw(
        st.lists(st.one_of(st.none(), st.integers(0, k - 1)), min_size=n, max_size=n))])
        for k in cards]
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), float)
    y[:2] = [0, 1]  # both classes
    attrs = [Attribute(f"a{j}", NOMINAL, tuple(f"v{i}" for i in range(k)))
             for j, k in enumerate(cards)]
    return Dataset(attrs + [Attribute("y", NOMINAL, ("no", "yes"))], cols + [y])


@SETTINGS
@given(tables(), st.sampled_from(SEARCHES), st.sampled_from(SCORES), st.integers(0, 3),
       st.sampled_from([0.5, 1.0, 2.0]))
def test_tree_and_scans_agree_and_tables_are_counts(data, search, score, parents, alpha):
    t = len(data.attributes) - 1
    fits = [fit_bayes_net(data, t, Options(search, parents, score, alpha, tree))
            for tree in (True, False)]
    assert fits[0].parents == fits[1].parents
    for a, b in zip(fits[0].cpts, fits[1].cpts):
        np.testing.assert_array_equal(a, b)
    model = fits[0]
    # the coded training rows: missing values as the mode (first of the most common)
    X = np.column_stack(data.columns).copy()
    for j, a in enumerate(data.attributes):
        col = X[:, j]
        counts = np.bincount(col[~np.isnan(col)].astype(int), minlength=len(a.values))
        col[np.isnan(col)] = np.argmax(counts)
    X = X.astype(int)
    card = [len(a.values) for a in data.attributes]
    for node, (ps, cpt) in enumerate(zip(model.parents, model.cpts)):
        for row, config in enumerate(itertools.product(*(range(card[q]) for q in ps))):
            match = np.all([X[:, q] == v for q, v in zip(ps, config)], axis=0) \
                if ps else np.ones(len(X), bool)
            counts = np.bincount(X[match, node], minlength=card[node])
            np.testing.assert_allclose(cpt[row], (counts + alpha)
                                       / (match.sum() + card[node] * alpha))
    # probabilities: the normalised product of each class's table entries
    proba = model.proba([data.columns[j] for j in model.used], data.n)
    for i in range(len(X)):
        joint = []
        for c in range(2):
            x = X[i].copy()
            x[t] = c
            prod = 1.0
            for node, (ps, cpt) in enumerate(zip(model.parents, model.cpts)):
                row = 0
                for q in ps:
                    row = row * card[q] + x[q]
                prod *= cpt[row, x[node]]
            joint.append(prod)
        np.testing.assert_allclose(proba[i], np.array(joint) / sum(joint), rtol=1e-9)


@SETTINGS
@given(st.data(), st.integers(1, 40), st.integers(2, 5), st.sampled_from(SCORES))
def test_every_pair_given_the_class_is_scored_as_one_table_at_a_time(data, n, p, score):
    """TAN's scores of every node with the class and one other attribute as parents,
    from one kernel, are those of the tables counted one at a time (codes past an
    attribute's values, missing ones, not counted)."""
    from duckmine.algorithms.bayes import net

    card = [data.draw(st.integers(1, 3)) for _ in range(p)]
    codes = np.array([[data.draw(st.integers(0, c)) for c in card] for _ in range(n)],
                     np.int8).reshape(n, p)
    cls = data.draw(st.integers(0, p - 1))
    atts = [i for i in range(p) if i != cls]
    scorer = net.Scorer(net.Counts(codes, card, False), score)
    got = scorer.given_class_and(cls, atts)
    for i, h in enumerate(atts):
        for j, t in enumerate(atts):
            assert got[i, j] == (scorer(h, [cls, t]) if i != j else 0.0), (h, t)
