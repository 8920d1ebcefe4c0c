"""A learner is a declaration and a core: declaring one (here a toy majority-class
learner, defined in this file) gives it its SQL table form and aggregate, option
checks, cross-validation, scoring and model_info, with no other change."""

import numpy as np
import pytest

import duckmine
from duckmine.algorithms import contract
from duckmine.algorithms.dataset import Attribute

from .conftest import SAMPLES, fails


class Majority:
    """The majority class, smoothed by ``prior`` counts per class."""

    learner = "toy_majority"

    def __init__(self, target, classes, attributes, proba, options, instances):
        self.target, self.classes = target, tuple(classes)
        self.attributes, self.used = list(attributes), []
        self.p = np.asarray(proba, np.float64)
        self.options, self.instances = dict(options), int(instances)

    def to_json(self):
        return {"target": self.target, "classes": list(self.classes),
                "attributes": [a.to_json() for a in self.attributes],
                "p": self.p.tolist(), "options": self.options, "instances": self.instances}

    @classmethod
    def from_json(cls, d):
        return cls(d["target"], d["classes"], [Attribute.from_json(a) for a in d["attributes"]],
                   d["p"], d["options"], d["instances"])

    def proba(self, columns, n):
        return np.tile(self.p, (n, 1))

    def text(self):
        return f"majority: {self.classes[int(np.argmax(self.p))]}\n"

    def rows(self):
        return [{"class": c, "probability": float(p)} for c, p in zip(self.classes, self.p)]


def fit(data, target, options, settings):
    y = data.columns[target]
    known = ~np.isnan(y)
    k = len(data.attributes[target].values)
    counts = np.bincount(y[known].astype(int), data.weights[known], k) + options["prior"]
    others = [a for i, a in enumerate(data.attributes) if i != target]
    return Majority(data.attributes[target].name, data.attributes[target].values, others,
                    counts / counts.sum(), options, known.sum())


TOY = contract.Learner(
    name="toy_majority", kind="classifier", package="duckmine.tests", doc="a toy",
    params=(contract.number("prior", 1.0, "prior count per class", low=0),),
    fit="test_new_learner:fit", model="test_new_learner:Majority",
    capabilities=("predict", "predict_proba", "model_text"),
    relation=(("class", "VARCHAR"), ("probability", "DOUBLE")), order_by=("class",))


@pytest.fixture()
def db(monkeypatch):
    monkeypatch.setattr(contract, "_learners", {**contract.learners(), TOY.name: TOY})
    con = duckmine.connect()
    duckmine.read_arff(con, SAMPLES / "weather.nominal.arff", "weather")
    yield con
    con.close()


def test_a_declared_learner_is_wired_everywhere(db):
    assert db.sql("SELECT * FROM toy_majority('weather', 'play', prior := 0)").fetchall() \
        == [("no", 5 / 14), ("yes", 9 / 14)]
    m = "(SELECT toy_majority_fit(w, 'play') AS m FROM weather w)"
    assert db.sql(f"SELECT DISTINCT predict(m, w) FROM weather w, {m}").fetchall() == [("yes",)]
    assert db.sql(f"SELECT model_text(m) FROM {m}").fetchall() == [("majority: yes\n",)]
    info = db.sql(f"SELECT model_info(m) FROM {m}").fetchall()[0][0]
    assert info["learner"] == "toy_majority" and info["options"] == {"prior": "1.0"}
    got = db.sql("SELECT correct, instances FROM cross_validate('toy_majority', 'weather', "
                 "'play', options := {'prior': 2})").fetchall()
    assert got == [(9.0, 14.0)]
    fails(db, "SELECT toy_majority_fit(w, 'play', prior := -1) FROM weather w",
          "toy_majority: prior must be a number >= 0, got -1")
    fails(db, f"SELECT predict_value(m, w) FROM weather w, {m}",
          "a toy_majority model (classifier) does not offer predict_value")
