"""Ten Bayesian-network searches counted from one AD-tree, side by side with the same
ten fits counting from the rows, in one process.

    python -m duckmine.benchmarks.bayes_searches [--rows 1000000] [--depth 4]

The data are ``benchmarks/bayes_net.py``'s (20 nominal attributes drawn from a
random network, the class ``a20``; made and cached on first use). The ten searches:
K2 with 3 parents under the bayes, bdeu, mdl and aic scores; TAN under bayes, mdl
and loglik; hill climbing with 2 parents under bayes, mdl and aic. Timed, after a
warm-up of each on 2,000 rows:

- the tree, once: ``CREATE TABLE tr AS SELECT ad_tree_fit(t, max_depth := 4) AS tree
  FROM points t``;
- ``tree, aggregate``: ``SELECT bayes_net_fit(t, 'a20', <search>, ad_tree := (SELECT
  tree FROM tr)) FROM points t``, each search;
- ``tree, table form``: ``SELECT count(*) FROM bayes_net('points', 'a20', <search>,
  ad_tree := (SELECT tree FROM tr))``;
- ``scans``: ``bayes_net_fit(t, 'a20', <search>, use_ad_tree := false)``, the rows
  counted by scans;
- ``own tree``: ``bayes_net_fit(t, 'a20', <search>)``, each fit building its own
  AD-tree (the default).

The fits from the given tree must give the model values of the "own tree" fits,
and the same networks as the scans. Printed: each way's total over the ten
searches, its ratio to the scans, and the process's peak memory. Target: ten
searches on one tree at least 10x faster than ten scan-based fits at 1,000,000 rows.
"""

import argparse
import time

from .bayes_net import CLASS, connect
from .c45 import peak_mb

SEARCHES = (
    [f"search := 'k2', max_parents := 3, score := '{s}'" for s in
     ("bayes", "bdeu", "mdl", "aic")]
    + [f"search := 'tan', score := '{s}'" for s in ("bayes", "mdl", "loglik")]
    + [f"search := 'hill_climb', max_parents := 2, score := '{s}'" for s in
       ("bayes", "mdl", "aic")])
TREE = "(SELECT tree FROM tr)"
WAYS = {
    "tree, aggregate": "SELECT bayes_net_fit(t, '{cls}', {s}, ad_tree := {tree}) "
                       "FROM {src} t",
    "tree, table form": "SELECT count(*) FROM bayes_net('{src}', '{cls}', {s}, "
                        "ad_tree := {tree})",
    "scans": "SELECT bayes_net_fit(t, '{cls}', {s}, use_ad_tree := false) FROM {src} t",
    "own tree": "SELECT bayes_net_fit(t, '{cls}', {s}) FROM {src} t",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--depth", type=int, default=4)
    args = parser.parse_args()
    con = connect(args.rows)
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE TEMP TABLE warm AS SELECT * FROM points LIMIT 2000")
    tree_sql = "SELECT ad_tree_fit(t, max_depth := {d}) AS tree FROM {src} t"
    con.execute(f"CREATE TEMP TABLE tr AS {tree_sql.format(d=args.depth, src='warm')}")
    for way in WAYS.values():  # warm: the kernels loaded from the disk cache
        for s in SEARCHES:
            con.execute(way.format(cls=CLASS, s=s, tree=TREE, src="warm")).fetchall()
    start = time.perf_counter()
    con.execute(f"CREATE OR REPLACE TEMP TABLE tr AS "
                f"{tree_sql.format(d=args.depth, src='points')}")
    built = time.perf_counter() - start
    print(f"{args.rows:,} rows, 20 nominal attributes; the AD-tree (max_depth := "
          f"{args.depth}) built once in {built:.2f} s: "
          f"{con.sql('SELECT model_text(tree) FROM tr').fetchall()[0][0].splitlines()[-1]}")
    totals, models = {}, {}
    for name, way in WAYS.items():
        total = 0.0
        for s in SEARCHES:
            start = time.perf_counter()
            got = con.execute(way.format(cls=CLASS, s=s, tree=TREE, src="points")).fetchall()
            total += time.perf_counter() - start
            models.setdefault(name, []).append(got[0][0])
        totals[name] = total
    same = models["tree, aggregate"] == models["own tree"]
    texts = [[t.replace("not using ADTree", "Using ADTree") for (t,) in con.execute(
        "SELECT model_text(m) FROM (SELECT unnest(?) AS m)", [ms]).fetchall()]
        for ms in (models["tree, aggregate"], models["scans"])]
    print(f"{'ten searches':<20}{'seconds':>9}{'a search':>10}{'vs scans':>10}")
    for name, total in totals.items():
        print(f"{name:<20}{total:>9.2f}{total / len(SEARCHES):>10.3f}"
              f"{totals['scans'] / total:>9.1f}x")
    print(f"models from the tree = the fits' own: {'yes' if same else 'NO'}; the same "
          f"networks as the scans: {'yes' if texts[0] == texts[1] else 'NO'}; "
          f"peak memory {peak_mb():,.0f} MB")


if __name__ == "__main__":
    main()
