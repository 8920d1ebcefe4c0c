"""EM over a Spark DataFrame too large for one machine, in one barrier stage
(``frames.iterate``): each task holds its share of the rows, and each iteration
runs the E step on them and adds up the M step's weighted sums with those
memberships, in one pass (``em._e_chunk``); the tasks exchange their sums through
the driver, and every task tests convergence and re-estimates the model, as
``em.iterate_kernel`` does on one machine.

- **The start** is the core's (``em.initialise``: the best of ten k-means runs),
  chosen on the driver, on the table's rows in the order of their values, as the
  single-machine fit takes them, when the table has at most ``sample`` rows; on a
  sample of about ``sample`` rows otherwise. A failed step restarts from a new
  start on the same rows, as the core does: the tasks ask the driver for it and
  go on with the rows they hold.
- **A standard deviation** that collapses is replaced by the attribute's standard
  deviation over the whole table, from the sums of its blocks.
- ``k = -1`` (choosing the number of clusters by cross-validation) is not run
  over the cluster: choose it on a sample (``em_fit`` on DuckDB), then pass it.

From the same start the log-likelihood equals the single-machine one but for the
order in which floating-point sums were added (a relative 1e-12 or so).
"""

import time

import numpy as np

from ..algorithms import contract
from ..algorithms.clusters import em as core
from ..algorithms.clusters.kmeans import Layout
from ..algorithms.clusters.model import EMModel, _distinct_at_least
from ..algorithms.filters import ReplaceMissing
from ..udfs.models import value
from . import frames
from .lloyd import SAMPLE


def fitted(df, k, max_iterations=100, seed=100, min_stddev=1e-6, exclude=(), weight=None,
           sample=SAMPLE):
    """The model value (as DuckDB's ``em_fit`` gives it) of ``df``."""
    fn = "em"
    options = contract.get(fn, fn).options(fn, {
        "k": k, "max_iterations": max_iterations, "seed": seed, "min_stddev": min_stddev,
        "exclude": list(exclude)})
    if options["k"] < 1:
        raise ValueError(f"em: k must be a number of clusters on Spark, got {k}; choose it "
                         "by cross-validation on a sample (em_fit with k := -1 on DuckDB)")
    frame = frames.Frame(fn, df, options["exclude"], weight)
    frame.read_values(count=True)
    attributes = frame.attributes
    layout = Layout.of(attributes)
    fit = {"seed": seed, "restarts": 0}

    def begin(total, sampled):
        fill = frame.replaced(total)[0]
        X, w = sampled(fill)
        if options["k"] > len(X) or not _distinct_at_least(X.T, options["k"]):
            raise ValueError(f"em: k = {k} is larger than the number of distinct rows")
        rows = core.Rows(X, w, layout)
        fsd = frame.full_sd(total, fill)
        rows.fsd[:], rows.fsd_done[:] = fsd, True  # the whole table's, not the sample's
        init = core.initialise(rows, options["k"], core.fresh_random(seed), min_stddev)
        fit.update(total=total, fill=fill, rows=rows, params=init.params)
        return {"fill": fill.tolist(), "fsd": fsd.tolist(), **_listed(init.params)}

    def again(asked):  # ``em.iterate``'s restart, on the sample's rows
        fit["seed"] += 1
        fit["restarts"] += 1
        try:
            rr, k, fit["restarts"] = core.restart(fit["seed"], fit["restarts"],
                                                  fit["params"].k, asked["status"])
        except core.StepFailed as err:
            raise ValueError(f"em: {err}") from None
        fit["params"] = core.initialise(fit["rows"], k, rr, min_stddev).params
        return _listed(fit["params"])

    out = frames.iterate(frame, (seed, sample), begin, _em_task(layout, options), again)
    params = fit["params"]
    for a, got in zip(params.arrays(), out["params"]):
        a[:] = np.asarray(got).reshape(a.shape)
    opts = {key: options[key] for key in ("k", "max_iterations", "seed", "min_stddev")}
    return value(EMModel(attributes, ReplaceMissing(attributes, fit["fill"]), opts,
                         fit["total"]["n"], params, out["llk"], out["steps"],
                         out["reverted"]))


def _listed(params):
    """A start's parameters as a message's lists."""
    return {"params": [a.ravel().tolist() for a in params.arrays()]}


def _em_task(layout, options):
    """The task that runs ``em.iterate`` on a partition's rows from the start's
    parameters, its sums added with every other partition's at each step; after a
    failed step it asks the driver for a new start (every task fails the same
    step, as every task has the same sums) and goes on from that."""
    nomidx = core.nominal_index(layout)
    max_iterations, min_sd = options["max_iterations"], options["min_stddev"]
    p, V = len(layout.nominal), layout.V

    def task(mats, total, start):
        fsd = np.array(start["fsd"], np.float64)
        seconds, loglik = [], 0.0
        while True:
            K = len(start["params"][0])
            params = core.Params(*(np.array(a, np.float64).reshape(shape) for a, shape in zip(
                start["params"], [(K,), (K, p), (K, p), (K, V), (K, p)])))
            status, loglik, steps, reverted = _loop(mats, total, layout, nomidx, params,
                                                    loglik, fsd, max_iterations, min_sd,
                                                    seconds)
            if status == core.OK:
                return {"llk": loglik, "steps": steps, "reverted": reverted,
                        "params": _listed(params)["params"], "seconds": seconds}
            start = total({"ask": "again", "status": status})

    return task


def _loop(mats, total, layout, nomidx, params, llk, fsd, max_iterations, min_sd, seconds):
    """``em.iterate_kernel`` over the cluster from ``params`` (updated in place):
    (status, log-likelihood, steps, whether the last step was reverted)."""
    nominal, nvals, offs = layout.nominal, layout.nvals, layout.offs
    previous = [a.copy() for a in params.arrays()]
    steps, loglik = 0, llk
    for i in range(max_iterations):
        began = time.perf_counter()
        old = loglik
        if not (params.priors > 0).all():
            return core.CLUSTER_EMPTY, loglik, steps, False
        sums = _sums(mats, total, layout, nomidx, params)
        if sums["bad"]:
            return core.NOT_NORMALISABLE, loglik, steps, False
        loglik = sums["ll"] / sums["sw"]
        steps += 1
        seconds.append(time.perf_counter() - began)
        if i > 0 and loglik - old < 1e-6:
            if loglik - old < 0:
                for a, q in zip(params.arrays(), previous):
                    a[:] = q
                return core.OK, loglik, steps, True
            break
        for a, q in zip(previous, params.arrays()):
            a[:] = q
        if not _m_step(sums, params, nominal, nvals, offs, nomidx, fsd, min_sd):
            return core.NOT_NORMALISABLE, loglik, steps, False
    return core.OK, loglik, steps, False


def _sums(mats, total, layout, nomidx, params):
    """The E step's log-likelihood and the M step's sums, over every partition."""
    nominal, nvals, offs = layout.nominal, layout.nvals, layout.offs
    logprior, denom, logsd, logp = core._tables(params.priors, params.sd, params.counts,
                                                params.total, nominal, nvals, offs)
    mean = params.mean
    K, p, V = params.k, len(nominal), layout.V
    pn = max(int(nominal.sum()), 1)
    ll = sw = 0.0
    bad = False
    sums = [np.zeros((1, K)), np.zeros((1, V, K)), np.zeros((1, pn, K)),
            np.zeros((1, p, K)), np.zeros((1, p, K))]
    for X, w in mats:
        n = len(X)
        ll_c, sw_c, bad_c = np.zeros(1), np.zeros(1), np.zeros(1, np.bool_)
        here = [np.zeros_like(s) for s in sums]
        core._e_chunk(X.T, w, nominal, offs, nomidx, mean, denom, logsd, logp, logprior,
                      np.empty((0, K)), np.empty(0), tuple(here), np.int64(0), np.int64(n),
                      ll_c, sw_c, bad_c)
        ll += ll_c[0]
        sw += sw_c[0]
        bad |= bool(bad_c[0])
        for s, h in zip(sums, here):
            s += h
    out = total({"ll": ll, "sw": sw, "bad": bad, "sums": [s.ravel().tolist() for s in sums]})
    shapes = [(K,), (V, K), (pn, K), (p, K), (p, K)]
    out["sums"] = [np.asarray(a).reshape(shape) for a, shape in zip(out["sums"], shapes)]
    return out


def _m_step(sums, params, nominal, nvals, offs, nomidx, fsd, min_sd):
    """``em.estimate`` from the summed sums, the Laplace start added (a collapsed
    standard deviation takes the whole table's, ``fsd``); False where they cannot
    be normalised."""
    pri, cnt, tot, S, SS = sums["sums"]
    cnt, tot = cnt.copy(), tot.copy()
    for j in np.flatnonzero(nominal):  # the Laplace start
        tot[nomidx[j], :] += float(nvals[j])
        cnt[offs[j]:offs[j] + nvals[j], :] += 1.0
    status = core.estimate(pri, cnt, tot, S, SS, nominal, nvals, offs, nomidx,
                           *params.arrays(), min_sd, np.empty((len(nominal), 0)).T,
                           np.asarray(fsd, np.float64), np.ones(len(nominal), np.bool_))
    return status == core.OK
