"""Registration on any connection, and the command line."""

import re
import subprocess
import sys

import duckdb
import pytest

import duckmine
from duckmine.extension import cli

QUERY = "SELECT count(*) FROM fp_growth('(SELECT [''a'', ''b''] AS items)', 1)"


def test_load_twice_and_several_connections():
    a = duckdb.connect()
    b = duckdb.connect()
    duckmine.load(a)
    duckmine.load(a)
    duckmine.load(b)
    assert a.execute(QUERY).fetchall() == b.execute(QUERY).fetchall() == [(3,)]
    a.close()
    assert b.execute(QUERY).fetchall() == [(3,)]
    b.close()


def test_file_database_keeps_no_macros(tmp_path):
    path = str(tmp_path / "x.duckdb")
    con = duckmine.connect(path)
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    assert con.execute(QUERY).fetchall() == [(3,)]
    con.close()
    plain = duckdb.connect(path)
    assert plain.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = "
                         "'fp_growth'").fetchall() == [(0,)]
    plain.close()
    again = duckmine.connect(path)
    assert again.execute("SELECT * FROM t").fetchall() == [(1,)]
    assert again.execute(QUERY).fetchall() == [(3,)]
    again.close()


def test_demo_and_sql_commands(tmp_path, capsys):
    db = str(tmp_path / "demo.duckdb")
    assert cli.main(["demo", "--db", db]) == 0
    out = capsys.readouterr().out
    # every entry ran and printed its result, not only its SQL
    assert len(re.findall(r"^\(\d+\.\d\d s\)$", out, re.M)) == len(cli.DEMO)
    assert re.search(r"│ \['outlook=overcast'\] +│ \['play=yes'\] +│ +4 │ +1\.0 │", out)
    # J48's ten-fold figures on labor: 42 correct, 73.6842 %, kappa 0.4415
    assert re.search(r"│ +42\.0 │ +73\.6842 │ 0\.4415 │", out)
    # ZeroR, 1R and naive Bayes cross-validated on labor, as Weka gives them
    for learner, pct in (("zero_r", "64.9123"), ("one_r", "71.9298"),
                         ("naive_bayes", "89.4737")):
        assert re.search(rf"│ {learner} +│ +{pct} │", out), learner
    assert cli.main(["sql", "SELECT count(*) AS n FROM fp_growth('weather', 6)",
                     "--db", db]) == 0
    assert "8" in capsys.readouterr().out
    assert cli.main(["sql", "SELECT * FROM fp_growth('nope', 1)", "--db", db]) == 1
    assert "nope" in capsys.readouterr().err
    # model_text as real text, and the other formats
    assert cli.main(["sql", "SELECT model_text(c45_fit(w, 'play')) FROM weather w",
                     "--db", db, "--format", "raw"]) == 0
    assert capsys.readouterr().out.startswith("J48 pruned tree\n------------------\n")
    assert cli.main(["sql", "SELECT 1 AS a, 'x,y' AS b", "--db", db, "--format", "csv"]) == 0
    assert capsys.readouterr().out == 'a,b\n1,"x,y"\n'
    assert cli.main(["sql", "SELECT 1 AS a", "--db", db, "--format", "json"]) == 0
    assert capsys.readouterr().out == '{"a": 1}\n'
    assert cli.main(["sql", "SELECT * FROM range(300)", "--db", db, "--max-rows", "5"]) == 0
    assert "300 rows" in capsys.readouterr().out


def test_a_first_demo_compiles_in_the_background(monkeypatch, tmp_path):
    """Until the demo's kernels are all compiled, the demo starts a process that
    compiles them in the background, one such process at a time; it runs the
    queries from the last back, then those that failed for want of an earlier
    one's table in order, and leaves a mark when done."""
    from duckmine.algorithms import kernel_cache

    started = []
    monkeypatch.setattr("subprocess.Popen",
                        lambda args, **kw: started.append((args, kw)) or "p")
    monkeypatch.setattr(kernel_cache, "_kept", lambda: tmp_path)
    monkeypatch.setenv("DUCKMINE_COMPILE_AHEAD", "1")
    assert cli.start_compile_ahead() == "p"
    assert "compile_ahead()" in started[0][0][-1]
    assert started[0][1]["start_new_session"]  # it goes on after the demo
    with kernel_cache.holding(cli.COMPILING) as held:
        assert held
        assert cli.start_compile_ahead() is None  # another is compiling
    monkeypatch.setenv("DUCKMINE_COMPILE_AHEAD", "0")
    assert cli.start_compile_ahead() is None
    assert len(started) == 1
    # the helper's own work
    ran = []
    monkeypatch.setattr(cli, "run_quietly",
                        lambda queries: ran.append(queries) or [(q, "no table") for q in
                                                                queries if "t2" in q])
    monkeypatch.setattr(cli, "DEMO", [("", "SELECT 1 AS first"),
                                      ("", "CREATE TABLE t2 AS SELECT 2 AS x"),
                                      ("", "SELECT * FROM t2"), ("", "SELECT 3 AS last")])
    with kernel_cache.holding(cli.COMPILING):
        cli.compile_ahead()  # another is compiling: nothing to do
    assert ran == [] and not kernel_cache.marked(cli.COMPILED)
    cli.compile_ahead()
    assert ran == [["SELECT 3 AS last", "SELECT * FROM t2", "CREATE TABLE t2 AS SELECT 2 AS x",
                    "SELECT 1 AS first"],
                   ["CREATE TABLE t2 AS SELECT 2 AS x", "SELECT * FROM t2"]]
    assert kernel_cache.marked(cli.COMPILED)
    monkeypatch.setenv("DUCKMINE_COMPILE_AHEAD", "1")
    assert cli.start_compile_ahead() is None  # all compiled
    assert len(started) == 1


def test_compile_fits_and_scores_every_learner(monkeypatch, capsys):
    """``duckmine compile`` runs a fit of every declared learner, for every kind of
    model it makes, with every scoring its models answer; each query runs. The
    command runs the list from both ends, in a second process too, and reports."""
    from duckmine.algorithms import contract
    from duckmine.extension import warm
    from duckmine.extension.samples import create_sample_tables

    queries = warm.learner_queries()
    for decl in contract.learners().values():
        assert sum(f" {decl.name}_fit(" in q for q in queries) == len(decl.model_kinds)
    con = duckmine.connect()
    create_sample_tables(con)
    for q in queries:
        assert con.execute(q).fetchall(), q
    assert "predict_value(m, t)" in next(q for q in queries if " m5p_fit(" in q)
    assert "model_to_sql(m, 'duckdb')" in next(q for q in queries if " c45_fit(" in q)
    started, ran = [], []
    monkeypatch.setattr("subprocess.Popen", lambda args, **kw: started.append(args) or
                        type("P", (), {"wait": lambda self: 0})())
    monkeypatch.setattr(warm, "run", lambda reverse=False: ran.append(reverse) or [])
    assert cli.main(["compile"]) == 0
    assert ran == [False] and "run(reverse=True)" in started[0][-1]
    assert "kernels cached" in capsys.readouterr().out
    monkeypatch.setattr(warm, "run", lambda reverse=False: [("SELECT nope", "no such")])
    assert cli.main(["compile"]) == 1
    assert "SELECT nope" in capsys.readouterr().err


def test_compile_compiles_the_kernels_of_large_data_too():
    """EM's and k-means' kernels that run threads on large data only are compiled
    without them for small data (``jit.threads``); ``duckmine compile``'s fits on its
    large table compile them with threads as well. REPTree's, RIPPER's and Ridor's
    hold both paths in one signature, chosen by a bool."""
    import inspect

    import numba

    from duckmine.algorithms.clusters import em, kmeans
    from duckmine.algorithms.rules import ridor, ripper
    from duckmine.algorithms.trees import reptree
    from duckmine.extension import warm

    con = duckmine.connect()
    for fit in warm.LARGE_FITS:
        assert con.execute(f"SELECT {fit}.id FROM {warm.LARGE} x").fetchall(), fit
    for kernel, arg in ((reptree._grow, "threads"), (ripper._grow, "threads"),
                        (ridor._ruleset, "threads"), (kmeans.lloyd, "par"),
                        (em.iterate_kernel, "par")):
        at = list(inspect.signature(kernel.py_func).parameters).index(arg)
        assert numba.types.boolean in {sig[at] for sig in kernel.signatures}, kernel
        if kernel in (reptree._grow, ripper._grow, ridor._ruleset):
            assert numba.types.none not in {sig[at] for sig in kernel.signatures}, kernel


def test_sql_command_refuses_a_database_file_that_is_not_there(tmp_path, capsys):
    missing = str(tmp_path / "typo.duckdb")
    assert cli.main(["sql", "SELECT 1", "--db", missing]) == 1
    assert "--create" in capsys.readouterr().err
    assert not (tmp_path / "typo.duckdb").exists()
    assert cli.main(["sql", "SELECT 1", "--db", missing, "--create"]) == 0
    assert (tmp_path / "typo.duckdb").exists()


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"duckmine {duckmine.__version__}"


@pytest.mark.parametrize("sql,message", [
    ("SELECT * FROM c45('weather', 'play', confidnce := 0.1)",
     "c45: unknown option 'confidnce' (did you mean 'confidence'?); its options are "
     "confidence, min_leaf,"),
    ("SELECT c45_fit(w, 'play', min_leaf => 3, pruned := true, x := 1) FROM weather w",
     "c45_fit: unknown option 'x'"),
    ("SELECT * FROM cross_validate('c45', 'weather', 'play', opts := {})",
     "cross_validate: unknown option 'opts' (did you mean 'options'?)"),
    ("SELECT * FROM c45('weather')", "c45: missing argument target"),
    ("SELECT * FROM cross_validate('c45')", "cross_validate: missing arguments tbl, target"),
    ("SELECT * FROM c45('weather', 'play', 0.25, 2, true, true, false, true, true, NULL, 1)",
     "c45: takes at most 10 arguments (tbl, target, confidence,"),
])
def test_sql_command_names_the_argument_a_macro_refused(tmp_path, capsys, sql, message):
    """DuckDB's binder refuses such a call before duckmine runs, and does not say
    which argument is wrong; the command line does."""
    db = str(tmp_path / "w.duckdb")
    assert cli.main(["sql", "CREATE TABLE weather AS SELECT 'sunny' AS outlook, "
                     "'no' AS play", "--db", db, "--create"]) == 0
    assert cli.main(["sql", sql, "--db", db]) == 1
    assert message in capsys.readouterr().err


def test_other_binder_errors_are_left_as_they_are():
    from duckmine.extension.arguments import explain

    assert explain(duckdb.BinderException("Referenced column x not found"), "x") is None
    # a refused call the query does not hold (a macro calling another)
    err = duckdb.BinderException(
        "Binder Error: Macro c45() does not support the supplied arguments.\n"
        "Candidate macros:\n\tc45(tbl, target, confidence := 0.25)")
    assert explain(err, "SELECT 1") is None


def modules_imported(code, modules=("numba", "llvmlite")):
    """Which of ``modules`` (by default the compiler's) running ``code`` in a fresh
    process imports."""
    code += f"; print(sorted(m for m in {modules!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", "import sys, duckdb; " + code],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_loading_imports_no_compiler():
    """``load`` registers everything without importing numba: the compiler comes
    with the first fit (a stop flag, jobs and their threads need none of it)."""
    assert modules_imported("import duckmine; duckmine.load(duckdb.connect())") == "[]"


def test_loading_and_plain_sql_import_no_pandas():
    """pandas, where it is installed, takes a third of a second to import, and
    pyarrow imports it for any ``pa.array``: ``duckmine sql "SELECT 1"`` needs none."""
    assert modules_imported("from duckmine.extension import cli; cli.main(['sql', "
                              "'SELECT 1'])", ("pandas",)).endswith("[]")


def test_the_sample_baskets_are_the_generators_and_need_no_compiler():
    """The demo's ``baskets`` are read from the file the generator wrote
    (``python -m duckmine.extension.samples``), row for row, in the same types;
    making the sample tables compiles nothing."""
    from duckmine.extension.samples import create_sample_tables, sample_baskets

    assert modules_imported("from duckmine.extension.samples import "
                              "create_sample_tables; create_sample_tables(duckdb.connect())"
                              ) == "[]"
    con = duckmine.connect()
    create_sample_tables(con)
    con.register("drawn", sample_baskets())
    shipped = con.sql("SELECT * FROM baskets").fetchall()
    assert shipped == con.sql("SELECT * FROM drawn ORDER BY tid, item").fetchall()
    assert len(shipped) == 10_223
    assert con.sql("SELECT typeof(tid), typeof(item) FROM baskets LIMIT 1").fetchall() == \
        [("BIGINT", "VARCHAR")]
