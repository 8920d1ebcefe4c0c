"""The sample database behind ``duckmine demo``: the book's weather (nominal and
numeric), contact-lens, labor-negotiation and CPU-performance data and a
deterministic market-basket table.

The baskets are drawn by the Quest-style generator (``sample_baskets``) and kept as
``data/baskets.csv``, so that a first demo reads them rather than compiling the
generator's kernel first; ``python -m duckmine.extension.samples`` writes the file
again, and a test checks that it is the generator's."""

from importlib import resources

import numpy as np
import pyarrow as pa

from .arff import read_arff

PRODUCTS = [
    "apples", "bananas", "beer", "biscuits", "bread", "butter", "cereal", "cheese",
    "chicken", "chocolate", "coffee", "crisps", "eggs", "fish", "flour", "ham",
    "jam", "juice", "milk", "nappies", "onions", "pasta", "pizza", "potatoes",
    "rice", "salad", "sausages", "soap", "sugar", "tea", "tomatoes", "wine",
    "yoghurt", "washing powder", "toothpaste", "shampoo", "oranges", "carrots",
    "lemonade", "ice cream",
]


def basket_table(n_transactions, names, seed=1, **quest):
    """Long-layout Arrow table (tid BIGINT, item VARCHAR) of Quest-style baskets."""
    from ..algorithms.baskets import quest_baskets

    offsets, items = quest_baskets(n_transactions, n_items=len(names), seed=seed,
                                   **quest)
    tid = np.repeat(np.arange(n_transactions, dtype=np.int64), np.diff(offsets))
    item = pa.DictionaryArray.from_arrays(pa.array(items), pa.array(names))
    return pa.table({"tid": tid, "item": item.cast(pa.string())})


SAMPLES = {"weather.nominal.arff": "weather", "weather.numeric.arff": "weather_numeric",
           "contact-lenses.arff": "contact_lenses", "labor.arff": "labor",
           "cpu.arff": "cpu"}
BASKETS = "baskets.csv"  # the generator's baskets (``write_baskets``)


def create_sample_tables(con):
    """Create ``weather``, ``weather_numeric``, ``contact_lenses``, ``labor``, ``cpu``
    and ``baskets`` on ``con``."""
    data = resources.files("duckmine") / "extension" / "data"
    for file, table in SAMPLES.items():
        with resources.as_file(data / file) as path:
            read_arff(con, path, table, replace=True)
    with resources.as_file(data / BASKETS) as path:
        con.execute("CREATE OR REPLACE TABLE baskets AS SELECT * FROM read_csv(?, "
                    "header = true, columns = {'tid': 'BIGINT', 'item': 'VARCHAR'}) "
                    "ORDER BY tid, item", [str(path)])


def sample_baskets():
    """The sample ``baskets`` as the generator draws them (``data/baskets.csv``)."""
    return basket_table(2000, PRODUCTS, seed=7, avg_len=4, n_patterns=25, avg_pattern=3)


def write_baskets(path):
    """``sample_baskets`` as a CSV file, ordered by tid and item."""
    import duckdb

    con = duckdb.connect()
    try:
        con.register("b", sample_baskets())
        con.execute(f"COPY (SELECT * FROM b ORDER BY tid, item) TO '{path}' "
                    "(HEADER, DELIMITER ',')")
    finally:
        con.close()


if __name__ == "__main__":
    from pathlib import Path

    write_baskets(Path(__file__).parent / "data" / BASKETS)
