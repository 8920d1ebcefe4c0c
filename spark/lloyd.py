"""k-means over a Spark DataFrame too large for one machine, in one barrier stage
(``frames.iterate``): each task holds its share of the rows, and each Lloyd pass
assigns them and adds up the per-cluster sums with the single-machine kernel
(``algorithms/clusters/kmeans._pass_chunk``, each row's bound kept by its task
from pass to pass); the tasks exchange their sums
through the driver and every task moves the centres, as ``kmeans.lloyd`` does.

- **The start** is chosen on the driver by the core's seeding (``init``) on the
  table's rows in the order of their values, as the single-machine fit takes
  them, when the table has at most ``sample`` rows; from a sample of about
  ``sample`` rows otherwise.
- **Stopping:** the reference stops when no row changes cluster. A pass's centres
  are a function of its assignments, so unchanged assignments are unchanged
  centres: the fit stops when a pass gives the centres it started from (after
  the first pass, which compares every row with cluster 0: it stops when no
  partition saw a row go elsewhere).

From the same start the model equals the single-machine one but for the order in
which floating-point sums were added (a relative 1e-12 or so).
"""

import time

import numpy as np

from ..algorithms import contract
from ..algorithms.clusters import kmeans as core
from ..algorithms.clusters.model import KMeansModel, _distinct_at_least
from ..algorithms.filters import ReplaceMissing
from ..udfs.models import value
from . import frames

SAMPLE = 100_000


def fitted(df, k, seed=10, init="k-means++", max_iterations=500, exclude=(), weight=None,
           sample=SAMPLE):
    """The model value (as DuckDB's ``kmeans_fit`` gives it) of ``df``."""
    fn = "kmeans"
    options = contract.get(fn, fn).options(fn, {
        "k": k, "seed": seed, "init": init, "max_iterations": max_iterations,
        "exclude": list(exclude)})
    frame = frames.Frame(fn, df, options["exclude"], weight)
    frame.read_values(count=True)
    attributes = frame.attributes
    layout = core.Layout.of(attributes)
    fit = {}

    def begin(total, sampled):
        fill, lo, width, full = frame.replaced(total)
        C = _start(*sampled(fill), layout, lo, width, options)
        fit.update(total=total, fill=fill, lo=lo, width=width, full=full)
        return {"fill": fill.tolist(), "lo": lo.tolist(), "width": width.tolist(),
                "C": C.tolist()}

    out = frames.iterate(frame, (options["seed"], sample), begin,
                         _lloyd(layout, options["max_iterations"]))
    C = np.array(out["C"]).reshape(-1, len(layout.nominal))
    opts = {key: options[key] for key in ("k", "seed", "init", "max_iterations")}
    return value(KMeansModel(attributes, ReplaceMissing(attributes, fit["fill"]), opts,
                             fit["total"]["n"], fit["lo"], fit["width"], fit["full"], C,
                             np.array(out["sizes"], np.int64), out["sse"],
                             np.array(out["errs"]), out["it"]))


def _start(X, w, layout, lo, width, options):
    """The initial centres: the core's seeding on the sample's rows in the order of
    their values (all of the table's rows, or about ``sample``)."""
    k = options["k"]
    if k > len(X) or not _distinct_at_least(X.T, k):
        raise ValueError(f"kmeans: k = {k} is larger than the number of distinct rows")
    if options["init"] == "random":
        return core.seed_random(X, k, options["seed"])[1]
    return core.seed_plus_plus(X, w, layout.nominal, lo, width, k, options["seed"])[1]


def _lloyd(layout, max_iterations):
    """The task that runs ``kmeans.lloyd`` on a partition's rows from the start's
    centres, its sums added with every other partition's at each pass."""
    nominal, nvals, offs, V = layout.nominal, layout.nvals, layout.offs, layout.V
    p = len(nominal)

    def task(mats, total, start):
        lo, width = np.array(start["lo"]), np.array(start["width"])
        C1, it, seconds = np.array(start["C"]).reshape(-1, p), 0, []
        # each block's assignments, for the first pass's test against cluster 0
        # alone (later passes stop on unchanged centres): made once, not every pass
        assigned = [np.zeros(len(X), np.int64) for X, _ in mats]
        lower = [np.zeros(len(X)) for X, _ in mats]  # the rows' bounds (``_pass_chunk``)
        Z = core._scaled(C1, nominal, lo, width)
        shift = np.full(len(C1), np.inf)
        while True:
            start = time.perf_counter()
            it += 1
            K = len(C1)
            # the kernel adds each block's rows into these (the squared standard
            # deviations' sums and unweighted nominal counts are not needed)
            sse, sw, s, ss, cnt, mode, nom = (
                np.zeros((1, K)), np.zeros((1, K)), np.zeros((1, K, p)),
                np.zeros((1, K, p)), np.zeros((1, K), np.int64),
                np.zeros((1, K, V), np.int64), np.zeros((1, K, V), np.int64))
            moved = False
            changed = np.zeros(1, np.bool_)
            for (X, w), assign, bound in zip(mats, assigned, lower):
                core._pass_chunk(X.T, w, nominal, offs, lo, width, Z, assign, np.int64(0),
                                 np.int64(len(X)), sse, sw, s, ss, cnt, mode, nom, changed,
                                 bound, shift)
                moved |= bool(changed[0])
            got = total({"sums": [q.ravel().tolist() for q in (sse, sw, s, cnt, mode)],
                         "moved": moved})
            shapes = [(K,), (K,), (K, p), (K,), (K, V)]
            sse, sw, s, cnt, mode = [np.asarray(a).reshape(shape)
                                     for a, shape in zip(got["sums"], shapes)]
            keep, newC = core.centres(sw, s, cnt.astype(np.int64), mode.astype(np.int64),
                                      nominal, nvals, offs)
            if it == 1:
                converged = not got["moved"]
            else:
                converged = newC.shape == C1.shape and np.array_equal(newC, C1)
            C1 = newC
            seconds.append(time.perf_counter() - start)
            if converged or it == max_iterations:
                break
            Z, shift = core.rescaled(Z, C1, nominal, lo, width)
        return {"C": C1.tolist(), "sse": float(sse.sum()), "errs": sse[keep].tolist(),
                "sizes": cnt[keep].astype(np.int64).tolist(), "it": it, "seconds": seconds}

    return task
