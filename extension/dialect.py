"""The ``duckmine`` SQLAlchemy dialect: duckdb-engine's DuckDB dialect, with every
duckmine function loaded on each connection the pool opens (reconnects included),
so that any SQLAlchemy tool (pandas, JupySQL, Superset, Streamlit) can call them:
``create_engine("duckmine:///shop.duckdb")``."""

from duckdb_engine import Dialect

from .loader import load


class DuckmineDialect(Dialect):
    name = "duckmine"
    supports_statement_cache = False

    def on_connect(self):
        return load  # called by the pool on every new DBAPI connection
