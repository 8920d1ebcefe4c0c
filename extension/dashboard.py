"""The dashboard behind ``duckmine dashboard``: a Streamlit page on a DuckDB
database where a person picks a table and a learner, sets the learner's options
(widgets made from its declaration), fits, sees the model as a picture and as
Weka's text with its cross-validation, saves it, scores another table with it and
downloads the scored rows. Every action shows the SQL it ran, so the page teaches
the SQL surface.

Each browser session has its own cursor on one shared connection (a model fitted
in one session lives in that session's TEMP table). The database is named by the
environment variable ``DUCKMINE_DASHBOARD_DB``, which the command sets."""

import io
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa

from ..algorithms import contract
from ..algorithms.contract import REQUIRED, literal
from . import charts, progress
from .arff import quote_ident as quote
from .interrupts import interrupt

DB_VARIABLE = "DUCKMINE_DASHBOARD_DB"
RULES = "association_rules"  # not a learner: itemsets and rules of the table
MODEL_TABLE = "dashboard_model"  # the session's fitted model (TEMP)
POLL = 0.1  # seconds between looks at the progress of a query


def learners():
    """The learners a person can fit here: every declared one with a table to
    learn from (the AD-tree is a count cache, not a model to look at)."""
    return [d for d in contract.learners().values() if d.kind != "counter"]


def source(table):
    """What a FROM clause says for ``table``: a name, quoted, or a query in
    parentheses as it is."""
    return table if table.startswith("(") else quote(table)


def _changed(decl, values):
    """The options given that differ from their defaults (a required one always)."""
    return {p.name: list(v) if isinstance(v, tuple) else v for p in decl.params
            if p.name in values
            for v in [values[p.name]]
            if p.required or not (v == p.default or p.type == "text_list"
                                  and tuple(v) == tuple(p.default))}


def options_sql(decl, values):
    """``, options := {...}`` of the options that differ from their defaults (""
    for none), as fit and cross_validate take them."""
    given = _changed(decl, values)
    if not given:
        return ""
    pairs = ", ".join(f"{literal(k)}: {literal(v)}" for k, v in given.items())
    return f", options := {{{pairs}}}"


def table_form_sql(decl, table, target, values):
    """The learner's table form on ``table``: required options in place, the
    others by name, as its macro declares them."""
    given = _changed(decl, values)
    args = [literal(table)] + ([literal(target)] if decl.has_target else [])
    args += [literal(given[p.name]) for p in decl.params if p.required]
    args += [f"{p.name} := {literal(given[p.name])}" for p in decl.params
             if not p.required and p.name in given]
    return f"SELECT * FROM {decl.name}({', '.join(args)})"


def fit_sql(decl, table, target, values):
    tgt = literal(target) if decl.has_target else "NULL"
    return (f"CREATE OR REPLACE TEMP TABLE {MODEL_TABLE} AS\nSELECT model FROM "
            f"fit({literal(decl.name)}, {literal(table)}, {tgt}{options_sql(decl, values)})")


def evaluation_sql(decl, table, target, values, folds=10, what="cross_validate"):
    tgt = literal(target) if decl.has_target else "NULL"
    k = "" if folds == 10 else f", folds := {int(folds)}"
    return (f"SELECT * FROM {what}({literal(decl.name)}, {literal(table)}, {tgt}{k}"
            f"{options_sql(decl, values)})")


def tables(con):
    """The tables and views a person can pick, by name."""
    return [n for (n,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        f"AND table_name <> '{MODEL_TABLE}' ORDER BY table_name").fetchall()]


def parquet_bytes(arrow_table):
    import pyarrow.parquet as pq

    out = io.BytesIO()
    pq.write_table(arrow_table, out)
    return out.getvalue()


# ------------------------------------------------------------------ the page

def _connection(st, path):
    """The session's cursor on the one connection to ``path``, duckmine loaded."""
    @st.cache_resource
    def shared(path):
        from .loader import connect

        return connect(path)

    if st.session_state.get("db") != path:
        from .loader import load

        st.session_state.con = load(shared(path).cursor())
        st.session_state.db = path
    return st.session_state.con


def _run(st, con, sql, show=True):
    """Run ``sql``, showing it and a progress bar of the work it reports: its rows
    as an Arrow table (an empty one for a statement); an error is shown on the page
    and gives None."""
    if show:
        st.code(sql + ";", language="sql")
    heard = {}  # task -> (done, total), the latest of each

    def work():
        with progress.watching(con, lambda task, done, total: heard.update(
                {task: (done, total)})):
            rel = con.sql(sql)
            return rel.to_arrow_table() if rel is not None else pa.table({})

    bar = st.empty()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(work)
        try:
            while not future.done():
                time.sleep(POLL)
                if heard:
                    task, (done, total) = next(iter(heard.items()))  # the outermost
                    bar.progress(min(done / total, 1.0) if total else 0.0,
                                 text=f"{task}: {done}" + (f" of {total}" if total else ""))
        except BaseException:  # the page is run again (a click): stop the query first
            interrupt(con)
            raise
    bar.empty()
    try:
        return future.result()
    except Exception as err:  # any failure is the user's to read, not a traceback
        st.error(_readable(err))
        return None


def _value(table):
    """The one value of a one-row, one-column result."""
    return table.column(0)[0].as_py()


def _readable(err):
    """An error as a person reads it: the message, without the Python exception
    wrapping DuckDB adds around a UDF's."""
    text = str(err)
    return re.sub(r"^.*Python exception occurred while executing the UDF: \w+: ", "", text)


def _option_widget(st, decl, p, columns):
    key = f"opt_{decl.name}_{p.name}"
    default = None if p.default is REQUIRED else p.default
    help_ = f"{p.doc} ({p.constraint})"
    if p.type == "boolean":
        return st.checkbox(p.name, value=bool(default), help=help_, key=key)
    if p.choices:
        return st.selectbox(p.name, p.choices, index=p.choices.index(default)
                            if default in p.choices else 0, help=help_, key=key)
    if p.type == "text":
        text = st.text_input(p.name, value=default or "", help=help_, key=key)
        return text if text or not p.nullable else None
    if p.type == "text_list":
        return tuple(st.multiselect(p.name, columns, default=[c for c in default or ()
                                                              if c in columns],
                                    help=help_, key=key))
    if p.type == "integer":
        return st.number_input(p.name, value=None if default is None else int(default),
                               step=1, help=help_, key=key, placeholder="NULL")
    return st.number_input(p.name, value=None if default is None else float(default),
                           format="%g", help=help_, key=key, placeholder="NULL")


def page():
    import streamlit as st

    st.set_page_config(page_title="duckmine", layout="wide")
    path = os.environ.get(DB_VARIABLE, ":memory:")
    st.title("duckmine")
    st.caption(f"Database: {path}")
    con = _connection(st, path)
    params = st.query_params
    names = tables(con)

    with st.sidebar:
        st.header("Data")
        picked = st.selectbox("Table or view", names, index=names.index(params["table"])
                              if params.get("table") in names else 0)
        typed = st.text_input("... or a table name or a query in parentheses",
                              help="for example (SELECT * FROM weather WHERE windy)")
        table = typed.strip() or picked
        choices = [d.name for d in learners()] + [RULES]
        st.header("Learner")
        name = st.selectbox("Learner", choices, index=choices.index(params["learner"])
                            if params.get("learner") in choices else choices.index("c45"))

    if not table:
        st.info("The database has no tables: create one, or give a query.")
        return
    relation = source(table)
    schema = _run(st, con, f"DESCRIBE SELECT * FROM {relation}", show=False)
    if schema is None:
        return
    columns = schema.column("column_name").to_pylist()
    with st.expander(f"{table}: {len(columns)} columns", expanded=False):
        st.dataframe(schema.select(["column_name", "column_type", "null"]))
        sample = _run(st, con, f"SELECT * FROM {relation} LIMIT 20", show=False)
        if sample is not None:
            st.dataframe(sample)

    if name == RULES:
        _rules(st, con, table)
        return
    decl = contract.learners()[name]
    st.subheader(f"{name}: {decl.doc}")
    target = None
    with st.sidebar:
        if decl.has_target:
            index = (columns.index(params["target"]) if params.get("target") in columns
                     else len(columns) - 1)
            target = st.selectbox("Target", columns, index=index)
        st.header("Options")
        values = {p.name: _option_widget(st, decl, p, columns) for p in decl.params
                  if p.type != "model"}  # a model value is given in SQL
        folds = st.number_input("Cross-validation folds", value=10, min_value=2, step=1)
        fitted = st.button("Fit", type="primary")
    if fitted:
        if _run(st, con, fit_sql(decl, table, target, values)) is not None:
            st.session_state.fitted = (name, table, target, values)
    if st.session_state.get("fitted") is None or st.session_state.fitted[0] != name:
        st.info("Set the options and press Fit.")
        return
    _, table, target, values = st.session_state.fitted
    _model(st, con, decl, table, target, values, folds)


def _model(st, con, decl, table, target, values, folds):
    info = con.sql(f"SELECT model_info(model) AS i FROM {MODEL_TABLE}").fetchall()[0][0]
    offers = info["capabilities"]
    left, right = st.columns(2)
    with left:
        if "model_svg" in offers:
            st.markdown("**The model**")
            svg = _run(st, con, f"SELECT model_svg(model) FROM {MODEL_TABLE}")
            if svg is not None:
                st.markdown(f'<div class="duckmine-model" style="overflow:auto">'
                            f"{_value(svg)}</div>", unsafe_allow_html=True)
        if "model_text" in offers:
            st.markdown("**As Weka prints it**")
            text = _run(st, con, f"SELECT model_text(model) FROM {MODEL_TABLE}")
            if text is not None:
                st.code(_value(text), language=None)
        if decl.relation:
            st.markdown("**As a relation**")
            rows = _run(st, con, table_form_sql(decl, table, target, values))
            if rows is not None:
                st.dataframe(rows)
    with right:
        kind = info["kind"]
        if "predict" in offers and kind in ("classifier", "regressor") or decl.name == "em":
            st.markdown(f"**{folds}-fold cross-validation**")
            cv = _run(st, con, evaluation_sql(decl, table, target, values, folds))
            if cv is not None:
                st.dataframe(cv)
        if kind == "classifier" and "predict" in offers:
            cm = _run(st, con, evaluation_sql(decl, table, target, values, folds,
                                               "confusion_matrix"))
            if cm is not None:
                st.vega_lite_chart(charts.confusion_heatmap(cm))
        if kind == "clusterer":
            _clusters(st, con, decl, table, values)
    _save_and_score(st, con, offers)


# the column of a clusterer's table form that holds a numeric attribute's centre
CENTRES = {"kmeans": "value", "em": "mean"}


def centres_sql(decl, table, values):
    """Each cluster's centre as a row (a column per numeric attribute), pivoted from
    the clusterer's table form; None for a clusterer without centres."""
    figure = CENTRES.get(decl.name)
    if figure is None:
        return None
    return (f"PIVOT (SELECT cluster::VARCHAR AS cluster, attribute, {figure} AS centre "
            f"FROM ({table_form_sql(decl, table, None, values)}) WHERE {figure} IS NOT NULL)"
            f" ON attribute USING first(centre)")


def _clusters(st, con, decl, table, values):
    numeric = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source(table)}").fetchall()
               if r[1] in ("DOUBLE", "FLOAT", "INTEGER", "BIGINT", "SMALLINT", "TINYINT",
                           "HUGEINT", "UBIGINT", "UINTEGER", "USMALLINT", "UTINYINT")
               or r[1].startswith("DECIMAL")]
    if len(numeric) < 2:
        st.info("A scatter needs two numeric attributes.")
        return
    x = st.selectbox("x", numeric, index=0)
    y = st.selectbox("y", numeric, index=1)
    rows = _run(st, con, f"SELECT t.*, predict(m.model, t) AS cluster FROM {source(table)} t, "
                         f"{MODEL_TABLE} m")
    if rows is None:
        return
    sql = centres_sql(decl, table, values)
    centres = None if sql is None else _run(st, con, sql)
    if centres is not None and not {x, y} <= set(centres.column_names):
        centres = None  # an attribute left out of the clustering has no centre
    st.vega_lite_chart(charts.cluster_scatter(rows, x, y, centres=centres))


def _save_and_score(st, con, offers):
    st.divider()
    left, right = st.columns(2)
    with left:
        st.markdown("**Save the model**")
        name = st.text_input("Table to keep it in", value="models_saved")
        if st.button("Save"):
            sql = (f"CREATE OR REPLACE TABLE {quote(name)} AS SELECT model FROM "
                   f"{MODEL_TABLE}")
            if _run(st, con, sql) is not None:
                st.success(f"Saved in {name}")
    if "predict" not in offers:
        return
    with right:
        st.markdown("**Score a table with it**")
        names = tables(con)
        other = st.selectbox("Table to score", names, key="score_table")
        if st.button("Score") and other:
            st.session_state.scored = other
        if st.session_state.get("scored"):
            sql = (f"SELECT t.*, predict(m.model, t) AS predicted FROM "
                   f"{quote(st.session_state.scored)} t, {MODEL_TABLE} m")
            scored = _run(st, con, sql)
            if scored is not None:
                st.dataframe(scored)
                st.download_button("Download CSV", scored.to_pandas().to_csv(index=False),
                                   file_name="scored.csv", mime="text/csv")
                st.download_button("Download Parquet", parquet_bytes(scored),
                                   file_name="scored.parquet",
                                   mime="application/vnd.apache.parquet")


def _rules(st, con, table):
    st.subheader("Frequent itemsets and association rules (FP-growth)")
    with st.sidebar:
        st.header("Options")
        support = st.number_input("min_support", value=0.2, min_value=0.0, format="%g",
                                  help="a share of the rows (< 1) or a count (>= 1)")
        confidence = st.number_input("min_confidence", value=0.9, min_value=0.0,
                                     max_value=1.0, format="%g")
    rules = _run(st, con, f"SELECT * FROM association_rules({literal(table)}, {support!r}, "
                          f"min_confidence := {confidence!r})")
    if rules is None:
        return
    st.dataframe(rules)
    if rules.num_rows:
        st.vega_lite_chart(charts.rules_scatter(rules))
    items = _run(st, con, f"SELECT * FROM fp_growth({literal(table)}, {support!r})")
    if items is not None:
        st.dataframe(items)
