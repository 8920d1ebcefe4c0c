"""Forged model values: a model of every learner, its JSON body mutated at random
(hypothesis: keys dropped or copied, lists cut, lengthened or made huge, numbers out
of range, values of the wrong type, NaN) and its id recomputed, is either refused
with a clear error that names the function (``<function>: the model value is
corrupt: <what>``, or a limit such as a tree too deep to write as SQL), or answers
them all (probabilities finite, each row's summing to 1). Never a crash, a hang or
a raw error, and the connection lives on.

``DUCKMINE_FUZZ`` sets the mutations per learner: by default 10, the same ones each
run, so that the suite stays within its time and gives one verdict;
``DUCKMINE_FUZZ=1000`` is the thorough run, with new mutations each time."""

import math
import os

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from duckmine.algorithms import contract
from duckmine.udfs.learners import relation_name
from duckmine.udfs.models import MODEL_SQL

from .conftest import arff_tables
from .model_fuzz import forged, mutation

MUTATIONS = int(os.environ.get("DUCKMINE_FUZZ", "10"))
CI = "DUCKMINE_FUZZ" not in os.environ  # the suite's short run: the same mutations each time
DATA = {"classifier": ("weather_numeric", "'play'"), "regressor": ("cpu", "'class'"),
        "clusterer": ("weather_numeric", "NULL"), "counter": ("weather_nominal", "NULL")}
CASES = [(d, k) for d in contract.learners().values() for k in d.model_kinds]
ROWS = ("predict", "predict_proba", "predict_value", "log_likelihood")


@pytest.fixture(scope="module")
def db():
    con = arff_tables(["weather.nominal", "weather.numeric", "cpu"])
    yield con
    con.close()


def calls(decl, kind):
    """(function, SQL expression over model m and row t) of every function a model
    of ``kind`` answers."""
    out = [(c, f"{c}(m, t)" if c in ROWS else f"{c}(m)")
           for c in decl.capabilities_for(kind)]
    out.append(("model_info", "model_info(m)"))
    if decl.relation:
        out.append((decl.name, f"{relation_name(decl)}(m)"))
    return out


def check_answer(function, rows):
    if function == "predict_proba":
        for (dist,) in rows:
            if dist is None:
                continue
            p = list(dist.values())
            assert all(math.isfinite(x) and 0 <= x <= 1 for x in p), dist
            assert abs(sum(p) - 1) < 1e-6 or sum(p) == 0, dist  # 0: knows nothing
    if function in ("predict_value", "log_likelihood"):
        assert all(v is None or math.isfinite(v) for (v,) in rows), rows


@pytest.mark.parametrize("decl,kind", CASES, ids=[f"{d.name}-{k}" for d, k in CASES])
def test_a_forged_body_is_refused_or_answered(db, decl, kind):
    table, target = DATA[kind]
    if decl.name == "kmeans":
        target += ", options := {'k': 2}"
    value = db.execute(f"SELECT model FROM fit('{decl.name}', '{table}', {target})"
                       ).fetchall()[0][0]
    functions = calls(decl, kind)

    @settings(max_examples=MUTATIONS, deadline=None, database=None, derandomize=CI,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def mutated(data):
        body = data.draw(mutation(value["body"]))
        model = forged(value, body)
        for function, expr in functions:
            try:
                rows = db.execute(f"SELECT {expr} FROM (SELECT $m::{MODEL_SQL} AS m), "
                                  f"{table} t", {"m": model}).fetchall()
            except duckdb.Error as err:
                assert f"{function}: " in str(err), \
                    f"{expr}: {err}\nbody: {body[:2000]}"
                continue
            check_answer(function, rows)

    mutated()
    assert db.execute("SELECT count(*) FROM cpu").fetchall() == [(209,)]
