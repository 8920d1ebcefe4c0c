"""Models as values: a model serialises to a JSON body tagged with its learner and
that learner's format version (from its declaration), and is rebuilt from it by
the model class the declaration names."""

import hashlib
import json
import math

import numpy as np

from . import contract


class ModelError(ValueError):
    pass


class Classifier:
    """What a classifier's model keeps besides its own structure: the attributes it
    was fitted on (the target among them), its classes, options and row count."""

    def __init__(self, attributes, target, options, instances):
        self.attributes = list(attributes)
        self.target = target
        self.classes = tuple(next(a for a in self.attributes if a.name == target).values)
        self.options = dict(options)
        self.instances = int(instances)


def body(model, **fields):
    """A fitted model's JSON: the attributes and target it was fitted on, its own
    ``fields``, its options and how many rows it saw."""
    return {"attributes": [a.to_json() for a in model.attributes], "target": model.target,
            **fields, "options": model.options, "instances": model.instances}


def attributes_of(d):
    """The attributes of a model's JSON (``body``)."""
    from .dataset import Attribute

    return [Attribute.from_json(a) for a in d["attributes"]]


def dumps(model):
    """(body text, format version, id) of a model; the id is a digest of the rest."""
    version = contract.learners()[model.learner].version
    body = json.dumps(model.to_json(), separators=(",", ":"), allow_nan=False)
    return body, version, digest(model.learner, version, body)


def digest(name, version, body):
    return hashlib.blake2b(f"{name}\n{version}\n{body}".encode(),
                           digest_size=16).hexdigest()


MAX_VALUES = 1_000_000  # values of one nominal attribute in a model, far past any fit


def corrupt(what):
    return ModelError(f"the model value is corrupt: {what}")


def check_head(d, decl):
    """What every model's JSON shares, checked before the model is built from it:
    its attributes (distinct names; nominal ones with distinct text values), its
    target's name, the options (as ``decl`` declares them) and the row count."""
    if not isinstance(d, dict):
        raise corrupt("its body is not an object")
    if "options" in d:
        if not isinstance(d["options"], dict):
            raise corrupt("its options are not an object")
        try:
            decl.options(decl.name, d["options"])
        except (ValueError, TypeError) as err:
            raise corrupt(f"its options: {str(err).removeprefix(decl.name + ': ')}") \
                from None
        # a model keeps every option but the column lists that chose its data and
        # the models that gave its counts
        lacking = [p.name for p in decl.params
                   if p.type not in ("text_list", "model") and p.name not in d["options"]]
        if lacking:
            raise corrupt(f"its options lack {', '.join(lacking)}")
    attributes = d.get("attributes")
    if attributes is None:
        return
    if not isinstance(attributes, list) or not attributes:
        raise corrupt("its attributes are not a list")
    seen = set()
    for a in attributes:
        if not isinstance(a, dict) or not isinstance(a.get("name"), str) \
                or a.get("kind") not in ("numeric", "nominal"):
            raise corrupt(f"attribute {str(a)[:60]} is not a name and a kind")
        if a["name"] in seen:
            raise corrupt(f"attribute {a['name']!r} appears twice")
        seen.add(a["name"])
        if a["kind"] == "nominal":
            values = a.get("values")
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values) \
                    or len(set(values)) != len(values) or len(values) > MAX_VALUES:
                raise corrupt(f"attribute {a['name']!r} does not hold distinct text values "
                              f"(at most {MAX_VALUES:,})")
    target = d.get("target")  # a name, or (Bayesian networks) an index
    if target is not None and not isinstance(target, str) and not (
            type(target) is int and 0 <= target < len(attributes)):
        raise corrupt(f"its target {str(target)[:60]} is not an attribute's name")
    classes = d.get("classes")  # the class names (one_r's are codes, checked apart)
    if isinstance(classes, list) and classes and all(isinstance(c, str) for c in classes) \
            and len(set(classes)) != len(classes):
        raise corrupt("its classes are not distinct names")
    instances = d.get("instances", 0)
    if isinstance(instances, bool) or not isinstance(instances, int) \
            or not 0 <= instances < 2**63:
        raise corrupt(f"its row count {str(instances)[:30]} is not a whole number >= 0")


def _int64(text):
    """A whole number of a body as it is read: refused past 64 bits, which no column
    and no kernel takes."""
    x = int(text)
    if not -2**63 <= x < 2**63:
        raise corrupt("it holds a whole number beyond 64 bits")
    return x


_BODY = json.JSONDecoder(parse_int=_int64)


def _finite(values, width=None):
    """Whether ``values`` is a list of finite numbers (of length ``width``)."""
    try:
        check_array(values, "", (width,))
    except ValueError:
        return False
    return isinstance(values, list)


def check_tree(attributes, attr, children, props, probs, width, branches, target=None):
    """Raise ValueError unless the nodes (lists in depth-first order: the attribute
    each tests, -1 at a leaf; its children; the branches' shares; the probabilities,
    of ``width`` each, or None) make a tree a scoring walk can follow: each child
    after its parent and below exactly one node, each test on an attribute the
    model has (not the target) with ``branches(attribute)`` children."""
    n = len(attr)
    if n == 0 or any(len(x) != n for x in (children, props, probs)):
        raise ValueError("its tree's node lists differ in length")
    below = [False] * n
    below[0] = True
    for i in range(n):
        a, kids = attr[i], children[i] or []
        if isinstance(a, bool) or not isinstance(a, int) or not isinstance(kids, list):
            raise ValueError(f"node {i} is not an attribute and a list of children")
        if a < 0:
            if a != -1 or kids or props[i] is not None:
                raise ValueError(f"leaf {i} has children")
        else:
            if a >= len(attributes) or attributes[a].name == target:
                raise ValueError(f"node {i} tests attribute {a}, which it does not have")
            want = branches(attributes[a])
            if len(kids) != want or not _finite(props[i], want) or min(props[i]) < 0:
                raise ValueError(f"node {i} does not have the {want} branches its test on "
                                 f"{attributes[a].name!r} makes")
            for c in kids:
                if isinstance(c, bool) or not isinstance(c, int) or not i < c < n \
                        or below[c]:
                    raise ValueError(f"node {i}'s child {c} is not a node after it")
                below[c] = True
        if probs[i] is not None and not _finite(probs[i], width):
            raise ValueError(f"node {i} does not hold {width} finite probabilities")
    if not all(below):
        raise ValueError(f"node {below.index(False)} hangs below no node")


def preorder(children):
    """(node, parent, branch, depth) of every node under the root, node 0, depth
    first in branch order, without recursion (a tree may be thousands deep);
    ``children[i]`` lists node i's children (empty or None at a leaf)."""
    stack = [(0, None, None, 0)]
    while stack:
        node = stack.pop()
        yield node
        kids = children[node[0]] or ()
        stack += [(kids[b], node[0], b, node[3] + 1) for b in range(len(kids) - 1, -1, -1)]


def check_records(records, keys, where):
    """Raise ValueError unless ``records`` is a non-empty list of objects, each with
    exactly the fields ``keys`` (a model's nodes or rules, before any is read)."""
    if not isinstance(records, list) or not records:
        raise ValueError(f"its {where}s are not a list")
    want = set(keys)
    for i, r in enumerate(records):
        if not isinstance(r, dict) or r.keys() != want:
            raise ValueError(f"{where} {i} does not have exactly the fields "
                             f"{', '.join(keys)}")


def check_array(values, where, shape=None, low=None, high=None, whole=False):
    """``values`` (a list or array) as a float64 array of ``shape`` (None for any
    length) holding finite numbers in [low, high) (whole ones if ``whole``);
    ValueError naming ``where`` otherwise."""
    try:
        x = np.asarray(values)
    except (TypeError, ValueError):  # ragged
        raise ValueError(f"{where} does not hold numbers") from None
    if x.dtype.kind not in "iuf" and x.size:  # not text, truth values or None
        raise ValueError(f"{where} does not hold numbers")
    x = x.astype(np.float64, copy=False)
    if shape is not None and (x.ndim != len(shape) or any(
            s is not None and s != n for s, n in zip(shape, x.shape))):
        if tuple(shape) == (1,):
            raise ValueError(f"{where} is not a number")
        want = " x ".join("n" if s is None else str(s) for s in shape)
        raise ValueError(f"{where} is not {want} numbers")
    if not x.size:
        return x
    least, most = x.min(), x.max()  # NaN where x holds one
    if not (math.isfinite(least) and math.isfinite(most)) or (
            low is not None and least < low) or (high is not None and most >= high) or (
            whole and (x != np.round(x)).any()):
        bounds = "" if low is None and high is None else f" in [{low}, {high})"
        raise ValueError(f"{where} does not hold finite {'whole ' if whole else ''}"
                         f"numbers{bounds}")
    return x


def check_class(attributes, class_index):
    """The number of classes of the nominal attribute ``class_index`` (a model that
    names its class by index); ValueError unless it is one with values."""
    if type(class_index) is not int or not 0 <= class_index < len(attributes) \
            or not attributes[class_index].nominal or not attributes[class_index].values:
        raise ValueError("its class is not a nominal attribute with values")
    return len(attributes[class_index].values)


def check_attribute(attributes, a, target, where):
    """The attribute index ``a`` of a test, if the model has it (and it is not the
    target); ValueError naming ``where`` otherwise."""
    if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < len(attributes) \
            or attributes[a].name == target:
        raise ValueError(f"{where} tests attribute {a}, which it does not have")
    return attributes[a]


MAX_WEIGHT = 1e100  # far above any data's total weight; sums of such stay finite


def check_weights(values, width, where):
    """Finite, non-negative class weights (or probabilities), ``width`` of them."""
    if not _finite(values, width) or min(values, default=0) < 0 \
            or max(values, default=0) > MAX_WEIGHT:
        raise ValueError(f"{where} does not hold {width} finite class weights")


def loads(name, version, body, model_id):
    """The model of a stored value, checked against its id and format version, and
    its body against the shape every model shares and (where the model class
    defines ``validate``) its own structure, so that a forged or damaged body gets
    an error rather than a crash or a wrong answer."""
    decl = contract.learners().get(name) if isinstance(name, str) else None
    if decl is not None and version != decl.version:
        raise ModelError(f"{name} model format version {version} is not supported (this "
                         f"version reads {decl.version}); refit the model")
    if decl is None or body is None or model_id != digest(name, version, body):
        raise corrupt("its body does not match its id")
    try:
        d = _BODY.decode(body)
        check_head(d, decl)
        model = decl.model_class().from_json(d)
        if hasattr(model, "validate"):
            model.validate()
        if getattr(model, "target", None) is not None and not isinstance(model.target, str):
            raise ValueError("its target is not a name")
        return model
    except ModelError:
        raise
    except (ValueError, KeyError, TypeError, IndexError, AttributeError,
            RecursionError, OverflowError, StopIteration) as err:
        raise corrupt(str(err) or type(err).__name__) from None
