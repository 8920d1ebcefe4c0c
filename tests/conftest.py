import os
from pathlib import Path

import duckdb
import pytest

import duckmine

# the tests keep every core busy: a first demo compiles in its own process only
os.environ.setdefault("DUCKMINE_COMPILE_AHEAD", "0")

DATA = Path(__file__).parent / "data"
SAMPLES = Path(duckmine.__file__).parent / "extension" / "data"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """The Spark tests on one worker, the first work handed out (the largest), so
    that one JVM and its Python workers serve them all: a second costs about 50 s
    of CPU. Every other test goes to whichever worker is free. (xdist's own
    ``loadgroup`` marks tests by a node id that pytest 9 no longer reads.)"""
    from xdist.scheduler import LoadScopeScheduling

    class OneSparkWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return "spark" if nodeid.startswith("tests/test_spark.py::") else nodeid

    return OneSparkWorker(config, log)


@pytest.fixture(scope="session")
def con():
    """One loaded connection with the book's data and the supermarket baskets."""
    c = duckmine.connect()
    duckmine.read_arff(c, SAMPLES / "weather.nominal.arff", "weather")
    duckmine.read_arff(c, SAMPLES / "contact-lenses.arff", "contact_lenses")
    duckmine.read_arff(c, DATA / "supermarket.arff", "supermarket")
    yield c
    c.close()


@pytest.fixture
def fresh():
    c = duckmine.connect()
    yield c
    c.close()


def table(name):
    """The table name a test ARFF file (e.g. ``weather.numeric``) is loaded as."""
    return name.replace(".", "_").replace("-", "_")


def fitted(learner, tbl, target=None, options="", weight=None):
    """A subquery of one model, fitted by ``fit`` on the rows in table order (as the
    reference reads the file); ``options`` a dict, or written as for a table form
    ("k := 3")."""
    from duckmine.algorithms.contract import literal

    if isinstance(options, dict):
        options = "options := {" + ", ".join(
            f"'{k}': {literal(v)}" for k, v in options.items()) + "}" if options else ""
    else:
        options = options_struct(options)
    args = "".join(", " + a for a in (options, f"weight := '{weight}'" if weight else "")
                   if a)
    return (f"(SELECT model FROM fit('{learner}', '{tbl}', "
            f"{literal(target) if target else 'NULL'}{args}))")


def loaded(con, name):
    """(table, target, weight argument, whether the target is numeric) of the test
    ARFF file ``name`` on ``con``, read once per connection: the golden tests ask for
    a data set case after case, and ``supermarket`` takes a second to read. The
    target is the last attribute; a ``weighted`` file's weights become column w."""
    t = table(name)
    weighted = "weighted" in name
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ? "
                       "AND NOT temporary", [t]).fetchall()[0][0]:
        duckmine.read_arff(con, DATA / f"{name}.arff", t, weight="w" if weighted else None)
    target, kind = con.sql(f"DESCRIBE {t}").fetchall()[-2 if weighted else -1][:2]
    return t, target, (", weight := 'w'" if weighted else ""), kind == "DOUBLE"


def arff_tables(names):
    """A loaded connection with each named file of ``tests/data`` as a table."""
    c = duckmine.connect()
    for name in names:
        duckmine.read_arff(c, DATA / f"{name}.arff", table(name))
    return c


def fails(con, sql, *fragments):
    """``sql`` fails with an error naming every fragment; the connection still works."""
    with pytest.raises(duckdb.Error) as err:
        con.execute(sql).fetchall()
    text = str(err.value)
    for f in fragments:
        assert f in text, text
    assert "Traceback" not in text
    assert con.execute("SELECT 42").fetchall() == [(42,)]
    return text


def options_struct(named):
    """Named learner options as written for a table form ("a := 1, b := 'x'") as
    the ``options := {...}`` argument of cross_validate ("" for none)."""
    pairs = [p.split(":=") for p in named.split(",") if p.strip()]
    if not pairs:
        return ""
    return "options := {" + ", ".join(f"'{k.strip()}': {v.strip()}" for k, v in pairs) + "}"
