"""Progress through the one hook: a watcher of a connection hears how far its own
queries have got (cross-validation folds, EM's choice of clusters and its starts,
PART's covered rows, RIPPER's classes, tree nodes), nothing of other connections';
the command line shows the tasks as bars on a terminal."""

import os
import pty
import subprocess
import sys
import threading

import pytest

import duckmine
from duckmine.algorithms import progress, stop

from .conftest import arff_tables


@pytest.fixture(scope="module")
def db():
    con = arff_tables(["labor", "cpu", "weather.numeric"])
    yield con
    con.close()


def heard(con, sql):
    """What a watcher of ``con`` hears while ``sql`` runs: (task, done, total)."""
    out = []
    with duckmine.progress(con, lambda *a: out.append(a)):
        con.execute(sql).fetchall()
    return out


def test_cross_validation_folds(db):
    events = heard(db, "SELECT * FROM cross_validate('c45', 'labor', 'class', folds := 5)")
    folds = [e for e in events if e[0] == "cross-validation folds"]
    assert folds == [("cross-validation folds", k, 5) for k in range(6)]


def test_learners_report_their_own_work(db):
    part = heard(db, "SELECT * FROM part('labor', 'class')")
    covered = [d for t, d, n in part if t == "PART: rows covered by rules"]
    assert covered[0] == 0 and covered == sorted(covered) and covered[-1] < 57
    assert all(n == 57 for t, _, n in part)
    ripper = heard(db, "SELECT * FROM ripper('labor', 'class')")
    assert ripper == [("RIPPER: classes", 0, 1)]
    grown = [d for t, d, n in heard(db, "SELECT * FROM cart('labor', 'class')")
             if t == "CART: nodes grown"]
    # counted over all its trees (one per fold too), narrow subtrees in a kernel
    (size,) = db.execute("SELECT count(*) FROM cart('labor', 'class', pruned := false)") \
        .fetchall()[0]
    assert grown and grown == sorted(set(grown)) and grown[-1] > size
    em = {t for t, _, _ in heard(db, "SELECT * FROM em('weather_numeric')")}
    assert "EM: choosing the number of clusters, 1 of them, folds" in em
    assert "EM: k-means starts for 1 clusters" in em


def test_kernels_count_into_a_cell(db):
    """A kernel counts into a cell that the waiting thread reports: C4.5's and
    REPTree's nodes, EM's iterations. The last figure heard is the whole count."""
    tree = "c45('labor', 'class', pruned := false, collapse := false, min_leaf := 1)"
    nodes = [d for t, d, _ in heard(db, f"SELECT * FROM {tree}") if t == "C4.5: nodes grown"]
    (size,) = db.execute(f"SELECT count(*) FROM {tree}").fetchall()[0]
    assert nodes and nodes == sorted(set(nodes)) and nodes[-1] == size
    tree = "rep_tree('labor', 'class', pruned := false)"
    nodes = [d for t, d, _ in heard(db, f"SELECT * FROM {tree}") if t == "REPTree: nodes grown"]
    (size,) = db.execute(f"SELECT count(*) FROM {tree}").fetchall()[0]
    assert nodes and nodes == sorted(set(nodes)) and nodes[-1] == size
    em = [(t, d, n) for t, d, n in heard(db, "SELECT * FROM em('cpu', k := 3, "
                                             "max_iterations := 40)")
          if t.startswith("EM: iterations")]
    assert em and em[-1] == ("EM: iterations with 3 clusters", 40, 40)
    km = [(t, d, n) for t, d, n in heard(db, "SELECT * FROM kmeans('cpu', 3, "
                                             "max_iterations := 2)")
          if t.startswith("k-means: iterations")]
    assert km and km[-1] == ("k-means: iterations with 3 clusters", 2, 2)


def test_k2_reports_each_node(db):
    k2 = [(d, n) for t, d, n in heard(db, "SELECT * FROM bayes_net('labor', 'class', "
                                          "max_parents := 2)") if t == "K2: nodes searched"]
    assert k2 == [(i, 17) for i in range(17)]


def test_only_the_watched_connection_is_heard(db):
    other = db.cursor()
    duckmine.load(other)
    mine, theirs = [], []
    with duckmine.progress(db, lambda *a: mine.append(a)), \
            duckmine.progress(other, lambda *a: theirs.append(a)):
        t = threading.Thread(target=lambda: other.execute(
            "SELECT * FROM cross_validate('one_r', 'labor', 'class', folds := 3)").fetchall())
        t.start()
        db.execute("SELECT * FROM cross_validate('zero_r', 'labor', 'class', folds := 4)"
                   ).fetchall()
        t.join()
    assert {e[2] for e in mine} == {4} and {e[2] for e in theirs} == {3}
    assert heard(db, "SELECT 1") == []  # after the block, nobody is watching
    assert not progress._WATCHERS


def test_a_failing_watcher_does_not_fail_the_work(db):
    def broken(*_):
        raise RuntimeError("display gone")
    with duckmine.progress(db, broken):
        rows = db.execute("SELECT correct FROM cross_validate('zero_r', 'labor', 'class')"
                          ).fetchall()
    assert rows == [(37.0,)]


def test_the_hook_outside_a_job():
    """Reporting outside any job (the core called directly) goes nowhere."""
    events = []
    unwatch = progress.watch(None, lambda *a: events.append(a))
    try:
        progress.report("x", 1, 2)  # no job: tag None, heard by a watcher of None only
        assert events == [("x", 1, 2)]
        stop.run(lambda: progress.report("y", 0), tag=7)
        assert events == [("x", 1, 2)]
    finally:
        unwatch()


def test_a_job_that_ends_before_it_is_waited_for_is_still_heard():
    """A fast job may be over before its waiting thread first looks at the cell;
    the count is reported all the same, once."""
    events = []
    unwatch = progress.watch("fast", lambda *a: events.append(a))

    def work():
        progress.counter("steps", 3)[0] = 3

    try:
        job = stop.Job(work, (), "fast")
        job.thread.start()
        job.thread.join()  # over before anyone waits
        stop._wait(job)
        assert events == [("steps", 3, 3)]
    finally:
        unwatch()


def test_the_command_line_draws_bars_on_a_terminal(tmp_path):
    master, slave = pty.openpty()
    query = "SELECT pct_correct FROM cross_validate('zero_r', 'weather', 'play')"
    db = tmp_path / "t.duckdb"
    subprocess.run([sys.executable, "-m", "duckmine", "sql", "--create", "--db", str(db),
                    "CREATE TABLE weather AS SELECT * FROM (VALUES ('a', 'yes'), "
                    "('b', 'no'), ('a', 'yes'), ('b', 'yes')) t(o, play)"], check=True)
    proc = subprocess.run([sys.executable, "-m", "duckmine", "sql", "--db", str(db),
                           query.replace("'weather', 'play')", "'weather', 'play', "
                                         "folds := 2)")],
                          stdout=subprocess.PIPE, stderr=slave, timeout=300)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert proc.returncode == 0 and b"pct_correct" in proc.stdout
    assert b"cross-validation folds" in shown and b"2/2" in shown
    # not on a terminal: no bars
    proc = subprocess.run([sys.executable, "-m", "duckmine", "sql", "--db", str(db), query
                           .replace("'weather', 'play')", "'weather', 'play', folds := 2)")],
                          capture_output=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr == b""
