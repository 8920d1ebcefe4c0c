"""What was wrong with a macro call that DuckDB's binder refused.

DuckDB refuses a macro call with an unknown named option, or too many positional
arguments, before any duckmine code runs, and its error shows the macro's signature
without saying which argument is wrong. ``explain`` reads the query and that
signature and names the argument: ``c45: unknown option 'confidnce' (did you mean
'confidence'?)``.
"""

import difflib
import re

import sqlglot
from sqlglot import exp

_REFUSED = re.compile(r"Macro (\w+)\(\) does not support the supplied arguments")


def _named(arg):
    """The option name of a ``name := value`` or ``name => value`` argument."""
    if isinstance(arg, (exp.PropertyEQ, exp.Kwarg)):
        return arg.this.name
    return None


def _signature(message, name):
    """(positional names, option names) of the macro's signature in ``message``, or
    None (duckmine's macros have one each)."""
    for line in message.splitlines():
        line = line.strip()
        if not line.startswith(name + "("):
            continue
        try:
            args = sqlglot.parse_one(line, read="duckdb").expressions
        except sqlglot.errors.ParseError:
            return None
        return ([a.name for a in args if _named(a) is None],
                [_named(a) for a in args if _named(a) is not None])
    return None


def _calls(query, name):
    try:
        trees = sqlglot.parse(query, read="duckdb")
    except sqlglot.errors.ParseError:
        return []
    return [node for tree in trees if tree is not None
            for node in tree.find_all(exp.Anonymous) if node.name.lower() == name]


def explain(err, query):
    """A message naming the argument of ``query`` that DuckDB's binder refused in
    ``err``, or None when ``err`` is not such a refusal (or the call is not found)."""
    message = str(err)
    found = _REFUSED.search(message)
    if not found:
        return None
    name = found.group(1)
    signature = _signature(message, name)
    if signature is None:
        return None
    positional, options = signature
    for call in _calls(query, name):
        given = [_named(a) for a in call.expressions]
        for option in (g for g in given if g is not None):
            if option not in options and option not in positional:
                close = difflib.get_close_matches(option, options, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                return (f"{name}: unknown option {option!r}{hint}; its options are "
                        f"{', '.join(options)}")
        count = sum(g is None for g in given)
        if count > len(positional) + len(options):
            return (f"{name}: takes at most {len(positional) + len(options)} arguments "
                    f"({', '.join(positional + options)}), got {count}")
        if count < len(positional):
            missing = positional[count:]
            return (f"{name}: missing argument{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(missing)}")
    return None
