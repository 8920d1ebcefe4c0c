"""What every model_to_sql writer shares: sqlglot dialects, literals, CASE and
SELECT builders, and the first-best-class choice. A learner's own writer (its
``sql`` module, named by its declaration) builds a sqlglot expression from these;
``model_sql`` turns it into text in any dialect sqlglot writes."""


import sys
import threading

import sqlglot.dialects
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from .classes import MARGIN

FN = "model_to_sql"
DIALECTS = tuple(sorted(name.lower() for name in sqlglot.dialects.MODULE_BY_DIALECT))
SHOWN_DIALECTS = ("duckdb", "postgres", "sqlite", "mysql", "bigquery", "snowflake",
                  "tsql", "oracle", "spark", "trino")
RECURSION_LIMIT = 20_000
MAX_STEPS = 6  # classes compared per SELECT (each nests three calls deeper)

SHALLOW_PARSERS = ("sqlite",)  # dialects whose parsers nest about 20 SELECTs at most
# for them (SQLite's, before 3.46, holds 100 symbols, which a CASE nested 17 deep
# overflows): the deepest tree a nested CASE is written for, and the tree's levels
# one SELECT spans where it is walked (or summed) a few levels at a time instead
SHALLOW_CASE, SHALLOW_SPAN = 12, 8
# the levels of SELECTs a tree's sums or weights are split into at most: each nests a
# SELECT deeper, and SQLite's parser takes about a dozen (with first_best's); a
# deeper tree's levels span several depths
LEVELS = 4
# the most depths one level of REPTree's or CART's weights spans, however deep the
# tree: a node's weight names the factors of the edges since its level began, so the
# text grows with the nodes times the span (a REPTree 2,976 deep in four levels took
# 534 s to write, as 147 MB)
SPAN = 16
# the fewest terms a long sum adds up in one run before the runs' sums are added:
# DuckDB plans a sum nested n deep in time growing as n cubed (800 terms took it 53 s;
# in runs of 48, 1 s)
TERMS = 48
# dialects whose planners compute a derived table's columns once without ``LIMIT 1``
# (see ``_from``), and turn that LIMIT into a window per level of a correlated query
BARE_DERIVED = ("duckdb",)

_deep = threading.Lock()
_writing = threading.local()  # bare: the text being written is for a BARE_DERIVED dialect


def dialect_of(name):
    """The sqlglot dialect called ``name`` (any case); a clear error otherwise."""
    if not isinstance(name, str) or name.strip().lower() not in DIALECTS:
        shown = ", ".join(d for d in SHOWN_DIALECTS if d in DIALECTS)
        raise ValueError(f"{FN}: unknown dialect {name!r}; dialect must name a SQL "
                         f"dialect sqlglot knows, such as {shown} (all {len(DIALECTS)}: "
                         f"{', '.join(DIALECTS)})")
    return Dialect.get_or_raise(name.strip().lower())


def _number(x, double=False):
    """A float literal in full precision; ``double`` writes it with an exponent, so
    that DuckDB reads a DOUBLE (and does not do the arithmetic in DECIMAL)."""
    x = float(x)
    text = repr(abs(x))
    if double and "e" not in text:
        text += "e0"
    lit = exp.Literal(this=text, is_string=False)  # (Literal.number parses it again)
    return exp.Neg(this=lit) if x < 0 else lit


def _below(col, threshold, left=True):
    """J48's numeric test, printed ``x <= t``: ``x - t < 1e-6`` for the left branch
    and its complement for the right, in doubles as the model scores it."""
    diff = exp.Sub(this=col, expression=_number(threshold, double=True))
    return (exp.LT if left else exp.GTE)(this=diff, expression=_number(1e-6, double=True))


def _paren(e):
    return e if isinstance(e, (exp.Literal, exp.Column, exp.Paren)) else exp.Paren(this=e)


def _sum(terms):
    total = terms[0]
    for t in terms[1:]:
        total = exp.Add(this=total, expression=t)
    return total


def _wins(difference):
    """``difference`` > 1e-6: how much a class must beat the best so far by."""
    return exp.GT(this=difference, expression=_number(MARGIN))


def _var(name):
    return exp.column(name, quoted=True)


def _as(e, name):
    return exp.Alias(this=e, alias=exp.to_identifier(name, quoted=True))


def _from(query, alias):
    """``query`` as a derived table called ``alias``, of its one row: ``LIMIT 1``
    keeps an engine that merges a derived table into the query around it (SQLite)
    from writing each column's expression in at every use. On a deep CART tree's
    SQL SQLite takes 1.5 s in place of 14 to 17. The text for ``BARE_DERIVED``
    dialects has none (``model_sql`` says which it writes): DuckDB makes each into
    a window over the rows scored, which took a deep CART tree's SQL 12.6 s on
    100,000 rows in place of 6.5."""
    if not getattr(_writing, "bare", False):
        query.set("limit", exp.Limit(expression=exp.Literal.number(1)))
    return exp.Subquery(this=query, alias=exp.TableAlias(
        this=exp.to_identifier(alias, quoted=True)))


def _widened(query, columns, alias):
    """SELECT every column of ``query`` (as the derived table ``alias``) and
    ``columns`` after them: a level of a writer's nested SELECTs that keeps what
    the levels below it computed."""
    star = exp.Column(this=exp.Star(), table=exp.to_identifier(alias, quoted=True))
    return _select([star, *columns], _from(query, alias))


def _select(columns, source=None):
    """SELECT ``columns`` [FROM ``source``], built without copying the columns."""
    query = exp.Select(expressions=columns)
    if source is not None:
        query.set("from_", exp.From(this=source))
    return query


def _weight(x):
    """A weight literal: 0 and 1 as integers, anything else as a DOUBLE."""
    x = float(x)
    return exp.Literal.number(int(x)) if x in (0.0, 1.0) else _number(x, double=True)


def _is_in(col, values):
    if len(values) == 1:
        return exp.EQ(this=col, expression=exp.Literal.string(values[0]))
    return exp.In(this=col, expressions=[exp.Literal.string(v) for v in values])


def _greatest_convention(dialect):
    """The ``ignore_nulls`` flag under which ``dialect`` writes GREATEST(a, b) without
    naming ``a`` twice (to mimic the other NULL convention sqlglot repeats the
    arguments; the ones here are never NULL, so either convention will do)."""
    for flag in (False, True):
        text = exp.Greatest(this=exp.column("_dm_1"), expressions=[exp.column("_dm_2")],
                            ignore_nulls=flag).sql(dialect=dialect)
        if text.count("_dm_1") == 1:
            return flag
    return False


def _case(pairs, default=None):
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=default)


def _floor(p):
    """The largest double ``t`` with ``p - t > 1e-6`` in doubles, for ``p`` at least
    2e-6: ``t0 = p - 1e-6`` if it passes, else the double just below it (``t0``
    times 1 - 2**-53). Near the bound both subtractions are exact (Sterbenz), so
    the test of ``t0`` is exact and the true floor is ``t0`` or the one below; a
    brute-force search over 360,000 doubles agreed. Below 2e-6 it may be an ulp
    off, which moves no choice of a class from a distribution that sums to one,
    since any class of 2e-6 or more beats a best below 1e-6."""
    t0 = exp.Paren(this=exp.Sub(this=p.copy(), expression=_number(MARGIN)))
    passes = _wins(exp.Sub(this=p.copy(), expression=t0.copy()))
    return _case([(passes, t0.copy())],
                 exp.Mul(this=t0, expression=_number(1.0 - 2.0 ** -53, double=True)))


def first_best(query, k, label, ignore_nulls):
    """Scalar subquery over ``query``'s probability columns (``_dm_p0``, ...): the
    label of the first class whose probability exceeds the best so far by more
    than 1e-6, exactly as ``classes.labels`` decides it (``p - top > 1e-6`` in
    doubles).

    A level below works out each class's floor (``_floor``): the class beats the
    best so far exactly when that is at most its floor. The best is updated without
    naming it twice (so that engines that substitute a derived table's columns into
    the query around it do not evaluate it over and over):
    ``COALESCE(NULLIF(GREATEST(top, floor), floor), p)`` is ``top`` unless
    ``top <= floor``, and then ``p``. It is always one of the probabilities, and the
    class that set it last is the first whose probability equals it. Each SELECT
    takes MAX_STEPS classes."""
    p = [_var(f"_dm_p{c}") for c in range(k)]
    query = _widened(query, [_as(_floor(p[c]), f"_dm_f{c}") for c in range(1, k)],
                     "_dm_floors")
    top = p[0].copy()
    for c in range(1, k):
        floor = _var(f"_dm_f{c}")
        top = exp.Coalesce(this=exp.Nullif(this=exp.Greatest(
            this=top, expressions=[floor], ignore_nulls=ignore_nulls),
            expression=floor.copy()), expressions=[p[c].copy()])
        if c % MAX_STEPS == 0 or c == k - 1:
            query = _select([_as(top, "_dm_top"), *[x.copy() for x in p],
                             *[_var(f"_dm_f{f}") for f in range(c + 1, k)]],
                            _from(query, f"_dm_s{c}"))
            top = _var("_dm_top")
    chosen = _case([(exp.EQ(this=p[c], expression=top.copy()), label(c))
                    for c in range(k - 1)], label(k - 1))
    return exp.Subquery(this=_select([chosen], _from(query, "_dm_best")))


def shallow(dialect):
    """Whether ``dialect``'s parser has a small stack (``SHALLOW_PARSERS``)."""
    return dialect.strip().lower() in SHALLOW_PARSERS


def depths(children):
    """Each node's depth (the root, node 0, at 0) from each node's list of children."""
    depth, stack = [0] * len(children), [0]
    while stack:
        i = stack.pop()
        for c in children[i]:
            depth[c] = depth[i] + 1
            stack.append(c)
    return depth


def model_sql(expression, model, dialect):
    """The SQL text of ``model`` for the sqlglot dialect name, from its learner's
    ``expression(model, dialect)`` (a sqlglot expression)."""
    d = dialect_of(dialect)
    with _deep:  # both the tree and sqlglot recurse as deep as the tree
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
        try:
            _writing.bare = dialect.strip().lower() in BARE_DERIVED
            tree = expression(model, dialect)
            if shallow(dialect):
                tree = with_lists(tree)
            try:
                return tree.sql(dialect=d, copy=False)  # built for this call alone
            except RecursionError:
                raise
            except Exception as err:  # a dialect sqlglot cannot write this in
                raise ValueError(f"{FN}: sqlglot could not write the tree in the "
                                 f"{dialect.strip().lower()} dialect ({err})") from None
        except RecursionError:
            raise ValueError(f"{FN}: the tree is too deep to write as SQL") from None
        finally:
            _writing.bare = False
            sys.setrecursionlimit(limit)


def _derived(select):
    """The derived table ``select`` reads (a Subquery in its FROM), or None."""
    source = select.args.get("from_")
    return source.this if source is not None and isinstance(source.this, exp.Subquery) \
        else None


def with_lists(tree):
    """``tree`` with every chain of SELECTs that each read the one below as a derived
    table written as one WITH list, innermost first: SQLite's parser before 3.46
    holds 100 symbols, which a chain about twenty SELECTs deep overflows, where a
    WITH list of any length reads flat. Each chain's WITH sits in the subquery at its
    head, so a level may still name the columns of the row being scored."""
    heads = [s for s in tree.find_all(exp.Select) if _derived(s) is not None and not (
        isinstance(s.parent, exp.Subquery) and isinstance(s.parent.parent, exp.From))]
    for head in heads:
        ctes = []
        query = head
        while (derived := _derived(query)) is not None:
            name = derived.alias_or_name
            query.set("from_", exp.From(this=exp.to_table(exp.to_identifier(name, quoted=True))))
            query = derived.this
            ctes.append(exp.CTE(this=query, alias=exp.TableAlias(
                this=exp.to_identifier(name, quoted=True))))
        head.set("with_", exp.With(expressions=ctes[::-1]))
    return tree
