"""Which transaction layout a relation has, decided from its schema.

The macro ``_dm_baskets`` (``sql/transactions.sql``) passes the column names
and types here once per query and turns every row into items accordingly.
"""

import re

import pyarrow as pa

from ..algorithms.contract import choice
from .registry import arrow_type, scalars, udf

LAYOUTS = ("auto", "long", "list", "wide")
LAYOUT = choice("layout", "auto", LAYOUTS, "how the relation holds its transactions")
INTEGER = re.compile(r"^U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?$")
LIST = re.compile(r"\[\d*\]$")
NOMINAL = re.compile(r"^(VARCHAR|BOOLEAN|ENUM\(.*\))$", re.S)
ID_NAME = re.compile(r"(^|_)(t?id|txn|transaction|basket|order|invoice|receipt)s?"
                     r"(_?id)?$|id$", re.I)

SPEC_SQL = "STRUCT(kind VARCHAR, list_column INTEGER, names VARCHAR[], bool BOOLEAN[])"
SPEC = arrow_type(SPEC_SQL)


def layout(names, types, requested):
    """Return the layout's kind and, for the list layout, the (1-based) LIST
    column. Raise a ValueError naming the problem."""
    lists = [i for i, t in enumerate(types) if LIST.search(t)]
    if requested == "list" or (requested == "auto" and lists):
        if len(lists) != 1:
            found = ", ".join(names[i] for i in lists) or "none"
            raise ValueError(f"the list layout needs exactly one LIST column of items "
                             f"(found: {found}); select one with a query")
        return "list", lists[0] + 1
    if requested == "long" or (requested == "auto" and len(names) == 2 and (
            INTEGER.match(types[0]) or ID_NAME.search(names[0]))):
        if len(names) != 2:
            raise ValueError(f"the long layout needs exactly two columns (transaction "
                             f"id, item), got {len(names)}: {', '.join(names)}")
        return "long", 0
    for n, t in zip(names, types):
        if not NOMINAL.match(t):
            raise ValueError(
                f"no recognised layout: column {n!r} has type {t}; a wide table needs "
                "nominal columns (ENUM, VARCHAR, BOOLEAN), a long table two columns "
                "(transaction id, item) and a list table one LIST column. Cast or "
                "exclude the column, or pass layout := 'long' | 'list' | 'wide'")
    return "wide", 0


@udf("_dm_layout", None, SPEC_SQL)  # the layout arrives as given, checked here
def layout_udf(names, types, requested, fn):
    out = []
    for n, t, r, f in zip(scalars(names), scalars(types), scalars(requested), scalars(fn)):
        requested = LAYOUT.check(f, r)  # names f itself
        try:
            kind, list_column = layout(n, t, requested)
        except ValueError as err:
            raise ValueError(f"{f}: {err}") from None
        out.append({"kind": kind, "list_column": list_column, "names": n,
                    "bool": [x == "BOOLEAN" for x in t]})
    return pa.array(out, SPEC)
