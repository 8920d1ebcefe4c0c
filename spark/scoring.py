"""The generic model functions as Spark Arrow UDFs: ``predict(model, struct(*))``,
``predict_proba``, ``predict_value``, ``log_likelihood``, ``model_text`` and
``model_info``, the same functions DuckDB calls (``udfs/models.py``).

DuckDB's macros pass a model's body only on the first row of each model in a
chunk; Spark passes it on every row, so the same is done here, before the call:
the rows of a model the cache already holds go without their body.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..udfs import models

SCORING = {"predict": ("string", models.predict),
           "predict_value": ("double", models.predict_value),
           "log_likelihood": ("double", models.log_likelihood),
           "predict_proba": ("map<string,double>", models.predict_proba)}
WHOLE = {"model_text": ("string", models.model_text),
         "model_dot": ("string", models.model_dot),
         "model_svg": ("string", models.model_svg),
         "model_info": (None, models.model_info)}


def keyed(model):
    """The model keys (``models.cache_key``) of a column of model values, and the
    values themselves where a model's key is first met and not cached."""
    if isinstance(model, pa.ChunkedArray):
        model = model.combine_chunks()
    body = model.field("body")
    length = pc.binary_length(body)  # in bytes, as DuckDB's strlen counts
    ids = pc.binary_join_element_wise(model.field("id"), pc.cast(length, pa.string()), ":")
    ids = pc.if_else(model.is_valid(), ids, pa.scalar(None, pa.string()))
    needed = np.asarray(models.model_needed(ids))
    return ids, pc.if_else(pa.array(needed), model, pa.nulls(len(model), model.type))


def _scorer(fn):
    def score(model: pa.Array, row: pa.Array) -> pa.Array:
        ids, bodies = keyed(model)
        return fn(ids, bodies, row)

    return score


def functions():
    """(name, Arrow UDF) for each model function."""
    from pyspark.sql.functions import arrow_udf
    from pyspark.sql.pandas.types import from_arrow_type

    out = [(name, arrow_udf(_scorer(fn), returnType))
           for name, (returnType, fn) in SCORING.items()]
    for name, (returnType, fn) in WHOLE.items():
        if returnType is None:
            returnType = from_arrow_type(models.INFO)
        out.append((name, arrow_udf(_whole(fn), returnType)))
    out.append(("model_to_sql", arrow_udf(_to_sql, "string")))
    return out


def _to_sql(model: pa.Array, dialect: pa.Array) -> pa.Array:
    return models.model_to_sql(model, dialect)


def _whole(fn):
    def answer(model: pa.Array) -> pa.Array:
        return fn(model)

    return answer
