"""Charts of SQL results as Vega-Lite specifications: plain dicts that notebooks
(Altair: ``alt.Chart.from_dict(spec)``, JupyterLab's renderer), dashboards
(Streamlit's ``st.vega_lite_chart``, Superset) and web pages (vega-embed) draw as
they are. A chart takes the rows a query returned (a DuckDB relation, an Arrow
table, a pandas frame or a list of dicts) and only lays them out: every figure in
it comes from SQL, none is computed again here."""

import datetime
import decimal
import math

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"


def records(result):
    """The rows of ``result`` as JSON-ready dicts."""
    if hasattr(result, "to_arrow_table"):  # a DuckDB relation
        result = result.to_arrow_table()
    if hasattr(result, "to_pylist"):  # an Arrow table
        rows = result.to_pylist()
    elif hasattr(result, "to_dict"):  # a pandas frame
        rows = result.to_dict("records")
    else:
        rows = [dict(r) for r in result]
    return [{k: _json(v) for k, v in r.items()} for r in rows]


def _json(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None  # JSON has no NaN; Vega-Lite skips a missing value
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, (datetime.date, datetime.datetime, datetime.time)):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v))  # an item list is shown as its text
    if hasattr(v, "item"):  # a numpy scalar
        return v.item()
    return v


def _need(fn, rows, columns):
    if rows:
        missing = [c for c in columns if c not in rows[0]]
        if missing:
            raise ValueError(f"{fn}: the rows have no column {', '.join(map(repr, missing))} "
                             f"(they have {', '.join(rows[0])})")


def _spec(rows, title, **rest):
    spec = {"$schema": SCHEMA, "data": {"values": rows}, **rest}
    if title:
        spec["title"] = title
    return spec


def confusion_heatmap(result, title="Confusion matrix"):
    """The ``confusion_matrix`` relation (actual, predicted, weight) as a heatmap:
    a cell per pair, its weight written in it, actual classes down and predicted
    across as Weka prints the matrix."""
    rows = records(result)
    _need("confusion_heatmap", rows, ("actual", "predicted", "weight"))
    order = list(dict.fromkeys(r["actual"] for r in rows))
    x = {"field": "predicted", "type": "nominal", "sort": order, "title": "predicted"}
    y = {"field": "actual", "type": "nominal", "sort": order, "title": "actual"}
    return _spec(rows, title, width={"step": 64}, height={"step": 36}, layer=[
        {"mark": "rect",
         "encoding": {"x": x, "y": y,
                      "color": {"field": "weight", "type": "quantitative",
                                "scale": {"scheme": "blues"}, "title": "weight"},
                      "tooltip": [{"field": "actual"}, {"field": "predicted"},
                                  {"field": "weight", "type": "quantitative"}]}},
        {"mark": {"type": "text", "baseline": "middle"},
         "encoding": {"x": x, "y": y, "text": {"field": "weight", "type": "quantitative"},
                      "color": {"condition": {"test": "datum.weight > 0", "value": "black"},
                                "value": "#bbb"}}}])


def cluster_scatter(result, x, y, cluster="cluster", centres=None,
                    title="Clusters"):
    """Rows (with the cluster each belongs to, say from ``predict``) as a scatter of
    two attributes coloured by cluster; ``centres``, rows of the same columns (a
    clustering's table form), are drawn over them as crosses."""
    rows = records(result)
    _need("cluster_scatter", rows, (x, y, cluster))
    enc = {"x": {"field": x, "type": "quantitative", "scale": {"zero": False}},
           "y": {"field": y, "type": "quantitative", "scale": {"zero": False}},
           "color": {"field": cluster, "type": "nominal", "title": cluster}}
    points = {"data": {"values": rows}, "mark": {"type": "point", "filled": True,
                                                 "opacity": 0.7},
              "encoding": {**enc, "tooltip": [{"field": k} for k in rows[0]] if rows else []}}
    layers = [points]
    if centres is not None:
        marks = records(centres)
        _need("cluster_scatter", marks, (x, y, cluster))
        layers.append({"data": {"values": marks},
                       "mark": {"type": "point", "shape": "cross", "size": 250,
                                "filled": True, "stroke": "black", "strokeWidth": 1},
                       "encoding": {**enc, "tooltip": [{"field": k} for k in marks[0]]
                                    if marks else []}})
    spec = {"$schema": SCHEMA, "layer": layers}
    if title:
        spec["title"] = title
    return spec


def rules_scatter(result, title="Association rules"):
    """``association_rules`` rows as a scatter: support across, confidence up,
    lift as colour; each point's tooltip names its rule."""
    rows = records(result)
    _need("rules_scatter", rows, ("antecedent", "consequent", "support", "confidence",
                                  "lift"))
    return _spec(rows, title, mark={"type": "circle", "size": 80, "opacity": 0.8},
                 encoding={
                     "x": {"field": "support", "type": "quantitative"},
                     "y": {"field": "confidence", "type": "quantitative",
                           "scale": {"zero": False}},
                     "color": {"field": "lift", "type": "quantitative",
                               "scale": {"scheme": "viridis"}},
                     "tooltip": [{"field": k} for k in ("antecedent", "consequent",
                                                        "support", "confidence", "lift")]})
