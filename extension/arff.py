"""Read Weka's ARFF files into DuckDB tables.

Nominal attributes become ENUMs in their declared order (Weka's value order),
numeric ones DOUBLE, strings VARCHAR, dates TIMESTAMP; ``?`` becomes NULL. Dense
and sparse data sections are both read (an omitted sparse value is Weka's 0: zero,
the first nominal value, the epoch); instance weights (``{w}``) are read on request.
"""

import re
from dataclasses import dataclass, field
from datetime import datetime

import pyarrow as pa

NUMERIC = {"numeric", "real", "integer"}
JAVA_DATE = [("yyyy", "%Y"), ("yy", "%y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"),
             ("mm", "%M"), ("ss", "%S"), ("SSS", "%f"), ("Z", "%z")]


@dataclass
class Attribute:
    name: str
    kind: str  # nominal, numeric, string, date
    values: list = field(default_factory=list)
    date_format: str = "%Y-%m-%dT%H:%M:%S"

    def __post_init__(self):
        self.known = frozenset(self.values)  # for the look-up of every cell


class ArffError(ValueError):
    pass


def _tokens(text, line_no):
    """Split a comma-separated ARFF line, honouring '...' and "..." quotes."""
    out, i, n = [], 0, len(text)
    while i < n:
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] in "'\"":
            quote, i, buf = text[i], i + 1, []
            while i < n and text[i] != quote:
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(text[i])
                i += 1
            if i >= n:
                raise ArffError(f"line {line_no}: unterminated quote")
            out.append(("".join(buf), True))
            i += 1
            while i < n and text[i] in " \t":
                i += 1
        else:
            j = text.find(",", i)
            j = n if j < 0 else j
            out.append((text[i:j].strip(), False))
            i = j
        if i < n and text[i] == ",":
            i += 1
            if i == n:
                out.append(("", False))
        elif i < n:
            raise ArffError(f"line {line_no}: expected ',' at column {i + 1}")
    return out


def _name(text):
    text = text.strip()
    if text[:1] in "'\"" and text[-1:] == text[:1]:
        return text[1:-1]
    return text


def _date_format(java):
    fmt = java
    for token, py in JAVA_DATE:
        fmt = fmt.replace(token, py)
    return fmt.replace("'", "")


def _attribute(rest, line_no):
    """Parse what follows ``@attribute``."""
    rest = rest.strip()
    if rest[:1] in "'\"":
        end = rest.index(rest[0], 1)
        name, spec = rest[1:end], rest[end + 1:].strip()
    else:
        parts = re.split(r"\s+|(?=\{)", rest, maxsplit=1)
        name, spec = parts[0], (parts[1] if len(parts) > 1 else "").strip()
    if spec.startswith("{"):
        end = spec.rfind("}")
        if end < 0:
            raise ArffError(f"line {line_no}: nominal values of {name!r} lack '}}'")
        values = [v for v, _ in _tokens(spec[1:end], line_no)]
        if len(set(values)) != len(values):
            raise ArffError(f"line {line_no}: attribute {name!r} repeats a value")
        return Attribute(name, "nominal", values)
    spec = spec.split("%", 1)[0].strip()  # a trailing comment
    low = spec.lower()
    if low in NUMERIC:
        return Attribute(name, "numeric")
    if low == "string":
        return Attribute(name, "string")
    if low.startswith("date"):
        java = _name(spec[4:]) if spec[4:].strip() else None
        return Attribute(name, "date", date_format=_date_format(java) if java
                         else "%Y-%m-%dT%H:%M:%S")
    raise ArffError(f"line {line_no}: attribute {name!r} has unsupported type {spec!r}")


WEIGHT = re.compile(r",\s*\{\s*([^{}\s]+)\s*\}\s*$")


def _weight(line, line_no):
    """(the line without its trailing instance weight ``, {w}``, the weight)."""
    m = WEIGHT.search(line)
    if not m or (line.startswith("{") and "}" not in line[:m.start()]):
        return line, 1.0
    try:
        w = float(m[1])
    except ValueError:
        raise ArffError(f"line {line_no}: instance weight {m[1]!r} is not a number") \
            from None
    return line[:m.start()].rstrip(), w


def parse(text):
    """Attributes, rows (lists of Python values, None for missing) and instance
    weights."""
    attrs, rows, weights, in_data = [], [], [], False
    for line_no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if not in_data:
            low = line.lower()
            if low.startswith("@attribute"):
                attrs.append(_attribute(line[10:], line_no))
            elif low.startswith("@data"):
                in_data = True
                if not attrs:
                    raise ArffError("no @attribute before @data")
            elif not low.startswith("@relation"):
                raise ArffError(f"line {line_no}: unexpected header line {line[:40]!r}")
            continue
        line, w = _weight(line, line_no)
        weights.append(w)
        if line.endswith("}") and line.startswith("{"):
            row = [_sparse_default(a) for a in attrs]
            for pair in _tokens(line[1:-1], line_no):
                if not pair[0]:
                    continue
                idx, _, val = pair[0].partition(" ")
                i = int(idx)
                row[i] = _value(attrs[i], val.strip(), False, line_no)
            rows.append(row)
            continue
        if "'" in line or '"' in line:
            cells = _tokens(line, line_no)
        else:  # no quotes: the tokens are the text between commas
            cells = [(v.strip(), False) for v in line.split(",")]
        if len(cells) != len(attrs):
            raise ArffError(f"line {line_no}: {len(cells)} values for {len(attrs)} "
                            "attributes")
        rows.append([_value(a, v, q, line_no) for a, (v, q) in zip(attrs, cells)])
    if not in_data:
        raise ArffError("no @data section")
    return attrs, rows, weights


def _sparse_default(attr):
    """What a sparse row means by an attribute it omits: Weka's internal value 0,
    which is 0, the first declared nominal value, or the epoch (strings have no
    such value and are left missing)."""
    return {"numeric": 0.0, "nominal": attr.values[0] if attr.values else None,
            "date": datetime(1970, 1, 1)}.get(attr.kind)


def _value(attr, text, quoted, line_no):
    if text == "?" and not quoted:
        return None
    if attr.kind == "nominal":
        if text not in attr.known:
            raise ArffError(f"line {line_no}: value {text!r} of attribute {attr.name!r} "
                            f"is not among its declared values")
        return text
    if attr.kind == "numeric":
        try:
            return float(text)
        except ValueError:
            raise ArffError(f"line {line_no}: {text!r} is not a number (attribute "
                            f"{attr.name!r})") from None
    if attr.kind == "date":
        try:
            return datetime.strptime(text, attr.date_format)
        except ValueError:
            raise ArffError(f"line {line_no}: {text!r} does not match the date format "
                            f"of attribute {attr.name!r}") from None
    return text


def quote_ident(name):
    """``name`` as a SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _sql_type(attr):
    if attr.kind == "nominal":
        return "ENUM(" + ", ".join("'" + v.replace("'", "''") + "'"
                                   for v in attr.values) + ")"
    return {"numeric": "DOUBLE", "string": "VARCHAR", "date": "TIMESTAMP"}[attr.kind]


def read_arff(con, path, table, replace=False, weight=None):
    """Load the ARFF file ``path`` into the new table ``table`` on ``con``; with
    ``weight``, the instance weights (``{w}`` after a row, 1 by default) become a
    last DOUBLE column of that name."""
    with open(path, encoding="utf-8") as f:
        attrs, rows, weights = parse(f.read())
    if weight is not None:
        if any(a.name == weight for a in attrs):
            raise ArffError(f"weight column {weight!r} clashes with an attribute")
        attrs = attrs + [Attribute(weight, "numeric")]
        rows = [r + [w] for r, w in zip(rows, weights)]
    arrow_type = {"nominal": pa.string(), "string": pa.string(),
                  "numeric": pa.float64(), "date": pa.timestamp("us")}
    data = pa.table({f"c{i}": pa.array([r[i] for r in rows], arrow_type[a.kind])
                     for i, a in enumerate(attrs)})
    columns = ", ".join(f"{quote_ident(a.name)} {_sql_type(a)}" for a in attrs)
    create = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE"
    con.execute(f"{create} {quote_ident(table)} ({columns})")
    view = "__duckmine_arff"
    con.register(view, data)
    try:
        con.execute(f"INSERT INTO {quote_ident(table)} SELECT * FROM {view}")
    finally:
        con.unregister(view)
    return table
