"""What every Spark table function shares: its arguments, and the rule that one
result needs all of its rows.

A Spark table function gets its rows as Arrow batches, each instance of it the
rows of one partition. A fit of the whole table (``WITH SINGLE PARTITION``) must be
the only instance with rows: ``Whole`` refuses a call whose rows Spark split
across instances (a ``TABLE(t)`` with neither clause), which would otherwise give
one model per partition. A fit per group (``PARTITION BY (g)`` and ``by => 'g'``)
checks that its rows agree on the ``by`` columns and gives their values as its key.
"""

import inspect
import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# (task attempt, function): where a whole-table instance has had rows
_WHOLE = set()

SPLIT = ("{fn}: the rows of this call came in several partitions, and one result "
         "needs them all; write TABLE(t) WITH SINGLE PARTITION for one result of the "
         "whole table, or TABLE(t) PARTITION BY (g) with by => 'g' for one per group")


def signature(head, names):
    """The ``eval`` signature Spark binds a call's arguments to: ``head`` (the table
    argument and the required ones), then ``names``, each optional. An argument the
    function does not have is refused by name before any row is read."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in head]
    params += [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
               for n in names]
    return inspect.Signature(params)


def bind(sig, args, kwargs):
    """The scalar arguments of one call, by name: each arrives as an Arrow array as
    long as the batch (its first element is the value); the table as a batch."""
    bound = sig.bind(None, *args, **kwargs)
    out = {}
    for name, v in list(bound.arguments.items())[1:]:
        if isinstance(v, pa.RecordBatch):
            out[name] = v
        elif isinstance(v, (pa.Array, pa.ChunkedArray)):
            out[name] = v[0].as_py() if len(v) else None
        else:
            out[name] = v
    return out


def arrow_schema(df):
    """The Arrow schema of ``df``'s rows, from its Spark schema (no job runs)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema)


def struct_rows(batch):
    """A batch as the StructArray of its rows, as DuckDB passes a table alias."""
    return pa.StructArray.from_arrays(batch.columns, fields=list(batch.schema))


class TableFunction:
    """A Spark Arrow UDTF over one result's rows. An instance binds its call's
    arguments on the first batch (``start``), checks that it may take the rows
    (``Whole``, or with a ``by`` argument ``Key``), passes each batch with rows to
    ``add`` and, at the end, yields what ``finish`` gives, if it had rows."""

    fn = None  # the SQL name
    sig = None  # the eval signature (``signature``)

    def __init__(self):
        self.call, self.whole, self.key, self.taken = None, None, None, 0

    def run(self, args, kwargs):
        call = bind(self.sig, args, kwargs)
        batch = call.pop("row")
        if self.call is None:
            by = call.pop("by", None)
            if by is not None:
                self.key = Key(self.fn, by)
            else:
                self.whole = Whole(self.fn)
            self.call = call
            self.start(call)
        if batch.num_rows:
            if self.key is not None:
                self.key.add(batch)
            else:
                self.whole.take()
            self.add(batch)
            self.taken += batch.num_rows
        return iter(())

    def terminate(self):
        if self.taken:
            yield from self.finish()

    def start(self, call):
        pass


def udtf(base, fn, head, named, schema, **attrs):
    """An Arrow UDTF of class ``base`` named ``fn``, whose ``eval`` takes the
    arguments ``head`` and then the optional ``named`` (Spark binds a call to that
    signature, refusing an argument it lacks by name), returning ``schema``."""
    from pyspark.sql.functions import arrow_udtf

    sig = signature(head, named)
    cls = type(f"{fn}_udtf", (base,), {"fn": fn, "sig": sig, **attrs})

    def eval(self, *args, **kwargs):  # noqa: A001 - the name Spark calls
        return self.run(args, kwargs)

    eval.__signature__ = sig
    cls.eval = eval
    return arrow_udtf(cls, returnType=schema)


class Whole:
    """Whether a whole-table instance may take its rows (see the module)."""

    def __init__(self, fn):
        self.fn, self.checked = fn, False

    def take(self):
        if self.checked:
            return
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is not None:
            place = (ctx.taskAttemptId(), self.fn)
            if ctx.partitionId() != 0 or place in _WHOLE:
                raise ValueError(SPLIT.format(fn=self.fn))
            _WHOLE.add(place)
        self.checked = True


class Key:
    """The values of the ``by`` columns, which every row of a group shares."""

    def __init__(self, fn, by):
        names = [n.strip() for n in by.split(",")] if isinstance(by, str) else None
        if not names or not all(names):
            raise ValueError(f"{fn}: by must name the PARTITION BY columns, as "
                             f"'region' or 'region, segment', got {by!r}")
        self.fn, self.names, self.values = fn, names, None

    def add(self, batch):
        if batch.num_rows == 0:
            return
        found = {n.lower(): i for i, n in enumerate(batch.schema.names)}
        values = []
        for name in self.names:
            i = batch.schema.get_field_index(name)
            i = found.get(name.lower(), -1) if i < 0 else i
            if i < 0:
                raise ValueError(f"{self.fn}: by names {name!r}, which is not a column "
                                 f"of the table (its columns: "
                                 f"{', '.join(batch.schema.names)})")
            col = batch.column(i)
            first = col[0].as_py()
            same = col.is_null() if first is None else pc.equal(col, col[0])
            if not pc.all(same.fill_null(False)).as_py():
                raise ValueError(f"{self.fn}: the rows of one group hold several values "
                                 f"of {name!r}; partition by it: TABLE(t) PARTITION BY "
                                 f"({', '.join(self.names)})")
            values.append(first)
        if self.values is not None and values != self.values:
            raise ValueError(f"{self.fn}: the rows of one group hold several values of "
                             f"{', '.join(self.names)}; partition by them: TABLE(t) "
                             f"PARTITION BY ({', '.join(self.names)})")
        self.values = values

    def text(self):
        """The key as text: one column's value, or a JSON object of several."""
        if self.values is None:
            return None
        if len(self.names) == 1:
            return _text(self.values[0])
        return json.dumps(dict(zip(self.names, map(_plain, self.values))))


def _plain(v):
    return v if v is None or isinstance(v, (bool, int, float, str)) else str(v)


def _text(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer() and np.isfinite(v):
        return repr(v)
    return str(v)
