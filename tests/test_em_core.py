"""EM and k-means against Weka 3.6.14's EM and SimpleKMeans (the goldens of
tests/golden/em): the same printed models, likelihoods, chosen numbers of
clusters, centroids and assignments; models as values; argument checks; and
properties on data drawn from known Gaussian mixtures."""

import json
import math
from pathlib import Path

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from duckmine.algorithms import models, stop
from duckmine.algorithms.clusters import em, kmeans
from duckmine.algorithms.clusters.model import EMModel, KMeansModel, fit_em, fit_kmeans
from duckmine.algorithms.dataset import NOMINAL, NUMERIC, Attribute, Dataset
from duckmine.extension import arff

from .conftest import DATA

GOLDEN = Path(__file__).parent / "golden" / "em"
DATASETS = ["weather.numeric", "weather.nominal", "iris", "diabetes", "labor", "soybean",
            "cpu", "contact-lenses", "breast-cancer"]
SEP = "\n\n=== Clustering stats for training data ===\n\n"


def load(name):
    """A Dataset of a test ARFF file, nominal values coded in declared order."""
    attrs, rows, weights = arff.parse((DATA / f"{name}.arff").read_text())
    attributes, columns = [], []
    for j, a in enumerate(attrs):
        if a.kind == "nominal":
            attributes.append(Attribute(a.name, NOMINAL, tuple(a.values)))
            code = {v: i for i, v in enumerate(a.values)}
            columns.append(np.array([np.nan if r[j] is None else code[r[j]] for r in rows],
                                    np.float64))
        else:
            attributes.append(Attribute(a.name, NUMERIC))
            columns.append(np.array([np.nan if r[j] is None else float(r[j]) for r in rows],
                                    np.float64))
    return Dataset(attributes, columns, np.array(weights, np.float64))


def golden(name, tag):
    g = json.loads((GOLDEN / f"{name}__{tag}.json").read_text())
    return g, (GOLDEN / f"{name}__{tag}.txt").read_text().split(SEP)[0]


@pytest.fixture(scope="module")
def datasets():
    return {name: load(name) for name in DATASETS}


def roundtrip(model):
    body, version, model_id = models.dumps(model)
    back = models.loads(model.learner, version, body, model_id)
    assert models.dumps(back) == (body, version, model_id)
    assert back.text() == model.text()
    return back


@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("tag", ["k3", "auto"])
def test_em_matches_weka(datasets, name, tag):
    data = datasets[name]
    g, text = golden(name, tag)
    model = fit_em(data, k=3 if tag == "k3" else -1)
    assert model.text() == text
    assert model.num_clusters == g["num_clusters"]
    assert abs(model.log_likelihood - g["loglikely"]) <= 1e-6
    assert model.iterations == len(g["trace"])
    np.testing.assert_allclose(model.priors, g["priors"], rtol=0, atol=1e-9)
    if tag == "auto":
        assert [c["k"] for c in model.cv] == [c["k"] for c in g["cv"]]
    else:
        assert model.cv is None
    proba = model.proba(data.columns, data.n)
    np.testing.assert_allclose(proba, g["dist"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.log_density(data.columns, data.n), g["log_density"],
                               rtol=0, atol=1e-9)
    assert np.array_equal(np.argmax(proba, axis=1), g["cluster"])
    back = roundtrip(model)
    assert np.array_equal(back.proba(data.columns, data.n), proba)


@pytest.mark.parametrize("name", DATASETS)
def test_kmeans_matches_weka(datasets, name):
    data = datasets[name]
    g, text = golden(name, "kmeans3")
    model = fit_kmeans(data, 3, seed=10, init="random")
    assert model.text() == text
    assert model.iterations == g["iterations"]
    assert model.sse == g["squared_error"]
    assert np.array_equal(model.squared_errors, g["squared_errors"])
    assert model.sizes == g["sizes"]
    cent = np.array([[np.nan if v is None else v for v in row] for row in g["centroids"]])
    assert np.array_equal(model.centroids, cent, equal_nan=True)
    assign = model.assign(data.columns, data.n)
    assert np.array_equal(assign, g["cluster"])
    proba = model.proba(data.columns, data.n)
    assert np.array_equal(np.argmax(proba, axis=1), assign) and (proba.sum(axis=1) == 1).all()
    assert np.array_equal(roundtrip(model).assign(data.columns, data.n), assign)


def test_em_scores_missing_as_the_training_mean(datasets):
    data = datasets["weather.numeric"]
    model = fit_em(data, k=3)
    cols = [np.array([np.nan, c[0]]) for c in data.columns]
    filled = [np.array([f, c[0]]) for f, c in zip(model.missing.fill, data.columns)]
    assert np.array_equal(model.log_density(cols, 2), model.log_density(filled, 2))
    assert model.classes == ("0", "1", "2") and model.used == list(range(5))


def test_kmeans_has_no_likelihood(datasets):
    model = fit_kmeans(datasets["iris"], 3)
    with pytest.raises(ValueError, match="no likelihood"):
        model.log_density(datasets["iris"].columns, 150)


def test_summaries(datasets):
    model = fit_em(datasets["weather.nominal"], k=2)
    rows = model.rows()
    assert {r["cluster"] for r in rows} == {0, 1}
    for c in range(2):
        probs = [r["probability"] for r in rows if r["cluster"] == c and r["attribute"] == "play"]
        assert math.isclose(sum(probs), 1.0)
    assert math.isclose(float(model.priors.sum()), 1.0)
    km = fit_kmeans(datasets["weather.nominal"], 2, init="random")
    assert {r["label"] for r in km.rows() if r["attribute"] == "play"} <= {"yes", "no"}
    assert sum(km.sizes) == 14


def test_excluded_and_constant_attributes(datasets):
    data = datasets["iris"]
    model = fit_em(data, k=3, exclude=("class",))
    assert [a.name for a in model.attributes] == [a.name for a in data.attributes[:4]]
    const = Dataset(data.attributes[:4] + [Attribute("c", NUMERIC)],
                    data.columns[:4] + [np.full(data.n, 7.0)])
    for m in (fit_em(const, k=3), fit_em(const, k=-1), fit_kmeans(const, 3)):
        p = m.proba(const.columns, const.n)
        assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), 1.0)
        roundtrip(m)


@pytest.mark.parametrize("call, fragment", [
    (lambda d: fit_em(d, k=0), "k must be"),
    (lambda d: fit_em(d, k=-2), "k must be"),
    (lambda d: fit_em(d, k=15), "larger than the number of distinct rows"),
    (lambda d: fit_em(d, max_iterations=0), "max_iterations"),
    (lambda d: fit_em(d, min_stddev=0.0), "min_stddev"),
    (lambda d: fit_em(d, exclude=("nope",)), "'nope'"),
    (lambda d: fit_em(d, exclude=tuple(a.name for a in d.attributes)), "no attributes left"),
    (lambda d: fit_kmeans(d, 0), "k must be"),
    (lambda d: fit_kmeans(d, 3, init="forgy"), "init"),
    (lambda d: fit_kmeans(d, 3, max_iterations=0), "max_iterations"),
    (lambda d: fit_kmeans(d, 15), "larger than the number of distinct rows"),
])
def test_argument_errors(datasets, call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call(datasets["weather.nominal"])


def test_all_missing_attribute_is_refused():
    data = Dataset([Attribute("x", NUMERIC), Attribute("gone", NUMERIC)],
                   [np.arange(20.0), np.full(20, np.nan)])
    for fit in (lambda: fit_em(data, k=2), lambda: fit_kmeans(data, 2)):
        with pytest.raises(ValueError, match="'gone'"):
            fit()


def test_duplicate_rows_limit_k():
    data = Dataset([Attribute("x", NUMERIC)], [np.array([1.0, 2.0, 1.0, 2.0] * 5)])
    assert fit_kmeans(data, 2).num_clusters == 2
    with pytest.raises(ValueError, match="distinct rows"):
        fit_kmeans(data, 3, init="random")


def test_results_do_not_depend_on_threads():
    """Several chunks summed in chunk order: the same bits with 1 or 2 threads, with
    a pass's chunks on threads or one after another, and with the folds of the
    choice of k side by side (``stop.each``) or one at a time."""
    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(m, 1.0, (300, 3)) for m in (0.0, 6.0, 12.0)])
    lay = kmeans.Layout.of([Attribute(f"a{j}", NUMERIC) for j in range(3)])
    rows = em.Rows(X, np.ones(len(X)), lay)
    before = numba.get_num_threads()
    out = {}
    try:
        for threads in sorted({1, before}):
            numba.set_num_threads(threads)
            f = em.fit(rows, 3, chunk=64)
            for par in (True, False):
                r = kmeans.run(X, np.ones(len(X)), lay, 3, 1, "random", chunk=64, par=par)
                out.setdefault("fits", []).append(
                    (f.trained.loglik, f.trained.params.mean.tobytes(), r.sse,
                     r.centroids.tobytes()))
            # the folds side by side (300 rows in 5 chunks), one at a time (19 chunks)
            for chunk in (64, 16):
                chosen = em.fit(em.Rows(X[::3], np.ones(300), lay), -1, chunk=chunk)
                out.setdefault(chunk, []).append(
                    (chosen.k, str(chosen.cv), chosen.trained.params.sd.tobytes()))
    finally:
        numba.set_num_threads(before)
    assert all(len(set(results)) == 1 for results in out.values())


def _matrix_dataset(M, nominal=()):
    """A Dataset whose columns are the rows of ``M`` (p, n), as the data layer
    makes them: views of one matrix."""
    attributes = [Attribute(f"a{j}", NOMINAL, ("u", "v", "w")) if j in nominal
                  else Attribute(f"a{j}", NUMERIC) for j in range(M.shape[0])]
    return Dataset(attributes, list(M), np.ones(M.shape[1]))


@pytest.mark.parametrize("missing", [False, True])
def test_fits_read_the_columns_in_place_and_leave_them(missing):
    """The clustered rows are the transpose of the Dataset's columns, no copy
    (only filled cells need one), and a fit leaves them as they were, though the
    random seeding reorders rows in place while it runs."""
    from duckmine.algorithms.clusters.model import _prepare

    rng = np.random.default_rng(3)
    M = np.vstack([rng.normal(0, 1, 500), rng.normal(5, 2, 500),
                   rng.integers(0, 3, 500).astype(np.float64)])
    if missing:
        M[0, ::7] = np.nan
    kept = M.copy()
    data = _matrix_dataset(M, nominal=(2,))
    d = _prepare(data, ())
    assert d.X.flags.f_contiguous and np.shares_memory(d.X, M) != missing
    for fit in (lambda: fit_kmeans(data, 3, init="random"), lambda: fit_kmeans(data, 3),
                lambda: fit_em(data, 3, max_iterations=5), lambda: fit_em(data, -1)):
        fit()
        assert np.array_equal(M, kept, equal_nan=True)


def test_rows_reordered_in_place_are_the_copy_and_put_back():
    rng = np.random.default_rng(4)
    X = kmeans.rows_of(rng.normal(0, 1, (400, 3)))
    kept = X.copy()
    lay = kmeans.Layout.of([Attribute(f"a{j}", NUMERIC) for j in range(3)])
    runs = [kmeans.run(X, np.ones(400), lay, 4, seed, "random", in_place=place)
            for seed in (1, 2) for place in (False, True)]
    for a, b in zip(runs[::2], runs[1::2]):
        assert (a.sse, a.centroids.tobytes(), a.assign.tobytes()) == \
            (b.sse, b.centroids.tobytes(), b.assign.tobytes())
    assert np.array_equal(X, kept)
    order = np.arange(400)
    order[[5, 399, 7]] = order[[399, 7, 5]]
    w = np.arange(400.0)
    moved = kmeans.moved_places(order)
    assert moved.tolist() == [5, 7, 399]
    with pytest.raises(RuntimeError):
        with kmeans.reordered(X, w, (moved, order[moved]), True) as (Y, v):
            assert np.array_equal(Y, kept[order]) and np.array_equal(v, order)
            raise RuntimeError("stopped")
    assert np.array_equal(X, kept) and np.array_equal(w, np.arange(400.0))


@pytest.mark.parametrize("name", ["soybean", "diabetes", "labor"])
def test_one_pass_step_is_an_e_step_then_its_m_sums(name):
    """The EM loop's pass (E step and M sums at once) gives the log-likelihood and
    the sums of an E step that keeps every row's memberships followed by the M
    sums over them, bit for bit, over several chunks."""
    data = load(name)
    from duckmine.algorithms.clusters.model import _prepare

    d = _prepare(data, ())
    lay = d.layout
    rows = em.Rows(d.X, d.w, lay)
    params = em.initialise(rows, 4, em.fresh_random(100), 1e-6).params
    nomidx = em.nominal_index(lay)
    chunk = 64
    summed = em.m_sums(rows.n, rows.X.shape[1], params.k, lay.V, lay.nominal, lay.nvals,
                       lay.offs, nomidx, chunk)
    status, ll = em.e_step(rows.X.T, rows.w, lay.nominal, lay.nvals, lay.offs, nomidx,
                           *params.arrays(), np.zeros((0, params.k)), np.empty(0), summed,
                           chunk, True)
    em._added(*summed)
    sums = [a[0] for a in summed]
    W = np.zeros((rows.n, params.k))
    status_e, ll_e = em.e_step(rows.X.T, rows.w, lay.nominal, lay.nvals, lay.offs, nomidx,
                               *params.arrays(), W, np.empty(0),
                               em.no_sums(rows.X.shape[1], params.k), chunk, True)
    assert (status, ll) == (status_e, ll_e) == (em.OK, ll)
    p, K = rows.X.shape[1], params.k
    want = em.m_sums(rows.n, p, K, lay.V, lay.nominal, lay.nvals, lay.offs, nomidx, chunk)
    for ch in range((rows.n + chunk - 1) // chunk):  # the M sums, row by row
        for i in range(ch * chunk, min(rows.n, ch * chunk + chunk)):
            for c in range(K):
                want[0][ch, c] += rows.w[i] * W[i, c]
            for j in range(p):
                x = rows.X[i, j]
                if lay.nominal[j]:
                    for c in range(K):
                        want[1][ch, lay.offs[j] + int(x), c] += rows.w[i] * W[i, c]
                        want[2][ch, nomidx[j], c] += rows.w[i] * W[i, c]
                else:
                    for c in range(K):
                        want[3][ch, j, c] += x * rows.w[i] * W[i, c]
                        want[4][ch, j, c] += (x * x) * rows.w[i] * W[i, c]
    for ch in range(1, len(want[0])):
        for a in want:
            a[0] += a[ch]
    for got, expected in zip(sums, want):
        assert got.tobytes() == expected[0].tobytes()


def test_block_distances_are_those_of_one_row_at_a_time():
    """The distances of 32 rows side by side (Lloyd passes, scoring, k-means++) are,
    bit for bit, each row's own as the reference computes them: the scaled
    differences squared (a nominal mismatch counting 1) and summed in attribute
    order; for numeric, nominal and mixed attributes, a constant column and a last
    block cut short. The reference here is plain Python floats."""
    rng = np.random.default_rng(11)
    for nominal in ([False] * 4, [True] * 3, [False, True, False, True, True]):
        nominal = np.array(nominal)
        p, n, K = len(nominal), 77, 6
        X = np.where(nominal, rng.integers(0, 3, (n, p)), rng.normal(0, 3, (n, p)))
        X[:, 0] = X[0, 0]  # a constant column: width 0
        cols = np.ascontiguousarray(X.T)  # as the kernels take rows
        lo, width = kmeans.ranges(cols)
        Z = kmeans._scaled(X[rng.choice(n, K, replace=False)], nominal, lo, width)
        zb, db = np.empty((p, kmeans.BLOCK)), np.empty((K, kmeans.BLOCK))
        for i0 in range(0, n, kmeans.BLOCK):
            m = min(kmeans.BLOCK, n - i0)
            kmeans._block_distances(cols, i0, m, nominal, lo, width, Z, zb, db)
            for r in range(m):
                for c in range(K):
                    total = 0.0
                    for j in range(p):
                        x = float(X[i0 + r, j])
                        if nominal[j]:
                            total += 1.0 if x != Z[c, j] else 0.0
                        else:
                            z = 0.0 if width[j] == 0 else (x - lo[j]) / width[j]
                            total += (z - Z[c, j]) * (z - Z[c, j])
                    assert total == db[c, r]


def test_rows_of_every_shape_run_on_one_kernel():
    """A matrix of one row or of one attribute is C- and F-ordered at once, and
    numba types such an array as C-ordered: kernels that took the rows would be
    compiled a second time for it (tens of seconds on a first run). They take the
    rows attribute-major, so every shape runs on one compiled kernel."""
    rng = np.random.default_rng(5)
    for n, p in ((40, 3), (40, 1), (1, 3), (1, 1)):
        lay = kmeans.Layout(np.zeros(p, np.bool_), np.zeros(p, np.int64),
                            np.zeros(p, np.int64), 0)
        X, w = rng.normal(size=(n, p)), np.ones(n)
        for init in kmeans.INITS:
            kmeans.run(X, w, lay, 2, 1, init)
        rows = em.Rows(X, w, lay)
        fitted = em.iterate(rows, em.initialise(rows, 1, em.fresh_random(1), 1e-6).params,
                            5, 1e-6, 1, rows)
        em.log_likelihood(rows, fitted.params)
        kmeans.nearest(rows.X.T, lay.nominal, *kmeans.ranges(rows.X.T), X[:1].copy(), 64,
                       None)
    for kernel in (kmeans.ranges, kmeans._seed_random, kmeans._update_d2, kmeans.lloyd,
                   kmeans.nearest, em.iterate_kernel, em.e_step):
        # one signature but for ``threads`` (None, or True where another test's data
        # were large enough for threads: see jit.threads)
        shapes = {tuple(t for t in sig if t not in (numba.types.none, numba.types.boolean))
                  for sig in kernel.signatures}
        assert len(shapes) == 1, kernel


# ---------------------------------------------------------------- properties

@st.composite
def mixtures(draw):
    """(data matrix, true labels, true means) of a mixture well separated in
    every attribute (k-means scales each attribute by its range)."""
    k = draw(st.integers(2, 3))
    p = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sizes = [draw(st.integers(60, 150)) for _ in range(k)]
    means = 100.0 * rng.permutation(k)[:, None] + rng.uniform(-5, 5, (k, p))
    sd = rng.uniform(0.5, 1.5, (k, p))
    X = np.concatenate([rng.normal(means[c], sd[c], (sizes[c], p)) for c in range(k)])
    y = np.repeat(np.arange(k), sizes)
    perm = rng.permutation(len(y))
    return X[perm], y[perm], means


def dataset(X):
    return Dataset([Attribute(f"x{j}", NUMERIC) for j in range(X.shape[1])],
                   [X[:, j].copy() for j in range(X.shape[1])])


def matched(found, true):
    """Distance of each true mean to the nearest found one."""
    return np.min(np.linalg.norm(true[:, None, :] - found[None, :, :], axis=2), axis=1)


def sample_means(X, y):
    return np.array([X[y == c].mean(axis=0) for c in range(y.max() + 1)])


PROPS = settings(max_examples=25, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(mixtures())
def test_em_recovers_mixture_means(mix):
    X, y, means = mix
    model = fit_em(dataset(X), k=len(means))
    assert model.num_clusters == len(means)
    assert matched(model.params.mean, means).max() < 1.0
    assert matched(model.params.mean, sample_means(X, y)).max() < 1e-6
    labels = np.argmax(model.proba(list(X.T), len(X)), axis=1)
    for c in range(len(means)):  # each component is one cluster
        assert len(set(labels[y == c])) == 1


@PROPS
@given(mixtures(), st.integers(0, 1000))
def test_kmeans_recovers_centres(mix, seed):
    X, y, means = mix
    data = dataset(X)
    k = len(means)
    plus = fit_kmeans(data, k, seed=seed)
    assert matched(plus.centroids, means).max() < 1.0
    assert matched(plus.centroids, sample_means(X, y)).max() < 1e-9
    rand = fit_kmeans(data, k, seed=seed, init="random")
    _, start = kmeans.seed_random(X, k, seed)
    hit = {int(y[np.flatnonzero((X == s).all(axis=1))[0]]) for s in start}
    if len(hit) == k:  # seeds in every component: the centres are found
        assert matched(rand.centroids, sample_means(X, y)).max() < 1e-9
    # always a fixed point: centres are their members' means, rows their nearest
    assign = rand.assign(data.columns, data.n)
    for c in range(rand.num_clusters):
        assert np.allclose(rand.centroids[c], X[assign == c].mean(axis=0))


def brute_sse(model, data, centres):
    """The squared error of the rows to their nearest of ``centres``."""
    X = model.matrix(data.columns, data.n)
    assign = kmeans.nearest(X.T, model.layout.nominal, model.lo, model.width, centres, 4096,
                            None)
    total = 0.0
    for j, a in enumerate(model.attributes):
        x, c = X[:, j], centres[assign, j]
        if a.nominal:
            d = (x != c).astype(np.float64)
        elif model.width[j] > 0:
            d = (x - model.lo[j]) / model.width[j] - (c - model.lo[j]) / model.width[j]
        else:
            d = np.zeros(len(x))
        total += float(np.sum(d * d))
    return total


@PROPS
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.sampled_from(["random", "k-means++"]))
def test_kmeans_sse_is_the_assignments_error(seed, k, init):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(k + 5, 200))
    num = rng.normal(0, 3, n)
    num[rng.random(n) < 0.1] = np.nan
    nom = rng.integers(0, 3, n).astype(np.float64)
    nom[rng.random(n) < 0.1] = np.nan
    data = Dataset([Attribute("u", NUMERIC), Attribute("v", NOMINAL, ("a", "b", "c")),
                    Attribute("w", NUMERIC)], [num, nom, rng.uniform(0, 1, n)])
    model = fit_kmeans(data, k, seed=seed % 1000, init=init)
    assert model.iterations < 500
    # the error is that of the last pass: of the final centres, unless the first
    # pass (which compares every row with cluster 0) already changed nothing
    centres = model.centroids
    if model.iterations == 1:
        X = model.matrix(data.columns, data.n)
        seeding = kmeans.seed_random(X, k, seed % 1000) if init == "random" else \
            kmeans.seed_plus_plus(X, data.weights, model.layout.nominal, model.lo,
                                  model.width, k, seed % 1000)
        centres = seeding[1]
    assert math.isclose(model.sse, brute_sse(model, data, centres), rel_tol=1e-9,
                        abs_tol=1e-12)
    body, version, model_id = models.dumps(model)
    assert isinstance(models.loads(model.learner, version, body, model_id), KMeansModel)
    assert not isinstance(model, EMModel)


def brute_lloyd(X, w, nominal, nvals, lo, width, C, max_iter):
    """The reference's Lloyd iterations in plain Python floats, every row measured
    against every centre each pass, its sums added in row order (one chunk): the
    centres, assignments, iterations and squared error."""
    n, p = X.shape
    assign = [0] * n
    it = 0
    while True:
        it += 1
        K = len(C)
        Z = [[C[c][j] if nominal[j] else (0.0 if width[j] == 0 else
                                          (C[c][j] - lo[j]) / width[j])
              for j in range(p)] for c in range(K)]
        sse, sw, cnt = [0.0] * K, [0.0] * K, [0] * K
        s = [[0.0] * p for _ in range(K)]
        mode = [[[0] * int(nvals[j]) for j in range(p)] for _ in range(K)]
        moved = False
        for i in range(n):
            best, mind = 0, 2147483647.0
            for c in range(K):
                total = 0.0
                for j in range(p):
                    x = float(X[i, j])
                    if nominal[j]:
                        total += 1.0 if x != Z[c][j] else 0.0
                    else:
                        z = 0.0 if width[j] == 0 else (x - lo[j]) / width[j]
                        total += (z - Z[c][j]) * (z - Z[c][j])
                if math.sqrt(total) < mind:
                    best, mind = c, math.sqrt(total)
            sse[best] += mind * mind
            sw[best] += float(w[i])
            cnt[best] += 1
            for j in range(p):
                if nominal[j]:
                    mode[best][j][int(X[i, j])] += int(w[i])
                else:
                    s[best][j] += float(w[i]) * float(X[i, j])
            moved = moved or assign[i] != best
            assign[i] = best
        keep = [c for c in range(K) if cnt[c] > 0]
        C = [[float(max(range(int(nvals[j])), key=lambda v: (mode[c][j][v], -v)))
              if nominal[j] else (s[c][j] / sw[c] if sw[c] > 0 else 0.0)
              for j in range(p)] for c in keep]
        if not moved or it == max_iter:
            relabel = {c: t for t, c in enumerate(keep)}
            return C, [relabel[a] for a in assign], it, sum(sse[c] for c in keep)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 4))
def test_bounded_passes_are_the_references_to_the_bit(seed, k, spread):
    """Lloyd passes that leave a row with its centre when its bound says no other
    can be nearer (``_pass_chunk``) give the reference's centres, assignments,
    iterations and error to the bit, against every row measured each pass. The
    values are small integers, so that distances tie often, and clusters are
    dropped when they empty."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(k + 3, 150))
    nominal = np.array([False, True, False, False][:1 + seed % 4])
    nominal[0] = False
    p = len(nominal)
    nvals = np.where(nominal, 3, 0).astype(np.int64)
    offs = np.concatenate([[0], np.cumsum(nvals)[:-1]]).astype(np.int64)
    X = np.where(nominal, rng.integers(0, 3, (n, p)),
                 rng.integers(0, 2 + spread, (n, p)) * 0.5).astype(np.float64)
    w = rng.integers(1, 3, n).astype(np.float64)
    cols = np.ascontiguousarray(X.T)
    lo, width = kmeans.ranges(cols)
    C = X[rng.choice(n, k, replace=True)]
    got = kmeans.lloyd(cols, w, nominal, nvals, offs, int(nvals.sum()), lo, width, C, 500,
                       10**6, None, stop.flag(), np.zeros(1, np.int64))
    want = brute_lloyd(X, w, nominal, nvals, lo, width, C.tolist(), 500)
    assert got[2] == want[2]
    assert got[1].tolist() == want[1]
    assert got[0].tobytes() == np.array(want[0], np.float64).reshape(got[0].shape).tobytes()
    assert got[3] == want[3]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_passes_that_measure_whole_windows_are_the_references_to_the_bit(seed):
    """A pass measures every row of a window, without testing bounds, where the
    window before it measured most of its own (``_pass_chunk``): here centres
    start together in one of three blobs and travel, so that windows of 1,024 rows
    switch between the two ways over several chunks, on numba's threads. The
    centres, assignments and iterations are those of every row measured, and the
    error too but for its last bits: a pass adds it up a chunk of 2,048 rows at a
    time."""
    rng = np.random.default_rng(seed)
    n = 5000
    blob = rng.integers(0, 3, n)
    X = np.round((rng.normal(0, 1, (n, 2)) + np.stack([4.0 * blob, blob % 2], 1)) * 4) / 4
    w = rng.integers(1, 3, n).astype(np.float64)
    nominal, nvals, offs = np.zeros(2, np.bool_), np.zeros(2, np.int64), np.zeros(2, np.int64)
    cols = np.ascontiguousarray(X.T)
    lo, width = kmeans.ranges(cols)
    distinct = np.unique(X, axis=0)
    C = distinct[np.argsort(np.abs(distinct).sum(1), kind="stable")[:4]]  # near (0, 0)
    got = kmeans.lloyd(cols, w, nominal, nvals, offs, 0, lo, width, C.copy(), 500, 2048,
                       True, stop.flag(), np.zeros(1, np.int64))
    want = brute_lloyd(X, w, nominal, nvals, lo, width, C.tolist(), 500)
    assert got[2] == want[2] > 3
    assert got[1].tolist() == want[1]
    assert got[0].tobytes() == np.array(want[0], np.float64).reshape(got[0].shape).tobytes()
    assert got[3] == pytest.approx(want[3], rel=1e-13)


def test_the_preparation_on_threads_is_the_one_on_one_thread():
    """The fill values and the columns' ranges and means (``filters.fill_values``,
    ``kmeans.described``) are worked out a column to a thread on large tables, each
    column read in row order: the same bits as one column after another."""
    from duckmine.algorithms import filters
    from duckmine.algorithms.jit import COLUMN_PASS_CELLS, frozen

    rng = np.random.default_rng(5)
    n = COLUMN_PASS_CELLS // 4 + 17
    nominal = np.array([False, True, False, True])
    nvals = np.where(nominal, 3, 0).astype(np.int64)
    M = np.where(nominal[:, None], rng.integers(0, 3, (4, n)), rng.normal(0, 1e3, (4, n)))
    M[rng.random((4, n)) < 0.05] = np.nan
    w = rng.random(n) * 3
    assert M.size >= COLUMN_PASS_CELLS
    fill = filters.fill_values.serial(frozen(M), w, nominal, nvals)
    assert filters.fill_values(frozen(M), w, nominal, nvals).tobytes() == fill.tobytes()
    fill = np.nan_to_num(fill)
    one = kmeans.described.serial(M, w, fill, nominal, nvals)
    wide = kmeans.described(M, w, fill, nominal, nvals)
    assert [a.tobytes() for a in wide] == [a.tobytes() for a in one]
