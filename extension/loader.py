"""Install every duckmine function on a DuckDB connection: the Arrow UDFs (the
declared ones and one relation per learner), the macro files of ``sql/`` and the
macros written from the learners' declarations (``wiring``)."""

import threading
from importlib import import_module, resources

import duckdb

_LOCK = threading.Lock()

# importing a module declares its UDFs
UDF_MODULES = ("adtree", "feed", "itemsets", "learners", "models", "transactions")

# macro files, in dependency order
SQL_FILES = ("transactions.sql", "itemsets.sql", "models.sql", "adtree.sql")


def _statements(text):
    """Split a macro file on the semicolons that end statements."""
    body = "\n".join(line for line in text.splitlines()
                     if not line.lstrip().startswith("--"))
    return [s.strip() for s in body.split(";\n") if s.strip()]


def _udfs():
    for name in UDF_MODULES:
        import_module(f"..udfs.{name}", __package__)
    from ..udfs import learners, registry
    return registry.UDFS + learners.relation_udfs()


def register(con, udfs):
    """Create the UDFs that ``con``'s database does not have yet. A DuckDB
    database keeps Python UDFs in its shared catalog: one registration serves every
    connection and cursor of the database in this process (and outlives the
    connection that made it), while another connection can neither create the same
    name again nor remove it. Existing ones are looked up rather than probed with a
    failing call, which would leave a Python error behind in the client."""
    present = {name for (name,) in con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() "
        "WHERE function_name LIKE '\\_dm\\_%' ESCAPE '\\' "
        "AND function_type NOT LIKE '%macro%'").fetchall()}
    with _LOCK:  # two connections loading at once must not both create one name
        for u in udfs:
            if u.name in present:
                continue
            try:
                con.create_function(u.name, u.call,
                                    None if u.signature is None else list(u.signature),
                                    u.returns, type="arrow", null_handling="special",
                                    side_effects=u.side_effects)
            except duckdb.CatalogException as err:
                if "already exists" not in str(err):  # (made meanwhile elsewhere)
                    raise


def load(con):
    """Register duckmine's UDFs and (temporary) macros on ``con``: a connection or a
    cursor, any number of times, from any thread.

    The macros are TEMP, so a file-backed database never stores definitions that
    need this package to run; being temporary they belong to ``con`` alone, so each
    connection or cursor that runs duckmine's functions is loaded once.
    """
    from ..algorithms import memory
    from . import interrupts, wiring

    memory.steady_allocator()  # before the first rows are read
    register(con, _udfs())
    # a key of this connection that no other connection of any database has: its
    # jobs (interrupts, progress) and the rows fed to its fits are its own
    con.execute("SET VARIABLE duckmine_connection = coalesce("
                "getvariable('duckmine_connection'), uuid()::VARCHAR)")
    interrupts.remember(con)
    interrupts.watch_ctrl_c()
    sql = resources.files("duckmine") / "sql"
    statements = [s for name in SQL_FILES for s in _statements((sql / name).read_text())]
    con.execute(";\n".join(statements + wiring.statements()))  # one call: quicker
    return con


def connect(path=None, **kwargs):
    """A DuckDB connection (in memory, or on the file ``path``) with duckmine loaded."""
    return load(duckdb.connect(path or ":memory:", **kwargs))
