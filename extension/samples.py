"""The sample database behind ``duckmine demo``: the book's weather (nominal and
numeric), contact-lens, labor-negotiation and CPU-performance data and a
deterministic market-basket table."""

from importlib import resources

import numpy as np
import pyarrow as pa

from ..algorithms.baskets import quest_baskets
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
    offsets, items = quest_baskets(n_transactions, n_items=len(names), seed=seed,
                                   **quest)
    tid = np.repeat(np.arange(n_transactions, dtype=np.int64), np.diff(offsets))
    item = pa.DictionaryArray.from_arrays(pa.array(items), pa.array(names))
    return pa.table({"tid": tid, "item": item.cast(pa.string())})


SAMPLES = {"weather.nominal.arff": "weather", "weather.numeric.arff": "weather_numeric",
           "contact-lenses.arff": "contact_lenses", "labor.arff": "labor",
           "cpu.arff": "cpu"}


def create_sample_tables(con):
    """Create ``weather``, ``weather_numeric``, ``contact_lenses``, ``labor``, ``cpu``
    and ``baskets`` on ``con``."""
    data = resources.files("duckmine") / "extension" / "data"
    for file, table in SAMPLES.items():
        with resources.as_file(data / file) as path:
            read_arff(con, path, table, replace=True)
    baskets = basket_table(2000, PRODUCTS, seed=7, avg_len=4, n_patterns=25,
                           avg_pattern=3)
    con.register("_dm_sample_baskets", baskets)
    try:
        con.execute("CREATE OR REPLACE TABLE baskets AS "
                    "SELECT * FROM _dm_sample_baskets ORDER BY tid, item")
    finally:
        con.unregister("_dm_sample_baskets")
