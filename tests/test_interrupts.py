"""Stop means stop: ``duckmine.interrupt`` and Ctrl-C end every learner's fit, a
cross-validation, FP-growth and AD-tree counting within 2 s; the query fails as
interrupted, stores nothing, and the connection stays usable. Also the job runner
itself (``algorithms.stop``)."""

import signal
import subprocess
import sys
import threading
import time

import duckdb
import numpy as np
import pytest

import duckmine
from duckmine.algorithms import contract, stop
from duckmine.algorithms.jit import njit
from duckmine.extension.loader import _udfs
from duckmine.udfs.registry import INTERRUPTED

LIMIT = 2.0  # seconds from the interrupt to the failed query

# every learner's long path: (table, fit arguments after the table name)
LONG = {
    "ad_tree": ("codes", "NULL"),
    "aode": ("wide", "'y'"),
    "bayes_net": ("wide", "'y'"),
    "c45": ("mixed", "'y'"),
    "c45_rules": ("mixed", "'y'"),
    "cart": ("mixed", "'y'"),
    "em": ("mixed", "NULL"),
    "kmeans": ("mixed", "NULL, options := {'k': 8, 'max_iterations': 1000}"),
    "m5_rules": ("mixed", "'b'"),
    "m5p": ("mixed", "'b'"),
    "naive_bayes": ("wide", "'y'"),
    "one_r": ("wide", "'y'"),
    "part": ("mixed", "'y'"),
    "rep_tree": ("mixed", "'y'"),
    "ridor": ("mixed", "'y'"),
    "ripper": ("mixed", "'y'"),
    "zero_r": ("wide", "'y'"),
}


@pytest.fixture(scope="module")
def big():
    """Tables on which every long path runs for seconds."""
    con = duckmine.connect()
    con.execute("""CREATE TABLE mixed AS SELECT random() * 10 AS a,
        random() * 5 + (i % 7) AS b, (i % 13)::DOUBLE AS c, ['x', 'y', 'z'][1 + i % 3] AS d,
        random() AS e,
        CASE WHEN random() < 0.3 + 0.05 * (i % 7) THEN 'yes' ELSE 'no' END AS y
        FROM range(400000) r(i)""")
    con.execute("""CREATE TABLE wide AS SELECT """ + ", ".join(
        f"((i * {p}) % {3 + j})::VARCHAR AS v{j}" for j, p in
        enumerate((7, 11, 13, 17, 19, 23, 29, 31))) + """,
        CASE WHEN random() < 0.2 + 0.1 * (i % 5) THEN 'yes' ELSE 'no' END AS y
        FROM range(2000000) r(i)""")
    con.execute("""CREATE TABLE codes AS SELECT """ + ", ".join(
        f"(hash(i * {j + 1}) % {2 + j})::VARCHAR AS v{j}" for j in range(12))
        + " FROM range(1000000) r(i)")
    for name in ("mixed", "wide", "codes"):
        con.execute(f"CREATE VIEW {name}_warm AS SELECT * FROM {name} LIMIT 5000")
    con.execute("CREATE TABLE baskets AS SELECT i // 8 AS tid, (hash(i) % 60)::INT AS item "
                "FROM range(3000000) r(i)")
    con.execute("CREATE VIEW baskets_warm AS SELECT * FROM baskets WHERE tid < 1000")
    yield con
    con.close()


class interrupt_when_running:
    """Run ``action`` from another thread once ``jobs`` jobs run and ``delay``
    seconds later (``at``: when), unless the block has ended first."""

    def __init__(self, action, delay=0.3, jobs=1):
        self.action, self.delay, self.jobs = action, delay, jobs
        self.at, self.ended = None, threading.Event()

    def _fire(self):
        while stop.running() < self.jobs:
            if self.ended.wait(0.005):
                return
        if self.ended.wait(self.delay):
            return
        self.at = time.time()
        self.action()

    def __enter__(self):
        self.thread = threading.Thread(target=self._fire, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.ended.set()
        self.thread.join()


def assert_stopped(con, query, jobs=1):
    """``query`` (a CREATE TABLE ... AS) is stopped by duckmine.interrupt within
    LIMIT, fails as interrupted, stores nothing, and leaves ``con`` usable."""
    with interrupt_when_running(lambda: duckmine.interrupt(con), jobs=jobs) as fired:
        with pytest.raises(Exception) as err:
            con.execute(query)
    assert fired.at is not None, f"failed before the interrupt: {err.value}"
    took = time.time() - fired.at
    assert took < LIMIT, f"stopped {took:.2f} s after the interrupt"
    assert "Interrupted" in str(err.value) or INTERRUPTED in str(err.value)
    assert con.sql("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'stored'"
                   ).fetchall()[0][0] == 0
    assert con.sql("SELECT 42").fetchall()[0][0] == 42


def test_every_learner_has_a_long_path():
    _udfs()
    assert set(contract.learners()) == set(LONG)


@pytest.mark.parametrize("learner", sorted(LONG))
def test_interrupt_stops_a_fit(big, learner):
    table, args = LONG[learner]
    # compiled first: a kernel being compiled is not interrupted (nor is an import)
    warm = "NULL, options := {'max_depth': 2}" if learner == "ad_tree" else args
    big.execute(f"SELECT model FROM fit('{learner}', '{table}_warm', {warm})")
    assert_stopped(big, f"CREATE TABLE stored AS SELECT model FROM "
                        f"fit('{learner}', '{table}', {args})")


def test_interrupt_stops_an_aggregate_fit_and_cross_validation(big):
    assert_stopped(big, "CREATE TABLE stored AS SELECT d, c45_fit(m, 'y') AS model "
                        "FROM mixed m GROUP BY d")
    assert_stopped(big, "CREATE TABLE stored AS SELECT * FROM "
                        "cross_validate('naive_bayes', 'wide', 'y')")


def test_interrupt_stops_fp_growth_and_ad_counts(big):
    big.execute("SELECT * FROM fp_growth('baskets_warm', 0.01)").fetchall()
    big.execute("SELECT * FROM ad_counts('codes_warm', ['v0', 'v1', 'v2'])").fetchall()
    assert_stopped(big, "CREATE TABLE stored AS SELECT * FROM fp_growth('baskets', 0.0001)")
    assert_stopped(big, "CREATE TABLE stored AS SELECT * FROM ad_counts('codes', "
                        "['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9'])")


def test_interrupt_stops_scoring(big):
    big.execute("CREATE TEMP TABLE scorer AS SELECT model FROM fit('c45', 'mixed_warm', 'y')")
    assert_stopped(big, "CREATE TABLE stored AS SELECT predict_proba(s.model, m) AS p "
                        "FROM mixed m, (SELECT model FROM scorer) s, range(20) r(i)", jobs=0)
    big.execute("DROP TABLE scorer")


def test_an_interrupt_of_one_connection_leaves_the_others_running(big):
    other = big.cursor()
    duckmine.load(other)
    out = {}

    def fit_on_other():
        try:
            out["rows"] = other.sql("SELECT count(model) FROM fit('c45', 'mixed', 'y')"
                                    ).fetchall()[0][0]
        except Exception as err:
            out["error"] = err

    worker = threading.Thread(target=fit_on_other)
    worker.start()
    while stop.running() == 0 and worker.is_alive():
        time.sleep(0.005)
    assert worker.is_alive(), out
    assert_stopped(big, "CREATE TABLE stored AS SELECT model FROM fit('cart', 'mixed', 'y')",
                   jobs=2)
    worker.join()
    assert out["rows"] == 1
    other.close()


# -- the runner ------------------------------------------------------------------

@njit(cache=True)
def _spin(halt, limit):
    """Busy for up to ``limit`` ns, or until ``halt[0]``."""
    x = 0.0
    for i in range(limit):
        if stop.halted(halt):
            return -1.0
        x += i * 1e-9
    return x


def test_run_gives_the_result_or_the_error():
    assert stop.run(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ZeroDivisionError):
        stop.run(lambda: 1 / 0)
    assert stop.running() == 0


def test_stop_ends_python_loops_and_kernels_at_their_next_check():
    def python_loop():
        while True:
            stop.checkpoint()
            sum(range(100))

    for work in (python_loop, lambda: _spin(stop.flag(), 10**13)):
        _spin(np.zeros(1, np.uint8), 1)  # compiled before the clock starts
        with interrupt_when_running(stop.stop, delay=0.1) as fired:
            with pytest.raises(stop.Stopped):
                stop.run(work)
        assert time.time() - fired.at < 0.5


def test_stop_by_tag_stops_only_that_jobs():
    results = {}

    def job(tag):
        try:
            results[tag] = stop.run(lambda: _spin(stop.flag(), 2 * 10**8) or "done", tag=tag)
        except stop.Stopped:
            results[tag] = "stopped"

    threads = [threading.Thread(target=job, args=(t,)) for t in (1, 2)]
    for t in threads:
        t.start()
    while stop.running() < 2:
        time.sleep(0.001)
    assert stop.stop(1) == 1
    for t in threads:
        t.join()
    assert results[1] == "stopped" and results[2] != "stopped"


# -- Ctrl-C ----------------------------------------------------------------------

CTRL_C = """
import os, signal, sys, threading, time
import duckmine
from duckmine.algorithms import stop
con = duckmine.connect()
con.execute("SET threads = {threads}")
con.execute("CREATE TABLE t AS SELECT random() AS a, random() * (i % 7) AS b, "
            "CASE WHEN random() < 0.1 * (i % 7) THEN 'yes' ELSE 'no' END AS y "
            "FROM range(300000) r(i)")
def fire():
    while stop.running() == 0:
        time.sleep(0.005)
    time.sleep(0.3)
    global sent
    sent = time.time()
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=fire, daemon=True).start()
try:
    try:
        con.execute("CREATE TABLE stored AS SELECT model FROM fit('cart', 't', 'y')")
        print("finished")
    except Exception as err:
        print("error", type(err).__name__, err)
except KeyboardInterrupt:
    print("KeyboardInterrupt")
print("took", time.time() - sent)
print("stored", con.sql("SELECT count(*) FROM duckdb_tables() "
                        "WHERE table_name = 'stored'").fetchall()[0][0])
print("usable", con.sql("SELECT 42").fetchall()[0][0])
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_a_fit(threads):
    """On one DuckDB thread the fit runs on Python's main thread; on two it may run
    on one of DuckDB's, where no Python signal handler runs."""
    out = subprocess.run([sys.executable, "-c", CTRL_C.format(threads=threads)],
                         capture_output=True, text=True, timeout=300)
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    assert "finished" not in out.stdout, out.stdout + out.stderr
    assert float(lines["took"]) < LIMIT, out.stdout
    assert lines["stored"] == "0" and lines["usable"] == "42", out.stdout


def test_ctrl_c_stops_duckmine_sql(tmp_path):
    db = str(tmp_path / "t.duckdb")
    with duckdb.connect(db) as con:
        con.execute("CREATE TABLE t AS SELECT random() AS a, random() * (i % 7) AS b, "
                    "CASE WHEN random() < 0.1 * (i % 7) THEN 'yes' ELSE 'no' END AS y "
                    "FROM range(1000000) r(i)")
    cli = subprocess.Popen([sys.executable, "-m", "duckmine.extension.cli", "sql",
                            "SELECT model_info(model) FROM fit('cart', 't', 'y')", "--db", db],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(6)  # started, and fitting (the fit alone takes far longer)
    sent = time.time()
    cli.send_signal(signal.SIGINT)
    out, err = cli.communicate(timeout=120)
    assert time.time() - sent < LIMIT, err
    assert cli.returncode == 130, out + err
    assert "interrupted" in err
