"""Property tests of ZeroR, 1R and naive Bayes on small random nominal data, against
counts done by brute force: the majority class, the best attribute and its rule,
and the Laplace-corrected counts behind every naive Bayes probability."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from duckmine.algorithms import contract
from duckmine.algorithms.dataset import Attribute, Dataset

SETTINGS = settings(max_examples=80, deadline=None)


@st.composite
def tables(draw):
    """Rows of 1 to 3 nominal attributes and a class (None: missing), with weights."""
    p = draw(st.integers(1, 3))
    k = draw(st.integers(2, 3))
    sizes = [draw(st.integers(1, 4)) for _ in range(p)]
    n = draw(st.integers(2, 30))
    cell = [st.one_of(st.none(), st.integers(0, s - 1)) for s in sizes]
    rows = draw(st.lists(st.tuples(*cell, st.integers(0, k - 1)), min_size=n, max_size=n)
                .filter(lambda rs: len({r[-1] for r in rs}) > 1))  # two classes or more
    weights = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n, max_size=n))
    return sizes, k, rows, weights


def dataset(sizes, k, rows, weights):
    attributes = [Attribute(f"a{j}", "nominal", tuple(f"v{v}" for v in range(s)))
                  for j, s in enumerate(sizes)]
    attributes.append(Attribute("class", "nominal", tuple(f"c{c}" for c in range(k))))
    columns = [np.array([np.nan if r[j] is None else r[j] for r in rows], np.float64)
               for j in range(len(sizes) + 1)]
    return Dataset(attributes, columns, np.array(weights, np.float64))


def fit(name, data, **options):
    decl = contract.learners()[name]
    return decl.train(name, data, "class", decl.options(name, options))


@given(tables())
@SETTINGS
def test_zero_r_is_the_smoothed_majority(table):
    sizes, k, rows, weights = table
    counts = [1.0 + sum(w for r, w in zip(rows, weights) if r[-1] == c) for c in range(k)]
    model = fit("zero_r", dataset(*table))
    assert model.best == counts.index(max(counts))
    np.testing.assert_allclose(model.dist, np.array(counts) / sum(counts))


@given(tables())
@SETTINGS
def test_one_r_picks_the_attribute_with_most_rows_right(table):
    sizes, k, rows, _ = table
    best = None
    for j, s in enumerate(sizes):
        correct = 0
        for v in [*range(s), None]:
            classes = [r[-1] for r in rows if r[j] == v]
            if classes:
                correct += max(classes.count(c) for c in range(k))
        if best is None or correct > best[0]:
            best = (correct, j)
    model = fit("one_r", dataset(*table))
    assert (model.correct, model.attribute) == best
    for v, c in enumerate(model.rule_classes):  # each value's majority (first of ties)
        classes = [r[-1] for r in rows if r[model.attribute] == v]
        want = max(range(k), key=lambda c: (classes.count(c), -c))
        assert c == (want if classes else 0)


@given(tables())
@SETTINGS
def test_naive_bayes_is_the_product_of_laplace_counts(table):
    sizes, k, rows, weights = table
    data = dataset(*table)
    model = fit("naive_bayes", data)
    proba = model.proba([data.columns[j] for j in range(len(sizes))], len(rows))
    prior = [1.0 + sum(w for r, w in zip(rows, weights) if r[-1] == c) for c in range(k)]
    for i, row in enumerate(rows):
        score = np.array(prior) / sum(prior)
        for j, s in enumerate(sizes):
            if row[j] is None:
                continue
            for c in range(k):
                hits = sum(w for r, w in zip(rows, weights) if r[-1] == c and r[j] == row[j])
                total = s + sum(w for r, w in zip(rows, weights)
                                if r[-1] == c and r[j] is not None)
                score[c] *= (1.0 + hits) / total
        np.testing.assert_allclose(proba[i], score / score.sum(), rtol=1e-12)
