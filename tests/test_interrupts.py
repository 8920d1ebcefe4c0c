"""Stop means stop: ``duckmine.interrupt`` and Ctrl-C end every learner's fit, a
cross-validation, FP-growth, AD-tree counting and scoring: the work is given up (the
job notices the stop), the query fails as interrupted, stores nothing, and the
connection stays usable. Also the job runner itself (``algorithms.stop``). How soon
(target 2 s) is measured by ``benchmarks/interrupts.py``, not asserted here."""

import signal
import subprocess
import sys
import threading
import time

import duckdb
import numpy as np
import pytest
from numba import types

import duckmine
from duckmine.algorithms import contract, stop
from duckmine.algorithms.halt import halted
from duckmine.algorithms.jit import njit
from duckmine.benchmarks.interrupts import (
    LONG,
    READING,
    interrupted_after,
    long_query,
    make_tables,
    warm_query,
)
from duckmine.extension.loader import _udfs
from duckmine.udfs import feed
from duckmine.udfs.registry import INTERRUPTED


@pytest.fixture(scope="module")
def big():
    """Tables on which every long path runs for seconds."""
    con = duckmine.connect()
    make_tables(con)
    yield con
    con.close()


def job_outcomes():
    """How this process's jobs have ended so far, once none runs."""
    while stop.running():
        time.sleep(0.01)
    return dict(stop.OUTCOMES)


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


def assert_stopped(con, query, jobs=1, groups=False):
    """``query`` (a CREATE TABLE ... AS) is stopped by duckmine.interrupt: its jobs
    noticed the stop and gave up their work (none finished), the query fails as
    interrupted, stores nothing, and ``con`` stays usable. How soon is measured by
    ``benchmarks/interrupts.py`` (target: 2 s)."""
    before = job_outcomes()
    # a job is stopped soon after it starts (some take under a second once their
    # rows are read); a query with no job is stopped 0.3 s in
    seconds, error = interrupted_after(con, query, 0.05 if jobs else 0.3, jobs=jobs)
    assert seconds is not None, f"failed before the interrupt: {error}"
    assert "Interrupted" in str(error) or INTERRUPTED in str(error), error
    after = job_outcomes()
    if not groups:  # with one job per group, groups before the interrupt may finish
        assert after["finished"] == before["finished"], "a job finished its work"
    if jobs:
        assert after["stopped"] - before["stopped"] >= jobs
    else:  # scoring, and reading rows, run as no job: DuckDB stops them between chunks
        assert after == before
    assert con.sql("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'stored'"
                   ).fetchall()[0][0] == 0
    assert con.sql("SELECT 42").fetchall()[0][0] == 42


def test_every_learner_has_a_long_path():
    _udfs()
    assert set(contract.learners()) == set(LONG)


@pytest.mark.parametrize("learner", sorted(LONG))
def test_interrupt_stops_a_fit(big, learner):
    big.execute(warm_query(learner))  # compiled first, as a warm session has them
    assert_stopped(big, f"CREATE TABLE stored AS {long_query(learner)}",
                   jobs=int(learner not in READING))


def test_rows_read_before_an_interrupt_are_dropped(big):
    """The rows fed to a fit whose query was interrupted are dropped when the
    connection starts its next fit."""
    me = big.sql("SELECT getvariable('duckmine_connection')").fetchall()[0][0]
    big.execute(warm_query("zero_r"))
    assert feed.open_jobs(me) == 0
    assert_stopped(big, f"CREATE TABLE stored AS {long_query('zero_r')}", jobs=0)
    assert feed.open_jobs(me) == 1
    big.execute(warm_query("zero_r")).fetchall()
    assert feed.open_jobs(me) == 0


def test_interrupt_stops_an_aggregate_fit_and_cross_validation(big):
    assert_stopped(big, "CREATE TABLE stored AS SELECT d, c45_fit(m, 'y') AS model "
                        "FROM mixed m GROUP BY d", groups=True)
    assert_stopped(big, "CREATE TABLE stored AS SELECT * FROM "
                        "cross_validate('naive_bayes', 'wide', 'y')")
    assert_stopped(big, "CREATE TABLE stored AS SELECT * FROM "
                        "fit_groups('c45', 'mixed', 'y', 'd')", groups=True)


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
            out["rows"] = other.sql("SELECT count(model) FROM fit('ripper', 'mixed', 'y')"
                                    ).fetchall()[0][0]  # the longest of the fits here
        except Exception as err:
            out["error"] = err

    before = job_outcomes()
    worker = threading.Thread(target=fit_on_other)
    worker.start()
    while stop.running() == 0 and worker.is_alive():
        time.sleep(0.005)
    assert worker.is_alive(), out
    time.sleep(0.3)
    assert duckmine.interrupt(big) == 0  # big runs no job: the other's is not its to stop
    assert big.sql("SELECT 42").fetchall()[0][0] == 42
    worker.join()
    assert out == {"rows": 1}
    after = job_outcomes()
    assert after["finished"] == before["finished"] + 1 and after["stopped"] == before["stopped"]
    other.close()


# -- the runner ------------------------------------------------------------------

@njit(cache=True)
def _spin(halt, limit):
    """Busy for up to ``limit`` ns, or until ``halt[0]``."""
    x = 0.0
    for i in range(limit):
        if halted(halt):
            return -1.0
        x += i * 1e-9
    return x


def test_run_gives_the_result_or_the_error():
    assert stop.run(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ZeroDivisionError):
        stop.run(lambda: 1 / 0)
    assert stop.running() == 0


def test_each_runs_parts_on_threads_that_act_for_the_job():
    """``stop.each``'s threads read the job's flag and tag, so a stop reaches the
    parts; the results come in order, and the first error in order is raised."""
    seen = []

    def part(x):
        seen.append((stop.flag() is job_flag[0], stop.tag(), threading.get_ident()))
        return x * x

    job_flag = []

    def work():
        job_flag.append(stop.flag())
        return stop.each(part, range(6), threads=2)

    assert stop.run(work, tag="t") == [0, 1, 4, 9, 16, 25]
    assert all(mine and tag == "t" for mine, tag, _ in seen)
    assert len({ident for *_, ident in seen}) >= 1
    assert stop.flag()[0] == 0 and stop.tag() is None  # the caller's own is untouched

    def failing(x):
        if x in (2, 4):
            raise ValueError(x)
        return x

    with pytest.raises(ValueError, match="2"):
        stop.each(failing, range(6), threads=2)

    # a generator's parts are made as they are taken, in order; once one fails no
    # further part is begun
    begun = []

    def made(n):
        for x in range(n):
            begun.append(x)
            yield x

    assert stop.each(lambda x: x + 1, made(6), threads=2) == [1, 2, 3, 4, 5, 6]
    assert begun == list(range(6))
    begun.clear()

    def first_fails(x):
        if x == 0:
            raise ValueError("first")
        time.sleep(0.01)

    with pytest.raises(ValueError, match="first"):
        stop.each(first_fails, made(100), threads=2)
    assert len(begun) < 10
    with interrupt_when_running(stop.stop, delay=0.1):
        with pytest.raises(stop.Stopped):
            stop.run(lambda: stop.each(lambda _: _spin(stop.flag(), 10**13), range(4)))


def test_stop_ends_python_loops_and_kernels_at_their_next_check():
    def python_loop():
        while True:
            stop.checkpoint()
            sum(range(100))

    for work in (python_loop, lambda: _spin(stop.flag(), 10**13)):
        _spin(np.zeros(1, np.uint8), 1)  # compiled before the clock starts
        with interrupt_when_running(stop.stop, delay=0.1) as fired:
            with pytest.raises(stop.Stopped):  # neither ends by itself
                stop.run(work)
        assert fired.at is not None


def test_a_job_that_cannot_stop_is_left_behind_and_its_caller_stopped():
    """As a kernel's compilation: it notices no flag. Its caller is stopped all the
    same, and the job counts as running until it ends by itself."""
    release = threading.Event()
    with interrupt_when_running(stop.stop, delay=0.1):
        with pytest.raises(stop.Stopped):
            stop.run(lambda: release.wait(60))
    assert stop.running() == 1
    release.set()
    job_outcomes()  # waits until it has ended
    assert stop.running() == 0


def test_a_stopped_job_waits_no_longer_for_another_processs_compile():
    """A job that needs a kernel another process is compiling waits for it, then
    loads it; stopped meanwhile, it stops at once rather than after that compile
    (a minute for a large kernel), as it would before compiling one itself."""
    import fcntl

    from duckmine.algorithms.clusters import kmeans

    kernel = kmeans._first_max_i
    path = kernel._cache._cache_file._index_path + ".compiling"
    with open(path, "ab") as other:  # held as by another process that compiles it
        fcntl.flock(other, fcntl.LOCK_EX)
        try:
            with interrupt_when_running(stop.stop, delay=0.2):
                with pytest.raises(stop.Stopped):
                    stop.run(kernel, np.zeros(3, np.int16), 0, 3)  # a type not compiled
            start = time.monotonic()
            while stop.running() and time.monotonic() - start < 5:
                time.sleep(0.01)
            assert stop.running() == 0  # the job itself has ended, not only its caller
        finally:
            fcntl.flock(other, fcntl.LOCK_UN)
    assert len(kernel.signatures) == len(kernel.overloads)
    assert all(sig[0] != types.Array(types.int16, 1, "C") for sig in kernel.signatures)


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

def with_ctrl_c():
    """A child's Ctrl-C as at a terminal: a shell starts a background job with
    SIGINT ignored, and a child inherits that (then Python sets no handler)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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
print("stored", con.sql("SELECT count(*) FROM duckdb_tables() "
                        "WHERE table_name = 'stored'").fetchall()[0][0])
print("usable", con.sql("SELECT 42").fetchall()[0][0])
"""


def cold_cache(tmp_path):
    """An environment whose kernel cache is empty: every kernel compiles first."""
    import os

    return dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "kernels"))


@pytest.mark.parametrize("threads,cache", [(1, "warm"), (2, "warm"), (2, "cold")],
                         ids=["1-warm", "2-warm", "2-cold"])
def test_ctrl_c_stops_a_fit(threads, cache, tmp_path):
    """On one DuckDB thread the fit runs on Python's main thread; on two it may run
    on one of DuckDB's, where no Python signal handler runs. With a cold cache the
    fit is compiling a kernel when Ctrl-C comes, which nothing can stop: the query
    fails at once all the same, and the process waits for the compilation as it
    exits (finalising Python under it aborted the process)."""
    env = cold_cache(tmp_path) if cache == "cold" else None
    out = subprocess.run([sys.executable, "-c", CTRL_C.format(threads=threads)],
                         capture_output=True, text=True, timeout=600, env=env,
                         preexec_fn=with_ctrl_c)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    assert "finished" not in out.stdout, out.stdout + out.stderr
    assert lines["stored"] == "0" and lines["usable"] == "42", out.stdout


@pytest.mark.parametrize("cache", ["warm", "cold"])
def test_ctrl_c_stops_duckmine_sql(tmp_path, cache):
    db = str(tmp_path / "t.duckdb")
    with duckdb.connect(db) as con:
        con.execute("CREATE TABLE t AS SELECT random() AS a, random() * (i % 7) AS b, "
                    "CASE WHEN random() < 0.1 * (i % 7) THEN 'yes' ELSE 'no' END AS y "
                    "FROM range(1000000) r(i)")
    env = cold_cache(tmp_path) if cache == "cold" else None
    cli = subprocess.Popen([sys.executable, "-m", "duckmine.extension.cli", "sql",
                            "SELECT model_info(model) FROM fit('cart', 't', 'y')", "--db", db],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           preexec_fn=with_ctrl_c)
    if cache == "cold":  # once the first kernel is cached, the fit compiles the next
        kernels = tmp_path / "kernels"
        while cli.poll() is None and not (kernels.exists() and any(kernels.rglob("*.nbi"))):
            time.sleep(0.05)
    else:
        time.sleep(6)  # started, and fitting (the fit alone takes far longer)
    cli.send_signal(signal.SIGINT)
    out, err = cli.communicate(timeout=600)
    assert cli.returncode == 130, out + err
    assert "duckmine: interrupted" in err and "cart" not in out, out + err  # no result
