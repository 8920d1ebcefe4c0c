"""Contingency tables, as DuckDB's ``ad_counts`` gives them (one row per
combination of the columns' values, zero counts included; a row missing any of
them counts in none):

- in SQL, ``ad_counts(TABLE(t) WITH SINGLE PARTITION, columns => array(...),
  leaf_list_cutoff => 0)`` counts the table on one worker through an AD-tree;
- from Python, ``ad_counts(df, columns)`` counts it over the whole cluster in one
  Spark aggregation: the counts of the combinations present, joined onto every
  combination of the values each column holds.
"""

import pyarrow as pa

from ..udfs.adtree import CELL_SQL, contingency
from ..udfs.registry import arrow_type
from ..udfs.table import Rows, kind_of
from . import calls

FN = "ad_counts"


def ad_counts(df, columns):
    """A DataFrame of ``(combination map<string,string>, count bigint)``."""
    from pyspark.sql import functions as F

    if isinstance(columns, str) or not columns:
        raise ValueError(f"{FN}: columns must name at least one column, as a list")
    names = [f.name for f in df.schema.fields]
    arrow = calls.arrow_schema(df)
    picked = []
    for c in columns:
        if c not in names:
            raise ValueError(f"{FN}: column {c!r} is not in the table (its columns: "
                             f"{', '.join(names)})")
        if c in picked:
            raise ValueError(f"{FN}: column {c!r} is named twice")
        if kind_of(c, arrow.field(c).type, FN) != "nominal":
            raise ValueError(f"{FN}: column {c!r} is numeric; an AD-tree counts nominal "
                             "values (cast it to VARCHAR or leave it out)")
        picked.append(c)
    text = [F.col(f"`{c}`").cast("string").alias(c) for c in picked]
    rows = df.select(*text)
    present = rows.dropna().groupBy(*picked).count()
    every = None
    for c in picked:
        values = rows.select(c).dropna().distinct()
        every = values if every is None else every.crossJoin(values)
    cells = every.join(present, picked, "left").fillna(0, ["count"])
    pairs = F.map_from_arrays(F.array(*[F.lit(c) for c in picked]),
                              F.array(*[F.col(f"`{c}`") for c in picked]))
    return cells.orderBy(*picked).select(pairs.alias("combination"),
                                         F.col("count").cast("bigint").alias("count"))



class _Counts(calls.TableFunction):
    settings = None

    def start(self, call):
        columns = call.get("columns")
        if not isinstance(columns, list) or not columns:
            raise ValueError(f"{FN}: columns must name at least one column, as "
                             "array('a', 'b')")
        self.rows = Rows(FN, self.settings.get("max_values"), names=columns)

    def add(self, batch):
        self.rows.add(calls.struct_rows(batch))

    def finish(self):
        data = self.rows.dataset()
        cells = contingency(data, self.call.get("leaf_list_cutoff") or 0,
                            self.settings.get("ad_tree_max_mb"))
        yield pa.Table.from_struct_array(pa.array(cells, arrow_type(CELL_SQL).value_type))


def table_functions(settings):
    from pyspark.sql.pandas.types import from_arrow_type

    schema = from_arrow_type(arrow_type(CELL_SQL).value_type)
    return [(FN, calls.udtf(_Counts, FN, ["row", "columns"], ["leaf_list_cutoff"], schema,
                            settings=settings))]
