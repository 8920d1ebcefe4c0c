"""RIPPER's rows left by each rule (``description_length.Left``), kept as bits of
the rows before, against the lists of rows themselves."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from duckmine.algorithms.rules.description_length import Left


@given(st.integers(0, 60), st.lists(st.tuples(st.sampled_from(["add", "put", "pop", "ask"]),
                                              st.integers(0, 2**32 - 1)), max_size=40))
@settings(max_examples=200, deadline=None)
def test_the_rows_each_rule_leaves_are_those_a_list_a_rule_holds(n, steps):
    data = np.random.default_rng(n).permutation(n).astype(np.int64)
    left, lists = Left(data), []  # the reference: every rule's rows, whole

    def before():
        return lists[-1] if lists else data

    for op, seed in steps:
        rng = np.random.default_rng(seed)
        if op == "add":
            uncovered = rng.random(len(before())) < 0.7
            left.add(uncovered)
            lists.append(before()[uncovered])
        elif op == "put" and lists:  # the last rule's rows in an order of their own
            lists[-1] = rng.permutation(lists[-1])
            left.put(len(lists) - 1, lists[-1])
        elif op == "pop" and lists:
            left.pop()
            lists.pop()
        elif op == "ask" and lists:
            i = int(rng.integers(-1, len(lists)))
            assert np.array_equal(left.rows(i), data if i < 0 else lists[i])
        assert len(left) == len(lists)
    for i in range(len(lists) - 1, -2, -1):
        assert np.array_equal(left.rows(i), data if i < 0 else lists[i])
