"""``duckmine demo`` runs a kernel that is not yet compiled as Python
(``jit.interpreting``): its every query must give the same result that way, to
the last bit, as compiled."""

import contextlib
import json
import subprocess
import sys

import duckmine
from duckmine.algorithms import jit
from duckmine.extension import cli
from duckmine.extension.samples import create_sample_tables


def results(interpret):
    """Each query's rows, as text: every float to its last bit."""
    con = duckmine.connect()
    create_sample_tables(con)
    out = []
    with jit.interpreting(cache=False) if interpret else contextlib.nullcontext():
        for _, query in cli.DEMO:
            if query.startswith("CREATE"):
                con.execute(query)
            else:
                out.append(repr(con.execute(query).fetchall()))
    con.close()
    return out


def test_every_demo_query_gives_the_same_result_run_as_python():
    # a fresh process, where no kernel is compiled yet (here some are)
    child = subprocess.run(
        [sys.executable, "-c", "import json; from tests.test_demo_python import results; "
         "from duckmine.algorithms import jit; "
         "print(json.dumps([results(True), len(jit._plain)]))"],
        capture_output=True, text=True, check=True, cwd=duckmine.__path__[0])
    python, ran = json.loads(child.stdout.splitlines()[-1])
    assert ran > 100  # kernels that ran as Python
    compiled = results(interpret=False)
    queries = [q for q in cli.DEMO if not q[1].startswith("CREATE")]
    assert len(python) == len(compiled) == len(queries)
    for (title, query), a, b in zip(queries, compiled, python):
        assert a == b, title or query
