"""DuckDB's SQL for every declared learner, written from its declaration:

- ``name_fit(r, [target,] <options>, weight := NULL)``, an aggregate: one model
  value per group of rows, held once as DuckDB scans them (``udfs/stash.py``; the
  group lists their ids). A group has no order in SQL, and a parallel scan hands
  its rows over in no fixed order, so they are put in an order of their values:
  the model is a function of the group's rows, the same on every run and thread
  count;
- ``name(tbl, [target,] <options>, weight := NULL)``, a table: the model's
  relation (where the learner declares one), the rows fed to the fit as DuckDB
  scans them (``_dm_fed``) and read in table order;
- ``fit(learner, tbl, target, options := NULL, weight := NULL)``, a table of one
  model value, the rows read in table order (as the table's file reads: the
  reference's model on the same data, for learners whose shuffles and ties
  depend on row order).

A required option is a positional argument after the target; the others are
named, with their declared defaults. The options travel to the one fit function
as a STRUCT and are checked there against the declaration.
"""

from ..algorithms import contract
from ..algorithms.contract import literal
from ..udfs.learners import SUMMARY, relation_name
from ..udfs.models import MODEL_SQL

SETTINGS = "_dm_settings()"
# the last argument of a stoppable UDF: whose interrupt stops it (udfs.registry); the
# key load gives a connection, as DuckDB's connection numbers repeat across databases
CONNECTION = "getvariable('duckmine_connection')"


def _signature(decl, first):
    required = [p.name for p in decl.params if p.required]
    named = [f"{p.name} := {literal(p.default)}" for p in decl.params if not p.required]
    if decl.weights:
        named.append("weight := NULL")
    head = [first] + (["target"] if decl.has_target else [])
    return ", ".join(head + required + named)


def _option(p):
    """An option's value as the fit takes it: a model value travels as its cache key,
    with the value itself only where the key is not cached yet (as scoring passes
    models), so that a model given to every group is not copied to each."""
    if p.type != "model":
        return p.name
    key = f"_dm_option_key({p.name})"
    # no key: NULL, or a value that is no model, which the fit then refuses
    return (f"{{'key': {key}, 'model': CASE WHEN coalesce(_dm_model_needed({key}), true) "
            f"THEN {p.name} END}}")


def _call(decl, rows):
    options = ("{" + ", ".join(f"'{p.name}': {_option(p)}" for p in decl.params) + "}"
               if decl.params else "NULL")
    target = "target" if decl.has_target else "NULL"
    weight = "weight" if decl.weights else "NULL"
    return (f"_dm_fit('{decl.name}', {rows}, {target}, {options}, {weight}, {SETTINGS}, "
            f"{CONNECTION})")


def macros(decl):
    """The CREATE MACRO statements of one learner."""
    weight = "weight" if decl.weights else "NULL"
    # the group's rows are held by _dm_stash as DuckDB scans them, the group lists
    # their places and what finds their store;
    # the hash of the fit's arguments keeps DuckDB from making one list of the rows
    # for two fits that differ (the first would take the rows from the second); a
    # model option is left out, as it may be an aggregate (any_value(m.tree))
    given = ", ".join(["target" if decl.has_target else "NULL"]
                      + [p.name for p in decl.params if p.type != "model"])
    # (typeof(r) is a constant: it costs the rows nothing)
    stashed = (f"{{'connection': {CONNECTION}, 'transaction': txid_current(), "
               "'type': any_value(typeof(r)), "
               f"'places': list(_dm_stash(r, '{decl.name}', {weight}, {SETTINGS}, "
               f"{CONNECTION}, txid_current(), typeof(r), hash({given})))}}")
    out = [f"CREATE OR REPLACE TEMP MACRO {decl.name}_fit({_signature(decl, 'r')}) AS\n"
           f"{_call(decl, stashed)}"]
    if decl.relation:
        columns = ", ".join(f'r."{name}"' for name, _ in decl.relation)
        order = (" ORDER BY " + ", ".join(f'r."{c}"' for c in decl.order_by)
                 if decl.order_by else "")
        fitted = _call(decl, "_dm_rows")
        # a model holding the counts: only the target column is read, to check it
        held = [p.name for p in decl.params if p.instead_of_rows]
        only = (", columns := CASE WHEN " + " AND ".join(f"{n} IS NULL" for n in held)
                + " THEN NULL ELSE [target] END") if held else ""
        out.append(f"CREATE OR REPLACE TEMP MACRO {decl.name}({_signature(decl, 'tbl')}) "
                   f"AS TABLE\nSELECT {columns}\nFROM (SELECT unnest({relation_name(decl)}("
                   f"{fitted})) AS r FROM _dm_fed(tbl, '{decl.name}', '{decl.name}', "
                   f"{'weight' if decl.weights else 'NULL'}{only})){order}")
    return out


def statements():
    """Every learner's macros, and the evaluation macros that take any of them."""
    out = [OPTION_KEY] + [s for decl in contract.learners().values() for s in macros(decl)]
    out += EVALUATION
    return out


# the cache key (_dm_model_key) of a value given as a model option, which may be any
# value: one that is no model has none, and the fit refuses it by the option's name
OPTION_KEY = (f"CREATE OR REPLACE TEMP MACRO _dm_option_key(v) AS "
              f"_dm_model_key(TRY_CAST(v AS {MODEL_SQL}))")

# fit(learner, tbl, target, options := {...}) and
# cross_validate(learner, tbl, target, folds, seed, options := {'name': value, ...})
# the arguments an evaluation takes after (learner, tbl, target), with their defaults,
# and the same passed on by name
_EVALUATION_DEFAULTS = {"folds": "10", "seed": "1", "options": "NULL", "weight": "NULL"}
EVALUATION_ARGS = ", ".join(f"{k} := {v}" for k, v in _EVALUATION_DEFAULTS.items())
PASSED_ON = ", ".join(f"{k} := {k}" for k in _EVALUATION_DEFAULTS)

EVALUATION = [
    "CREATE OR REPLACE TEMP MACRO fit(learner, tbl, target, options := NULL, "
    "weight := NULL) AS TABLE\n"
    "SELECT _dm_fit(learner, _dm_rows, target, options, weight, "
    f"{SETTINGS}, {CONNECTION}) AS model FROM _dm_fed(tbl, 'fit', learner, weight)",
    "CREATE OR REPLACE TEMP MACRO fit_groups(learner, tbl, target, group_by, "
    "options := NULL, weight := NULL) AS TABLE\n"
    "WITH groups AS MATERIALIZED (FROM _dm_fed_groups(tbl, learner, weight, group_by)),\n"
    "fitted AS (SELECT unnest(_dm_fit_groups(learner, "
    "{'job': any_value(_dm_job), 'rows': sum(_dm_count)}, "
    "list(_dm_first ORDER BY _dm_first), list(_dm_count ORDER BY _dm_first), target, "
    f"group_by, options, {SETTINGS}, {CONNECTION})) AS f FROM groups)\n"
    "SELECT groups.* EXCLUDE (_dm_pad, _dm_first, _dm_count, _dm_job), "
    "fitted.f.model AS model\n"
    "FROM groups JOIN fitted ON groups._dm_first = fitted.f.first "
    "ORDER BY groups._dm_first",
    "CREATE OR REPLACE TEMP MACRO _dm_evaluation(learner, tbl, target, "
    f"{EVALUATION_ARGS}, fn := 'cross_validate') AS TABLE\n"
    "SELECT _dm_cross_validate(learner, _dm_rows, target, folds, seed, "
    f"options, weight, fn, {SETTINGS}, {CONNECTION}) AS r "
    "FROM _dm_fed(tbl, fn, learner, weight)",
    f"CREATE OR REPLACE TEMP MACRO cross_validate(learner, tbl, target, {EVALUATION_ARGS}) "
    "AS TABLE\nSELECT " + ", ".join(f"r.{c}" for c in SUMMARY)
    + f"\nFROM _dm_evaluation(learner, tbl, target, {PASSED_ON}, fn := 'cross_validate')",
    "CREATE OR REPLACE TEMP MACRO confusion_matrix(learner, tbl, target, "
    f"{EVALUATION_ARGS}) AS TABLE\n"
    "SELECT c.actual, c.predicted, c.weight\n"
    "FROM (SELECT unnest(r.confusion) AS c "
    f"FROM _dm_evaluation(learner, tbl, target, {PASSED_ON}, fn := 'confusion_matrix'))",
]
