"""model_dot: each model with a structure is drawn as Graphviz DOT whose nodes and
edges are the model's own (read back with pydot, an independent DOT parser): a
tree's nodes and branches, a decision list's rules in order, Ridor's exceptions, a
Bayesian network's arcs."""

import pydot
import pytest

from duckmine.algorithms import contract
from duckmine.udfs.learners import relation_name

from .conftest import arff_tables, fails

# pydot's grammar calls pyparsing's old names, which warn
pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated - use")
DRAWN = sorted(d.name for d in contract.learners().values() if "model_dot" in d.capabilities)
DATA = {"m5p": ("cpu", "class"), "m5_rules": ("cpu", "class")}
OPTIONS = {"cart": "{'min_leaf': 1, 'pruned': false}", "rep_tree": "{'pruned': false}"}


@pytest.fixture(scope="module")
def db():
    con = arff_tables(["weather.numeric", "labor", "cpu"])
    yield con
    con.close()


def drawn(db, learner):
    """(the parsed DOT graph, the model's rows) of a fit of ``learner``."""
    tbl, target = DATA.get(learner, ("labor", "class"))
    options = f", options := {OPTIONS[learner]}" if learner in OPTIONS else ""
    db.execute(f"CREATE OR REPLACE TEMP TABLE m AS SELECT model FROM fit('{learner}', "
               f"'{tbl}', '{target}'{options})")
    dot = db.execute("SELECT model_dot(model) FROM m").fetchall()[0][0]
    cursor = db.execute(f"SELECT unnest({relation_name(contract.learners()[learner])}"
                        f"(model), recursive := true) FROM m")
    names = [c[0] for c in cursor.description]
    rows = [dict(zip(names, r)) for r in cursor.fetchall()]
    (graph,) = pydot.graph_from_dot_data(dot)
    return graph, rows


def label(x):
    return x.get_label().strip('"').replace("\\n", "\n")


def shape(graph):
    nodes = {n.get_name(): label(n) for n in graph.get_nodes()
             if n.get_name() not in ("node", "edge", "graph")}
    edges = {(e.get_source(), e.get_destination()): (e.get_label() or "").strip('"')
             for e in graph.get_edges()}
    return nodes, edges


@pytest.mark.parametrize("learner", DRAWN)
def test_the_picture_is_the_model(db, learner):
    graph, rows = drawn(db, learner)
    nodes, edges = shape(graph)
    if learner == "bayes_net":  # a node per attribute, an arc from each parent
        names = {r["node"] for r in rows}
        arcs = {(p, r["node"]) for r in rows for p in r["parents"] or []}
        assert set(nodes.values()) == names
        by_name = {v: k for k, v in nodes.items()}
        assert {(by_name[a], by_name[b]) for a, b in arcs} == set(edges)
        assert arcs, "the network has arcs"
        return
    key, prefix = ("node", "N") if "node" in rows[0] else ("rule", "R")
    assert len(rows) >= 2
    assert set(nodes) == {f"{prefix}{r[key]}" for r in rows}
    if "parent" in rows[0]:  # a tree, or Ridor's exceptions: an edge from each parent
        assert set(edges) == {(f"{prefix}{r['parent']}", f"{prefix}{r[key]}")
                              for r in rows if r["parent"] is not None}
    else:  # a decision list: each rule to the next, in order
        order = [f"R{r['rule']}" for r in rows]
        assert set(edges) == set(zip(order, order[1:]))
        assert set(edges.values()) == {"else"}
    if key == "node":  # an inner node shows the attribute its branches test
        tbl = DATA.get(learner, ("labor",))[0]
        columns = {c for (c,) in db.execute(f"SELECT column_name FROM (DESCRIBE {tbl})"
                                            ).fetchall()}
        inner = {r["parent"] for r in rows if r["parent"] is not None}
        assert inner and all(nodes[f"N{i}"] in columns for i in inner)
        assert all(not label.startswith(nodes[a]) for (a, _), label in edges.items())
    for r in rows:
        text = nodes[f"{prefix}{r[key]}"]
        if "conditions" in r:  # a rule shows its conditions and what it gives
            assert all(c in text for c in r["conditions"]), (text, r)
            assert (r["class"] if "class" in r else f"LM{r['rule']}") in text
        elif r["is_leaf"]:
            assert (r.get("model") or r.get("class") or "") in text
    if learner == "c45":
        assert nodes["N0"] == "wage-increase-first-year"
        assert edges[("N0", "N1")] == "<= 2.5"


def test_weather_tree(db):
    dot = db.execute("SELECT model_dot(model) FROM fit('c45', 'weather_numeric', 'play')"
                     ).fetchall()[0][0]
    nodes, edges = shape(pydot.graph_from_dot_data(dot)[0])
    assert nodes == {"N0": "outlook", "N1": "humidity", "N2": "yes (2.0)",
                     "N3": "no (3.0)", "N4": "yes (4.0)", "N5": "windy",
                     "N6": "no (2.0)", "N7": "yes (3.0)"}
    assert edges == {("N0", "N1"): "= sunny", ("N1", "N2"): "<= 75",
                     ("N1", "N3"): "> 75", ("N0", "N4"): "= overcast",
                     ("N0", "N5"): "= rainy", ("N5", "N6"): "= TRUE",
                     ("N5", "N7"): "= FALSE"}


def test_models_without_a_picture(db):
    fails(db, "SELECT model_dot(model) FROM fit('naive_bayes', 'labor', 'class')",
          "model_dot", "naive_bayes model (classifier) does not offer model_dot",
          "the learners whose models offer it are bayes_net, c45")
    fails(db, "SELECT model_dot(42)", "model_dot", "expected a model value")
    assert db.execute("SELECT model_dot(NULL)").fetchall() == [(None,)]
