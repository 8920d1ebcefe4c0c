"""The learner contract: each scheme is declared once, and everything around it
(parameter checks, training-data checks, the SQL wiring of any engine, evaluation
and the generic model functions) is derived from that declaration.

A learner family is a package of ``algorithms``; its ``__init__`` holds only its
declarations (``LEARNERS``), so that finding every learner imports no kernel. The
fit function and the model class are named as ``"module:attribute"`` within the
package and imported on first use.

A fit function is ``fit(data, target, options, settings)``: a ``Dataset``, the
index of the target column (None for a clusterer), the checked options and the
engine's settings (``max_values``, ``ad_tree_max_mb``); it returns a model.
A model has ``learner``, ``attributes``, ``used`` (the attributes scoring reads),
``options`` and ``instances``, ``to_json``/``from_json``, and one method per
capability it declares (see ``METHODS``).
"""

import math
import numbers
import pkgutil
from dataclasses import dataclass
from decimal import Decimal
from importlib import import_module

import numpy as np

from . import memory
from .dataset import find_name

# a predictor is a classifier on a nominal target and a regressor on a numeric one
KINDS = ("classifier", "regressor", "predictor", "clusterer", "counter")
# what a capability means only for one kind of model
ONLY = {"predict_proba": ("classifier", "clusterer"), "predict_value": ("regressor",)}
# capability -> the model method that provides it
METHODS = {"predict": None, "predict_proba": "proba", "predict_value": "predict",
           "log_likelihood": "log_density", "model_text": "text", "model_to_sql": None,
           "model_dot": "picture", "model_svg": "picture"}
# a capability that brings others with it: a model that has a picture draws it both ways
IMPLIES = {"model_dot": ("model_svg",)}
TYPES = ("double", "integer", "boolean", "text", "text_list", "model")


class ContractError(ValueError):
    """A learner was called against its declaration: bad options, bad data."""


class _Required:
    """The default of a parameter that must be given (a positional SQL argument)."""

    def __repr__(self):
        return "REQUIRED"


REQUIRED = _Required()


def literal(v):
    """A value as a SQL literal: how declared defaults are written into SQL and how
    errors show the value they refuse."""
    if v is None:
        return "NULL"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(map(literal, v)) + "]"
    if isinstance(v, Decimal):
        return str(v)
    return repr(v)


def _interval(low, high, low_open, high_open):
    if high is None:
        return f"> {_num(low)}" if low_open else f">= {_num(low)}"
    if low is None:
        return f"< {_num(high)}" if high_open else f"<= {_num(high)}"
    return f"in {'(' if low_open else '['}{_num(low)}, {_num(high)}{')' if high_open else ']'}"


def _num(x):
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class Param:
    """One option of a learner: its name, type, default, constraint and doc."""

    name: str
    type: str
    default: object
    doc: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    nullable: bool = False  # NULL is a value of its own (documented in doc)
    # a model value given for it holds every count the fit needs: the rows are read
    # only for their target column, to check that they are the model's
    instead_of_rows: bool = False

    def __post_init__(self):
        if self.type not in TYPES:
            raise TypeError(f"{self.name}: unknown parameter type {self.type!r}")

    @property
    def constraint(self):
        """The constraint as words, as error messages give it."""
        if self.type == "boolean":
            return "true or false"
        if self.type == "model":
            return f"a model value of {self.choices[0]}_fit or NULL"
        if self.choices:
            return "one of " + ", ".join(map(repr, self.choices))
        if self.type == "text":
            return "a text"
        if self.type == "text_list":
            return "a list of names"
        what = "a whole number" if self.type == "integer" else "a number"
        if self.low is None and self.high is None:
            return what + (" or NULL" if self.nullable else "")
        bounds = _interval(self.low, self.high, self.low_open, self.high_open)
        if self.type == "double" and bounds.startswith("in "):
            return bounds + (" or NULL" if self.nullable else "")
        return f"{what} {bounds}" + (" or NULL" if self.nullable else "")

    @property
    def required(self):
        return self.default is REQUIRED

    def check(self, fn, v):
        """The value ``v`` given for this parameter, converted to its Python type;
        a ContractError naming ``fn`` and the parameter otherwise."""
        if v is REQUIRED:
            raise ContractError(f"{fn}: {self.name} must be given ({self.constraint})")
        if v is None:
            if self.nullable:
                return None
            self._fail(fn, v)
        if self.type == "boolean":
            if not isinstance(v, (bool, np.bool_)):
                self._fail(fn, v)
            return bool(v)
        if self.type == "model":  # the engine's boundary parsed the value
            learner = getattr(v, "learner", None)
            if learner != self.choices[0]:
                raise ContractError(f"{fn}: {self.name} must be {self.constraint}, got "
                                    + (f"a {learner} model" if learner else literal(v)[:60]))
            return v
        if self.type in ("text", "text_list"):
            items = [v] if self.type == "text" else v
            if self.type == "text_list" and not isinstance(v, (list, tuple)):
                self._fail(fn, v)
            if not all(isinstance(x, str) for x in items):
                self._fail(fn, v)
            if self.choices and v not in self.choices:
                self._fail(fn, v)
            return v if self.type == "text" else tuple(v)
        if type(v) not in (int, float) and (  # (the common case first: ABCs are slow)
                isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, Decimal))):
            self._fail(fn, v)
        x = float(v)
        if math.isnan(x) or math.isinf(x):
            self._fail(fn, v)
        if self.type == "integer":  # a whole number a 64-bit integer holds
            if x != int(v) or not -2**63 <= int(v) < 2**63:
                self._fail(fn, v)
            x = int(v)
        if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
            self._fail(fn, v)
        if self.high is not None and (x > self.high or (self.high_open and x == self.high)):
            self._fail(fn, v)
        return x

    def _fail(self, fn, v):
        raise ContractError(f"{fn}: {self.name} must be {self.constraint}, got {literal(v)}")


def flag(name, default, doc):
    return Param(name, "boolean", default, doc)


def number(name, default, doc, low=None, high=None, low_open=False, high_open=False,
           nullable=False):
    return Param(name, "double", default, doc, low, high, low_open, high_open,
                 nullable=nullable)


def whole(name, default, doc, low=None, high=None, nullable=False):
    return Param(name, "integer", default, doc, low, high, nullable=nullable)


def choice(name, default, choices, doc):
    return Param(name, "text", default, doc, choices=tuple(choices))


def names(name, default, doc):
    return Param(name, "text_list", default, doc)


def model_value(name, learner, doc, instead_of_rows=False):
    """An option whose value is a model of ``learner`` (NULL by default)."""
    return Param(name, "model", None, doc, choices=(learner,), nullable=True,
                 instead_of_rows=instead_of_rows)


def _lazy(package, ref):
    module, attr = ref.split(":")
    return getattr(import_module(f"{package}.{module}"), attr)


@dataclass(frozen=True)
class Learner:
    """The declaration of one learning scheme."""

    name: str  # the SQL name: name(tbl, ...) and name_fit(row, ...)
    kind: str  # one of KINDS
    doc: str  # one line: what it learns, and which reference it matches
    params: tuple  # of Param, in SQL order
    fit: str  # "module:function" within the declaring package
    model: str  # "module:Class" within the declaring package
    package: str  # the declaring package (its __name__)
    capabilities: tuple = ("predict", "model_text")
    relation: tuple = ()  # the table form's columns: ((name, SQL type), ...)
    order_by: tuple = ()  # the columns the table form is sorted by
    to_sql: str | None = None  # "module:function(model, dialect)" for model_to_sql
    version: int = 1  # of the model format
    weights: bool = True  # takes a weight column
    # bytes a fit of rows fed from a scan holds per cell (row x column) at its
    # peak, besides its float64 columns: the estimate that refuses a fit too large
    # (algorithms.memory), measured by benchmarks/memory.py
    memory: float = 72.0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise TypeError(f"{self.name}: unknown kind {self.kind!r}")
        object.__setattr__(self, "capabilities", tuple(dict.fromkeys(
            c for d in self.capabilities for c in (d, *IMPLIES.get(d, ())))))
        unknown = set(self.capabilities) - set(METHODS)
        if unknown:
            raise TypeError(f"{self.name}: unknown capabilities {sorted(unknown)}")
        if ("model_to_sql" in self.capabilities) != (self.to_sql is not None):
            raise TypeError(f"{self.name}: model_to_sql needs to_sql, and the reverse")

    @property
    def has_target(self):
        return self.kind in ("classifier", "regressor", "predictor")

    @property
    def model_kinds(self):
        """The kinds its models can have."""
        return ("classifier", "regressor") if self.kind == "predictor" else (self.kind,)

    def kind_of(self, model):
        """The kind of one model: a predictor's follows its target's type."""
        if self.kind != "predictor":
            return self.kind
        target = next(a for a in model.attributes if a.name == model.target)
        return "classifier" if target.nominal else "regressor"

    def capabilities_for(self, kind):
        """What its models of ``kind`` answer: a predictor's classifier gives no
        numbers, its regressor no class probabilities."""
        return tuple(c for c in self.capabilities if kind in ONLY.get(c, (kind,)))

    def capabilities_of(self, model):
        return self.capabilities_for(self.kind_of(model))

    def options(self, fn, given=None):
        """The options of one call: ``given`` (a dict, or (name, value) pairs; None
        for none) checked against the declaration, defaults filled in. An option
        the learner does not have is refused by name."""
        if given is None:
            given = {}
        elif not isinstance(given, dict):
            given = dict(given)
        known = {p.name for p in self.params}
        unknown = [k for k in given if k not in known]
        if unknown:
            have = ", ".join(p.name for p in self.params) or "none"
            raise ContractError(f"{fn}: {self.name} has no option "
                                f"{', '.join(map(repr, unknown))} (its options: {have})")
        return {p.name: p.check(fn, given.get(p.name, p.default)) for p in self.params}

    def fit_function(self):
        return _lazy(self.package, self.fit)

    def model_class(self):
        return _lazy(self.package, self.model)

    def sql_writer(self):
        return _lazy(self.package, self.to_sql)

    def offers(self, model=None):
        """What the models of this learner (or ``model``) answer: the capabilities
        and model_info."""
        return (*(self.capabilities if model is None else self.capabilities_of(model)),
                "model_info")

    def target_index(self, fn, data, target, alone=False):
        """The index of the target column of ``data`` (checked for this kind), or
        None for a learner without a target; ``alone``: the target may be the only
        column (the counts come from a model given)."""
        if not self.has_target:
            return None
        t = column_index(fn, data.attributes, target)
        y = data.columns[t]
        self.check_target(fn, data.attributes, t, y[~np.isnan(y)], alone)
        return t

    def check_target(self, fn, attributes, t, known, alone=False):
        """Refuse a target this learner cannot predict: ``known`` holds the target's
        known values (a nominal one's codes; a fit that never holds the rows, as a
        distributed one, may pass each present value once)."""
        kind = self.kind
        if kind == "predictor":
            kind = "classifier" if attributes[t].nominal else "regressor"
        _check_target(fn, kind, attributes, t, known)
        if len(attributes) == 1 and not alone:
            raise ContractError(f"{fn}: the table has no attributes besides the target "
                                f"{attributes[t].name!r}")

    def held(self, options):
        """The name of the option given whose model holds every count the fit needs
        (the rows are then read only for their target column), or None."""
        return next((p.name for p in self.params
                     if p.instead_of_rows and options.get(p.name) is not None), None)

    def train(self, fn, data, target, options, settings=None):
        """A model of ``data``: the table checked, the target found and checked,
        then the declared fit called with the (already checked) ``options``."""
        if data.n == 0:
            raise ContractError(f"{fn}: the table is empty")
        t = self.target_index(fn, data, target, alone=self.held(options) is not None)
        if t is None and len(data.attributes) == 0:
            raise ContractError(f"{fn}: the table has no columns to learn from")
        return self.fit_at(fn, data, t, options, settings)

    def fit_at(self, fn, data, t, options, settings=None):
        """The declared fit on ``data`` with target index ``t``, unchecked (as
        evaluation fits each fold); a core's ValueError comes back naming ``fn``."""
        memory.steady_allocator()
        try:
            return self.fit_function()(data, t, options, settings or {})
        except ContractError:
            raise
        except ValueError as err:
            text = str(err)
            raise ContractError(text if text.startswith(f"{fn}: ")
                                else f"{fn}: {text}") from None


def column_index(fn, attributes, target):
    """The index of the target column among ``attributes`` (its exact name, else the
    one equal ignoring case); a clear error naming the columns otherwise."""
    if target is None:
        raise ContractError(f"{fn}: target must name a column, got NULL")
    names = [a.name for a in attributes]
    t = find_name(names, target)
    if t is None:
        raise ContractError(f"{fn}: target column {target!r} is not in the table (its "
                            f"columns: {', '.join(names)})")
    return t


def _check_target(fn, kind, attributes, t, known):
    a = attributes[t]
    if kind == "classifier":
        if not a.nominal:
            raise ContractError(
                f"{fn}: target column {a.name!r} is numeric; {fn} predicts a nominal "
                "class (use m5p or rep_tree for a numeric target, or cast the column to "
                "VARCHAR)")
        present = np.unique(known)
        if len(present) == 0:
            raise ContractError(f"{fn}: target column {a.name!r} has no values (all NULL)")
        if len(present) == 1:
            raise ContractError(
                f"{fn}: target column {a.name!r} has a single class "
                f"({a.values[int(present[0])]!r}); a classifier needs two or more")
    elif kind == "regressor":
        if a.nominal:
            raise ContractError(
                f"{fn}: target column {a.name!r} is nominal; {fn} predicts a number "
                "(use c45 for a nominal target, or cast the column to DOUBLE)")
        if len(known) == 0:
            raise ContractError(f"{fn}: target column {a.name!r} has no values (all NULL)")
        if len(known) < 2:
            raise ContractError(f"{fn}: target column {a.name!r} has a value in only "
                                f"{len(known)} row; a model needs at least 2")


_learners = None


def learners():
    """Every declared learner by name, found in the packages of ``algorithms``."""
    global _learners
    if _learners is None:
        found = {}
        base = __name__.rsplit(".", 1)[0]
        for info in pkgutil.iter_modules(import_module(base).__path__):
            if info.ispkg:
                for decl in getattr(import_module(f"{base}.{info.name}"), "LEARNERS", ()):
                    if decl.name in found:
                        raise TypeError(f"learner {decl.name!r} is declared twice")
                    found[decl.name] = decl
        _learners = dict(sorted(found.items()))
    return _learners


def get(fn, name):
    """The declaration of learner ``name``; a clear error listing them otherwise."""
    found = learners().get(name) if isinstance(name, str) else None
    if found is None:
        raise ContractError(f"{fn}: learner must be one of "
                            f"{', '.join(map(repr, learners()))}, got {literal(name)}")
    return found


def info(decl, model):
    """What ``model_info`` reports: the learner, format version, kind, options,
    training row count, the attributes with their kinds and the target."""
    target = getattr(model, "target", None)
    return {"learner": decl.name, "version": decl.version, "kind": decl.kind_of(model),
            "options": dict(model.options), "instances": int(model.instances),
            "attributes": [{"name": a.name, "kind": a.kind,
                            "values": list(a.values) if a.nominal else None}
                           for a in model.attributes if a.name != target],
            "target": target,
            "classes": None if getattr(model, "classes", None) is None
            else list(model.classes),
            "capabilities": list(decl.offers(model))}
