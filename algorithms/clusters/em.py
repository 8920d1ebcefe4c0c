"""Expectation maximisation for a mixture of independent attributes (a normal
distribution per numeric attribute, a Laplace-corrected discrete one per nominal
attribute), as the reference's EM builds it (3.6.14).

The fit works on the missing-free matrix of ``filters.ReplaceMissing`` (a missing
value counts as the training mean or mode, in training and in prediction):

* initialisation (``initialise``): ten k-means runs (``kmeans.run``, the
  reference's random seeding) with seeds ``nextInt()`` of the shared generator,
  the first with the smallest squared error wins. Its centroids are the means,
  its members' standard deviations (raised to the attribute's standard deviation
  over all rows, then to ``min_stddev``, when below ``min_stddev``) the standard
  deviations, its member counts plus one the nominal counts and its cluster sizes
  the priors;
* ``iterate``: E and M steps until the mean log-likelihood per row improves by
  less than 1e-6. A step that lowers it is undone (the model returns to the one
  the last E step used), and the likelihood returned is that of the last E step.
  The M step gives the weighted ML estimates; a standard deviation at or below
  ``min_stddev`` is replaced by the attribute's sample standard deviation over the
  rows (distinct values, unweighted), or ``min_stddev`` if that is no larger;
* a step that fails (an empty cluster, a distribution that cannot be normalised)
  restarts from a new initialisation with the next seed, and after more than five
  restarts in a row with one cluster fewer;
* ``k=-1`` picks the number of clusters by ten-fold cross-validated
  log-likelihood, trying 1, 2, ... until the mean over the folds stops rising.

E and M steps are numba kernels parallel over fixed chunks of ``kmeans.CHUNK``
rows, one pass over the rows for both: each row's memberships go straight into
the M step's sums, so that no (rows x clusters) array of them is held. Per-chunk
partial sums, added in chunk order (the first chunk starting from
the sum's initial value), so that results do not depend on the thread count and
a table of at most one chunk is summed exactly as the reference sums it. The
chunks may also run one after another (``par``), with the same sums: so the folds
of the choice of ``k``, independent fits, can run side by side, one to a thread.
Logarithms and exponentials are taken element by element with the C library's
``exp``/``log``.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from .. import progress, stop
from ..evaluation import test_cv, train_cv
from ..javautil import JavaRandom, randomize
from ..jit import njit, prange, threads
from . import kmeans

MAX_VALUE = 1.7976931348623157e308
NORM_CONST = math.log(math.sqrt(2 * math.pi))
OK, CLUSTER_EMPTY, NOT_NORMALISABLE = 0, 1, 2
FAILURES = {CLUSTER_EMPTY: "Cluster empty!", NOT_NORMALISABLE: "Can't normalize array"}


FOLDS_ON_THREADS = 16  # chunks of rows up to which choose_k's folds run side by side


class StepFailed(Exception):
    pass


@njit(cache=True)
def full_sd(col):
    """The sample standard deviation of the distinct non-missing values with
    their multiplicities, ignoring weights: NaN without values, +inf for one."""
    v = np.sort(col[~np.isnan(col)])
    if len(v) == 0:
        return np.nan
    s = 0.0
    ss = 0.0
    c = 0.0
    start = 0
    for i in range(1, len(v) + 1):
        if i == len(v) or v[i] != v[start]:
            k = float(i - start)
            x = v[start]
            s += x * k
            ss += x * x * k
            c += k
            start = i
    if c <= 1:
        return np.inf
    var = (ss - s * s / c) / (c - 1)
    return math.sqrt(0.0 if var < 0 else var)


@njit(cache=True)
def _full_sd_of(cols, j, fsd, done):
    if not done[j]:
        fsd[j] = full_sd(cols[j])
        done[j] = True
    return fsd[j]


# ------------------------------------------------------------------ E step

@njit(cache=True)
def _tables(priors, sd, counts, total, nominal, nvals, offs):
    """log prior, (2 sd) sd, log sd and log P(value) per cluster."""
    K, p = sd.shape
    logprior = np.empty(K)
    denom = np.zeros((K, p))
    logsd = np.zeros((K, p))
    logp = np.zeros(counts.shape)
    for c in range(K):
        logprior[c] = _log(priors[c])
        for j in range(p):
            if nominal[j]:
                for v in range(offs[j], offs[j] + nvals[j]):
                    logp[c, v] = _log(0.0 if total[c, j] == 0 else counts[c, v] / total[c, j])
            else:
                denom[c, j] = 2 * sd[c, j] * sd[c, j]
                logsd[c, j] = _log(sd[c, j])
    return logprior, denom, logsd, logp


@njit(cache=True, inline="always")
def _log(x):
    if x > 0:
        return math.log(x)
    return -np.inf if x == 0 else np.nan


@njit(cache=True, inline="always")
def _exp(x):
    """exp, short-cutting the arguments whose result is exactly 0 or 1."""
    if x == 0.0:
        return 1.0
    if x < -746.0:
        return 0.0
    return math.exp(x)


@njit(cache=True, inline="always")
def _e_row(cols, i, nominal, offs, mean, denom, logsd, logp, logprior, mixed, a, e):
    """Row ``i``'s log-density (returned) and its memberships' numerators into
    ``e``, with their sum (returned): a membership is ``e[c] / s``."""
    K = logprior.shape[0]
    p = cols.shape[0]
    for c in range(K):
        acc = 0.0
        if mixed:
            for j in range(p):
                x = cols[j, i]
                if nominal[j]:
                    acc += logp[c, offs[j] + int(x)]
                else:
                    d = x - mean[c, j]
                    acc += -(d * d / denom[c, j]) - NORM_CONST - logsd[c, j]
        else:  # all numeric: the same sum without the test
            for j in range(p):
                d = cols[j, i] - mean[c, j]
                acc += -(d * d / denom[c, j]) - NORM_CONST - logsd[c, j]
        a[c] = acc + logprior[c]
    m = a[0]
    for c in range(1, K):
        if a[c] > m:
            m = a[c]
    s = 0.0
    for c in range(K):
        e[c] = _exp(a[c] - m)
        s += e[c]
    return m + _log(s), s


@njit(cache=True, inline="always")
def _m_row(cols, i, wi, r, nominal, offs, nomidx, ch, pri, cnt, tot, S, SS):
    """Row ``i`` (weight ``wi``, memberships ``r``) added to chunk ``ch``'s M sums."""
    K = r.shape[0]
    for c in range(K):
        pri[ch, c] += wi * r[c]
    for j in range(cols.shape[0]):
        x = cols[j, i]
        if nominal[j]:
            v = offs[j] + int(x)
            t = nomidx[j]
            for c in range(K):
                wc = wi * r[c]
                cnt[ch, v, c] += wc
                tot[ch, t, c] += wc
        else:
            xw = x * wi
            xxw = (x * x) * wi
            for c in range(K):
                S[ch, j, c] += xw * r[c]
                SS[ch, j, c] += xxw * r[c]


@njit(cache=True)
def _e_chunk(cols, w, nominal, offs, nomidx, mean, denom, logsd, logp, logprior, W, ld, sums,
             ch, chunk, ll_c, sw_c, bad_c):
    """The E step over chunk ``ch``: each row's log-density into ``ld`` and its
    memberships into ``W``, where they have rows, and into the M sums ``sums``
    (``m_sums``), where they have chunks, as they are found, so that the EM loop
    keeps no (rows x clusters) array of them; the chunk's log-likelihood, weight
    and whether a row had no memberships (``W``'s row then NaN)."""
    n = cols.shape[1]
    K = logprior.shape[0]
    pri, cnt, tot, S, SS = sums
    summed = pri.shape[0] > 0
    a = np.empty(K)
    e = np.empty(K)
    r = np.empty(K)
    ll = 0.0
    sw = 0.0
    bad = False
    mixed = nominal.any()
    for i in range(ch * chunk, min(n, ch * chunk + chunk)):
        lg, s = _e_row(cols, i, nominal, offs, mean, denom, logsd, logp, logprior, mixed, a, e)
        ll += w[i] * lg
        sw += w[i]
        if ld.shape[0] > 0:
            ld[i] = lg
        if np.isnan(s) or s == 0:
            bad = True  # the step fails where its memberships are used
            if W.shape[0] > 0:
                W[i, :] = np.nan
            continue
        for c in range(K):
            r[c] = e[c] / s
        if W.shape[0] > 0:
            W[i, :] = r
        if summed:
            _m_row(cols, i, w[i], r, nominal, offs, nomidx, ch, pri, cnt, tot, S, SS)
    ll_c[ch] = ll
    sw_c[ch] = sw
    bad_c[ch] = bad


@njit(cache=False, parallel=True)  # called from kernels (see jit.PRANGE_ONLY)
def _e_par(cols, w, nominal, offs, nomidx, mean, denom, logsd, logp, logprior, W, ld, sums,
           chunk, ll_c, sw_c, bad_c):
    for ch in prange(len(ll_c)):
        _e_chunk(cols, w, nominal, offs, nomidx, mean, denom, logsd, logp, logprior, W,
                 ld, sums, np.int64(ch), chunk, ll_c, sw_c, bad_c)


@njit(cache=True, inline="always")
def _totals(ll_c, sw_c, bad_c):
    """The chunks' log-likelihood and weight sums added in chunk order, and whether
    any chunk failed."""
    ll = 0.0
    sw = 0.0
    bad = False
    for ch in range(len(ll_c)):
        ll += ll_c[ch]
        sw += sw_c[ch]
        bad = bad or bad_c[ch]
    return ll, sw, bad


def _e_step(cols, w, nominal, nvals, offs, nomidx, priors, mean, sd, counts, total, W, ld,
            sums, chunk, par):
    """(status, weighted mean log-density of the rows). The rows' memberships go to
    ``W`` and into the M sums ``sums`` where those have room (``_e_chunk``), and a
    row without memberships then fails the step; with a non-empty ``ld`` the
    per-row log densities go there. The chunks run on numba's threads when ``par``
    is set, else one after another (the same sums)."""
    for c in range(priors.shape[0]):
        if not priors[c] > 0:
            return CLUSTER_EMPTY, 0.0
    logprior, denom, logsd, logp = _tables(priors, sd, counts, total, nominal, nvals, offs)
    n = cols.shape[1]
    nch = (n + chunk - 1) // chunk
    ll_c, sw_c, bad_c = np.zeros(nch), np.zeros(nch), np.zeros(nch, np.bool_)
    if par is not None and nch > 1:
        _e_par(cols, w, nominal, offs, nomidx, mean, denom, logsd, logp, logprior, W, ld, sums,
               chunk, ll_c, sw_c, bad_c)
    else:
        for ch in range(nch):
            _e_chunk(cols, w, nominal, offs, nomidx, mean, denom, logsd, logp, logprior,
                     W, ld, sums, np.int64(ch), chunk, ll_c, sw_c, bad_c)
    ll, sw, bad = _totals(ll_c, sw_c, bad_c)
    if bad and (W.shape[0] > 0 or sums[0].shape[0] > 0):
        return NOT_NORMALISABLE, 0.0
    return OK, ll / sw


e_step = njit(cache=True)(_e_step)  # from Python
# the same for kernels: e_step holds parallel code (see jit.PRANGE_ONLY)
_e_step_linked = njit(cache=False)(_e_step)


# ------------------------------------------------------------------ M step

def no_sums(p, K):
    """M sums of no chunk: an E step that adds none (``_e_chunk``)."""
    return (np.zeros((0, K)), np.zeros((0, 0, K)), np.zeros((0, 0, K)), np.zeros((0, p, K)),
            np.zeros((0, p, K)))


@njit(cache=True)
def m_sums(n, p, K, V, nominal, nvals, offs, nomidx, chunk):
    """Each chunk's M sums, zero but for the Laplace start in the first: the
    cluster weights, nominal value weights and their totals, and the numeric
    attributes' weighted sums and sums of squares."""
    pn = 0
    for j in range(p):
        if nominal[j]:
            pn += 1
    nch = (n + chunk - 1) // chunk
    pri = np.zeros((nch, K))
    cnt = np.zeros((nch, V, K))
    tot = np.zeros((nch, max(pn, 1), K))
    S = np.zeros((nch, p, K))
    SS = np.zeros((nch, p, K))
    for c in range(K):
        for j in range(p):
            if nominal[j]:
                tot[0, nomidx[j], c] = float(nvals[j])
                for v in range(offs[j], offs[j] + nvals[j]):
                    cnt[0, v, c] = 1.0
    return pri, cnt, tot, S, SS


@njit(cache=True)
def _added(pri, cnt, tot, S, SS):
    """The chunks' sums added into the first, in chunk order."""
    for ch in range(1, pri.shape[0]):
        pri[0] += pri[ch]
        cnt[0] += cnt[ch]
        tot[0] += tot[ch]
        S[0] += S[ch]
        SS[0] += SS[ch]


@njit(cache=True)
def estimate(pri, cnt, tot, S, SS, nominal, nvals, offs, nomidx, priors, mean, sd, counts,
             total, min_sd, cols, fsd, fsd_done):
    """The M step's estimates (in place) from its summed sums: per cluster the
    weight ``pri``, per nominal value ``cnt`` (Laplace ones included) and their
    totals ``tot``, per numeric attribute ``S`` and ``SS``; the status. A collapsed
    standard deviation takes the attribute's over the rows of ``cols`` (``fsd``, worked
    out where not ``fsd_done``)."""
    K = pri.shape[0]
    p = nominal.shape[0]
    norm = 0.0
    for c in range(K):
        norm += pri[c]
    if np.isnan(norm) or norm == 0:
        return NOT_NORMALISABLE
    for c in range(K):
        priors[c] = pri[c] / norm
        ws = pri[c]
        for j in range(p):
            if nominal[j]:
                total[c, j] = tot[nomidx[j], c]
                for v in range(offs[j], offs[j] + nvals[j]):
                    counts[c, v] = cnt[v, c]
                continue
            if ws <= 0:
                sd[c, j] = MAX_VALUE
                mean[c, j] = min_sd
                continue
            s = S[j, c]
            var = (SS[j, c] - s * s / ws) / ws
            if var < 0:
                var = 0.0
            dev = math.sqrt(var)
            if dev <= min_sd:
                dev = _full_sd_of(cols, j, fsd, fsd_done)
                if dev <= min_sd:
                    dev = min_sd
            if dev <= 0:
                dev = min_sd
            if np.isinf(dev):
                dev = min_sd
            sd[c, j] = dev
            mean[c, j] = s / ws
    return OK


@njit(cache=True, python=False)  # its iterations are slow in Python (jit.interpreting)
def iterate_kernel(cols, w, nominal, nvals, offs, nomidx, priors, mean, sd, counts, total,
                   llk, max_iter, min_sd, fsd, fsd_done, chunk, par, trace, count):
    """The EM loop from the current model (updated in place); ``count[0]`` counts
    the iterations (progress).

    Returns (status, log-likelihood, E steps done, whether the last step was
    undone); the E values go to ``trace``. On a failure the likelihood is the
    last one computed."""
    p_pri = priors.copy()
    p_mean = mean.copy()
    p_sd = sd.copy()
    p_cnt = counts.copy()
    p_tot = total.copy()
    no_rows, none = np.empty((0, priors.shape[0])), np.empty(0)
    steps = 0
    for i in range(max_iter):
        old = llk
        pri, cnt, tot, S, SS = m_sums(cols.shape[1], cols.shape[0], priors.shape[0],
                                      counts.shape[1], nominal, nvals, offs, nomidx, chunk)
        status, new = _e_step_linked(cols, w, nominal, nvals, offs, nomidx, priors, mean, sd,
                                     counts, total, no_rows, none, (pri, cnt, tot, S, SS),
                                     chunk, par)
        if status != OK:
            return status, llk, steps, False
        llk = new
        trace[steps] = llk
        steps += 1
        count[0] = steps
        if i > 0 and llk - old < 1e-6:
            if llk - old < 0:
                priors[:] = p_pri
                mean[:] = p_mean
                sd[:] = p_sd
                counts[:] = p_cnt
                total[:] = p_tot
                return OK, llk, steps, True
            break
        p_pri[:] = priors
        p_mean[:] = mean
        p_sd[:] = sd
        p_cnt[:] = counts
        p_tot[:] = total
        _added(pri, cnt, tot, S, SS)  # the M step, from the E step's sums
        status = estimate(pri[0], cnt[0], tot[0], S[0], SS[0], nominal, nvals, offs, nomidx,
                          priors, mean, sd, counts, total, min_sd, cols, fsd, fsd_done)
        if status != OK:
            return status, llk, steps, False
    return OK, llk, steps, False


# ------------------------------------------------------------------ driving

@dataclass
class Params:
    priors: np.ndarray  # (K,)
    mean: np.ndarray  # (K, p), unused for nominal attributes
    sd: np.ndarray  # (K, p)
    counts: np.ndarray  # (K, V) the estimators' counts, Laplace ones included
    total: np.ndarray  # (K, p) their sums (nominal attributes)

    @property
    def k(self):
        return len(self.priors)

    def arrays(self):
        return self.priors, self.mean, self.sd, self.counts, self.total


class Rows:
    """A missing-free matrix with its weights and lazily computed per-attribute
    standard deviations over all its rows."""

    def __init__(self, X, w, layout, ranges=None):
        self.X = kmeans.rows_of(X)
        self.w = np.ascontiguousarray(w, dtype=np.float64)
        self.layout = layout
        p = self.X.shape[1]
        self.fsd = np.zeros(p)
        self.fsd_done = np.zeros(p, np.bool_)
        self._ranges = ranges  # (lo, width) when known

    @property
    def n(self):
        return self.X.shape[0]

    def ranges(self):
        if self._ranges is None:
            self._ranges = kmeans.ranges(self.X.T)
        return self._ranges

    def full_sd(self, j):
        if not self.fsd_done[j]:
            self.fsd[j] = full_sd(self.X[:, j])
            self.fsd_done[j] = True
        return self.fsd[j]

    def select(self, idx):
        return Rows(kmeans.taken(self.X, idx), self.w[idx], self.layout)


def fresh_random(seed):
    rr = JavaRandom(seed)
    for _ in range(10):
        rr.next_double()
    return rr


@dataclass
class Init:
    params: Params
    seeds: list
    sse: list
    chosen: int


def initialise(rows, k, rr, min_sd, chunk=kmeans.CHUNK, par=True, in_place=False):
    """The model the EM loop starts from: the best of ten k-means runs, each with
    its chunks on numba's threads when ``par`` is set; ``in_place``: as for
    ``kmeans.run``. (Two runs at a time, one to a thread, took as long on an idle
    machine and held two permuted copies of the rows.)"""
    lay = rows.layout
    lo, width = rows.ranges()
    best, best_sse, chosen = None, MAX_VALUE, 0
    seeds, sses = [], []
    for r in range(10):
        progress.report(f"EM: k-means starts for {k} clusters", r, 10)
        seed = rr.next_int()
        run = kmeans.run(rows.X, rows.w, lay, k, seed, "random", 500, lo, width, chunk,
                         par=par, in_place=in_place)
        run.assign = None  # a row's cluster: not needed, and a run is kept while the next runs
        seeds.append(seed)
        sses.append(run.sse)
        if run.sse < best_sse or best is None and r == 9:
            best, best_sse, chosen = run, run.sse, r
    K = len(best.sizes)
    p = rows.X.shape[1]
    mean = np.zeros((K, p))
    sd = np.zeros((K, p))
    counts = np.zeros((K, lay.V))
    total = np.zeros((K, p))
    for c in range(K):
        for j in range(p):
            if lay.nominal[j]:
                t = float(lay.nvals[j])
                for v in range(lay.offs[j], lay.offs[j] + lay.nvals[j]):
                    counts[c, v] = 1.0 + best.nominal_counts[c, v]
                    t += float(best.nominal_counts[c, v])
                total[c, j] = t
                continue
            mean[c, j] = best.centroids[c, j]
            dev = best.std[c, j]
            if dev < min_sd:
                dev = rows.full_sd(j)
                if math.isinf(dev):
                    dev = min_sd
                if dev < min_sd:
                    dev = min_sd
            if dev <= 0:
                dev = min_sd
            sd[c, j] = dev
    sizes = best.sizes.astype(np.float64)
    s = 0.0
    for v in sizes:
        s += v
    return Init(Params(sizes / s, mean, sd, counts, total), seeds, sses, chosen)


def nominal_index(layout):
    out = np.zeros(len(layout.nominal), np.int64)
    out[layout.nominal] = np.arange(int(layout.nominal.sum()))
    return out


@dataclass
class Trained:
    params: Params
    loglik: float
    steps: int  # E steps of the final, successful run
    reverted: bool
    trace: list
    restarts: int
    init: Init = None


def iterate(rows, params, max_iter, min_sd, seed, full, init=None, chunk=kmeans.CHUNK,
            par=True, in_place=False):
    """Run the EM loop on ``rows``; on a failure restart from a new initialisation
    on ``full`` (all the training rows, as the reference does). ``par``: on numba's
    threads; ``in_place``: a restart's k-means runs reorder ``full`` in place (see
    ``kmeans.run``)."""
    lay = rows.layout
    nomidx = nominal_index(lay)
    llk = 0.0
    restarts = total_restarts = 0
    trace = []
    while True:
        buf = np.empty(max_iter)
        status, llk, steps, reverted = iterate_kernel(
            rows.X.T, rows.w, lay.nominal, lay.nvals, lay.offs, nomidx, *params.arrays(),
            llk, max_iter, min_sd, rows.fsd, rows.fsd_done, chunk,
            threads(par and rows.X.shape[0] > chunk), buf,
            progress.counter(f"EM: iterations with {params.k} clusters", max_iter))
        trace.extend(buf[:steps].tolist())
        if status == OK:
            return Trained(params, llk, steps, reverted, trace, total_restarts, init)
        seed += 1
        restarts += 1
        total_restarts += 1
        progress.report("EM: restarts", total_restarts)
        rr, k, restarts = restart(seed, restarts, params.k, status)
        init = initialise(full, k, rr, min_sd, chunk, par, in_place)
        params = init.params


def restart(seed, restarts, k, status):
    """After a failed step: the generator of the next start, its number of clusters
    (one fewer after more than five restarts in a row) and the restarts counted
    since it last fell; ``StepFailed`` when no cluster is left."""
    rr = JavaRandom(seed)
    for _ in range(10):
        rr.next_double()
        rr.next_int()
    if restarts > 5:
        k -= 1
        restarts = 0
    if k < 1:
        raise StepFailed(f"EM failed: {FAILURES[status]}")
    return rr, k, restarts


def log_likelihood(rows, params, chunk=kmeans.CHUNK, par=True):
    """Weighted mean log-density of ``rows`` under ``params`` (E without update)."""
    lay = rows.layout
    status, ll = e_step(rows.X.T, rows.w, lay.nominal, lay.nvals, lay.offs, nominal_index(lay),
                        *params.arrays(), np.zeros((0, params.k)), np.empty(0),
                        no_sums(rows.X.shape[1], params.k), chunk,
                        threads(par and rows.X.shape[0] > chunk))
    if status != OK:
        raise StepFailed(FAILURES[status])
    return ll


def densities(X, layout, params, chunk=kmeans.CHUNK):
    """(membership probabilities (n, K), log densities (n,)) of missing-free rows."""
    n = X.shape[0]
    W = np.empty((n, params.k))
    ld = np.empty(n)
    e_step(kmeans.rows_of(X).T, np.ones(n), layout.nominal, layout.nvals, layout.offs,
           nominal_index(layout), *params.arrays(), W, ld, no_sums(X.shape[1], params.k),
           chunk, threads(n > chunk))
    return W, ld


def choose_k(rows, max_iter, seed, min_sd, chunk=kmeans.CHUNK):
    """(chosen number of clusters, per number tried: the fold log-likelihoods and
    their mean), by ten-fold cross-validation. The folds are independent fits: on
    rows that fill a few chunks they run on numba's threads, one fold to a thread
    and its chunks one after another, as a fit of so few chunks keeps no two
    threads busy (they meet at every pass, and on a loaded machine wait there for
    one another); larger folds run one at a time, their chunks on the threads."""
    n = rows.n
    folds = n if n < 10 else 10
    par = n > FOLDS_ON_THREADS * chunk  # the folds' own chunks on the threads
    best = -MAX_VALUE
    k = 1
    cv = []
    while True:
        cvr = JavaRandom(seed)
        order = randomize(np.arange(n), cvr)
        trains = [train_cv(order, folds, f, cvr) for f in range(folds)]
        if any(k > len(train) for train in trains):
            return k - 1, cv
        done = []

        def fold(f, k=k, order=order, trains=trains, done=done):
            tr = rows.select(trains[f])
            init = initialise(tr, k, fresh_random(seed), min_sd, chunk, par, True)
            fitted = iterate(tr, init.params, max_iter, min_sd, seed, rows, chunk=chunk,
                             par=par)
            ll = log_likelihood(rows.select(test_cv(order, folds, f)), fitted.params,
                                chunk, par)
            done.append(f)
            progress.report(f"EM: choosing the number of clusters, {k} of them, folds",
                            len(done), folds)
            return ll

        try:
            lls = stop.each(fold, range(folds), 1 if par else None)
        except StepFailed:
            return k - 1, cv
        mean = 0.0
        for v in lls:
            mean += v
        mean /= folds
        cv.append({"k": k, "folds": lls, "mean": mean})
        if mean > best:
            best = mean
            k += 1
        else:
            return k - 1, cv


@dataclass
class Fit:
    k: int
    trained: Trained
    cv: list = field(default=None)


def fit(rows, k=-1, max_iter=100, seed=100, min_sd=1e-6, chunk=kmeans.CHUNK):
    """EM on the missing-free ``rows``; ``k=-1`` chooses the number of clusters."""
    cv = None
    if k < 0:
        if rows.n > 9:
            k, cv = choose_k(rows, max_iter, seed, min_sd, chunk)
        else:
            k = 1
    rr = fresh_random(seed)
    init = initialise(rows, k, rr, min_sd, chunk, in_place=True)
    trained = iterate(rows, init.params, max_iter, min_sd, seed, rows, init, chunk,
                      in_place=True)
    return Fit(trained.params.k, trained, cv)
