"""A Spark DataFrame read as the cores read a Dataset, for the fits that run over
the cluster (``spark/lloyd.py``, ``mixture.py``, ``network.py``, ``trees.py``).

Each nominal column's values come from one aggregation in the JVM. Every Arrow
batch is then encoded as a single-machine fit would hold it (float64, nominal
codes in the order of the whole table's values, NaN missing), with its sums beside
it (row count, weights, each numeric column's range and sums, each nominal
column's weighted value counts). The driver adds those up into the table's, from
which it fills in missing values as the cores' ``ReplaceMissing`` does.

- **Iterating fits** (k-means, EM) run in one barrier stage (``iterate``): each
  task reads its share of the rows once, keeps its blocks in memory, and iterates
  over them, exchanging sums with the others through the driver.
- **Fits a pass at a time** (the network, the tree) encode the table into blocks
  that Spark caches (``Frame.open``); a pass (``run_pass``) runs a function over
  every partition with ``mapInArrow`` and brings back one small JSON summary per
  partition, which the driver adds in partition order, so a fit gives the same
  model every run.
"""

import base64
import json
import secrets
import socket
import struct
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms import contract
from ..algorithms.dataset import NOMINAL, NUMERIC, Attribute, canonical_order
from ..udfs.table import _numeric, _weights, kind_of
from . import calls

PASS_SCHEMA = "part int, summary string"
RUN = 10_000  # rows dealt to one task of a barrier stage together
SECONDS = []  # how long each pass took, for benchmarks/spark.py (the last 1,000)


def _record(*seconds):
    """Keep the seconds passes took (the last 1,000) for the benchmark."""
    SECONDS.extend(seconds)
    del SECONDS[:-1000]


def run_pass(df, fn):
    """``fn(batches) -> dict`` on every partition; the dicts in partition order."""
    def each(batches):
        from pyspark import TaskContext

        out = fn(batches)
        yield pa.RecordBatch.from_arrays(
            [pa.array([TaskContext.get().partitionId()], pa.int32()),
             pa.array([json.dumps(out)], pa.string())], names=["part", "summary"])

    start = time.perf_counter()
    rows = df.mapInArrow(each, PASS_SCHEMA).collect()
    _record(time.perf_counter() - start)
    return [json.loads(r["summary"]) for r in sorted(rows, key=lambda r: r["part"])]


def iterate(frame, sample, begin, task, again=None):
    """Fit over the table in one barrier stage, as many tasks as the cluster has
    task slots. Each task reads its share of the rows from Spark once (runs of a
    batch dealt by their partition and place: a shuffle with no sort), encodes
    them into blocks and keeps them in memory. The driver adds up the blocks'
    summaries into the table's (``Frame.summed``) and takes the rows the sample
    ``(seed, size)`` drew from every block (about ``size``, by a hash of their
    values: ``_sampled``); ``begin(total, sampled)`` returns the fit's start, a dict
    whose ``fill`` are the values that replace missing ones, and ``sampled(fill)``
    gives the sample's rows in the order of their values, filled in. Every task
    gets the start, fills in its blocks and runs ``task(mats, total, start)``, where
    ``total(dict)`` gives it the ``add_up`` of every task's dict (``_Hub``): every
    task computes the same next step from the same sums, so all agree, and
    partition 0's result is returned. A dict that holds ``ask`` is answered by the
    driver instead, with ``again(dict)`` (a new start, say, after a failed step).
    An error ``begin`` or ``again`` raises is raised here. Call
    ``frame.read_values(count=True)`` first: its count sets the sample's share.
    An iteration costs the kernels' work and one exchange of sums, not a Spark job
    that streams the table to Python again."""
    from pyspark.sql import functions as F

    p, kinds, counts = frame.p, frame.kinds, frame.counts
    if frame.count == 0:  # Spark may run no task at all for an empty shuffle
        raise ValueError(f"{frame.fn}: the table is empty")
    encode, seed = frame.encoder(), sample[0]
    share = min(1.0, sample[1] / frame.count)
    spark = frame.df.sparkSession
    slots = max(1, spark.sparkContext.defaultParallelism)
    place = F.monotonically_increasing_id().bitwiseAND(F.lit((1 << 33) - 1))
    deal = (F.spark_partition_id() + F.floor(place / F.lit(RUN))) % F.lit(slots)
    cols = [F.col(f"`{n}`") for n in frame.names + [frame.weight] if n is not None]
    rows = frame.df.select(*cols).repartitionById(slots, deal.cast("int"))

    def answer(parts):  # every task asks the same: partition 0's question is read
        if parts[0]["ask"] != "start":
            return again(parts[0])
        total = frame.summed([t for q in parts for t in q["s"]])
        X = np.concatenate([_array(q["sx"]).reshape(-1, p) for q in parts])
        w = np.concatenate([_array(q["sw"]) for q in parts])
        return begin(total, lambda fill: frame.sampled(X, w, fill))

    with _Hub(spark.sparkContext.getConf().get("spark.driver.host"), slots, answer) as hub:
        where, token = hub.where, hub.token

        def each(batches):
            from pyspark import BarrierTaskContext

            context = BarrierTaskContext.get()
            part, tasks = context.partitionId(), len(context.getTaskInfos())
            mats, texts, sx, sw = [], [], [], []
            for b in batches:
                if b.num_rows:
                    X, w = encode(b)
                    texts.append(json.dumps(_summary(X, w, kinds, counts)))
                    x, v = _sampled(X, w, seed, share)
                    sx.append(x.ravel())
                    sw.append(v)
                    mats.append((X, w))
            with socket.create_connection(where) as conn:
                _send(conn, [token, part, tasks])

                def total(d):
                    _send(conn, d)
                    return _receive(conn)

                start = total({"ask": "start", "s": texts, "sx": _text(sx),
                               "sw": _text(sw)})
                fill = np.asarray(start["fill"], np.float64)
                for X, _ in mats:
                    _filled(X, fill)
                out = task(mats, total, start)
            yield pa.RecordBatch.from_arrays(
                [pa.array([part], pa.int32()),
                 pa.array([json.dumps(out) if part == 0 else ""], pa.string())],
                names=["part", "summary"])

        try:
            got = rows.mapInArrow(each, PASS_SCHEMA, barrier=True).collect()
        except Exception:
            if hub.error is not None:
                raise hub.error from None
            raise
    out = json.loads(next(r["summary"] for r in got if r["part"] == 0))
    _record(*out.pop("seconds", []))
    return out


def _text(arrays):
    """float64 arrays as one text (their bytes, base64), for a JSON message."""
    return base64.b64encode(np.concatenate(arrays).tobytes() if arrays else b"").decode()


def _array(text):
    return np.frombuffer(base64.b64decode(text), np.float64)


class _Hub:
    """Where a barrier stage's tasks add up their sums, on the driver, over TCP:
    each step every task sends its dict and gets back the ``add_up`` of all, in
    partition order (a dict a task each way, however many tasks), or, where the
    dicts hold ``ask``, what ``answer(dicts)`` gives. A task shows a token made for
    the fit, its partition and the stage's number of tasks, so that sums come from
    the stage's tasks alone, all of them; a stray connection is closed. An error
    ``answer`` raises is kept (``error``) and the tasks are let go, which fails the
    stage. (Spark's own ``allGather`` waits for a clock tick of a second on every
    call, longer than a step takes.)"""

    def __init__(self, host, backlog, answer=None):
        self.token, self.count, self.answer = secrets.token_hex(16), None, answer
        self.error = None
        self.server = socket.create_server(("", 0), backlog=backlog)
        self.where = (host, self.server.getsockname()[1])
        self.peers = {}
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            while self.count is None or len(self.peers) < self.count:
                conn, _ = self.server.accept()
                try:
                    shown, part, count = _receive(conn, limit=256)
                    known = shown == self.token and all(
                        isinstance(v, int) for v in (part, count)) and \
                        0 <= part < count and part not in self.peers and \
                        self.count in (None, count)
                except (ConnectionError, ValueError, TypeError, struct.error):
                    known = False
                if not known:
                    conn.close()  # not a task of this stage: its sums are not taken
                    continue
                self.peers[part], self.count = conn, count
            order = [self.peers[q] for q in sorted(self.peers)]
            while True:  # a step: a dict from every task, the total back to each
                parts = [_receive(conn) for conn in order]
                got = self.answer(parts) if "ask" in parts[0] else add_up(parts)
                for conn in order:
                    _send(conn, got)
        except (ConnectionError, OSError):
            pass  # the tasks are done (or their stage failed, which Spark reports)
        except Exception as err:  # the fit's own (answer): the stage is failed
            self.error = err
            for conn in self.peers.values():
                conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.close()
        for conn in self.peers.values():
            conn.close()


def add_up(parts):
    """Dicts of the same keys added up in the order given: numbers summed, flags
    or-ed, ``sums`` (lists of number lists) summed element by element."""
    out = {}
    for key, first in parts[0].items():
        if key == "sums":
            totals = [np.array(a, np.float64) for a in first]
            for q in parts[1:]:
                for t, a in zip(totals, q[key]):
                    t += np.asarray(a, np.float64)
            out[key] = [t.tolist() for t in totals]
        elif isinstance(first, bool):
            out[key] = any(q[key] for q in parts)
        else:
            out[key] = first
            for q in parts[1:]:
                out[key] += q[key]
    return out


def _send(conn, value):
    data = json.dumps(value).encode()
    conn.sendall(struct.pack("!Q", len(data)) + data)


def _receive(conn, limit=None):
    size = struct.unpack("!Q", _exactly(conn, 8))[0]
    if limit is not None and size > limit:
        raise ConnectionError("a task of the barrier stage sent a malformed message")
    return json.loads(_exactly(conn, size))


def _exactly(conn, size):
    chunks, left = [], size
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("a task of the barrier stage went away")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class Frame:
    """The columns a fit reads from ``df``, encoded once into cached blocks
    (``open``; ``close`` releases them)."""

    def __init__(self, fn, df, exclude=(), weight=None):
        names = [f.name for f in df.schema.fields]
        for e in exclude:
            if e not in names:
                raise ValueError(f"{fn}: exclude names {e!r}, which is not a column "
                                 f"(its columns: {', '.join(names)})")
        if weight is not None and weight not in names:
            raise ValueError(f"{fn}: weight column {weight!r} is not in the table")
        self.fn, self.df, self.weight = fn, df, weight
        arrow = calls.arrow_schema(df)
        self.names = [n for n in names if n not in set(exclude) and n != weight]
        if not self.names:
            raise ValueError(f"{fn}: no columns left to learn from")
        self.kinds = [kind_of(n, arrow.field(n).type, fn) for n in self.names]
        self.boolean = [pa.types.is_boolean(arrow.field(n).type) for n in self.names]
        self.p = len(self.names)
        self.values = None  # per nominal column, its values in code order
        self.count = None  # the row count, where read_values counted
        self.blocks = None
        self.kept = {}  # other forms of the table a fit reads more than once (``keep``)

    def read_values(self, count=False):
        """Each nominal column's values (``values``), from one aggregation in the
        JVM, which also counts the rows where ``count`` (a sample's share); that
        count, or None."""
        from pyspark.sql import functions as F

        fn, names, kinds = self.fn, self.names, self.kinds
        nominal = [n for n, k in zip(names, kinds) if k == NOMINAL]
        got = self.df.agg(F.count(F.lit(1)), *[
            F.collect_set(F.col(f"`{n}`").cast("string")) for n in nominal]).collect()[0] \
            if nominal or count else None
        found = {n: got[1 + i] for i, n in enumerate(nominal)}
        self.values = []
        for n, k, b in zip(names, kinds, self.boolean):
            if k == NUMERIC:
                self.values.append(None)
            elif not found[n]:
                raise ValueError(f"{fn}: attribute {n!r} has only missing values")
            else:
                self.values.append(("false", "true") if b else tuple(sorted(found[n])))
        self.count = got[0] if count else None
        return self.count

    def open(self):
        """Encode the table into cached blocks; its summary (``summed``)."""
        from pyspark import StorageLevel

        self.read_values()
        encode, kinds, counts = self.encoder(), self.kinds, self.counts

        def block(batches):
            for b in batches:
                if b.num_rows:
                    X, w = encode(b)
                    yield pa.RecordBatch.from_arrays(
                        [*binary(X, w), pa.array([json.dumps(_summary(X, w, kinds, counts))])],
                        names=["x", "w", "s"])

        blocks = self.df.mapInArrow(block, "x binary, w binary, s string")
        slots = self.df.sparkSession.sparkContext.defaultParallelism
        if blocks.rdd.getNumPartitions() < slots:  # a pass would leave cores idle
            blocks = blocks.repartition(slots)
        self.blocks = blocks.persist(StorageLevel.MEMORY_AND_DISK)
        start = time.perf_counter()
        texts = [r["s"] for r in self.blocks.select("s").collect()]
        _record(time.perf_counter() - start)
        return self.summed(texts)

    def keep(self, name, make):
        """The DataFrame ``make()`` made once and cached until ``close``, for a fit
        that reads it pass after pass (C4.5's rows sorted for its walks)."""
        from pyspark import StorageLevel

        if name not in self.kept:
            self.kept[name] = make().persist(StorageLevel.MEMORY_AND_DISK)
        return self.kept[name]

    def close(self):
        for df in self.kept.values():
            df.unpersist()
        self.kept.clear()
        if self.blocks is not None:
            self.blocks.unpersist()
            self.blocks = None

    @property
    def counts(self):
        """Per column its number of nominal values (0 for a numeric one)."""
        return [len(v or ()) for v in self.values]

    def summed(self, texts):
        """The table's summary from its blocks' (``_summary``, as JSON texts): n,
        the weight (and its whole part), and per column ``(weight of known values,
        weighted sum, min, max, count, sum, sum of squares)`` or ``{value: [weight,
        whole weight]}``. The texts are added in their sorted order, so that the
        sums do not depend on the order in which the blocks arrive."""
        total = {"n": 0, "sw": 0.0, "whole": 0.0, "cols": [None] * self.p}
        for text in sorted(texts):
            total = _added(total, json.loads(text), self.kinds)
        kinds, cols = self.kinds, total["cols"]
        if total["n"] == 0:
            raise ValueError(f"{self.fn}: the table is empty")
        for j, c in enumerate(cols):
            if kinds[j] == NUMERIC and (c is None or c[2] is None):
                raise ValueError(f"{self.fn}: attribute {self.names[j]!r} has only "
                                 "missing values")
            if kinds[j] == NOMINAL:  # {value: [weight, whole weight]} of those seen
                cols[j] = {v: [a, b] for v, a, b, seen in zip(self.values[j], *c) if seen}
        total["cols"] = cols
        return total

    def target_index(self, decl, target):
        """The column of ``target``; a target the learner ``decl`` cannot predict
        by its kind is refused before any pass."""
        attrs = [Attribute(n, k) for n, k in zip(self.names, self.kinds)]
        t = contract.column_index(self.fn, attrs, target)
        if self.kinds[t] == NUMERIC and decl.kind == "classifier":
            decl.check_target(self.fn, attrs, t, np.empty(0))
        return t

    def check_target(self, decl, t, total):
        """After ``open``: the target refused as the contract refuses it (a single
        class, say), from the summary of its values."""
        seen = total["cols"][t]
        decl.check_target(self.fn, self.attributes, t, np.array(
            [i for i, v in enumerate(self.values[t]) if v in seen], np.float64))

    @property
    def attributes(self):
        return [Attribute(n, NOMINAL, v) if k == NOMINAL else Attribute(n, NUMERIC)
                for n, k, v in zip(self.names, self.kinds, self.values)]

    def replaced(self, total):
        """(fill values, ranges' lows and widths, the full-data centre) of the whole
        table, as the cores compute them on its rows with the missing values filled
        in (``clusters.model._prepare``)."""
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

    def full_sd(self, total, fill):
        """Per numeric column the unweighted sample standard deviation of its values
        with the missing ones filled in by ``fill``, as ``em.full_sd`` finds it over
        the rows a single-machine fit holds: +inf for one row; 0 for nominal."""
        out = np.zeros(self.p)
        for j, (a, c) in enumerate(zip(self.attributes, total["cols"])):
            if not a.nominal:
                missing = total["n"] - c[4]
                count, s, ss = (c[4] + missing, c[5] + fill[j] * missing,
                                c[6] + fill[j] * fill[j] * missing)
                out[j] = np.inf if count <= 1 else \
                    np.sqrt(max(0.0, (ss - s * s / count) / (count - 1)))
        return out

    def sampled(self, X, w, fill):
        """(X, w): a sample's rows (``iterate``) in the order of their values, as a
        single-machine fit orders a group, missing values filled in."""
        p = self.p
        numeric_first = sorted(range(p), key=lambda j: self.kinds[j] == NOMINAL)
        order = canonical_order([X[:, j] for j in numeric_first] + [w])
        X, w = np.asfortranarray(X[order]), w[order]  # as clustering kernels read rows
        return _filled(X, fill), w

    def encoder(self):
        """``encode(batch) -> (X, w)``: a plain function of plain values, to ship to
        the workers (missing values stay NaN). ``X`` is an attribute at a time in
        memory (Fortran order), as the clustering kernels read rows
        (``kmeans.rows_of``), and each column is written where it lies."""
        fn, names, kinds, weight = self.fn, self.names, self.kinds, self.weight
        values = [None if v is None else pa.array(v, pa.string()) for v in self.values]

        def encode(batch):
            X = np.empty((batch.num_rows, len(names)), order="F")
            for j, name in enumerate(names):
                col = batch.column(name)
                if kinds[j] == NUMERIC:
                    _numeric(name, col, fn, X[:, j])
                else:
                    text = pc.if_else(col, "true", "false") if pa.types.is_boolean(
                        col.type) else pc.cast(col, pa.string())
                    codes = pc.index_in(text, value_set=values[j])
                    X[:, j] = np.asarray(pc.cast(codes, pa.float64()).fill_null(np.nan))
            w = np.ones(batch.num_rows) if weight is None else \
                _weights(weight, batch.column(weight), fn)
            return X, w

        return encode


def _summary(X, w, kinds, counts):
    """A block's summary (see ``Frame.open``): per numeric column ``(weight of known
    values, weighted sum, min, max, count, sum, sum of squares)``, per nominal one
    its value codes' weights, whole weights and counts."""
    cols = []
    for j, kind in enumerate(kinds):
        x = X[:, j]
        known = ~np.isnan(x)
        v, wk = x[known], w[known]
        if kind == NUMERIC:
            cols.append([float(wk.sum()), float((wk * v).sum()),
                         float(v.min()) if len(v) else None,
                         float(v.max()) if len(v) else None,
                         float(len(v)), float(v.sum()), float((v * v).sum())])
        else:
            codes = v.astype(np.int64)
            cols.append([np.bincount(codes, wk, counts[j]).tolist(),
                         np.bincount(codes, np.floor(wk), counts[j]).tolist(),
                         np.bincount(codes, None, counts[j]).tolist()])
    return {"n": len(X), "sw": float(w.sum()), "whole": float(np.floor(w).sum()),
            "cols": cols}


def _added(a, b, kinds):
    """Two summaries (``_summary``) as one."""
    cols = [(_merge_numeric(x, y) if kind == NUMERIC else
             y if x is None else [np.add(u, v).tolist() for u, v in zip(x, y)])
            for x, y, kind in zip(a["cols"], b["cols"], kinds)]
    return {"n": a["n"] + b["n"], "sw": a["sw"] + b["sw"],
            "whole": a["whole"] + b["whole"], "cols": cols}


def matrices(batches, p):
    """The (X, w) of each block of a ``Frame.blocks`` pass: read-only views."""
    for b in batches:
        xs, ws = b.column("x"), b.column("w")
        for i in range(b.num_rows):
            yield (np.frombuffer(xs[i].as_buffer(), np.float64).reshape(-1, p),
                   np.frombuffer(ws[i].as_buffer(), np.float64))


def labelled(X, w, t):
    """The rows of a block whose column ``t`` (the class) is known."""
    known = ~np.isnan(X[:, t])
    return (X, w) if known.all() else (X[known], w[known])


def binary(*arrays):
    """Arrays as one-value binary Arrow columns of their bytes (a block's parts)."""
    return [pa.array([a.tobytes()], pa.binary()) for a in arrays]


def _sampled(X, w, seed, share):
    """The rows of a block that a sample taking ``share`` of the table draws."""
    if share >= 1.0:
        return X, w
    keep = _drawn(X, w, seed) < share
    return X[keep], w[keep]


def _drawn(X, w, seed):
    """A number in [0, 1) per row, a hash of its values' bits and ``seed``."""
    return (hashed(X, w, seed) >> np.uint64(11)).astype(np.float64) / 2.0**53


def hashed(X, w, seed=0):
    """A 64-bit hash per row of its values' bits and ``seed``: an order of rows that
    depends on their values alone, however the table is partitioned."""
    bits = np.ascontiguousarray(np.column_stack([X, w])).view(np.uint64)
    h = np.full(len(X), np.uint64(seed & 0xFFFFFFFFFFFFFFFF) ^ np.uint64(0x9E3779B97F4A7C15))
    for j in range(bits.shape[1]):
        h ^= bits[:, j]
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
    return h


def _filled(X, fill):
    rows, cols = np.nonzero(np.isnan(X))
    if len(rows):
        X[rows, cols] = fill[cols]
    return X


def _merge_numeric(a, b):
    if a is None:
        return b
    lo = [x for x in (a[2], b[2]) if x is not None]
    hi = [x for x in (a[3], b[3]) if x is not None]
    return [a[0] + b[0], a[1] + b[1], min(lo) if lo else None, max(hi) if hi else None,
            *(x + y for x, y in zip(a[4:], b[4:]))]
