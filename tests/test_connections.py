"""duckmine on many connections: ``load`` on a cursor, again on the same connection,
on a second connection to one database file and on a plain ``duckdb.connect``; and
four threads, each with its own cursor, fitting and scoring at once with the results
of a sequential run; and models stored just before the process is killed still score
once the file is opened again."""

import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb

import duckmine

DATA = Path(__file__).parent / "data"
JOBS = [("c45", "labor", "class"), ("ripper", "labor", "class"),
        ("cart", "weather.numeric", "play"), ("naive_bayes", "labor", "class"),
        ("rep_tree", "cpu", "class"), ("part", "weather.nominal", "play")]


def run(con, learner, data, target):
    """A fit, its printed model and its scores on every row."""
    table = data.replace(".", "_")
    model = f"(SELECT model FROM fit('{learner}', '{table}', '{target}'))"
    text = con.sql(f"SELECT model_text({model})").fetchall()[0][0]
    score = "predict_value" if learner == "rep_tree" else "predict"
    scores = con.sql(f"SELECT {score}(m.model, t) FROM {table} t, {model} m").fetchall()
    return text, scores


def test_load_works_on_cursors_and_connections_any_number_of_times(tmp_path):
    con = duckmine.connect()
    cur = con.cursor()
    duckmine.load(cur)
    duckmine.load(cur)
    duckmine.load(con)
    duckmine.read_arff(con, DATA / "weather.nominal.arff", "weather_nominal")
    assert run(cur, "part", "weather.nominal", "play") == \
        run(con, "part", "weather.nominal", "play")
    path = str(tmp_path / "shop.duckdb")
    first = duckmine.connect(path)
    second = duckmine.connect(path)  # a notebook cell run twice
    plain = duckdb.connect(path)
    duckmine.load(plain)
    duckmine.read_arff(first, DATA / "labor.arff", "labor")
    results = [run(c, "c45", "labor", "class") for c in (first, second, plain)]
    assert results[0] == results[1] == results[2]
    first.close()  # the others keep working
    assert run(second, "c45", "labor", "class") == results[0]
    for c in (second, plain, cur, con):
        c.close()


def test_four_threads_with_their_own_cursors_give_the_sequential_results():
    con = duckmine.connect()
    for name in {data for _, data, _ in JOBS}:
        duckmine.read_arff(con, DATA / f"{name}.arff", name.replace(".", "_"))
    sequential = [run(con, *job) for job in JOBS]

    def worker(job):
        cur = con.cursor()
        duckmine.load(cur)
        try:
            return run(cur, *job)
        finally:
            cur.close()

    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(worker, JOBS * 2))
    assert threaded == sequential * 2
    con.close()


def test_models_stored_just_before_a_kill_score_after_reopening(tmp_path):
    """The process is killed (SIGKILL) right after the CREATE TABLE commits."""
    path = tmp_path / "models.duckdb"
    script = f"""
import os, signal, duckmine
con = duckmine.connect({str(path)!r})
duckmine.read_arff(con, {str(DATA / 'labor.arff')!r}, 'labor')
con.execute("CREATE TABLE models AS SELECT 'labor' AS name, c45_fit(t, 'class') AS model "
            "FROM labor t")
os.kill(os.getpid(), signal.SIGKILL)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert done.returncode == -signal.SIGKILL
    con = duckmine.connect(str(path))
    got = con.sql("SELECT count(*) FILTER (WHERE predict(m.model, l) = l.class::VARCHAR), "
                  "count(*) FROM labor l, models m").fetchall()
    want = con.sql("SELECT count(*) FILTER (WHERE predict(m.model, l) = l.class::VARCHAR) "
                   "FROM labor l, (SELECT c45_fit(t, 'class') AS model FROM labor t) m"
                   ).fetchall()[0][0]
    assert got == [(want, 57)]
    con.close()
