"""model_dot and model_svg: each model with a structure is drawn as Graphviz DOT
whose nodes and edges are the model's own (read back with pydot, an independent DOT
parser): a tree's nodes and branches, a decision list's rules in order, Ridor's
exceptions, a Bayesian network's arcs. The SVG (read back with an XML parser) draws
the same nodes and edges, no two nodes overlapping."""

import re
from xml.etree import ElementTree

import pydot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckmine.algorithms import contract
from duckmine.algorithms.pictures import Picture
from duckmine.udfs.learners import relation_name

from .conftest import arff_tables, fails

# pydot's grammar calls pyparsing's old names, which warn
pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated - use")
DRAWN = sorted(d.name for d in contract.learners().values()
               if "model_dot" in d.capabilities and d.relation)  # ad_tree: below
DATA = {"m5p": ("cpu", "class"), "m5_rules": ("cpu", "class")}
OPTIONS = {"cart": "{'min_leaf': 1, 'pruned': false}", "rep_tree": "{'pruned': false}"}


@pytest.fixture(scope="module")
def db():
    con = arff_tables(["weather.numeric", "weather.nominal", "labor", "cpu", "soybean"])
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
          "the learners whose models offer it are ad_tree, bayes_net, c45")
    fails(db, "SELECT model_dot(42)", "model_dot", "expected a model value")
    assert db.execute("SELECT model_dot(NULL)").fetchall() == [(None,)]


def test_ad_tree(db):
    """Each AD node holds the count of the conjunction on its path (counted here by
    SQL); below it, a vary node per later attribute, each with an AD node per
    value other than its most common one that rows have."""
    dot = db.execute("SELECT model_dot(ad_tree_fit(w)) FROM (SELECT outlook, humidity, "
                     "windy, play FROM weather_nominal) w").fetchall()[0][0]
    nodes, edges = shape(pydot.graph_from_dot_data(dot)[0])
    columns = ["outlook", "humidity", "windy", "play"]
    below = {}
    for (a, b), text in edges.items():
        below.setdefault(a, []).append((b, text))
    checked = 0
    stack = [("N0", [], 0)]
    while stack:
        node, path, first = stack.pop()
        where = " AND ".join(f"{c} = '{v}'" for c, v in path) or "true"
        (count,) = db.execute(f"SELECT count(*) FROM weather_nominal WHERE {where}"
                              ).fetchone()
        assert nodes[node] == str(count), (node, path)
        checked += 1
        varies = sorted(b for b, _ in below.get(node, []))
        assert [nodes[v].split("\n")[0] for v in sorted(varies, key=lambda v: int(v[1:]))
                ] == [f"Vary {c}" for c in columns[first:]]
        for v in varies:
            column = nodes[v].split("\n")[0].removeprefix("Vary ")
            mcv = nodes[v].split("mcv: ")[1]
            values = {t.removeprefix("= "): b for b, t in below.get(v, [])}
            present = {x for (x,) in db.execute(
                f"SELECT DISTINCT {column} FROM weather_nominal WHERE {where}").fetchall()}
            assert set(values) == present - {mcv}
            for value, child in values.items():
                stack.append((child, path + [(column, value)], columns.index(column) + 1))
    assert checked == sum(1 for k in nodes if k.startswith("N")) > 10


def test_a_large_ad_tree_is_not_drawn(db):
    fails(db, "SELECT model_svg(ad_tree_fit(s)) FROM (SELECT date, \"plant-stand\", precip, "
              "temp, hail, \"crop-hist\", \"area-damaged\" FROM soybean) s",
          "model_svg: an ad_tree of 2,564 nodes is too large to draw (at most 2,000)",
          "max_depth or leaf_list_cutoff")
    # with max_depth 1 it is small: the root, a vary node per column (36), and an
    # AD node per value, none of them expanded further
    dot = db.execute("SELECT model_dot(ad_tree_fit(s, max_depth := 1)) FROM soybean s"
                     ).fetchall()[0][0]
    nodes, edges = shape(pydot.graph_from_dot_data(dot)[0])
    assert sum(k.startswith("V") for k in nodes) == 36
    assert {a for a, _ in edges if a.startswith("N")} == {"N0"}


# ------------------------------------------------------------------ model_svg

SVG = "{http://www.w3.org/2000/svg}"


def svg_shape(svg):
    """(node id -> (label, (x0, y0, x1, y1)), edge (source, target) -> label, the
    drawing's (width, height)) read back from SVG text with an XML parser."""
    root = ElementTree.fromstring(svg)
    nodes, edges = {}, {}
    for g in root.iter(f"{SVG}g"):
        title = g.find(f"{SVG}title").text
        text = g.find(f"{SVG}text")
        label = None if text is None else "\n".join(t.text or "" for t in
                                                     text.iter(f"{SVG}tspan"))
        if g.get("class") == "node":
            box = g.find(f"{SVG}rect")
            if box is not None:
                x, y = float(box.get("x")), float(box.get("y"))
                extent = (x, y, x + float(box.get("width")), y + float(box.get("height")))
            else:
                e = g.find(f"{SVG}ellipse")
                cx, cy, rx, ry = (float(e.get(k)) for k in ("cx", "cy", "rx", "ry"))
                extent = (cx - rx, cy - ry, cx + rx, cy + ry)
            nodes[title] = (label, extent)
        else:
            edges[tuple(title.split("->"))] = label or ""
    return nodes, edges, (float(root.get("width")), float(root.get("height")))


def apart(nodes, size):
    """No two nodes overlap, and every node lies inside the drawing."""
    boxes = sorted(extent for _, extent in nodes.values())
    for k, (x0, y0, x1, y1) in enumerate(boxes):
        assert 0 <= x0 and 0 <= y0 and x1 <= size[0] and y1 <= size[1]
        for a0, b0, a1, b1 in boxes[k + 1:]:
            if a0 >= x1:
                break
            assert b0 >= y1 or b1 <= y0, ((x0, y0, x1, y1), (a0, b0, a1, b1))


@pytest.mark.parametrize("learner", DRAWN)
def test_the_svg_is_the_dot(db, learner):
    """The SVG draws the DOT's nodes with their labels and its edges with theirs,
    each node clear of the others."""
    graph, _ = drawn(db, learner)
    nodes, edges = shape(graph)
    svg = db.execute("SELECT model_svg(model) FROM m").fetchall()[0][0]
    drawn_nodes, drawn_edges, size = svg_shape(svg)
    assert {k: label for k, (label, _) in drawn_nodes.items()} == nodes
    assert drawn_edges == edges
    apart(drawn_nodes, size)


def test_weather_tree_svg(db):
    svg = db.execute("SELECT model_svg(model) FROM fit('c45', 'weather_numeric', 'play')"
                     ).fetchall()[0][0]
    nodes, edges, _ = svg_shape(svg)
    centre = {k: ((x0 + x1) / 2, (y0 + y1) / 2) for k, (_, (x0, y0, x1, y1)) in nodes.items()}
    # a tree is drawn top down, children left to right in branch order, a parent
    # centred over its children
    assert centre["N0"][1] < centre["N1"][1] < centre["N2"][1]
    assert centre["N1"][0] < centre["N4"][0] < centre["N5"][0]
    assert centre["N6"][0] < centre["N7"][0]
    assert centre["N5"][0] == pytest.approx((centre["N6"][0] + centre["N7"][0]) / 2, abs=1)
    assert edges[("N0", "N1")] == "= sunny" and nodes["N2"][0] == "yes (2.0)"


def test_models_without_a_picture_svg(db):
    fails(db, "SELECT model_svg(model) FROM fit('kmeans', 'labor', NULL, options := {'k': 2})",
          "model_svg: a kmeans model (clusterer) does not offer model_svg",
          "the learners whose models offer it are ad_tree, bayes_net, c45")
    fails(db, "SELECT model_svg('x')", "model_svg", "expected a model value")
    assert db.execute("SELECT model_svg(NULL)").fetchall() == [(None,)]


@st.composite
def graphs(draw):
    """A picture of up to 25 nodes: a forest, or arcs between any nodes (cycles,
    arcs to themselves and long arcs included), labels of any text."""
    n = draw(st.integers(1, 25))
    text = st.text(st.characters(codec="utf-8"), max_size=12)
    nodes = [(f"V{i}", draw(text) + ("\n" + draw(text) if draw(st.booleans()) else ""),
              draw(st.sampled_from(["box", "ellipse"]))) for i in range(n)]
    if draw(st.booleans()):
        arcs = [(draw(st.integers(0, i - 1)), i) for i in range(1, n) if draw(st.booleans())]
    else:
        arcs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                             max_size=3 * n, unique=True))
    edges = [(f"V{a}", f"V{b}", draw(st.none() | text)) for a, b in arcs]
    return Picture("g", nodes, edges)


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_any_picture_is_drawn_whole_and_clear(picture):
    nodes, edges, size = svg_shape(picture.svg())
    # what XML cannot carry reads back as U+FFFD
    unwritable = re.compile("[\x00-\x08\x0b-\x1f\ufffe\uffff]")
    assert {k: label for k, (label, _) in nodes.items()} == {
        i: unwritable.sub("\ufffd", label) for i, label, _ in picture.nodes}
    assert edges == {(a, b): unwritable.sub("\ufffd", text or "")
                     for a, b, text in picture.edges}
    apart(nodes, size)
