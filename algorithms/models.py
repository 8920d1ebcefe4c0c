"""Models as values: a model serialises to a JSON body tagged with its learner and
that learner's format version (from its declaration), and is rebuilt from it by
the model class the declaration names."""

import hashlib
import json

from . import contract


class ModelError(ValueError):
    pass


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


def loads(name, version, body, model_id):
    """The model of a stored value, checked against its id and format version."""
    decl = contract.learners().get(name) if isinstance(name, str) else None
    if decl is not None and version != decl.version:
        raise ModelError(f"{name} model format version {version} is not supported (this "
                         f"version reads {decl.version}); refit the model")
    if decl is None or body is None or model_id != digest(name, version, body):
        raise ModelError("the model value is corrupt (its body does not match its id)")
    try:
        return decl.model_class().from_json(json.loads(body))
    except (ValueError, KeyError, TypeError, IndexError) as err:
        raise ModelError(f"the model value is corrupt ({err})") from None
