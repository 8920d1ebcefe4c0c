"""The shared preprocessing filters against the reference's filters (goldens from
tests/golden/make_filters_golden.py): the same attributes, names, values and
numbers (to the six decimals the reference writes); then the JSON round trip and
the SQL form, which must code rows exactly as ``apply`` does."""

import json
import math
from functools import partial
from pathlib import Path

import duckdb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duckmine
from duckmine.algorithms.dataset import Attribute
from duckmine.algorithms.filters import (
    Discretize,
    NominalToBinary,
    Normalize,
    Pipeline,
    ReplaceMissing,
    Standardize,
    output_name,
)
from duckmine.algorithms.javafmt import double_to_string
from duckmine.extension.arff import parse

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "filters"
DATA = HERE / "data"
STEPS = {  # config -> (filter, supervised)
    "replace_missing": (ReplaceMissing, False),
    "normalize": (Normalize, False),
    "standardize": (Standardize, False),
    "nominal_to_binary": (NominalToBinary, False),
    "discretize_bins": (partial(Discretize, bins=10), False),
    "discretize_mdl": (Discretize, True),
    "nominal_to_binary_ranked": (partial(NominalToBinary, ranked=True), True),
}
CASES = sorted(p.stem.split("__") for p in GOLDEN.glob("*.arff"))


def _read(path):
    """(attributes, columns, weights) of an ARFF file, as the learners see them."""
    attrs, rows, weights = parse(Path(path).read_text())
    attributes = [Attribute(a.name, a.kind, tuple(a.values)) for a in attrs]
    columns = []
    for j, a in enumerate(attributes):
        if a.nominal:
            col = [np.nan if r[j] is None else a.values.index(r[j]) for r in rows]
        else:
            col = [np.nan if r[j] is None else float(r[j]) for r in rows]
        columns.append(np.array(col, np.float64))
    return attributes, columns, np.array(weights, np.float64)


def _unquoted(s):
    return s[1:-1] if len(s) > 1 and s[0] == s[-1] == "'" else s


def _fit(data, config):
    attributes, columns, w = _read(DATA / f"{data}.arff")
    step, supervised = STEPS[config]
    if not supervised:
        pipeline, out = Pipeline.fitted(attributes, (step,), columns, w)
        return attributes, columns, pipeline, out
    # as a learner does: fitted on the rows with a class, applied to every row
    y = columns[-1]
    known = ~np.isnan(y)
    y = y[known].astype(np.int64) if attributes[-1].nominal else y[known]
    attributes, columns = attributes[:-1], columns[:-1]
    pipeline, _ = Pipeline.fitted(attributes, (step,), [c[known] for c in columns],
                                  w[known], y)
    return attributes, columns, pipeline, pipeline.apply(columns)


@pytest.mark.parametrize("data,config", CASES)
def test_matches_the_reference(data, config):
    _, _, pipeline, out = _fit(data, config)
    want_attrs, want_rows, _ = _read(GOLDEN / f"{data}__{config}.arff")
    if STEPS[config][1]:  # the class is passed through by the reference
        want_attrs, want_rows = want_attrs[:-1], want_rows[:-1]
    got = pipeline.outputs
    assert [_unquoted(a.name) for a in want_attrs] == [a.name for a in got]
    for a, b, want, col in zip(want_attrs, got, want_rows, out):
        assert a.kind == b.kind, a.name
        if a.nominal:
            assert [_unquoted(v) for v in a.values] == list(b.values), a.name
            assert [None if math.isnan(x) else _unquoted(a.values[int(x)])
                    for x in want] == \
                [None if math.isnan(x) else b.values[int(x)] for x in col], a.name
        else:
            mine = [math.nan if math.isnan(x) else float(double_to_string(x, 6))
                    for x in col]
            np.testing.assert_array_equal(want, mine, err_msg=a.name)


@pytest.mark.parametrize("data,config", CASES)
def test_json_round_trip_and_sql_code_rows_as_apply(data, config):
    attributes, columns, pipeline, out = _fit(data, config)
    again = Pipeline.from_json(attributes, json.loads(json.dumps(pipeline.to_json())))
    for a, b in zip(out, again.apply(columns)):
        np.testing.assert_array_equal(a, b)
    con = duckdb.connect()
    duckmine.read_arff(con, DATA / f"{data}.arff", "t")
    select = pipeline.select().sql(dialect="duckdb")
    names = ", ".join(f'f."{output_name(j)}"' for j in range(len(out)))
    rows = con.execute(f"SELECT {names} FROM t, LATERAL ({select}) AS f").fetchall()
    sql = np.array([[np.nan if v is None else v for v in r] for r in rows],
                   np.float64).reshape(len(rows), len(out))
    np.testing.assert_array_equal(np.column_stack(out), sql)


def test_chain_fits_each_filter_on_the_output_of_the_one_before():
    attributes, columns, w = _read(DATA / "labor.arff")
    steps = (ReplaceMissing, NominalToBinary, Standardize)
    pipeline, out = Pipeline.fitted(attributes[:-1], steps, columns[:-1], w)
    assert not any(np.isnan(c).any() for c in out)
    one, filled = Pipeline.fitted(attributes[:-1], steps[:1], columns[:-1], w)
    two, binary = Pipeline.fitted(one.outputs, steps[1:2], filled, w)
    three, final = Pipeline.fitted(two.outputs, steps[2:], binary, w)
    for a, b in zip(out, final):
        np.testing.assert_array_equal(a, b)
    assert [a.name for a in pipeline.outputs] == [a.name for a in three.outputs]


def test_unseen_and_missing_values_when_applied():
    attributes, columns, w = _read(DATA / "labor.arff")
    pipeline, _ = Pipeline.fitted(attributes[:-1], (ReplaceMissing, NominalToBinary),
                                  columns[:-1], w)
    fill = pipeline.filters[0].fill
    blank = [np.array([np.nan]) for _ in attributes[:-1]]
    coded = pipeline.apply(blank)
    assert not any(np.isnan(c).any() for c in coded)
    binary = pipeline.filters[1]
    for (j, level), col in zip(binary.columns, coded):
        want = fill[j] if level < 0 else float(int(fill[j]) in binary._ones(j, level))
        assert col[0] == want


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_cut_points_of_counted_rows_equal_those_of_the_rows(data):
    """What a distributed pass brings back, (value, class) pairs with their rows and
    whole weights added up in any order, gives the rows' own cut points."""
    from duckmine.algorithms import discretize

    n = data.draw(st.integers(2, 300))
    k = data.draw(st.integers(2, 4))
    x = np.array(data.draw(st.lists(st.integers(0, 12), min_size=n, max_size=n)),
                 np.float64) / 4
    y = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    w = np.array(data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)),
                 np.float64)
    if data.draw(st.booleans()):  # classes that follow the value, so that cuts pass
        y = np.minimum((x * k / 3.01).astype(np.int64), k - 1)
    want = discretize.cut_points(x, y, w, k, True)
    pairs = {}
    for i in data.draw(st.permutations(range(n))):
        got = pairs.setdefault((x[i], y[i]), [0.0, 0])
        got[0] += w[i]
        got[1] += 1
    keys = list(pairs)
    got = discretize.counted_cut_points(
        np.array([a for a, _ in keys]), np.array([c for _, c in keys], np.int64),
        np.array([pairs[q][0] for q in keys]), np.array([pairs[q][1] for q in keys]), k)
    assert got.tolist() == want.tolist()
