"""The README's SQL tour is true: every query in it runs, in order, on the demo's
sample tables, and prints what the README shows after it.

A result the README shows as a table is compared with DuckDB's box rendering (as
``duckmine sql`` prints it, less the row of column types); any other result with the
values as they are (``--format raw``: each row's values tab separated), which is
how model texts are shown. A line ``...`` in the README stands for any number of
lines (a long text cut short)."""

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def tour():
    """The tour's SQL blocks in order: (statements, the output shown after the last,
    or None)."""
    text = README.read_text()
    section = text[text.index("## SQL tour"):text.index("## How it works")]
    blocks = re.findall(r"```(\w*)\n(.*?)\n```", section, re.S)
    out, i = [], 0
    while i < len(blocks):
        lang, body = blocks[i]
        shown = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "" else None
        if lang == "sql":
            statements = [s.strip() for s in re.split(r";\s*\n", body.strip() + "\n") if s.strip()]
            out.append((statements, shown))
        i += 2 if lang == "sql" and shown is not None else 1
    return out


def boxed(rel):
    """The result as ``duckmine sql`` prints it, without the row of column types."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rel.show(max_width=200, max_rows=40)
    lines = buf.getvalue().rstrip("\n").split("\n")
    if len(lines) > 3 and lines[3].startswith("├"):
        del lines[2]
    return lines


def raw(rel):
    """The result's values as they are, each row's tab separated (a text's final
    line break dropped)."""
    return [line for row in rel.fetchall()
            for line in "\t".join(str(v) for v in row).rstrip("\n").split("\n")]


def matches(got, shown):
    """Whether the lines ``got`` are the README's ``shown`` (lines compared without
    trailing spaces; a line ``...`` matches any run of lines)."""
    got = [line.rstrip() for line in got]
    parts = [[]]
    for line in shown.split("\n"):
        if line.strip() == "...":
            parts.append([])
        else:
            parts[-1].append(line.rstrip())
    if len(parts) == 1:
        return got == parts[0]
    first, last = parts[0], parts[-1]
    if got[:len(first)] != first or (last and got[len(got) - len(last):] != last):
        return False
    at, end = len(first), len(got) - len(last)
    for part in parts[1:-1]:
        while at <= end - len(part) and got[at:at + len(part)] != part:
            at += 1
        if at > end - len(part):
            return False
        at += len(part)
    return at <= end


def test_every_query_of_the_sql_tour_runs_and_prints_what_the_readme_shows():
    import duckmine
    from duckmine.extension.samples import create_sample_tables

    con = duckmine.connect()
    con.execute("SET enable_progress_bar = false")
    create_sample_tables(con)
    blocks = tour()
    assert len(blocks) > 30
    wrong = []
    for statements, shown in blocks:
        for sql in statements:
            rel = con.sql(sql)  # every statement runs: an error fails the test here
        if shown is None:
            continue
        got = boxed(rel) if shown.startswith("┌") else raw(rel)
        if not matches(got, shown):
            wrong.append(f"{statements[-1]}\n--- the README shows:\n{shown}\n--- it prints:\n"
                         + "\n".join(got))
    assert not wrong, "\n\n".join(wrong)


@pytest.mark.parametrize("got, shown, ok", [
    (["a", "b", "c"], "a\nb\nc", True),
    (["a", "b", "c"], "a\n...\nc", True),
    (["a", "c"], "a\n...\nc", True),
    (["a", "b", "c"], "a\n...", True),
    (["a", "b", "c"], "a\n...\nb\n...\nc", True),
    (["a", "b"], "a\n...\nc", False),
    (["a", "b", "c"], "a\nc", False),
    (["a  "], "a", True),
])
def test_an_elided_output_matches_any_lines_in_its_place(got, shown, ok):
    assert matches(got, shown) is ok
