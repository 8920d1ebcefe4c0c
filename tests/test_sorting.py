"""The kernels' radix sorts order as numpy's stable sort does."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from duckmine.algorithms.sorting import sort_run, value_order


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 2**62), max_size=300), st.sampled_from([8, 20, 63]))
def test_runs_sort_as_numpy_sorts_them(values, width):
    """A run of keys (insertion for a short run, a radix sort of the bits the keys
    use for a longer one) is ordered, with its places, as a stable sort orders
    them; the keys around it stay."""
    keys = np.array(values, np.int64) & ((1 << width) - 1)
    keys = np.concatenate([[7], keys, [3]]).astype(np.int64)  # outside the run
    order = np.arange(len(keys), dtype=np.int64)
    want = np.argsort(keys[1:-1], kind="stable") + 1
    spare = np.empty(len(keys), np.int64), np.empty(len(keys), np.int64)
    sort_run(keys, order, 1, len(keys) - 1, width, *spare)
    assert keys[0] == 7 and keys[-1] == 3 and order[0] == 0 and order[-1] == len(keys) - 1
    assert np.array_equal(order[1:-1], want)
    assert np.array_equal(keys[1:-1], np.sort(keys[1:-1]))


SPECIAL = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 5e-324, -5e-324, 1.0, -1.0,
           1e308, -1e308, 0.1 + 0.2, 0.3]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                          st.sampled_from(SPECIAL), st.integers(-3, 3).map(float)),
                max_size=200),
       st.integers(0, 2**32 - 1))
def test_values_are_ordered_as_numpys_stable_argsort(values, seed):
    """``value_order`` is ``np.argsort(X[t][rows], kind='stable')``: negative before
    positive numbers, -0.0 equal to 0.0, every NaN (whatever its sign bit) last,
    equal values in the order of ``rows`` (a subset of the row, in any order)."""
    x = np.array(values, np.float64)
    X = np.vstack([np.zeros(len(x)), x])
    rows = np.random.default_rng(seed).permutation(len(x))[:len(x) * 2 // 3]
    assert np.array_equal(value_order(X, 1, rows), np.argsort(x[rows], kind="stable"))


def test_a_column_of_many_equal_values_is_ordered_stably():
    """Half zeros, as a commission column is: long runs of equal keys."""
    rng = np.random.default_rng(3)
    x = np.where(rng.random(100_000) < 0.5, 0.0, rng.uniform(1e4, 8e4, 100_000).round())
    rows = np.arange(len(x))
    assert np.array_equal(value_order(x[None, :], 0, rows), np.argsort(x, kind="stable"))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([8, 20, 40, 63, 64]),
       st.integers(4096, 9000))
def test_long_runs_sort_by_wider_digits_as_numpy_sorts_them(seed, width, n):
    """A run long enough for 11-bit digits, whose last digit reaches past the keys'
    bits (and past the 64th, where a signed shift copies the top bit): the order of
    the keys read unsigned, stable."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
    if width < 64:
        keys &= (1 << width) - 1
    keys[rng.random(n) < 0.3] = keys[0]  # runs of equal keys
    order = np.arange(n, dtype=np.int64)
    unsigned = keys.view(np.uint64)
    want = np.argsort(unsigned, kind="stable")
    sort_run(keys, order, 0, n, width, np.empty(n, np.int64), np.empty(n, np.int64))
    assert np.array_equal(order, want)
    assert np.array_equal(keys.view(np.uint64), np.sort(unsigned))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_long_columns_are_ordered_as_numpys_stable_argsort(seed):
    """``value_order`` on a column long enough for 11-bit digits, special values
    included."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 3, 7000)  # a special value, a measurement, a small count
    x = np.select([kind == 0, kind == 1], [rng.choice(np.array(SPECIAL), 7000),
                                           rng.normal(0, 1e3, 7000)],
                  rng.integers(-3, 4, 7000).astype(float))
    rows = rng.permutation(7000)[:6000]
    assert np.array_equal(value_order(x[None, :], 0, rows), np.argsort(x[rows], kind="stable"))
