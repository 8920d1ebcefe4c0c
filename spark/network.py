"""A Bayesian network classifier (``bayes_net``) of a Spark DataFrame too large for
one machine: Spark counts, the driver searches.

- **Cut points.** After the table is encoded (``frames.Frame``), one pass counts,
  per numeric attribute, the rows of each (value, class) that have a class, each
  partition adding up its own; Spark adds the partitions' counts, and a worker
  per attribute finds its MDL cut points from them
  (``discretize.counted_cut_points``).
- **Distinct rows.** A second pass codes every row that has a class as the
  single-machine fit codes it (an interval for a numeric value, a missing value
  apart) and counts each distinct coded row; Spark adds them up. The driver fills
  each missing value with its attribute's weighted mode and merges the rows this
  makes equal.
- **Search and tables** run on the driver over those distinct rows, each counted
  as many times as it occurs (``bayes.model.network``).

Every count is a whole number, so it is exact in any order of addition and the
model is the single-machine fit's, bit for bit. Weights must therefore be whole
numbers (counts of rows): fractional weights would be summed in an order Spark does
not fix, and are refused. A worker holds one numeric attribute's distinct (value,
class) pairs; the driver holds the distinct coded rows: at most the rows of the
table, and far fewer where the attributes take few values (after discretisation,
most do).
"""

import numpy as np
import pyarrow as pa

from ..algorithms import contract, discretize, memory
from ..algorithms.bayes.model import Coding, Options, network
from ..algorithms.dataset import NUMERIC
from ..algorithms.filters import Discretize, Pipeline, ReplaceMissing
from ..udfs.models import value
from . import frames, settings

FN = "bayes_net"
DRIVER_CELL = 48  # bytes a cell of the distinct rows on the driver, estimated: the
# Arrow columns, the int64 matrix, its filled copy and np.unique's sorted copies
ADVICE = ("the driver holds the table's distinct rows once numeric attributes are "
          "discretised: leave out attributes of many values, fit on a sample, or fit "
          "one model per group (bayes_net_fit(TABLE(t) PARTITION BY (g), ...))")
PAIRS = "attr int, value binary, cls binary, weight binary, rows binary"


def fitted(df, target, search="k2", max_parents=1, score="bayes", alpha=0.5,
           use_ad_tree=True, weight=None):
    """The model value (as DuckDB's ``bayes_net_fit`` gives it) of ``df``."""
    decl = contract.get(FN, FN)
    options = Options.of(decl.options(FN, {
        "search": search, "max_parents": max_parents, "score": score, "alpha": alpha,
        "use_ad_tree": use_ad_tree}))
    frame = frames.Frame(FN, df, weight=weight)
    t = frame.target_index(decl, target)
    try:
        total = frame.open()
        frame.check_target(decl, t, total)
        attributes = frame.attributes
        cuts = _cut_points(frame, t)
        codes, times, weights = _distinct_rows(frame, t, cuts)
    finally:
        frame.close()
    coding = _coding(attributes, t, cuts, codes, weights)
    codes, times, weights = _merged(_filled(codes, coding), times, weights)
    return value(network(coding, codes, options, weights, times))


def _cut_points(frame, t):
    """Per attribute other than the class: its MDL cut points (numeric) or None."""
    p, kinds = frame.p, frame.kinds
    numeric = [j for j in range(p) if kinds[j] == NUMERIC and j != t]
    if not numeric:
        return [None] * p

    def pairs(batches):  # a block's pairs of an attribute as one row of arrays
        for X, w in frames.matrices(batches, p):
            X, w = frames.labelled(X, w, t)
            y = X[:, t]
            for j in numeric:
                known = ~np.isnan(X[:, j])
                v, c, ws = X[known, j], y[known].astype(np.int32), w[known]
                if not len(v):
                    continue
                order = np.lexsort((c, v))
                v, c, ws = v[order], c[order], ws[order]
                start = np.flatnonzero(np.r_[True, (v[1:] != v[:-1]) | (c[1:] != c[:-1])])
                yield pa.RecordBatch.from_pydict({
                    "attr": pa.array([j], pa.int32()), "value": [v[start].tobytes()],
                    "cls": [c[start].tobytes()],
                    "weight": [np.add.reduceat(ws, start).tobytes()],
                    "rows": [np.diff(np.r_[start, len(v)]).astype(np.int64).tobytes()]})

    def cut(table):  # one attribute's pairs, on a worker
        def joined(name, dtype):
            return np.concatenate([np.frombuffer(b, dtype)
                                   for b in table.column(name).to_pylist()])

        c = discretize.counted_cut_points(
            joined("value", np.float64), joined("cls", np.int32).astype(np.int64),
            joined("weight", np.float64), joined("rows", np.int64), k)
        return pa.table({"attr": pa.array([table.column("attr")[0].as_py()], pa.int32()),
                         "cuts": pa.array([c.tolist()], pa.list_(pa.float64()))})

    k = len(frame.values[t])
    # an attribute's pairs need not be added up first: the cut search takes a value
    # and class more than once, and whole numbers add up exactly in any order
    got = frame.blocks.mapInArrow(pairs, PAIRS).groupBy("attr").applyInArrow(
        cut, "attr int, cuts array<double>").collect()
    cuts = [None] * p
    for j in numeric:  # an attribute without a known value has no pairs
        cuts[j] = np.empty(0)
    for r in got:
        cuts[r["attr"]] = np.array(r["cuts"], np.float64)
    return cuts


def _distinct_rows(frame, t, cuts):
    """(codes (m, p), how many rows each stands for, their weight): the table's rows
    that have a class, coded (a missing value as -1), counted once per distinct
    coded row. Refuses weights that are not whole numbers."""
    from pyspark.sql import functions as F

    p = frame.p
    names = [f"c{j}" for j in range(p)]
    schema = ", ".join(f"{c} int" for c in names) + ", rows long, weight double, " \
        "fractional boolean"

    def coded(batches):
        for X, w in frames.matrices(batches, p):
            X, w = frames.labelled(X, w, t)
            if not len(X):
                continue
            codes = np.empty(X.shape, np.int32)
            for j in range(p):
                x = X[:, j]
                codes[:, j] = np.searchsorted(cuts[j], x, side="left") \
                    if cuts[j] is not None else np.nan_to_num(x, nan=-1)
                codes[np.isnan(x), j] = -1
            rows, inverse = np.unique(codes, axis=0, return_inverse=True)
            inverse = inverse.ravel()
            out = {c: rows[:, j] for j, c in enumerate(names)}
            out["rows"] = np.bincount(inverse, minlength=len(rows)).astype(np.int64)
            out["weight"] = np.bincount(inverse, w, len(rows))
            out["fractional"] = np.zeros(len(rows), np.bool_)
            out["fractional"][np.unique(inverse[w != np.floor(w)])] = True
            yield pa.RecordBatch.from_pydict(out)

    grouped = frame.blocks.mapInArrow(coded, schema).groupBy(*names).agg(
        F.sum("rows").alias("rows"), F.sum("weight").alias("weight"),
        F.max("fractional").alias("fractional")).persist()
    try:  # refused before the driver takes them, if they would not fit
        memory.check(FN, DRIVER_CELL, grouped.count(), p + 3, settings(
            frame.df.sparkSession)["memory_limit"], advice=ADVICE,
            what="spark.duckmine.memoryLimit")
        got = grouped.toArrow()
    finally:
        grouped.unpersist()
    if got.column("fractional").to_numpy(zero_copy_only=False).any():
        raise ValueError(
            f"{FN}: weight column {frame.weight!r} holds fractions; over the cluster a "
            "network's counts must be whole numbers to come out the same every run (fit "
            "on one worker with bayes_net_fit(TABLE(t) WITH SINGLE PARTITION, ...), or "
            "round the weights)")
    codes = np.column_stack([got.column(c).to_numpy() for c in names]).astype(np.int64)
    return codes, got.column("rows").to_numpy(), got.column("weight").to_numpy()


def _coding(attributes, t, cuts, codes, weights):
    """The single-machine fit's Coding: the cut points, then each attribute's
    weighted mode (the first of equal weights) as the fill of its missing values."""
    inputs = [a for j, a in enumerate(attributes) if j != t]
    used = [j for j in range(len(attributes)) if j != t]
    discretized = Discretize(inputs, cuts=[cuts[j] for j in used])
    fill = []
    for j, a in zip(used, discretized.outputs):
        known = codes[:, j] >= 0
        fill.append(float(np.argmax(np.bincount(codes[known, j], weights[known],
                                                len(a.values)))))
    return Coding(attributes, t, Pipeline(inputs, [
        discretized, ReplaceMissing(discretized.outputs, fill)]))


def _filled(codes, coding):
    codes = codes.copy()
    for j, f in zip(coding.used, coding.pipeline.filters[1].fill):
        codes[codes[:, j] < 0, j] = int(f)
    return codes


def _merged(codes, times, weights):
    """The rows made equal by filling in merged, their counts and weights added."""
    rows, inverse = np.unique(codes, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return (rows, np.bincount(inverse, times, len(rows)),
            np.bincount(inverse, weights, len(rows)))

