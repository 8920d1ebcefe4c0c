"""Install every duckmine function on a DuckDB connection."""

from importlib import import_module, resources

import duckdb

from ..udfs import registry

# importing a module declares its UDFs
UDF_MODULES = ("adtree", "bayes", "bayes_sql", "c45", "em", "evaluate", "itemsets",
               "m5_sql", "m5p", "models", "sql_export", "transactions")
for _name in UDF_MODULES:
    import_module(f"..udfs.{_name}", __package__)

# macro files, in dependency order
SQL_FILES = ("transactions.sql", "itemsets.sql", "models.sql", "c45.sql", "m5p.sql",
             "em.sql", "bayes.sql", "evaluate.sql")


def _statements(text):
    """Split a macro file on the semicolons that end statements."""
    body = "\n".join(line for line in text.splitlines()
                     if not line.lstrip().startswith("--"))
    return [s.strip() for s in body.split(";\n") if s.strip()]


def load(con):
    """Register duckmine's UDFs and (temporary) macros on ``con``.

    Safe to call again; the macros are TEMP so a file-backed database never stores
    definitions that need this package to run.
    """
    registry.register(con)
    sql = resources.files("duckmine") / "sql"
    for name in SQL_FILES:
        for statement in _statements((sql / name).read_text()):
            con.execute(statement)
    return con


def connect(path=None, **kwargs):
    """A DuckDB connection (in memory, or on the file ``path``) with duckmine loaded."""
    return load(duckdb.connect(path or ":memory:", **kwargs))
