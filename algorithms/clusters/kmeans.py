"""k-means clustering as the reference's SimpleKMeans builds it (3.6.14), plus
k-means++ seeding.

The data arrive as one (n, p) float64 matrix: numeric values, or nominal codes,
with NaN for missing. It is kept an attribute at a time in memory (Fortran
order, ``rows_of``): the transpose of a Dataset's matrix of columns, which the
kernels then read without a copy of the table, and whose blocks of rows they
read in order. The kernels take it as that matrix of columns (``cols``, (p, n),
C-ordered: ``X.T``), whatever its shape: a matrix of one row or one attribute is
C- and F-ordered at once, numba types it as C-ordered, and a kernel that took
the rows would be compiled a second time for it.

Every step of the reference is kept, in its order:

* missing values are replaced by the weighted mean / mode of the training rows
  (``filters.ReplaceMissing``, done by the caller);
* distances are Euclidean over all attributes, each numeric one scaled to
  ``(x - min) / (max - min)`` with the range of the training rows (0 for a
  constant attribute), a nominal one contributing 0 when equal, else 1;
* ``init='random'`` is the reference's seeding: from the last row down,
  ``nextInt(j + 1)`` picks a row, which becomes a centre unless an identical row
  already is one, and is swapped into place ``j``. The swaps permute the row
  order, and every later sum runs in that permuted order;
* Lloyd iterations: each row goes to its nearest centre (the first of equal
  ones), centres become the weighted mean / mode of their members, clusters left
  empty are dropped, and the loop stops when no assignment changed or after
  ``max_iterations`` passes. The squared error is that of the last pass: of
  the final centres, except when the first pass (which compares every row with
  cluster 0) changes nothing, where it is that of the initial centres.

``init='k-means++'`` draws the first centre uniformly and each further one with
probability proportional to ``weight * D(x)^2``, ``D`` the scaled distance to
the nearest centre chosen so far; the draws come from
``numpy.random.default_rng(seed)``. Rows keep their order.

A pass measures a row against every centre only when it must: each row keeps a
lower bound on its distance to the other centres, lowered at each pass by how
far they moved (Hamerly, 2010), and a row nearer its own centre than that bound
keeps it unmeasured. The bounds are widened far beyond rounding, so the passes
assign, sum and stop exactly as measuring every row would (``_pass_chunk``).

Each pass is a numba kernel running over fixed chunks of ``CHUNK`` rows in
parallel. Every sum is accumulated per chunk and the chunk totals are added in
chunk order, so results do not depend on the number of threads, and a table of
at most one chunk is summed exactly as the reference sums it.
"""

import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .. import progress, stop
from ..halt import halted
from ..javautil import JavaRandom, next_int
from ..jit import by_columns, njit, prange, threads

CHUNK = 4096
BLOCK = 32  # rows whose distances are computed side by side (_block_distances)
SLACK = 1e-10  # how much a row's bound is widened at each step (_pass_chunk)
WINDOW = 1024  # rows a pass keeps or puts aside before measuring those put aside
INITS = ("k-means++", "random")


@dataclass
class Layout:
    """Per attribute: nominal or not, its number of values, and where its values
    start in a flat per-cluster array of all nominal values (``V`` in all)."""

    nominal: np.ndarray  # bool (p,)
    nvals: np.ndarray  # int64 (p,), 0 for numeric
    offs: np.ndarray  # int64 (p,)
    V: int

    @classmethod
    def of(cls, attributes):
        nominal = np.array([a.nominal for a in attributes], np.bool_)
        nvals = np.array([len(a.values) if a.nominal else 0 for a in attributes], np.int64)
        offs = np.zeros(len(attributes), np.int64)
        if len(attributes):
            offs[1:] = np.cumsum(nvals)[:-1]
        return cls(nominal, nvals, offs, int(nvals.sum()))


@njit(cache=True)
def _first_max_i(a, lo, hi):
    best = 0
    idx = 0
    for i in range(lo, hi):
        if i == lo or a[i] > best:
            best = a[i]
            idx = i - lo
    return idx


def rows_of(X):
    """``X`` (n, p) as the rows are kept: an attribute at a time in memory and
    writable, as the transpose of a Dataset's matrix of columns is; a copy only
    where it is not."""
    return X if X.flags.f_contiguous and X.flags.writeable else np.array(X, order="F")


def taken(X, idx):
    """Rows ``idx`` of ``X``, in that order, as ``rows_of`` gives them: a column at
    a time."""
    out = np.empty((X.shape[1], len(idx)))
    for j in range(X.shape[1]):
        np.take(X[:, j], idx, out=out[j])
    return out.T


def centre_rows(X, idx):
    """Rows ``idx`` of ``X`` as centres: a C-ordered copy, the centres' own type."""
    return np.ascontiguousarray(X[idx])


def _described(M, w, fill, nominal, nvals):
    """In one pass over the columns ``M`` (p, n), missing cells read as ``fill``:
    every filled column's (min, width) (as ``ranges``) and its
    Instances.meanOrMode: the weighted mean (0 without weight), or the mode of the
    weight counts truncated to integers at each step. Returns (min, width, mean
    or mode, missing cells), each per column, each column read in row order."""
    p, n = M.shape
    a = np.full(p, np.inf)
    b = np.full(p, -np.inf)
    s = np.zeros(p)
    sw = np.zeros(p)
    missing = np.zeros(p, np.int64)
    counts = np.zeros((p, max(1, nvals.max() if p else 1)), np.int64)
    for t in prange(p):
        a[t], b[t], s[t], sw[t], missing[t] = _described_column(
            M[t], w, fill[t], nominal[t], counts[t])
    lo = np.full(p, np.nan)
    width = np.full(p, np.nan)
    centre = np.empty(p)
    for t in range(p):
        if nominal[t]:
            centre[t] = float(_first_max_i(counts[t], np.int64(0), max(nvals[t], 1)))
        else:
            centre[t] = s[t] / sw[t] if sw[t] > 0 else 0.0
        if a[t] <= b[t]:
            lo[t] = a[t]
            width[t] = b[t] - a[t]
    return lo, width, centre, missing


described = by_columns(_described)  # the columns side by side on large tables


@njit(cache=True)
def _described_column(x, w, f, nominal, counts):
    """``described``'s sums of one column ``x`` (``counts``: its row of counts):
    (min, max, weighted sum, weight, missing cells)."""
    # the sums in scalars: stored to an array and read back at every row, they
    # ran at a third of the speed
    low, high, total, weight, gone = np.inf, -np.inf, 0.0, 0.0, 0
    for i in range(len(x)):
        v = x[i]
        if np.isnan(v):
            gone += 1
            v = f
        if v < low:
            low = v
        if v > high:
            high = v
        if nominal:
            counts[int(v)] += int(w[i])
        else:
            weight += w[i]
            total += w[i] * v
    return low, high, total, weight, gone


@njit(cache=True)
def ranges(cols):
    """Per attribute (min, width) over the non-missing values (NaN if none)."""
    p, n = cols.shape
    lo = np.full(p, np.nan)
    width = np.full(p, np.nan)
    for j in range(p):
        a = np.inf
        b = -np.inf
        for i in range(n):
            x = cols[j, i]
            if x < a:
                a = x
            if x > b:
                b = x
        if a <= b:
            lo[j] = a
            width[j] = b - a
    return lo, width


# --------------------------------------------------------------- distances

@njit(cache=True, inline="always")
def _norm(x, lo, width):
    if width == 0.0 or np.isnan(width):
        return 0.0
    return (x - lo) / width


@njit(cache=True)
def _scaled(C, nominal, lo, width):
    """The centres ``C`` with numeric attributes scaled by the training ranges."""
    K, p = C.shape
    Z = np.empty((K, p))
    for c in range(K):
        for j in range(p):
            Z[c, j] = C[c, j] if nominal[j] else _norm(C[c, j], lo[j], width[j])
    return Z


@njit(cache=True)
def _block_distances(cols, i0, m, nominal, lo, width, Z, zb, db):
    """The squared distances from rows ``i0:i0 + m`` of ``cols`` to every centre
    (``_scaled``), into ``db[:, :m]``: each row's squared differences (a mismatch
    of a nominal value counts 1) summed in attribute order, as the reference sums
    them, the block's rows side by side, so that the compiler vectorises over
    them. ``zb`` holds the rows scaled."""
    _scale_block(cols, i0, m, nominal, lo, width, zb)
    _scaled_distances(zb, m, nominal, Z, db)


@njit(cache=True, inline="always")
def _scale_block(cols, i0, m, nominal, lo, width, zb):
    """Rows ``i0:i0 + m`` of ``cols`` scaled (``_norm``) into ``zb[:, :m]``. The
    loops run over one-dimensional views: indexing the two-dimensional arrays in
    the inner loop kept the compiler from vectorising them (four times slower)."""
    for j in range(zb.shape[0]):
        src = cols[j, i0:i0 + m]
        dst = zb[j, :m]
        if nominal[j]:
            for r in range(m):
                dst[r] = src[r]
        elif width[j] == 0.0 or np.isnan(width[j]):
            for r in range(m):
                dst[r] = 0.0
        else:
            at, span = lo[j], width[j]
            for r in range(m):
                dst[r] = (src[r] - at) / span


@njit(cache=True, inline="always")
def _scale_rows(cols, rows, nominal, lo, width, zb):
    """``_scale_block`` of the rows ``rows`` of ``cols``, into ``zb[:, :len(rows)]``."""
    m = len(rows)
    for j in range(zb.shape[0]):
        src = cols[j]
        dst = zb[j, :m]
        if nominal[j]:
            for q in range(m):
                dst[q] = src[rows[q]]
        elif width[j] == 0.0 or np.isnan(width[j]):
            for q in range(m):
                dst[q] = 0.0
        else:
            at, span = lo[j], width[j]
            for q in range(m):
                dst[q] = (src[rows[q]] - at) / span


@njit(cache=True, inline="always")
def _scaled_distances(zb, m, nominal, Z, db):
    """``_block_distances`` of rows already scaled into ``zb[:, :m]``."""
    K, p = Z.shape
    for c in range(K):
        dc = db[c, :m]
        for r in range(m):
            dc[r] = 0.0
        for j in range(p):
            zc = Z[c, j]
            zj = zb[j, :m]
            if nominal[j]:
                for r in range(m):
                    dc[r] += 1.0 if zj[r] != zc else 0.0
            else:
                for r in range(m):
                    d = zj[r] - zc
                    dc[r] += d * d


@njit(cache=True, inline="always")
def _own_distances(zb, m, nominal, ZT, mine, own):
    """The distances of the block's scaled rows ``zb[:, :m]`` to their own centres
    alone (``mine``: each row's; ``ZT``: the centres an attribute a row), into
    ``own``: summed in the order, and so to the bit, of ``_scaled_distances`` and
    ``_root``, the rows side by side."""
    for r in range(m):
        own[r] = 0.0
    for j in range(zb.shape[0]):
        zj = zb[j, :m]
        cj = ZT[j]
        if nominal[j]:
            for r in range(m):
                own[r] += 1.0 if zj[r] != cj[mine[r]] else 0.0
        else:
            for r in range(m):
                d = zj[r] - cj[mine[r]]
                own[r] += d * d
    for r in range(m):
        own[r] = math.sqrt(own[r])


@njit(cache=True)
def rescaled(Z, C, nominal, lo, width):
    """The next pass's centres ``C`` scaled (``_scaled``), and how far each moved
    from ``Z``, the last pass's, by the rows' distance: the bounds of the next pass
    (``_pass_chunk``). The moves are infinite when clusters were dropped, which
    renumbers them: no bound then holds."""
    Z_next = _scaled(C, nominal, lo, width)
    K = Z_next.shape[0]
    out = np.full(K, np.inf)
    if Z.shape[0] != K:
        return Z_next, out
    for c in range(K):
        acc = 0.0
        for j in range(Z.shape[1]):
            if nominal[j]:
                acc += 1.0 if Z[c, j] != Z_next[c, j] else 0.0
            else:
                d = Z[c, j] - Z_next[c, j]
                acc += d * d
        out[c] = math.sqrt(acc)
    return Z_next, out


@njit(cache=True, inline="always")
def _root(db, m):
    """The block's distances from their squares, in place (a loop of its own, which
    the compiler vectorises)."""
    for c in range(db.shape[0]):
        dc = db[c, :m]
        for r in range(m):
            dc[r] = math.sqrt(dc[r])


@njit(cache=True, inline="always")
def _nearest_in_block(db, r):
    """(index, distance) of row ``r``'s nearest centre in a rooted block: the first
    of equal distances, comparing roots as the reference does."""
    best = 0
    mind = 2147483647.0
    for c in range(db.shape[0]):
        if db[c, r] < mind:
            mind = db[c, r]
            best = c
    return best, mind


@njit(cache=True, inline="always")
def _two_nearest(db, r):
    """``_nearest_in_block``, and the distance of the nearest other centre (a row's
    bound, ``_pass_chunk``). Apart from it because scoring, which needs no bound,
    took 52 ms a million rows instead of 31 when it tracked that distance too."""
    best = 0
    mind = 2147483647.0
    other = np.inf
    for c in range(db.shape[0]):
        d = db[c, r]
        if d < mind:
            best, mind, other = c, d, min(mind, other)
        elif d < other:
            other = d
    return best, mind, other


@njit(cache=True)
def _nearest_chunk(cols, nominal, lo, width, Z, start, stop, out):
    zb = np.empty((cols.shape[0], BLOCK))
    db = np.empty((Z.shape[0], BLOCK))
    for i0 in range(start, stop, BLOCK):
        m = min(BLOCK, stop - i0)
        _block_distances(cols, i0, m, nominal, lo, width, Z, zb, db)
        _root(db, m)
        for r in range(m):
            out[i0 + r] = _nearest_in_block(db, r)[0]


@njit(cache=False, parallel=True)  # called from kernels (see jit.PRANGE_ONLY)
def _nearest_par(cols, nominal, lo, width, Z, chunk, out):
    n = cols.shape[1]
    for ch in prange((n + chunk - 1) // chunk):
        _nearest_chunk(cols, nominal, lo, width, Z, ch * chunk, min(n, ch * chunk + chunk), out)


@njit(cache=True)
def nearest(cols, nominal, lo, width, C, chunk, threads):
    """Index of the nearest centre of every row (first of equal distances); the
    chunks on numba's threads unless ``threads`` is None (see ``jit.threads``)."""
    n = cols.shape[1]
    Z = _scaled(C, nominal, lo, width)
    out = np.zeros(n, np.int64)
    if threads is not None and n > chunk:
        _nearest_par(cols, nominal, lo, width, Z, chunk, out)
    else:
        _nearest_chunk(cols, nominal, lo, width, Z, np.int64(0), n, out)  # (np.int64: see jit)
    return out


@njit(cache=True)
def nearest_many(cols, nominal, ends, lo, width, fill, C, c_ends):
    """``nearest`` for many models at once, each on its own rows: model
    ``j`` scores rows ``ends[j]:ends[j + 1]`` of ``cols`` against its centres
    ``C[c_ends[j]:c_ends[j + 1]]``, with its ranges ``lo[j]``, ``width[j]`` and its
    fill values ``fill[j]`` for missing cells. One call per chunk of rows, rather
    than one per model and chunk, when rows are scored by per-group models."""
    p, n = cols.shape
    out = np.empty(n, np.int64)
    xb = np.empty((p, BLOCK))  # a block of rows, missing cells filled
    zb = np.empty((p, BLOCK))
    for t in range(len(ends) - 1):
        Z = _scaled(C[c_ends[t]:c_ends[t + 1]], nominal, lo[t], width[t])
        db = np.empty((Z.shape[0], BLOCK))
        for i0 in range(ends[t], ends[t + 1], BLOCK):
            m = min(BLOCK, ends[t + 1] - i0)
            for r in range(m):
                for j in range(p):
                    v = cols[j, i0 + r]
                    xb[j, r] = fill[t, j] if np.isnan(v) else v
            _block_distances(xb, np.int64(0), m, nominal, lo[t], width[t], Z, zb, db)
            _root(db, m)
            for r in range(m):
                out[i0 + r] = _nearest_in_block(db, r)[0]
    return out


@njit(cache=True)
def _d2_chunk(cols, nominal, lo, width, Z, start, stop, d2):
    zb = np.empty((cols.shape[0], BLOCK))
    db = np.empty((1, BLOCK))
    for i0 in range(start, stop, BLOCK):
        m = min(BLOCK, stop - i0)
        _block_distances(cols, i0, m, nominal, lo, width, Z, zb, db)
        for r in range(m):
            if db[0, r] < d2[i0 + r]:
                d2[i0 + r] = db[0, r]


@njit(cache=False, parallel=True)  # called from kernels (see jit.PRANGE_ONLY)
def _d2_par(cols, nominal, lo, width, Z, chunk, d2):
    n = cols.shape[1]
    for ch in prange((n + chunk - 1) // chunk):
        _d2_chunk(cols, nominal, lo, width, Z, ch * chunk, min(n, ch * chunk + chunk), d2)


@njit(cache=True)
def _update_d2(cols, nominal, lo, width, C, d2, chunk, threads):
    """``d2[i] = min(d2[i], squared scaled distance to the single centre C)``; see
    ``nearest`` for ``threads``."""
    Z = _scaled(C, nominal, lo, width)
    if threads is not None and cols.shape[1] > chunk:
        _d2_par(cols, nominal, lo, width, Z, chunk, d2)
    else:
        _d2_chunk(cols, nominal, lo, width, Z, np.int64(0), cols.shape[1], d2)


# ----------------------------------------------------------------- seeding

@njit(cache=True)
def seen_row(cols, r, rows, m):
    """Whether row ``r`` of ``cols`` equals (value for value) one of ``rows[:m]``."""
    for t in range(m):
        q = rows[t]
        same = True
        for a in range(cols.shape[0]):
            if cols[a, r] != cols[a, q]:
                same = False
                break
        if same:
            return True
    return False


@njit(cache=True)
def _seed_random(cols, state, k):
    """The reference's random centres: (row order after the swaps, the rows
    chosen, how many were chosen: fewer than ``k`` when there are fewer
    distinct rows)."""
    n = cols.shape[1]
    order = np.arange(n)
    chosen = np.empty(k, np.int64)
    m = 0
    for j in range(n - 1, -1, -1):
        idx, state = next_int(state, j + 1)
        r = order[idx]
        if not seen_row(cols, r, chosen, np.int64(m)):
            chosen[m] = r
            m += 1
        order[idx] = order[j]
        order[j] = r
        if m == k:
            break
    return order, chosen[:m], m


def seed_random(X, k, seed):
    """(the rows' moves, initial centres) of the reference's seeding with
    ``Random(seed)``; the moves (see ``reordered``) are the places its swaps left
    another row in, and the row now at each: only a few, so no order of every row
    is kept."""
    X = rows_of(X)
    state = np.uint64(JavaRandom(seed).seed)
    order, chosen, _ = _seed_random(X.T, state, k)
    places = moved_places(order)
    return (places, order[places]), centre_rows(X, chosen)


def seed_plus_plus(X, w, nominal, lo, width, k, seed, chunk=CHUNK):
    """(None: no row moves, k-means++ centres: rows of ``X``, fewer than ``k`` when
    the rows run out of distinct values)."""
    X = rows_of(X)
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    first = int(rng.integers(n))
    rows = [first]
    d2 = np.full(n, np.inf)
    while len(rows) < k:
        _update_d2(X.T, nominal, lo, width, centre_rows(X, rows[-1:]), d2, chunk,
                   threads(n > chunk))
        i = _draw(d2, w, rng.random())  # a draw the last, failed step does not use
        if i < 0:
            break
        rows.append(min(i, n - 1))
    return None, centre_rows(X, rows)


@njit(cache=True)
def _draw(d2, w, u):
    """The row whose mass ``d2 * w``, accumulated in row order, first passes ``u``
    times the total (as a cumulative sum searched to the right would find it), or
    -1 when the total is not positive; no array of the masses is made."""
    total = 0.0
    for i in range(len(d2)):
        total += d2[i] * w[i]
    if not total > 0:
        return -1
    x = u * total
    mass = 0.0
    for i in range(len(d2)):
        mass += d2[i] * w[i]
        if mass > x:
            return i
    return len(d2)


# ------------------------------------------------------------------- Lloyd

@njit(cache=True)
def _pass_chunk(cols, w, nominal, offs, lo, width, Z, assign, ch, chunk,
                sse, sw, s, ss, cnt, mode, nom, changed, lower, shift):
    """Assign the rows of chunk ``ch`` and accumulate the chunk's sums.

    ``lower[i]`` bounds row ``i``'s distance to every centre but its own from
    below, as of the last pass; ``shift`` is how far each centre has moved since
    (``rescaled``; infinite: no bound). A row whose distance to its own centre is
    below the bound moved by the largest shift of another centre keeps its
    centre without the others being measured (Hamerly's bound): the reference
    would find that centre the strictly nearest. The bounds are widened by
    ``SLACK`` at each step, far more than rounding can move a distance, so the
    assignments and sums are the reference's to the bit. Rows are added in
    order whichever way they were assigned."""
    p, n = cols.shape
    K = Z.shape[0]
    top, second, far = -np.inf, -np.inf, -1  # the two largest shifts
    for c in range(K):
        if shift[c] > top:
            top, second, far = shift[c], top, c
        elif shift[c] > second:
            second = shift[c]
    ZT = np.ascontiguousarray(Z.T)
    zb = np.empty((p, BLOCK))  # a block's rows, scaled
    own = np.empty(BLOCK)  # their distances to their own centres
    db = np.empty((K, BLOCK))  # rows' distances to every centre, a centre a row
    measure = np.empty(WINDOW, np.int64)  # the window's rows whose bounds do not hold
    best_of = np.empty(WINDOW, np.int64)
    dist_of = np.empty(WINDOW)
    moved = False
    end = min(n, ch * chunk + chunk)
    # a window's rows are first kept or put aside, then those put aside measured 32
    # at a time, then all added in order: measured rows fill whole blocks. Where
    # the window before measured most of its rows (a centre moved far), every row
    # is measured without testing its bound: the same assignments, for less work
    bounded = second != np.inf  # else no bound can hold
    dense = not bounded
    for w0 in range(ch * chunk, end, WINDOW):
        wm = min(WINDOW, end - w0)
        k = 0
        if dense:
            for r in range(wm):
                measure[r] = r
            k = wm
        else:
            for b0 in range(0, wm, BLOCK):
                m = min(BLOCK, wm - b0)
                _scale_block(cols, w0 + b0, m, nominal, lo, width, zb)
                _own_distances(zb, m, nominal, ZT, assign[w0 + b0:w0 + b0 + m], own)
                for r in range(m):
                    i = w0 + b0 + r
                    a = assign[i]
                    bound = _moved_bound(lower[i], a, far, top, second)
                    if _holds(bound, own[r]):
                        lower[i] = bound
                        best_of[b0 + r] = a
                        dist_of[b0 + r] = own[r]
                    else:
                        measure[k] = b0 + r
                        k += 1
        held = 0  # rows of a dense window whose bounds would have held
        for q0 in range(0, k, BLOCK):
            m = min(BLOCK, k - q0)
            rows = measure[q0:q0 + m]
            if k == wm:  # every row measured: the block's rows run on
                _scale_block(cols, w0 + q0, m, nominal, lo, width, zb)
            else:
                _scale_rows(cols[:, w0:w0 + wm], rows, nominal, lo, width, zb)
            _scaled_distances(zb, m, nominal, Z, db)
            _root(db, m)
            for q in range(m):
                i = w0 + rows[q]
                if dense and bounded:
                    a = assign[i]
                    held += _holds(_moved_bound(lower[i], a, far, top, second), db[a, q])
                best, mind, other = _two_nearest(db, q)
                lower[i] = other
                best_of[rows[q]] = best
                dist_of[rows[q]] = mind
        if bounded:
            dense = (wm - held if dense else k) * 2 > wm
        for r in range(wm):
            i = w0 + r
            best = best_of[r]
            _add_row(cols, w, nominal, offs, i, best, dist_of[r], ch, sse, sw, s, ss, cnt,
                     mode, nom)
            moved = moved or assign[i] != best
            assign[i] = best
    changed[ch] = moved


@njit(cache=True, inline="always")
def _moved_bound(lower, a, far, top, second):
    """A row's bound on every centre but its own ``a``, lowered by the largest move
    of another centre (``top``, made by ``far``, else ``second``); both widened by
    ``SLACK``."""
    return lower * (1.0 - SLACK) - (second if a == far else top) * (1.0 + SLACK)


@njit(cache=True, inline="always")
def _holds(bound, own):
    """Whether a row at distance ``own`` from its centre keeps it without the other
    centres measured: no other can be as near (``_moved_bound``)."""
    return bound > 0.0 and own * (1.0 + SLACK) < bound


@njit(cache=True, inline="always")
def _add_row(cols, w, nominal, offs, i, best, mind, ch, sse, sw, s, ss, cnt, mode, nom):
    """Add row ``i``, at distance ``mind`` from its nearest centre ``best``, to
    that centre's sums in chunk ``ch``."""
    sse[ch, best] += mind * mind
    wi = w[i]
    sw[ch, best] += wi
    cnt[ch, best] += 1
    for j in range(cols.shape[0]):
        x = cols[j, i]
        if nominal[j]:
            v = offs[j] + int(x)
            mode[ch, best, v] += int(wi)
            nom[ch, best, v] += 1
        else:
            s[ch, best, j] += wi * x
            ss[ch, best, j] += (wi * x) * x


@njit(cache=False, parallel=True)  # called from kernels (see jit.PRANGE_ONLY)
def _passes_par(cols, w, nominal, offs, lo, width, Z, assign, chunk,
                sse, sw, s, ss, cnt, mode, nom, changed, lower, shift, halt):
    for ch in prange(len(changed)):
        if halted(halt):  # stopped (algorithms.stop): the rest is not looked at
            continue
        _pass_chunk(cols, w, nominal, offs, lo, width, Z, assign, np.int64(ch), chunk,
                    sse, sw, s, ss, cnt, mode, nom, changed, lower, shift)


@njit(cache=True)
def centres(sw, s, cnt, mode, nominal, nvals, offs):
    """(the clusters kept: those with members, their new centres) from a pass's
    sums: per cluster the weighted mean of each numeric attribute and the mode of
    each nominal one (the first of equal counts)."""
    p = nominal.shape[0]
    keep = np.flatnonzero(cnt > 0)
    out = np.empty((len(keep), p))
    for t in range(len(keep)):
        c = keep[t]
        for j in range(p):
            if nominal[j]:
                out[t, j] = _first_max_i(mode[c], offs[j], offs[j] + nvals[j])
            else:
                out[t, j] = s[c, j] / sw[c] if sw[c] > 0 else 0.0
    return keep, out


@njit(cache=True, python=False)  # its iterations are slow in Python (jit.interpreting)
def lloyd(cols, w, nominal, nvals, offs, V, lo, width, C, max_iter, chunk, par, halt,
          count):
    """Lloyd iterations from centres ``C`` over the rows of ``cols`` in their order,
    until they converge, ``max_iter`` or ``halt[0]`` is set; ``count[0]`` counts the
    iterations (progress). The chunks of a pass run on numba's threads when ``par``
    is set, else one after another (the same sums: for callers that are already
    running on several threads).

    Returns (centres, assignments, iterations, squared error, per-cluster squared
    errors, sizes, per-cluster standard deviations (NaN for nominal), unweighted
    nominal counts (K, V))."""
    p, n = cols.shape
    nch = (n + chunk - 1) // chunk
    assign = np.zeros(n, np.int64)
    lower = np.zeros(n)  # each row's bound (``_pass_chunk``)
    Z = _scaled(C, nominal, lo, width)
    shift = np.full(Z.shape[0], np.inf)  # none yet: the first pass measures all
    it = 0
    while True:
        it += 1
        count[0] = it
        K = C.shape[0]
        sse_c = np.zeros((nch, K))
        sw_c = np.zeros((nch, K))
        s_c = np.zeros((nch, K, p))
        ss_c = np.zeros((nch, K, p))
        cnt_c = np.zeros((nch, K), np.int64)
        mode_c = np.zeros((nch, K, V), np.int64)
        nom_c = np.zeros((nch, K, V), np.int64)
        changed = np.zeros(nch, np.bool_)
        if par is not None and nch > 1:
            _passes_par(cols, w, nominal, offs, lo, width, Z, assign, chunk,
                        sse_c, sw_c, s_c, ss_c, cnt_c, mode_c, nom_c, changed, lower, shift,
                        halt)
        else:
            for ch in range(nch):
                if halted(halt):
                    break
                _pass_chunk(cols, w, nominal, offs, lo, width, Z, assign, np.int64(ch),
                            chunk, sse_c, sw_c, s_c, ss_c, cnt_c, mode_c, nom_c, changed,
                            lower, shift)
        sqerr = np.zeros(K)
        sw = np.zeros(K)
        s = np.zeros((K, p))
        ss = np.zeros((K, p))
        cnt = np.zeros(K, np.int64)
        mode = np.zeros((K, V), np.int64)
        nom = np.zeros((K, V), np.int64)
        converged = True
        for ch in range(nch):
            if changed[ch]:
                converged = False
            for c in range(K):
                sqerr[c] += sse_c[ch, c]
                sw[c] += sw_c[ch, c]
                cnt[c] += cnt_c[ch, c]
                for j in range(p):
                    s[c, j] += s_c[ch, c, j]
                    ss[c, j] += ss_c[ch, c, j]
                for v in range(V):
                    mode[c, v] += mode_c[ch, c, v]
                    nom[c, v] += nom_c[ch, c, v]
        keep, newC = centres(sw, s, cnt, mode, nominal, nvals, offs)
        if it == max_iter or halted(halt):
            converged = True
        C = newC
        if converged:
            break
        Z, shift = rescaled(Z, C, nominal, lo, width)
    total = 0.0
    for c in range(len(sqerr)):
        total += sqerr[c]
    K2 = len(keep)
    relabel = np.full(len(cnt), -1, np.int64)
    std = np.full((K2, p), np.nan)
    for t in range(K2):
        c = keep[t]
        relabel[c] = t
        for j in range(p):
            if not nominal[j]:
                if sw[c] <= 1:
                    var = 0.0
                else:
                    var = (ss[c, j] - s[c, j] * s[c, j] / sw[c]) / (sw[c] - 1)
                    if var < 0:
                        var = 0.0
                std[t, j] = math.sqrt(var)
    for i in range(n):
        assign[i] = relabel[assign[i]]
    return (C, assign, it, total, sqerr[keep], cnt[keep], std, nom[keep])


@njit(cache=True)
def moved_places(order):
    """The places where ``order`` is not the identity."""
    n = 0
    for i in range(len(order)):
        n += order[i] != i
    out = np.empty(n, np.int64)
    n = 0
    for i in range(len(order)):
        if order[i] != i:
            out[n] = i
            n += 1
    return out


@contextmanager
def reordered(X, w, moves, in_place):
    """``X`` and ``w`` with the rows ``moves`` gives (places, and the row each
    place takes; None: none moves). The reference's seeding moves only the rows it
    picks, into the last places, so just those rows are swapped: in ``X`` and
    ``w`` themselves with ``in_place``, put back on leaving, else in copies."""
    if moves is None:
        yield X, w
        return
    if not in_place:
        X = np.array(X, order="F")
    if not in_place or not w.flags.writeable:
        w = w.copy()
    places, source = moves
    kept, kept_w = X[places], w[places]
    X[places], w[places] = X[source], w[source]
    try:
        yield X, w
    finally:
        X[places], w[places] = kept, kept_w


@dataclass
class KMeansRun:
    centroids: np.ndarray  # (K, p)
    assign: np.ndarray  # (n,) cluster of each row, rows in their given order
    iterations: int
    sse: float
    squared_errors: np.ndarray  # (K,)
    sizes: np.ndarray  # (K,) int
    std: np.ndarray  # (K, p), NaN for nominal attributes
    nominal_counts: np.ndarray  # (K, V) int, unweighted
    seeded: int  # initial centres found (< k: fewer distinct rows)


def run(X, w, layout, k, seed, init="random", max_iter=500, lo=None, width=None,
        chunk=CHUNK, par=True, in_place=False):
    """k-means on the missing-free matrix ``X`` (rows in the order given); ``par``:
    a pass's chunks on numba's threads (see ``lloyd``); ``in_place``: the rows the
    seeding moves are swapped in ``X`` and ``w`` themselves (``reordered``), which
    no other thread may read meanwhile."""
    X = rows_of(X)
    if lo is None:
        lo, width = ranges(X.T)
    if init == "random":
        moves, C = seed_random(X, k, seed)
    elif init == "k-means++":
        moves, C = seed_plus_plus(X, w, layout.nominal, lo, width, k, seed, chunk)
    else:
        raise ValueError(f"init must be one of {', '.join(INITS)}, not {init!r}")
    seeded = len(C)
    halt = stop.flag()
    count = progress.counter(f"k-means: iterations with {len(C)} clusters", max_iter)
    with reordered(X, w, moves, in_place) as (Xp, wp):
        C, assign, it, sse, errs, sizes, std, nom = lloyd(
            Xp.T, wp, layout.nominal, layout.nvals, layout.offs, layout.V, lo, width, C,
            max_iter, chunk, threads(par and len(X) > chunk), halt, count)
    stop.check(halt)
    if moves is not None:  # each row's cluster back in its own place
        assign[moves[1]] = assign[moves[0]]
    return KMeansRun(C, assign, int(it), float(sse), errs, sizes, std, nom, seeded)
