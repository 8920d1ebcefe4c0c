"""A Spark DataFrame read as the cores read a Dataset, for the fits that run over
the cluster a pass at a time (``spark/lloyd.py``, ``spark/mixture.py``): its columns'
kinds from the schema, one pass of summary statistics (row count, weights, each
numeric column's range and weighted sum, each nominal column's weighted value
counts), and each Arrow batch encoded as the single-machine fit would hold it
(float64, nominal codes in the order of the whole table's values, NaN missing).

A pass runs a function over every partition with ``mapInArrow`` and brings back
one small JSON summary per partition; the driver adds them in partition order,
so a fit gives the same model every run.
"""

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms.dataset import NOMINAL, NUMERIC, Attribute
from ..algorithms.filters import ReplaceMissing
from ..udfs.table import Rows, _numeric, _weights, kind_of

PASS_SCHEMA = "part int, summary string"


def run_pass(df, fn):
    """``fn(batches) -> dict`` on every partition; the dicts in partition order."""
    def each(batches):
        from pyspark import TaskContext

        out = fn(batches)
        yield pa.RecordBatch.from_arrays(
            [pa.array([TaskContext.get().partitionId()], pa.int32()),
             pa.array([json.dumps(out)], pa.string())], names=["part", "summary"])

    rows = df.mapInArrow(each, PASS_SCHEMA).collect()
    return [json.loads(r["summary"]) for r in sorted(rows, key=lambda r: r["part"])]


class Frame:
    """The columns a fit reads from ``df`` and how to encode them."""

    def __init__(self, fn, df, exclude=(), weight=None):
        schema = df.schema
        names = [f.name for f in schema.fields]
        for e in exclude:
            if e not in names:
                raise ValueError(f"{fn}: exclude names {e!r}, which is not a column "
                                 f"(its columns: {', '.join(names)})")
        if weight is not None and weight not in names:
            raise ValueError(f"{fn}: weight column {weight!r} is not in the table")
        self.fn, self.df, self.weight = fn, df, weight
        arrow = df.limit(0).toArrow().schema
        self.names = [n for n in names if n not in set(exclude) and n != weight]
        if not self.names:
            raise ValueError(f"{fn}: no columns left to learn from")
        self.kinds = [kind_of(n, arrow.field(n).type, fn) for n in self.names]
        self.boolean = [pa.types.is_boolean(arrow.field(n).type) for n in self.names]
        self.values = None  # per nominal column, its values in code order

    def summarize(self):
        """The whole table's summary: n, the weight (and its whole part), and per
        column ``(weight of known values, weighted sum, min, max, count, sum, sum of
        squares)`` or ``{value: [weight, whole weight]}``; sets each nominal
        column's values (sorted; a BOOLEAN's false, true)."""
        fn, names, kinds, weight = self.fn, self.names, self.kinds, self.weight

        def part(batches):
            n, sw, whole, cols = 0, 0.0, 0.0, [None] * len(names)
            for b in batches:
                w = _batch_weights(fn, b, weight)
                n += b.num_rows
                sw += float(w.sum())
                whole += float(np.floor(w).sum())
                for j, name in enumerate(names):
                    col = b.column(name)
                    if kinds[j] == NUMERIC:
                        x = _numeric(name, col, fn)
                        known = ~np.isnan(x)
                        v = x[known]
                        s = [float(w[known].sum()), float((w[known] * v).sum()),
                             float(v.min()) if len(v) else None,
                             float(v.max()) if len(v) else None,
                             float(len(v)), float(v.sum()), float((v * v).sum())]
                        cols[j] = _merge_numeric(cols[j], s)
                    else:
                        cols[j] = _merge_counts(cols[j], _counts(col, w))
            return {"n": n, "sw": sw, "whole": whole, "cols": cols}

        parts = run_pass(self.df, part)
        total = {key: sum(p[key] for p in parts) for key in ("n", "sw", "whole")}
        total["cols"] = [None] * len(names)
        for p in parts:
            for j, c in enumerate(p["cols"]):
                if c is not None:
                    merge = _merge_numeric if kinds[j] == NUMERIC else _merge_counts
                    total["cols"][j] = merge(total["cols"][j], c)
        if total["n"] == 0:
            raise ValueError(f"{fn}: the table is empty")
        self.values = []
        for j, c in enumerate(total["cols"]):
            if kinds[j] == NUMERIC:
                self.values.append(None)
                if c is None or c[2] is None:
                    raise ValueError(f"attribute {names[j]!r} has only missing values")
            else:
                counts = c or {}
                if not counts:
                    raise ValueError(f"attribute {names[j]!r} has only missing values")
                self.values.append(("false", "true") if self.boolean[j]
                                   else tuple(sorted(counts)))
        return total

    @property
    def attributes(self):
        return [Attribute(n, NOMINAL, v) if k == NOMINAL else Attribute(n, NUMERIC)
                for n, k, v in zip(self.names, self.kinds, self.values)]

    def replaced(self, total):
        """(fill values, ranges' lows and widths, the full-data centre) of the whole
        table, as the cores compute them on its rows with the missing values filled
        in (``ReplaceMissing``, ``kmeans.ranges``, ``kmeans.mean_or_mode``)."""
        fill, lo, width, full = [], [], [], []
        for a, c in zip(self.attributes, total["cols"]):
            if a.nominal:
                weights = [c.get(v, [0.0, 0.0]) for v in a.values]
                f = int(np.argmax([w for w, _ in weights]))  # the first of the largest
                whole = [x for _, x in weights]
                whole[f] += total["whole"] - sum(whole)  # the missing rows' whole weights
                seen = [i for i, v in enumerate(a.values) if v in c]  # the codes present
                fill.append(float(f))
                lo.append(float(min(seen)))
                width.append(float(max(seen) - min(seen)))
                full.append(float(np.argmax(whole)))
            else:
                known, s, low, high = c[:4]
                f = s / known if known > 1e-6 else 0.0
                fill.append(f)
                lo.append(low)
                width.append(high - low)
                missing = total["sw"] - known
                full.append((s + f * missing) / total["sw"] if total["sw"] > 0 else 0.0)
        return np.array(fill), np.array(lo), np.array(width), np.array(full)

    def full_sd(self, total):
        """Per numeric column the unweighted sample standard deviation of its known
        values (``em.full_sd``): NaN without values, +inf for one; 0 for nominal."""
        out = np.zeros(len(self.names))
        for j, (a, c) in enumerate(zip(self.attributes, total["cols"])):
            if not a.nominal:
                count, s, ss = c[4:]
                if count == 0:
                    out[j] = np.nan
                elif count <= 1:
                    out[j] = np.inf
                else:
                    out[j] = np.sqrt(max(0.0, (ss - s * s / count) / (count - 1)))
        return out

    def sample(self, total, fill, seed, size):
        """(X, w): the table's rows (a sample of about ``size`` when it has more) in
        the order of their values, as a single-machine fit orders a group, coded as
        the whole table's, missing values filled in."""
        df = self.df
        if total["n"] > size:
            df = df.sample(fraction=min(1.0, size / total["n"]), seed=seed)
        rows = Rows(self.fn, weight=self.weight)
        picked = [*self.names, *([self.weight] if self.weight else [])]
        for batch in df.select(*picked).toArrow().to_batches():
            rows.add(pa.StructArray.from_arrays(batch.columns, fields=list(batch.schema)))
        data = rows.dataset()
        attributes = self.attributes
        X = np.empty((data.n, len(attributes)))
        for j, (a, col, mine) in enumerate(zip(attributes, data.columns, data.attributes)):
            if a.nominal:  # the sample's codes as the whole table's
                recode = np.array([a.values.index(v) for v in mine.values] + [np.nan])
                col = recode[np.where(np.isnan(col), len(mine.values), col).astype(np.int64)]
            X[:, j] = col
        return ReplaceMissing(attributes, fill).fill_in(X), np.array(data.weights)

    def encoder(self, fill=None):
        """``encode(batch) -> (X, w)``: a plain function of plain values, to ship to
        the workers; missing values become ``fill`` where it is given."""
        fn, names, kinds, weight = self.fn, self.names, self.kinds, self.weight
        values = [None if v is None else pa.array(v, pa.string()) for v in self.values]

        def encode(batch):
            X = np.empty((batch.num_rows, len(names)))
            for j, name in enumerate(names):
                col = batch.column(name)
                if kinds[j] == NUMERIC:
                    X[:, j] = _numeric(name, col, fn)
                else:
                    text = pc.if_else(col, "true", "false") if pa.types.is_boolean(
                        col.type) else pc.cast(col, pa.string())
                    codes = pc.index_in(text, value_set=values[j])
                    X[:, j] = np.asarray(pc.cast(codes, pa.float64()).fill_null(np.nan))
            if fill is not None:
                rows, cols = np.nonzero(np.isnan(X))
                X[rows, cols] = fill[cols]
            return X, _batch_weights(fn, batch, weight)

        return encode


def _batch_weights(fn, batch, weight):
    if weight is None:
        return np.ones(batch.num_rows)
    return _weights(weight, batch.column(weight), fn)


def _counts(col, w):
    """{value: [weight, whole weight]} of a nominal column's known values."""
    text = pc.if_else(col, "true", "false") if pa.types.is_boolean(col.type) \
        else pc.cast(col, pa.string())
    coded = pc.dictionary_encode(text)
    codes = np.asarray(coded.indices.fill_null(-1), np.int64)
    known = codes >= 0
    k = len(coded.dictionary)
    weights = np.bincount(codes[known], w[known], minlength=k)
    whole = np.bincount(codes[known], np.floor(w[known]), minlength=k)
    return {v: [float(a), float(b)] for v, a, b in
            zip(coded.dictionary.to_pylist(), weights, whole)}


def _merge_numeric(a, b):
    if a is None:
        return b
    lo = [x for x in (a[2], b[2]) if x is not None]
    hi = [x for x in (a[3], b[3]) if x is not None]
    return [a[0] + b[0], a[1] + b[1], min(lo) if lo else None, max(hi) if hi else None,
            *(x + y for x, y in zip(a[4:], b[4:]))]


def _merge_counts(a, b):
    if a is None:
        return dict(b)
    out = dict(a)
    for v, (x, y) in b.items():
        old = out.get(v, [0.0, 0.0])
        out[v] = [old[0] + x, old[1] + y]
    return out
