"""FP-growth over a Spark DataFrame too large for one machine: parallel FP-growth
(``algorithms/pfp.py``) with Spark doing the counting and the shuffles.

1. The rows become transactions (an ``items`` list per transaction) by the
   layout rule DuckDB uses (``udfs/transactions.layout``), in Spark SQL.
2. Each batch counts its items' supports and is cached as codes into its own
   item names; one aggregation sums the supports, and the driver ranks the
   frequent ones.
3. Each partition turns its transactions into group-dependent transactions
   (``pfp.shards``), packed as bytes a group and a batch, which Spark shuffles to
   a partition a group.
4. Each group is mined on its own (``pfp.mine_group``) into itemsets and counts.
5. Closed and maximal itemsets are derived from the result with one more
   aggregation: an itemset is closed when none of one more item has its support,
   maximal when none is frequent (one more level is mined for them).

The itemsets and supports equal DuckDB's ``fp_growth`` on the same rows.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms import fpgrowth, pfp
from ..udfs import itemsets
from ..udfs.transactions import LAYOUT, layout
from . import calls
from .frames import binary
from .itemsets import _type_name

RESULT = "itemset array<string>, support_count bigint"
SHARD_DTYPE = np.dtype("<i4")  # a shard's lengths and ranks as bytes, whatever the host
OFFSET_DTYPE = np.dtype("<i8")
BLOCKS = "n bigint, names array<string>, counts array<bigint>, offsets binary, codes binary"


def transactions(fn, df, requested="auto"):
    """``df`` as one row per transaction: ``items array<string>``."""
    from pyspark.sql import functions as F

    schema = calls.arrow_schema(df)
    try:
        kind, at = layout(schema.names, [_type_name(f.type) for f in schema], requested)
    except ValueError as err:
        raise ValueError(f"{fn}: {err}") from None
    cols = [F.col(f"`{n}`") for n in schema.names]
    if kind == "long":
        return (df.where(cols[0].isNotNull()).groupBy(cols[0])
                .agg(F.collect_list(cols[1].cast("string")).alias("items"))
                .select("items"))
    if kind == "list":
        items = F.coalesce(cols[at - 1].cast("array<string>"), F.array().cast("array<string>"))
        return df.select(F.filter(items, lambda x: x.isNotNull()).alias("items"))
    cells = [F.when(c, F.lit(n)) if pa.types.is_boolean(f.type)
             else F.concat(F.lit(n + "="), c.cast("string"))
             for n, c, f in zip(schema.names, cols, schema)]
    return df.select(F.filter(F.array(*cells), lambda x: x.isNotNull()).alias("items"))


def fp_growth(df, min_support, max_length=None, target="all", layout="auto", groups=None,
              limit=None):
    """The frequent itemsets of ``df``'s transactions, as a DataFrame of
    ``(itemset, support_count, support)``, itemsets sorted by name; ``groups`` (one
    a task slot by default) is how many groups of items are mined apart."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    fn = "fp_growth"
    options = itemsets.check_options(fn, {"max_length": max_length, "target": target},
                                     limit)
    LAYOUT.check(fn, layout)
    spark = df.sparkSession
    # read from Spark once: later passes read each batch's item codes from the cache
    blocks = transactions(fn, df, layout).mapInArrow(_encoded, BLOCKS).persist(
        StorageLevel.MEMORY_AND_DISK)
    n = int(blocks.agg(F.sum("n")).collect()[0][0] or 0)
    min_count = itemsets.min_count(fn, min_support, n)
    counted = (blocks.select(F.explode(F.arrays_zip("names", "counts")).alias("c"))
               .groupBy(F.col("c.names").alias("item"))
               .agg(F.sum("c.counts").alias("count")).where(F.col("count") >= min_count)
               .collect())
    ranked = sorted(((r["item"], r["count"]) for r in counted), key=lambda r: (-r[1], r[0]))
    names = [name for name, _ in ranked]
    if not names:
        blocks.unpersist()
        return spark.createDataFrame([], RESULT + ", support double")
    n_items = len(names)
    if groups is None:
        groups = spark.sparkContext.defaultParallelism
    groups = max(1, min(int(groups), n_items))
    group_of = pfp.groups_of([count for _, count in ranked], n, groups)
    max_len = options["max_length"]
    depth = max_len if options["target"] == "all" else min(max_len + 1, n_items + 1)
    limit = options["limit"]
    by_name = np.empty(n_items, np.int64)
    by_name[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(n_items)
    known = pa.array(names, pa.string())

    def shard(batches):
        for b in batches:
            for i in range(b.num_rows):
                own = b.column("names")[i].values  # the block's names, its codes' index
                rank = np.asarray(pc.index_in(own, value_set=known).fill_null(-1), np.int32)
                offsets = np.frombuffer(b.column("offsets")[i].as_buffer(), OFFSET_DTYPE)
                codes = np.frombuffer(b.column("codes")[i].as_buffer(), SHARD_DTYPE)
                codes = np.append(rank, np.int32(-1))[codes]  # a NULL's -1 takes the -1
                offsets, ranks = pfp.ranked(offsets.astype(np.int64), codes)
                yield _packed(*pfp.shards(offsets, ranks, group_of, groups))

    def mine(key, table):
        from ..algorithms.itemsets import TooManyItemsets, expand

        g = key[0].as_py()
        lengths, flat = (_joined(table.column(c)) for c in ("lengths", "ranks"))
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        try:
            parent, item, count = pfp.mine_group(offsets, flat.astype(np.int32), n_items, g,
                                                 group_of, min_count, depth, limit)
        except TooManyItemsets:
            raise ValueError(f"{fn}: stopped after finding more than {limit:,} frequent "
                             "itemsets in one group; raise min_support or set "
                             "max_length") from None
        offs, codes = expand(parent, item, np.arange(len(parent), dtype=np.int64), by_name)
        lists = pa.ListArray.from_arrays(pa.array(offs.astype(np.int32)),
                                         known.take(pa.array(codes)))
        return pa.table({"itemset": lists, "support_count": pa.array(count, pa.int64())})

    shards = blocks.mapInArrow(shard, "g int, lengths binary, ranks binary")
    # one group to a partition: hashing the group numbers put three of four in one
    # partition, and Spark then merged the small ones, so one task mined most
    found = shards.repartitionById(groups, "g").groupBy("g").applyInArrow(mine, RESULT)
    if options["target"] != "all":
        found = _closed_or_maximal(found.cache(), options["target"], max_len)
    return found.withColumn("support", F.col("support_count") / F.lit(float(n)))


def _encoded(batches):
    """Each batch of transactions as one row: its number of transactions, the
    names of its items with the number of its transactions holding each (a few
    rows a batch for Spark to sum, rather than a row per item of every transaction:
    3.6 s of 8.3 at a million baskets on two cores), and its transactions as
    offsets and codes into those names, which Spark caches: the pass that shards
    them reads a few numbers an item rather than the item lists again."""
    for b in batches:
        offsets, codes, names = itemsets.encoded_items(b.column("items"))
        support = fpgrowth.item_supports(offsets, codes, len(names))  # each name is held
        yield pa.RecordBatch.from_arrays([
            pa.array([len(offsets) - 1], pa.int64()),
            pa.ListArray.from_arrays(pa.array([0, len(names)], pa.int32()), names),
            pa.ListArray.from_arrays(pa.array([0, len(names)], pa.int32()),
                                     pa.array(support, pa.int64())),
            *binary(offsets.astype(OFFSET_DTYPE), codes.astype(SHARD_DTYPE))],
            names=["n", "names", "counts", "offsets", "codes"])


def _joined(column):
    """A binary column's values (``SHARD_DTYPE`` numbers) as one array: each chunk's
    bytes read where Arrow holds them, then copied once into the whole."""
    parts = []
    for chunk in column.chunks:
        if len(chunk):
            bounds = np.frombuffer(chunk.buffers()[1], np.int32)[
                chunk.offset:chunk.offset + len(chunk) + 1]
            data = np.frombuffer(chunk.buffers()[2], np.uint8)[bounds[0]:bounds[-1]]
            parts.append(data.view(SHARD_DTYPE))
    return np.concatenate(parts) if parts else np.empty(0, SHARD_DTYPE)


def _packed(count, size, lengths, ranks):
    """A batch's group-dependent transactions (``pfp.shards``, a group after
    another) as one row per group: their lengths and their ranks as bytes, each a
    slice of one buffer. Spark then shuffles a few large values rather than a row
    of a list per transaction, which at a million baskets took most of the time
    (9 s of 15 on two cores)."""
    present = np.flatnonzero(count)
    if len(ranks) * SHARD_DTYPE.itemsize >= 2**31:
        raise ValueError("fp_growth: a batch's group-dependent transactions take "
                         "2 GB or more; set spark.sql.execution.arrow.maxRecordsPerBatch "
                         "lower")
    out = []
    for values, sizes in ((lengths, count), (ranks, size)):
        ends = np.concatenate([[0], np.cumsum(sizes)]) * SHARD_DTYPE.itemsize
        # a present group's bytes end where the next present one's begin
        bounds = ends[np.concatenate([present, present[-1:] + 1])] if len(present) \
            else np.zeros(1, np.int64)
        out.append(pa.Array.from_buffers(pa.binary(), len(present), [
            None, pa.py_buffer(bounds.astype(np.int32)),
            pa.py_buffer(values.astype(SHARD_DTYPE, copy=False))]))
    return pa.RecordBatch.from_arrays([pa.array(present.astype(np.int32), pa.int32()), *out],
                                      names=["g", "lengths", "ranks"])


def _closed_or_maximal(found, target, max_len):
    """The itemsets of ``found`` (all frequent ones, one level deeper than
    ``max_len``) that are closed or maximal."""
    from pyspark.sql import functions as F

    # each itemset of two or more items speaks for its subsets of one item fewer
    subsets = (found.where(F.size("itemset") >= 2)
               .select(F.posexplode("itemset").alias("at", "dropped"), "itemset",
                       "support_count")
               .select(F.filter("itemset", lambda x, i: i != F.col("at")).alias("itemset"),
                       F.col("support_count").alias("superset_count"))
               .groupBy("itemset").agg(F.max("superset_count").alias("superset_count")))
    joined = found.join(subsets, "itemset", "left")
    keep = (F.col("superset_count").isNull() if target == "maximal"
            else F.col("superset_count").isNull()
            | (F.col("superset_count") < F.col("support_count")))
    return (joined.where(keep & (F.size("itemset") <= F.lit(max_len)))
            .select("itemset", "support_count"))
