"""The sorted entries of C4.5 and PART against the plain definition on small
random nodes. A split's branches (``grow.deal`` in place, on one thread or on two;
C4.5: ``grow.child_sorted`` where rows go down several branches; PART there and
for a root's branches: ``part._branch_entries``, one branch at a time): each
branch gets, attribute by attribute and in the node's order, the entries of its
rows, and a row that lacks the tested value goes to every branch of fraction above
1e-6. The entries carry no weights: an entry weighs what its row weighs in the
node (``grow._entry_weights``), scaled where a row is spread. PART's root after a
rule (``part._drop_covered``): the covered rows leave, a partly covered one
stays."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from duckmine.algorithms.c45 import grow
from duckmine.algorithms.rules import part

SETTINGS = settings(max_examples=80, deadline=None)


@st.composite
def nodes(draw, missing):
    """(entries, start, end, branch of each row, number of branches, fractions)."""
    n_rows = draw(st.integers(1, 12))
    m = draw(st.integers(1, 3))
    nb = draw(st.integers(2, 4))
    branch = np.array(draw(st.lists(st.integers(-1 if missing else 0, nb - 1),
                                    min_size=n_rows, max_size=n_rows)), np.int32)
    rows, start, end = [], [], []
    for _ in range(m):  # each attribute: some of the rows, in some order
        picked = draw(st.permutations(range(n_rows)))[:draw(st.integers(0, n_rows))]
        start.append(len(rows))
        rows += picked
        end.append(len(rows))
    e = len(rows)
    entries = (np.array(rows, np.int32), np.arange(e, dtype=np.float64) / 7,
               np.array([r % 3 for r in rows], np.int8), np.arange(1, e + 1) / 4.0)
    frac = np.array(draw(st.lists(st.sampled_from([0.0, 1e-7, 0.25, 0.5, 1.0]),
                                  min_size=nb, max_size=nb)))
    if frac.sum() == 0:
        frac[0] = 1.0
    return entries, np.array(start, np.int64), np.array(end, np.int64), branch, nb, \
        frac / frac.sum()


def expected(entries, start, end, branch, nb, frac):
    """Per branch, per attribute: the (row, value, class, weight) tuples it gets."""
    out = [[[] for _ in start] for _ in range(nb)]
    for a, (s, e) in enumerate(zip(start, end)):
        for o in range(s, e):
            r, v, c, w = (x[o] for x in entries)
            b0 = branch[r]
            for b in range(nb):
                if b == b0:
                    out[b][a].append((r, v, c, w))
                elif b0 < 0 and frac[b] > 1e-6:
                    out[b][a].append((r, v, c, w * frac[b]))
    return out


def tuples(entries, s, e):
    return [tuple(x[o] for x in entries) for o in range(s, e)]


def largest(branch, nb):
    counts = [int(np.sum(branch == b)) for b in range(nb)]
    return int(np.argmax(counts))


@SETTINGS
@given(nodes(missing=False), st.booleans())
def test_dealt_in_place_as_defined(node, wide):
    entries, start, end, branch, nb, frac = node
    want = unweighted(expected(entries, start, end, branch, nb, frac))
    first = largest(branch, nb)
    spare = int(np.sum(branch != first))
    entries = entries[:3]
    starts, ends = (grow.deal_wide if wide else grow.deal)(*entries, start, end, branch, nb,
                                                           first, spare)
    for b in range(nb):
        for a in range(len(start)):
            assert start[a] <= starts[b, a] <= ends[b, a] <= end[a]
            assert tuples(entries, starts[b, a], ends[b, a]) == want[b][a]


def unweighted(per_branch):
    """``expected``'s entries without their weights, as C4.5 keeps them."""
    return [[[t[:3] for t in attr] for attr in b] for b in per_branch]


@SETTINGS
@given(st.lists(st.integers(0, 5), min_size=1, max_size=12), st.data())
def test_entry_weights_by_row(rows, data):
    """An entry's weight: its row's in the node, or none (1) where every row of
    the node weighs 1."""
    rows = np.array(rows, np.int32)
    n = len(rows)
    s = data.draw(st.integers(0, n))
    e = data.draw(st.integers(s, n))
    by_row = np.arange(1, 7) / 8.0
    srt = (np.zeros(n), np.zeros(n, np.int8), np.zeros(1, np.int64), np.zeros(1, np.int64),
           rows, by_row)
    assert list(grow._entry_weights(srt, s, e)) == list(by_row[rows[s:e]])
    assert len(grow._entry_weights(srt[:5] + (np.empty(0),), s, e)) == 0


@SETTINGS
@given(st.integers(2, 40), st.integers(2, 3), st.data())
def test_unweighted_cut_search_as_weighted_by_ones(n, k, data):
    """The threshold search reads no weights as weights of 1: the same split, by
    the counts and by the doubles."""
    value = np.sort(np.array(data.draw(st.lists(st.integers(0, 6), min_size=n,
                                                 max_size=n)), np.float64))
    cls = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)),
                   np.int8)
    for table in (grow.lf_table(n), grow.NO_TABLE):
        for mdl in (True, False):
            want = grow.numeric_split(value, cls, np.ones(n), k, 2.0, float(n), mdl, table)
            assert grow.numeric_split(value, cls, np.empty(0), k, 2.0, float(n), mdl,
                                      table) == want


@SETTINGS
@given(nodes(missing=True))
def test_copied_where_rows_go_down_several_branches(node):
    entries, start, end, branch, nb, frac = node
    want = unweighted(expected(entries, start, end, branch, nb, frac))
    first = largest(branch, nb)
    entries = entries[:3]
    rows, vals, clss, base, offsets, f_start, f_end = grow.child_sorted(
        branch, frac, *entries, start, end, nb, first)
    copied = (rows, vals, clss)
    for b in range(nb):
        for a in range(len(start)):
            if b == first:  # compacted at the start of the node's own range
                assert f_start[a] == start[a] and f_end[a] <= end[a]
                got = tuples(entries, f_start[a], f_end[a])
            else:
                lo = base[b]
                got = tuples(copied, lo + offsets[b, a], lo + offsets[b, a + 1])
            assert got == want[b][a]


@SETTINGS
@given(nodes(missing=True), st.booleans())
def test_one_branch_filtered_as_defined(node, wide):
    entries, start, end, branch, nb, frac = node
    want = unweighted(expected(entries, start, end, branch, nb, frac))
    kernel = part._branch_entries_wide if wide else part._branch_entries
    entries = entries[:3]
    for b in range(nb):  # the rows are positions here
        rows = int(np.sum((branch == b) | ((branch < 0) & (frac[b] > 1e-6))))
        *got, first, last = kernel(branch.astype(np.int8), b, frac[b], rows, *entries, start,
                                   end)
        for a in range(len(start)):
            assert first[a] <= last[a] <= first[a] + rows
            assert tuples(got, first[a], last[a]) == want[b][a]


@SETTINGS
@given(nodes(missing=False), st.data(), st.booleans())
def test_covered_rows_dropped_as_defined(node, data, wide):
    entries, start, end = node[:3]
    n_rows = len(node[3])
    share = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.0, 0.3, 1.0, 1 - 1e-7]),
                                        min_size=n_rows, max_size=n_rows)))
    want = [[(r, v, c) for r, v, c in tuples(entries[:3], s, e) if 1.0 - share[r] > 1e-6]
            for s, e in zip(start, end)]
    entries, end = tuple(x.copy() for x in entries[:3]), end.copy()
    kernel = part._drop_covered_wide if wide else part._drop_covered
    kernel(share > 0, share, *entries, start, end)
    for a in range(len(start)):
        assert tuples(entries, start[a], end[a]) == want[a]
