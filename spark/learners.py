"""Every declared learner's Spark table functions, written from its declaration as
``extension/wiring.py`` writes DuckDB's macros:

- ``name_fit(TABLE(t) ..., [target,] <options>, weight => NULL, by => NULL)``: one
  row ``(key, model)`` per fit. ``TABLE(t) WITH SINGLE PARTITION`` fits the whole
  table (``key`` NULL); ``TABLE(t) PARTITION BY (g)`` with ``by => 'g'`` fits one
  model per group, in parallel across the cluster, ``key`` holding the group's
  value;
- ``name(TABLE(t) WITH SINGLE PARTITION, [target,] <options>, weight => NULL)``:
  the model's relation, where the learner declares one.

Spark hands a group's rows over in no fixed order, so they are put in an order of
their values, as DuckDB's aggregate forms (``name_fit(r, ...) ... GROUP BY``) put
theirs: the same rows give the same model value on both engines.
"""

import pyarrow as pa
import pyarrow.compute as pc

from ..algorithms import contract, memory
from ..udfs.learners import _relation, relation_sql
from ..udfs.models import MODEL, option_models, value
from ..udfs.registry import arrow_type
from ..udfs.table import Rows
from . import calls

KEY = pa.field("key", pa.string())
# how a fit too large for one worker is brought within its memory on Spark
ADVICE = ("a fit of the whole table runs on one worker: fit one model per group "
          "(TABLE(t) PARTITION BY (g) with by => 'g'), a sample (TABLE(SELECT * FROM t "
          "TABLESAMPLE (10 PERCENT))) or fewer columns; k-means, EM, C4.5, Bayesian "
          "networks and FP-growth run over the whole cluster from Python "
          "(duckmine.spark.kmeans, em, c45, bayes_net, fp_growth); "
          "the limit per worker is spark.duckmine.memoryLimit")


def _arguments(decl, grouped):
    head = ["row"] + (["target"] if decl.has_target else [])
    head += [p.name for p in decl.params if p.required]
    named = [p.name for p in decl.params if not p.required]
    named += ["weight"] if decl.weights else []
    named += ["by"] if grouped else []
    return head, named


class _Fit(calls.TableFunction):
    """One fit of the rows an instance gets; subclasses say what it yields."""

    decl = None
    settings = None

    def start(self, call):
        decl = self.decl
        self.target = call.pop("target", None)
        weight = call.pop("weight", None) if decl.weights else None
        # those given, NULL included; a model value (an ad_tree) parsed as DuckDB's is
        self.options = decl.options(self.fn, option_models(decl, self.fn, call))
        # a model holding the counts: only the target column (and weight) is read
        only = [self.target, *([weight] if weight else [])] if decl.held(self.options) \
            else None
        self.rows = Rows(self.fn, self.settings.get("max_values"), weight, only)

    def add(self, batch):
        rows = calls.struct_rows(batch)
        memory.check(self.fn, self.decl.memory, self.rows.n + len(rows),
                     rows.type.num_fields, self.settings.get("memory_limit"), so_far=True,
                     advice=ADVICE, what="spark.duckmine.memoryLimit")
        self.rows.add(rows)

    def model(self):
        data = self.rows.dataset()
        self.rows = None
        return self.decl.train(self.fn, data, self.target, self.options, self.settings)


class _Models(_Fit):
    def finish(self):
        key = None if self.key is None else self.key.text()
        yield pa.table({"key": pa.array([key], pa.string()),
                        "model": pa.array([value(self.model())], MODEL)})


class _Relation(_Fit):
    def finish(self):
        rows = type(self).listing(pa.array([value(self.model())], MODEL))
        table = pa.Table.from_struct_array(rows.flatten())
        if self.decl.order_by:
            table = table.take(pc.sort_indices(
                table, [(c, "ascending") for c in self.decl.order_by]))
        yield table


def table_functions(settings):
    """(name, UDTF) for every declared learner: its ``_fit`` form and, where it
    declares a relation, its table form."""
    from pyspark.sql.pandas.types import from_arrow_type

    model_schema = from_arrow_type(pa.struct([KEY, pa.field("model", MODEL)]))
    out = []
    for decl in contract.learners().values():
        head, named = _arguments(decl, True)
        out.append((f"{decl.name}_fit", calls.udtf(
            _Models, f"{decl.name}_fit", head, named, model_schema, decl=decl,
            settings=settings)))
        if decl.relation:
            head, named = _arguments(decl, False)
            row = arrow_type(relation_sql(decl)).value_type
            out.append((decl.name, calls.udtf(
                _Relation, decl.name, head, named, from_arrow_type(row), decl=decl,
                settings=settings, listing=staticmethod(_relation(decl)))))
    return out
