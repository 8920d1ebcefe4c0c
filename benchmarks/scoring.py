"""Scoring rows against many models: one k-means model per group (``GROUP BY``),
then every row scored by its own group's model through a JOIN, so that each chunk
of rows meets thousands of models.

    python -m duckmine.benchmarks.scoring [--groups 2000,20000] [--rows-per-group 20]

Prints, per size, the seconds of the per-group fit and of the scoring query three
times: in the session that fitted the models (it caches them), after the cache is
emptied (every body read, parsed and checked, as in a new session), and again with
them cached; and the rows scored a second the first time. The target is 400,000
rows against 20,000 models in under 10 s.
"""

import argparse
import time

import duckmine
from duckmine.udfs import models


def run(groups, per_group):
    con = duckmine.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(f"""CREATE TABLE t AS SELECT (i % {groups})::INTEGER AS grp,
        random() AS a, random() AS b, random() AS c FROM range({groups * per_group}) r(i)""")
    start = time.perf_counter()
    con.execute("CREATE TABLE models AS SELECT grp, kmeans_fit(x, 3) AS model "
                "FROM (SELECT a, b, c, grp FROM t) x GROUP BY grp")
    fit = time.perf_counter() - start
    scores = []
    for forget in (False, True, False):
        if forget:
            models.forget()
        start = time.perf_counter()
        con.execute("SELECT count(DISTINCT p) FROM (SELECT predict(m.model, x) AS p FROM "
                    "(SELECT grp, a, b, c FROM t) x JOIN models m USING (grp))").fetchall()
        scores.append(time.perf_counter() - start)
    con.close()
    return fit, scores


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", default="2000,20000")
    parser.add_argument("--rows-per-group", type=int, default=20)
    args = parser.parse_args(argv)
    run(20, 10)  # compile the kernels first
    print(f"{'models':>8} {'rows':>10} {'fit s':>8} {'score s':>8} {'read s':>8} "
          f"{'again s':>8} {'rows/s':>10}")
    for groups in map(int, args.groups.split(",")):
        rows = groups * args.rows_per_group
        fit, (score, read, again) = run(groups, args.rows_per_group)
        print(f"{groups:>8,} {rows:>10,} {fit:>8.1f} {score:>8.1f} {read:>8.1f} "
              f"{again:>8.1f} {rows / score:>10,.0f}", flush=True)


if __name__ == "__main__":
    main()
