"""Models as values: every learner's model serialises to a JSON body tagged with
its learner and format version, and is rebuilt from it by the class registered
for that learner (``@learner``)."""

import hashlib
import json

VERSION = 1
LEARNERS = {}


def learner(cls):
    """Register a model class under its ``learner`` name."""
    LEARNERS[cls.learner] = cls
    return cls


class ModelError(ValueError):
    pass


def dumps(model):
    """(body text, id) of a model; the id is a digest of the body."""
    body = json.dumps(model.to_json(), separators=(",", ":"), allow_nan=False)
    return body, digest(model.learner, body)


def digest(name, body):
    return hashlib.blake2b(f"{name}\n{VERSION}\n{body}".encode(), digest_size=16).hexdigest()


def loads(name, version, body, model_id):
    """The model of a stored value, checked against its id and format version."""
    if version != VERSION:
        raise ModelError(f"model format version {version} is not supported (this "
                         f"version reads {VERSION}); refit the model")
    cls = LEARNERS.get(name)
    if cls is None or body is None or model_id != digest(name, body):
        raise ModelError("the model value is corrupt (its body does not match its id)")
    try:
        return cls.from_json(json.loads(body))
    except (ValueError, KeyError, TypeError, IndexError) as err:
        raise ModelError(f"the model value is corrupt ({err})") from None
