"""What the reference's results depend on from Java itself: ``java.util.Random``
(same seed, same sequence: fold splits, shuffles, seeds of k-means and EM) and the
order of the reference's unstable quicksort (``weka.core.Utils.sort``), which fixes
the order of every later floating-point sum."""

import numpy as np

from .jit import njit

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK = (1 << 48) - 1
_INT_LIMIT = 1 << 31


class JavaRandom:
    """``java.util.Random``: same seed, same sequence of numbers."""

    def __init__(self, seed: int):
        self.seed = (int(seed) ^ _MULTIPLIER) & _MASK

    def next(self, bits: int) -> int:
        """The top ``bits`` bits of the next state, as Java's signed int."""
        self.seed = (self.seed * _MULTIPLIER + _ADDEND) & _MASK
        value = self.seed >> (48 - bits)
        return value - (1 << 32) if value >= _INT_LIMIT else value

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` without a bound, else uniform in ``[0, bound)``."""
        if bound is None:
            return self.next(32)
        if bound <= 0:
            raise ValueError("bound must be positive")
        if bound & (bound - 1) == 0:
            return (bound * self.next(31)) >> 31
        while True:
            bits = self.next(31)
            value = bits % bound
            if bits - value + (bound - 1) < _INT_LIMIT:
                return value

    def next_long(self) -> int:
        value = (self.next(32) << 32) + self.next(32)
        value &= (1 << 64) - 1
        return value - (1 << 64) if value >= 1 << 63 else value

    def next_double(self) -> float:
        return ((self.next(26) << 27) + self.next(27)) * 2.0**-53


def randomize(order: np.ndarray, rng: JavaRandom) -> np.ndarray:
    """``Instances.randomize``: swap each position from the last down to 1 with
    ``nextInt(position + 1)``. Returns the shuffled copy of ``order``, in its own
    integer type (a fit's 32-bit rows stay 32-bit)."""
    rows = np.array(order)
    rng.seed = int(_randomize(rows, np.uint64(rng.seed)))
    return rows


@njit(cache=True)
def next_int(state, bound):
    """``java.util.Random.nextInt(bound)`` on the 48-bit generator state (products
    wrap modulo 2^64, which keeps the low 48 bits exact): (value, new state)."""
    mult = np.uint64(_MULTIPLIER)
    add = np.uint64(_ADDEND)
    mask = np.uint64(_MASK)
    shift = np.uint64(17)
    if bound & (bound - 1) == 0:  # a power of two
        state = (state * mult + add) & mask
        return (bound * np.int64(state >> shift)) >> 31, state
    while True:
        state = (state * mult + add) & mask
        bits = np.int64(state >> shift)
        value = bits % bound
        if bits - value + (bound - 1) < _INT_LIMIT:
            return value, state


@njit(cache=True)
def _randomize(rows, seed):
    """The shuffle on the generator state ``seed``. Returns the new state."""
    for j in range(len(rows) - 1, 0, -1):
        k, seed = next_int(seed, j + 1)
        t = rows[j]
        rows[j] = rows[k]
        rows[k] = t
    return seed


def weka_order(values):
    """Indices of ``values`` in the reference's (unstable) quicksort order."""
    v = np.array(values, np.float64)
    idx = np.arange(len(v), dtype=np.int64)
    if len(v) > 1:
        _qsort(v, idx, np.int64(0), len(v) - 1, np.empty(2 * 64, np.int64))
    return idx


@njit(cache=True)
def sorted_by(x):
    """The positions of ``x`` in the order ``Instances.sort`` leaves rows in: the
    reference's quicksort, missing values (NaN) last."""
    return _quicksorted(x.copy())


@njit(cache=True)
def _quicksorted(keys):
    """``sorted_by`` of ``keys``, sorting them in place (a missing value becomes the
    largest number, as the reference sorts it)."""
    for i in range(len(keys)):
        if np.isnan(keys[i]):
            keys[i] = np.finfo(np.float64).max
    order = np.arange(len(keys))
    if len(keys) > 1:
        _qsort(keys, order, np.int64(0), len(keys) - 1, np.empty(128, np.int64))
    return order


@njit(cache=True)
def attribute_order(x, nominal):
    """The positions of ``x`` in the order the reference lists an attribute's rows:
    a numeric attribute's by ``sorted_by``, a nominal one's known values as they
    come and then the missing ones."""
    if not nominal:
        return sorted_by(x)
    order = np.empty(len(x), np.int64)
    j = 0
    for i in range(len(x)):
        if not np.isnan(x[i]):
            order[j] = i
            j += 1
    for i in range(len(x)):
        if np.isnan(x[i]):
            order[j] = i
            j += 1
    return order


@njit(cache=True)
def rows_in_order(X, a, rows, nominal):
    """The positions of ``rows`` in the order the reference lists their values of
    attribute ``a`` (row ``a`` of ``X``): ``attribute_order``, with one copy of
    the values rather than two."""
    x = np.empty(len(rows))
    for i in range(len(rows)):
        x[i] = X[a, rows[i]]
    return attribute_order(x, True) if nominal else _quicksorted(x)


@njit(cache=True)
def _qsort(v, idx, lo, hi, stack):
    """The reference's median-of-three quicksort of ``v[lo..hi]`` (inclusive),
    moving ``idx`` along. Sub-ranges are independent, so the larger one waits on
    the stack."""
    sp = 0
    stack[0] = lo
    stack[1] = hi
    sp = 1
    while sp > 0:
        sp -= 1
        left = stack[2 * sp]
        right = stack[2 * sp + 1]
        while True:
            d = right - left
            if d <= 0:
                break
            if d == 1:
                _cswap(v, idx, left, right)
                break
            if d == 2:
                _cswap(v, idx, left, left + 1)
                _cswap(v, idx, left, right)
                _cswap(v, idx, left + 1, right)
                break
            c = (left + right) // 2
            _cswap(v, idx, left, c)
            _cswap(v, idx, left, right)
            _cswap(v, idx, c, right)
            _swap(v, idx, c, right - 1)
            pivot = v[right - 1]
            i = left
            j = right - 1
            while True:
                i += 1
                while v[i] < pivot:
                    i += 1
                j -= 1
                while v[j] > pivot:
                    j -= 1
                if i >= j:
                    break
                _swap(v, idx, i, j)
            _swap(v, idx, i, right - 1)
            if i - 1 - left > right - i - 1:
                stack[2 * sp] = left
                stack[2 * sp + 1] = i - 1
                sp += 1
                left = i + 1
            else:
                stack[2 * sp] = i + 1
                stack[2 * sp + 1] = right
                sp += 1
                right = i - 1


@njit(cache=True, inline="always")
def _swap(v, idx, i, j):
    t = v[i]
    v[i] = v[j]
    v[j] = t
    k = idx[i]
    idx[i] = idx[j]
    idx[j] = k


@njit(cache=True, inline="always")
def _cswap(v, idx, i, j):
    if v[i] > v[j]:
        _swap(v, idx, i, j)
