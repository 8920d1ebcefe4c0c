from pathlib import Path

import duckdb
import pytest

import duckmine

DATA = Path(__file__).parent / "data"
SAMPLES = Path(duckmine.__file__).parent / "extension" / "data"


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


def fails(con, sql, *fragments):
    """``sql`` fails with an error naming every fragment; the connection still works."""
    with pytest.raises(duckdb.Error) as err:
        con.execute(sql).fetchall()
    for f in fragments:
        assert f in str(err.value), str(err.value)
    assert con.execute("SELECT 42").fetchall() == [(42,)]
