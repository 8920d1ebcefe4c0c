"""FP-growth over a Spark DataFrame too large for one machine: parallel FP-growth
(``algorithms/pfp.py``) with Spark doing the counting and the shuffles.

1. The rows become transactions (an ``items`` list per transaction) by the
   layout rule DuckDB uses (``udfs/transactions.layout``), in Spark SQL.
2. One aggregation counts the items; the driver ranks the frequent ones.
3. Each partition turns its transactions into group-dependent transactions
   (``pfp.shards``), which Spark shuffles by group.
4. Each group is mined on its own (``pfp.mine_group``) into itemsets and counts.
5. Closed and maximal itemsets are derived from the result with one more
   aggregation: an itemset is closed when none of one more item has its support,
   maximal when none is frequent (one more level is mined for them).

The itemsets and supports equal DuckDB's ``fp_growth`` on the same rows.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms import pfp
from ..udfs import itemsets
from ..udfs.transactions import LAYOUT, layout
from . import calls
from .itemsets import _type_name

RESULT = "itemset array<string>, support_count bigint"


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
    ``(itemset, support_count, support)``, itemsets sorted by name."""
    from pyspark.sql import functions as F

    fn = "fp_growth"
    options = itemsets.check_options(fn, {"max_length": max_length, "target": target},
                                     limit)
    LAYOUT.check(fn, layout)
    spark = df.sparkSession
    tx = transactions(fn, df, layout).cache()
    n = tx.count()
    min_count = itemsets.min_count(fn, min_support, n)
    counted = (tx.select(F.explode(F.array_distinct("items")).alias("item"))
               .groupBy("item").count().where(F.col("count") >= min_count).collect())
    ranked = sorted(((r["item"], r["count"]) for r in counted), key=lambda r: (-r[1], r[0]))
    names = [name for name, _ in ranked]
    if not names:
        tx.unpersist()
        return spark.createDataFrame([], RESULT + ", support double")
    n_items = len(names)
    if groups is None:
        groups = 2 * spark.sparkContext.defaultParallelism
    groups = max(1, min(int(groups), n_items))
    max_len = options["max_length"]
    depth = max_len if options["target"] == "all" else min(max_len + 1, n_items + 1)
    limit = options["limit"]
    by_name = np.empty(n_items, np.int64)
    by_name[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(n_items)
    known = pa.array(names, pa.string())

    def shard(batches):
        for b in batches:
            lists = b.column("items")
            offsets, flat = itemsets.list_csr(lists)
            codes = np.asarray(pc.index_in(flat, value_set=known).fill_null(-1), np.int32)
            offsets, ranks = pfp.ranked(offsets, codes)
            group, out_offsets, out = pfp.shards(offsets, ranks, groups)
            yield pa.RecordBatch.from_arrays(
                [pa.array(group, pa.int32()),
                 pa.ListArray.from_arrays(pa.array(out_offsets.astype(np.int32)),
                                          pa.array(out, pa.int32()))], names=["g", "ranks"])

    def mine(key, table):
        from ..algorithms.itemsets import TooManyItemsets, expand

        g = key[0].as_py()
        offsets, flat = itemsets.list_csr(table.column("ranks").combine_chunks())
        try:
            parent, item, count = pfp.mine_group(offsets, np.asarray(flat, np.int32),
                                                 n_items, g, groups, min_count, depth, limit)
        except TooManyItemsets:
            raise ValueError(f"{fn}: stopped after finding more than {limit:,} frequent "
                             "itemsets in one group; raise min_support or set "
                             "max_length") from None
        offs, codes = expand(parent, item, np.arange(len(parent), dtype=np.int64), by_name)
        lists = pa.ListArray.from_arrays(pa.array(offs.astype(np.int32)),
                                         known.take(pa.array(codes)))
        return pa.table({"itemset": lists, "support_count": pa.array(count, pa.int64())})

    shards = tx.mapInArrow(shard, "g int, ranks array<int>")
    found = shards.groupBy("g").applyInArrow(mine, RESULT)
    if options["target"] != "all":
        found = _closed_or_maximal(found.cache(), options["target"], max_len)
    return found.withColumn("support", F.col("support_count") / F.lit(float(n)))


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
