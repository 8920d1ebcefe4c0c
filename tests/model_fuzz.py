"""Mutations of a model value's JSON body, for the forged-model tests: a body is
edited at one place (a key dropped or copied from a sibling, a list shortened,
lengthened or made huge, a number out of range, a value of the wrong type, NaN)
and given a matching id, as someone who edits a stored model would."""

import json
import math

from hypothesis import strategies as st

from duckmine.algorithms import models

ODD_VALUES = (-1, 0, 1, 2, 10**6, -(10**6), 2**53 + 1, 2**63, 1e308, -1e308, 5e-324,
              math.nan, math.inf, -math.inf, "x", "", None, True, False, [], {}, [[]],
              [None], [-1], ["x"], {"x": 1})
KINDS = ("drop", "sibling", "odd", "shorter", "longer", "huge", "nudge")


def _children(node):
    if isinstance(node, dict):
        return list(node)
    if isinstance(node, list):
        return list(range(len(node)))
    return []


@st.composite
def mutation(draw, body):
    """A body (text) derived from ``body`` by one edit, drawn by hypothesis."""
    d = json.loads(body)
    path = []
    node = d
    while _children(node) and (not path or draw(st.integers(0, 3)) > 0):
        keys = _children(node)
        key = keys[draw(st.integers(0, len(keys) - 1))]
        path.append((node, key))
        node = node[key]
    if not path:
        return json.dumps(draw(st.sampled_from(ODD_VALUES)))
    parent, key = path[-1]
    value = parent[key]
    kind = draw(st.sampled_from(KINDS))
    siblings = [k for k in _children(parent) if k != key]
    if kind == "drop":
        del parent[key]
    elif kind == "sibling" and siblings:
        parent[key] = parent[draw(st.sampled_from(siblings))]
    elif kind in ("shorter", "longer", "huge") and isinstance(value, list) and value:
        if kind == "shorter":
            parent[key] = value[:draw(st.integers(0, len(value) - 1))]
        else:
            parent[key] = value + [value[-1]] * (10**4 if kind == "huge" else
                                                 draw(st.integers(1, 3)))
    elif kind == "nudge" and isinstance(value, (int, float)) and not isinstance(value, bool):
        parent[key] = value + draw(st.sampled_from((-1, 1, 0.5, -0.5, 100)))
    else:
        parent[key] = draw(st.sampled_from(ODD_VALUES))
    return json.dumps(d)


def forged(value, body):
    """The model value ``value`` with ``body`` and the id that matches it."""
    return dict(value, body=body, id=models.digest(value["learner"], value["version"], body))
