"""Models as pictures: Graphviz DOT text of a model's structure, drawn from the same
rows its table form lists (so the picture and the relation never disagree): a
tree's tests and leaves, a decision list's rules in order, Ridor's exceptions, a
Bayesian network's arcs."""

from .javafmt import counts, java_double

HEAD = ('digraph {name} {{\n  graph [rankdir=TB];\n'
        '  node [fontname="Helvetica", fontsize=11];\n'
        '  edge [fontname="Helvetica", fontsize=10];\n')


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
        return f"{r['model']} ({r['instances']}/{_pct(r['error_pct'])})"
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
    out = [HEAD.format(name=quote(name))]
    for r in rows:
        i = r["node"]
        if i in tested:
            out.append(f"  N{i} [label={quote(tested[i])}, shape=ellipse];\n")
        else:
            out.append(f"  N{i} [label={quote(leaf_label(r))}, shape=box];\n")
        if r["parent"] is not None:
            edge = _edge(r, tested[r["parent"]])
            out.append(f"  N{r['parent']} -> N{i} [label={quote(edge)}];\n")
    return "".join(out) + "}\n"


def _pct(x):
    return "-" if x is None else f"{java_double(round(x, 3))}%"


def _rule_label(r):
    conditions = " and\n".join(r["conditions"]) if r["conditions"] else "(otherwise)"
    if "class" not in r:  # a model rule: its linear model, numbered as printed
        return f"{conditions}\n=> LM{r['rule']} ({r['coverage']}/{_pct(r['error_pct'])})"
    return f"{conditions}\n=> {r['class']}{_figures(r['coverage'], r['errors'])}"


def decision_list(rows, name):
    """A decision list: its rules in order, each box a rule, each ``else`` edge to
    the rule tried next."""
    out = [HEAD.format(name=quote(name))]
    for r in rows:
        out.append(f"  R{r['rule']} [label={quote(_rule_label(r))}, shape=box];\n")
    for a, b in zip(rows, rows[1:]):
        out.append(f"  R{a['rule']} -> R{b['rule']} [label=\"else\"];\n")
    return "".join(out) + "}\n"


def exceptions(rows, name):
    """Ridor's rules: the default rule on top, each rule below the rule whose
    exception it is."""
    out = [HEAD.format(name=quote(name))]
    for r in rows:
        out.append(f"  R{r['rule']} [label={quote(_rule_label(r))}, shape=box];\n")
        if r["parent"] is not None:
            out.append(f"  R{r['parent']} -> R{r['rule']} [label=\"except\"];\n")
    return "".join(out) + "}\n"


def network(names, parents, name):
    """A Bayesian network: a node per attribute, an arc from each parent."""
    out = [HEAD.format(name=quote(name))]
    for i, n in enumerate(names):
        out.append(f"  A{i} [label={quote(n)}, shape=ellipse];\n")
    for i, ps in enumerate(parents):
        for p in ps:
            out.append(f"  A{p} -> A{i};\n")
    return "".join(out) + "}\n"
