"""A C4.5 split's distribution and the shares that spread a row lacking the tested
value, against the reference's definition: its ``Distribution`` adds each row with
a value to its branch in order (each branch's, each class's and the overall weight
as running sums), then each row without one, spread by the branches' shares of the
known weight (``addInstWithUnknown``). A row is spread by a branch's running sum
over the overall one (``perBag / totaL``), and a pruned split becomes a leaf of its
running per-class sums. Those differ from sums of the class-weight matrix in their
last bits, which decided a tie of two classes in PART's cross-validation on 130
classes (``cli__many-classes__part_r.txt``), so the comparison here is exact."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from duckmine.algorithms.c45 import grow, levels
from duckmine.algorithms.c45.model import Tree
from duckmine.algorithms.classes import class_codes
from duckmine.udfs.models import model_of

from .conftest import arff_tables

SETTINGS = settings(max_examples=100, deadline=None)


def reference(y, w, sub, nb, k, merged=False):
    """The reference's Distribution, row by row in plain Python floats (IEEE
    doubles, as Java's): (per branch and class, per branch, per class, total).
    ``merged``: a binary split of a nominal value as it is chosen, its second branch
    the known rows' totals less the first (``Distribution(Distribution, int)``)."""
    cells = [[0.0] * k for _ in range(nb)]
    per_bag, per_class, total = [0.0] * nb, [0.0] * k, 0.0
    for c, wt, b in zip(y, w, sub):
        if b >= 0:
            cells[b][c] += wt
            per_bag[b] += wt
            per_class[c] += wt
            total += wt
    if merged:
        cells[1] = [per_class[c] - cells[0][c] for c in range(k)]
        per_bag[1] = total - per_bag[0]
    probs = [1.0 / nb] * nb if abs(total) < 1e-6 else [p / total for p in per_bag]
    for c, wt, b in zip(y, w, sub):
        if b < 0:
            per_class[c] += wt
            total += wt
            for j in range(nb):
                part = probs[j] * wt
                cells[j][c] += part
                per_bag[j] += part
    return cells, per_bag, per_class, total


@st.composite
def nodes(draw):
    """A node's rows: class codes, weights (whole, or fractions as spread rows
    carry), each row's branch (-1: its value is missing)."""
    n = draw(st.integers(1, 30))
    k = draw(st.integers(1, 4))
    nb = draw(st.integers(2, 4))
    y = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    whole = draw(st.booleans())
    weight = st.integers(1, 3).map(float) if whole else \
        st.floats(1e-3, 3.0, allow_nan=False, allow_infinity=False)
    w = draw(st.lists(weight, min_size=n, max_size=n))
    sub = draw(st.lists(st.integers(-1, nb - 1), min_size=n, max_size=n))
    merged = nb == 2 and draw(st.booleans())
    return y, w, sub, nb, k, merged


@SETTINGS
@given(nodes())
def test_distribution_and_shares_are_the_references_to_the_bit(node):
    y, w, sub, nb, k, merged = node
    dist, tot = grow.distribution(class_codes(y, k), np.arange(len(y), dtype=np.int32),
                                  np.array(w), np.array(sub, np.int32), nb, k, merged)
    cells, per_bag, per_class, total = reference(y, w, sub, nb, k, merged)
    assert dist.tolist() == cells
    assert tot.tolist() == per_bag + per_class + [total]
    want = [1.0 / nb] * nb if abs(total) < 1e-6 else [p / total for p in per_bag]
    assert grow.shares(tot, nb).tolist() == want


def test_spread_rows_share_by_running_sums_not_by_the_matrix():
    """A node where the two ways differ: one row with a value on one branch, two on
    the other, and three rows lacking it (as they would for any classes)."""
    y = [1, 1, 1, 1, 1, 1]
    sub = [0, 1, 1, -1, -1, -1]
    codes, w = class_codes(y, 2), np.ones(len(y))
    dist, tot = grow.distribution(codes, np.arange(len(y), dtype=np.int32), w,
                                  np.array(sub, np.int32), 2, 2, False)
    by_matrix = grow.shares(grow.totals_of(dist), 2)
    by_sums = grow.shares(tot, 2)
    assert by_sums.tolist() == [p / reference(y, w, sub, 2, 2)[3]
                                for p in reference(y, w, sub, 2, 2)[1]]
    assert by_matrix.tolist() != by_sums.tolist()  # the matrix's sums are off
    np.testing.assert_allclose(by_matrix, by_sums, rtol=1e-15)


def test_a_tree_keeps_its_totals_and_an_older_model_without_them_still_scores():
    con = arff_tables(["breast-cancer"])  # missing values
    value = con.sql("SELECT c45_fit(t, target := 'Class') FROM breast_cancer t").fetchall()
    con.close()
    model = model_of("c45", value[0][0])
    tree, k = model.tree, model.tree.n_classes
    body = tree.to_json()
    assert len(body["totals"]) == len(body["attr"])
    for a, t, d in zip(body["attr"], body["totals"], body["dist"]):
        assert len(t) == (1 if a < 0 else len(d) + k + 1)
        assert math.isclose(t[-1], sum(map(sum, d)), rel_tol=1e-12)
    again = Tree.from_json(body)
    assert [t.tolist() for t in again.totals] == body["totals"]
    older = dict(body)
    del older["totals"]  # a model stored before the totals were kept
    old = Tree.from_json(older)
    old.validate(model.attributes, k, model.target)
    for mine, theirs in zip(old.totals, again.totals):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 2), st.floats(1e-6, 1e3)), min_size=1,
                max_size=60), st.data())
def test_sums_over_parts_of_a_table_are_exact_however_it_is_split(rows, data):
    """C4.5 over a cluster sums the spread rows' fractional weights by cell in each
    part of the table (``levels.exact_cells``), adds the parts (``added``) and
    rounds once (``totals``): the correctly rounded sum, whatever the parts."""
    cells = np.array([c for c, _ in rows], np.int64)
    w = np.array([x for _, x in rows])
    cuts = sorted(data.draw(st.lists(st.integers(0, len(rows)), max_size=4)))
    order = np.array(data.draw(st.permutations(range(len(rows)))), np.int64)
    got = {}
    for part in np.split(order, cuts):
        levels.added(got, 0, "leaf", levels.exact_cells(cells[part], w[part], 3))
    sums = levels.totals(got[0])["leaf"]
    assert sums.tolist() == [math.fsum(w[cells == c]) for c in range(3)]
