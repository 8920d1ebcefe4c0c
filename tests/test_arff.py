"""read_arff: Weka's types, value order and missing values."""

import datetime

import pytest

import duckmine
from duckmine.extension.arff import ArffError

from .conftest import SAMPLES

ARFF = """% a comment
@relation 'test data'
@attribute 'colour name' {red, 'light blue', green}
@attribute size numeric
@attribute note string
@attribute when date "yyyy-MM-dd HH:mm:ss"
@attribute flag {t} % trailing comment
@data
red, 1.5, 'hello, world', "2020-01-02 03:04:05", t
'light blue', ?, ?, ?, ?
green,-2,plain,"2021-12-31 00:00:00",t,{3}
{1 7, 0 green}
"""


def write(tmp_path, text):
    path = tmp_path / "t.arff"
    path.write_text(text)
    return path


def test_types_order_and_missing(fresh, tmp_path):
    duckmine.read_arff(fresh, write(tmp_path, ARFF), "t")
    types = fresh.execute("SELECT column_name, data_type FROM information_schema.columns "
                          "WHERE table_name = 't' ORDER BY ordinal_position").fetchall()
    assert types == [("colour name", "ENUM('red', 'light blue', 'green')"),
                     ("size", "DOUBLE"), ("note", "VARCHAR"), ("when", "TIMESTAMP"),
                     ("flag", "ENUM('t')")]
    rows = fresh.execute('SELECT * FROM t').fetchall()
    assert rows == [
        ("red", 1.5, "hello, world", datetime.datetime(2020, 1, 2, 3, 4, 5), "t"),
        ("light blue", None, None, None, None),
        ("green", -2.0, "plain", datetime.datetime(2021, 12, 31), "t"),
        # sparse: an omitted value is Weka's 0 (the first nominal value, the epoch)
        ("green", 7.0, None, datetime.datetime(1970, 1, 1), "t"),
    ]
    # ENUM order is the declared order, as in Weka
    assert fresh.execute('SELECT "colour name" FROM t ORDER BY "colour name"'
                         ).fetchall() == [("red",), ("light blue",), ("green",), ("green",)]


def test_sparse_rows_omit_weka_zeros(fresh, tmp_path):
    text = "@relation r\n@attribute a {x, y}\n@attribute b numeric\n@data\n{1 2}\n{0 y}\n"
    duckmine.read_arff(fresh, write(tmp_path, text), "sp")
    assert fresh.execute("SELECT * FROM sp").fetchall() == [("x", 2.0), ("y", 0.0)]


def test_weather_loads_as_in_the_book(fresh):
    duckmine.read_arff(fresh, SAMPLES / "weather.nominal.arff", "weather")
    assert fresh.execute("SELECT count(*), count(DISTINCT outlook) FROM weather"
                         ).fetchall() == [(14, 3)]
    with pytest.raises(Exception, match="already exists"):
        duckmine.read_arff(fresh, SAMPLES / "weather.nominal.arff", "weather")
    duckmine.read_arff(fresh, SAMPLES / "weather.nominal.arff", "weather", replace=True)


@pytest.mark.parametrize("text, message", [
    ("@relation r\n@attribute a {x, y}\n@data\nz\n", "value 'z' of attribute 'a'"),
    ("@relation r\n@attribute a numeric\n@data\nabc\n", "'abc' is not a number"),
    ("@relation r\n@attribute a numeric\n@attribute b numeric\n@data\n1\n",
     "1 values for 2 attributes"),
    ("@relation r\n@attribute a relational\n@data\n", "unsupported type"),
    ("@relation r\n@attribute a numeric\n", "no @data section"),
])
def test_errors_name_the_problem(fresh, tmp_path, text, message):
    with pytest.raises(ArffError, match=message):
        duckmine.read_arff(fresh, write(tmp_path, text), "bad")


def test_instance_weights_on_request(fresh, tmp_path):
    path = write(tmp_path, "@relation r\n@attribute a numeric\n@attribute b {x, y}\n"
                           "@data\n1, x, {2.5}\n2, y\n{0 3, 1 y}, {0.5}\n{1 y}\n")
    duckmine.read_arff(fresh, path, "plain")
    assert fresh.sql("FROM plain").fetchall() == [(1.0, "x"), (2.0, "y"), (3.0, "y"),
                                                  (0.0, "y")]
    duckmine.read_arff(fresh, path, "weighted", weight="w")
    assert fresh.sql("SELECT w FROM weighted").fetchall() == [(2.5,), (1.0,), (0.5,), (1.0,)]
    with pytest.raises(ArffError, match="clashes"):
        duckmine.read_arff(fresh, path, "clash", weight="a")
