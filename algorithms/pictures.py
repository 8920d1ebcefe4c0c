"""Models as pictures: a model's structure as a graph of labelled nodes and edges,
drawn from the same rows its table form lists (so the picture and the relation
never disagree): a tree's tests and leaves, a decision list's rules in order,
Ridor's exceptions, a Bayesian network's arcs. A picture is written as Graphviz DOT
text (``dot``) or laid out and drawn as SVG with no system binary (``svg``)."""

from dataclasses import dataclass, field

from .javafmt import counts, java_double

HEAD = ('digraph {name} {{\n  graph [rankdir=TB];\n'
        '  node [fontname="Helvetica", fontsize=11];\n'
        '  edge [fontname="Helvetica", fontsize=10];\n')


@dataclass
class Picture:
    """Nodes ``(id, label, shape)`` (shape "box" or "ellipse") and edges
    ``(source id, target id, label or None)``, top to bottom."""

    name: str
    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)

    def dot(self):
        out = [HEAD.format(name=quote(self.name))]
        for i, text, shape in self.nodes:
            out.append(f"  {i} [label={quote(text)}, shape={shape}];\n")
        for a, b, text in self.edges:
            attrs = "" if text is None else f" [label={quote(text)}]"
            out.append(f"  {a} -> {b}{attrs};\n")
        return "".join(out) + "}\n"

    def svg(self):
        from .drawing import svg
        return svg(self)


def quote(text):
    """``text`` as a DOT string, quotes and backslashes escaped, lines kept."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _figures(weight, errors):
    """A leaf's weight and errors as a tree prints them (two decimals at most):
    ``(3.0)`` or ``(3.0/1.33)``."""
    if weight is None:
        return ""
    if not errors or round(errors, 2) <= 0:
        return f" ({counts(weight)})"
    return f" ({counts(weight)}/{counts(errors)})"


def leaf_label(r):
    """What a leaf of a tree's rows answers, with the weight that reached it."""
    if r.get("model") is not None:  # a model tree's leaf: its linear model
        return f"{r['model']} ({r['instances']}/{_pct(r['error_pct'])})\n{linear(r)}"
    if r.get("class") is not None:
        return f"{r['class']}{_figures(r.get('weight'), r.get('errors'))}"
    return f"{java_double(round(r['mean'], 4))}{_figures(r.get('weight'), r.get('errors'))}"


def _edge(r, attribute):
    """A branch's test, less the name of the attribute its parent shows."""
    if "test" in r:  # CART writes each test whole: "outlook=(sunny)", "humidity < 75.5"
        return r["test"].removeprefix(attribute).strip()
    value = r["value"]
    if isinstance(value, float):
        value = java_double(value)
    return f"{r['operator']} {value}"


def tree(rows, name, tested=None):
    """A tree from its rows (``node``, ``parent``, ``is_leaf``, the test that leads
    to each node, and a leaf's figures): an inner node shows the attribute its
    branches test (``tested``: node to name, where the rows do not name it), each
    edge its branch's test, each leaf its answer."""
    tested = dict(tested or {})
    for r in rows:
        if r["parent"] is not None and r["parent"] not in tested:
            tested[r["parent"]] = r["attribute"]
    out = Picture(name)
    for r in rows:
        i = r["node"]
        if i in tested:
            out.nodes.append((f"N{i}", tested[i], "ellipse"))
        else:
            out.nodes.append((f"N{i}", leaf_label(r), "box"))
        if r["parent"] is not None:
            out.edges.append((f"N{r['parent']}", f"N{i}", _edge(r, tested[r["parent"]])))
    return out


def linear(r):
    """A linear model's terms, a line each: ``-0.0055 * MYCT``, ``+ 4.8125``."""
    lines = []
    for k, (name, c) in enumerate([*r["coefficients"], (None, r["intercept"])]):
        sign = ("-" if c < 0 else "") if k == 0 else ("- " if c < 0 else "+ ")
        lines.append(f"{sign}{abs(c):.4f}" + ("" if name is None else f" * {name}"))
    return "\n".join(lines)


def _pct(x):
    return "-" if x is None else f"{java_double(round(x, 3))}%"


def _rule_label(r):
    conditions = " and\n".join(r["conditions"]) if r["conditions"] else "(otherwise)"
    if "class" not in r:  # a model rule: its linear model, numbered as printed
        return (f"{conditions}\n=> LM{r['rule']} ({r['coverage']}/{_pct(r['error_pct'])})"
                f"\n{linear(r)}")
    return f"{conditions}\n=> {r['class']}{_figures(r['coverage'], r['errors'])}"


def _rules(rows, name):
    return Picture(name, [(f"R{r['rule']}", _rule_label(r), "box") for r in rows])


def decision_list(rows, name):
    """A decision list: its rules in order, each box a rule, each ``else`` edge to
    the rule tried next."""
    out = _rules(rows, name)
    out.edges = [(f"R{a['rule']}", f"R{b['rule']}", "else") for a, b in zip(rows, rows[1:])]
    return out


def exceptions(rows, name):
    """Ridor's rules: the default rule on top, each rule below the rule whose
    exception it is."""
    out = _rules(rows, name)
    out.edges = [(f"R{r['parent']}", f"R{r['rule']}", "except")
                 for r in rows if r["parent"] is not None]
    return out


def network(names, parents, name):
    """A Bayesian network: a node per attribute, an arc from each parent."""
    return Picture(name, [(f"A{i}", n, "ellipse") for i, n in enumerate(names)],
                   [(f"A{p}", f"A{i}", None) for i, ps in enumerate(parents) for p in ps])
