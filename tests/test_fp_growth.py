"""FP-growth and association rules: the book's example, parity with pyfim and
Weka's FPGrowth, every input layout, and the aggregate form."""

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckmine.algorithms.baskets import quest_baskets
from duckmine.algorithms.fpgrowth import build_tree, fp_growth, mine_tree, path_sizes, prefix_paths
from duckmine.algorithms.itemsets import expand

GOLDEN = Path(__file__).parent / "golden"


def itemsets(con, sql):
    return sorted([sorted(s), n] for s, n, _ in con.execute(sql).fetchall())


def test_weather_book_example(con):
    # Section 6.3: minimum support 6 gives six single items and two pairs
    rows = con.execute("SELECT * FROM fp_growth('weather', 6)").fetchall()
    assert rows == [
        (["play=yes"], 9, 9 / 14),
        (["windy=FALSE"], 8, 8 / 14),
        (["humidity=high"], 7, 0.5),
        (["humidity=normal"], 7, 0.5),
        (["temperature=mild"], 6, 6 / 14),
        (["windy=TRUE"], 6, 6 / 14),
        (["humidity=normal", "play=yes"], 6, 6 / 14),
        (["play=yes", "windy=FALSE"], 6, 6 / 14),
    ]


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_parity_with_pyfim(con, path):
    data, target, count = path.stem.rsplit("_", 2)
    table = {"supermarket": "supermarket", "contact-lenses": "contact_lenses"}[data]
    got = itemsets(con, f"SELECT * FROM fp_growth('{table}', {count}, "
                        f"target := '{target}')")
    assert got == json.loads(path.read_text())


def test_fraction_support_matches_count(con):
    # 0.2 of 4627 transactions is 925.4: the threshold is 926
    by_fraction = itemsets(con, "SELECT * FROM fp_growth('supermarket', 0.2)")
    assert by_fraction == json.loads((GOLDEN / "supermarket_all_926.json").read_text())
    n, = con.execute("SELECT min(support_count) FROM fp_growth('supermarket', 0.2)"
                     ).fetchall()[0]
    assert n >= 926


def test_max_length(con):
    golden = json.loads((GOLDEN / "supermarket_all_926.json").read_text())
    got = itemsets(con, "SELECT * FROM fp_growth('supermarket', 926, max_length := 2)")
    assert got == [r for r in golden if len(r[0]) <= 2]


WEKA_RULE = re.compile(r"^\s*\d+\. \[(.*)\]: (\d+) ==> \[(.*)\]: (\d+)\s+<conf:\((\S+)\)> "
                       r"lift:\((\S+)\) lev:\((\S+)\) conv:\((\S+)\)")


@pytest.mark.parametrize("count", [926, 694])
def test_rules_parity_with_weka(con, count):
    """Weka's FPGrowth with -P 1 sees 't' and total=low as items: drop total=high."""
    weka = {}
    for line in (GOLDEN / f"weka_fpgrowth_{count}.txt").read_text().splitlines():
        m = WEKA_RULE.match(line)
        if m:
            ant, prem, con_, tot, *metrics = m.groups()
            key = (frozenset(ant.split(", ")), frozenset(con_.split(", ")))
            weka[key] = (int(prem), int(tot), *map(float, metrics))
    assert len(weka) > 100
    query = ("(SELECT * REPLACE (CASE WHEN total = 'low' THEN total END AS total) "
             "FROM supermarket)")
    rows = con.execute(
        f"SELECT antecedent, consequent, support_count, confidence, lift, leverage, "
        f"conviction FROM association_rules($q, {count}, min_confidence := 0.8)",
        {"q": query}).fetchall()
    ours = {}
    for ant, cons, tot, conf, lift, lev, conv in rows:
        key = (frozenset(ant), frozenset(cons))
        ours[key] = (round(tot / conf), tot, conf, lift, lev, conv)
    assert set(ours) == set(weka)
    for key, (prem, tot, *metrics) in ours.items():
        w = weka[key]
        assert (prem, tot) == w[:2], key
        for mine, printed in zip(metrics, w[2:], strict=True):
            assert abs(mine - printed) <= 0.005 + 1e-9, (key, metrics, w)


def test_rule_measures_by_definition(con):
    rows = con.execute("SELECT * FROM association_rules('weather', 3, "
                       "min_confidence := 0.0) WHERE antecedent = ['outlook=overcast'] "
                       "AND consequent = ['play=yes']").fetchall()
    (_, _, count, support, conf, lift, lev, conv), = rows
    n, prem, cons = 14, 4, 9
    assert (count, support, conf) == (4, 4 / 14, 1.0)
    assert lift == pytest.approx(conf / (cons / n))
    assert lev == pytest.approx(4 / n - (prem / n) * (cons / n))
    assert conv == pytest.approx(prem * (n - cons) / n / (prem - count + 1))


def test_consequents_of_several_items_and_bound(con):
    many = con.execute("SELECT max(len(consequent)) FROM association_rules("
                       "'contact_lenses', 3, min_confidence := 0.9)").fetchall()[0][0]
    assert many >= 2
    one = con.execute("SELECT max(len(consequent)) FROM association_rules("
                      "'contact_lenses', 3, min_confidence := 0.9, "
                      "max_consequent := 1)").fetchall()[0][0]
    assert one == 1


def test_layouts_agree(fresh):
    fresh.execute("CREATE TABLE long_t AS SELECT * FROM (VALUES (1, 'a'), (1, 'b'), "
                  "(2, 'a'), (2, 'c'), (3, 'a'), (3, 'b'), (3, NULL), (4, NULL), "
                  "(1, 'a')) t(tid, item)")
    fresh.execute("CREATE TABLE list_t AS SELECT [x for x in list(item) if x IS NOT "
                  "NULL] AS items FROM long_t GROUP BY tid")
    fresh.execute("CREATE TABLE wide_t AS SELECT a, b, c FROM (VALUES "
                  "(true, true, false), (true, false, true), (true, true, NULL), "
                  "(false, false, false)) t(a, b, c)")
    expect = [(["a"], 3, 0.75), (["b"], 2, 0.5), (["a", "b"], 2, 0.5)]
    for table in ("long_t", "list_t", "wide_t"):
        assert fresh.execute(f"SELECT * FROM fp_growth('{table}', 2)").fetchall() == \
            expect, table
    assert fresh.execute("SELECT * FROM fp_growth('(SELECT items FROM list_t)', 0.5)"
                         ).fetchall() == expect
    fresh.execute("CREATE VIEW v AS SELECT * FROM long_t")
    fresh.execute("CREATE TEMP TABLE tmp AS SELECT * FROM long_t")
    fresh.execute("CREATE TABLE selections AS SELECT * FROM long_t")
    for name in ("v", "tmp", "selections"):
        assert fresh.execute(f"SELECT * FROM fp_growth('{name}', 2)").fetchall() == expect


def test_registered_pandas_and_arrow(fresh):
    import pandas as pd
    frame = pd.DataFrame({"basket_id": ["x", "x", "y", "y", "z"],
                          "product": ["tea", "milk", "tea", "milk", "tea"]})
    fresh.register("frame", frame)
    fresh.register("arrow_t", pa.Table.from_pandas(frame))
    expect = [(["tea"], 3, 1.0), (["milk"], 2, 2 / 3), (["milk", "tea"], 2, 2 / 3)]
    for name in ("frame", "arrow_t"):
        assert fresh.execute(f"SELECT * FROM fp_growth('{name}', 2)").fetchall() == expect


def test_explicit_layout(fresh):
    fresh.execute("CREATE TABLE pairs AS SELECT * FROM (VALUES ('x', 'y'), ('x', 'y'), "
                  "('x', 'z')) t(colour, size)")
    wide = fresh.execute("SELECT * FROM fp_growth('pairs', 2)").fetchall()
    assert wide == [(["colour=x"], 3, 1.0), (["size=y"], 2, 2 / 3),
                    (["colour=x", "size=y"], 2, 2 / 3)]
    long = fresh.execute("SELECT * FROM fp_growth('pairs', 1, layout := 'long')"
                         ).fetchall()
    assert long == [(["y"], 1, 1.0), (["z"], 1, 1.0), (["y", "z"], 1, 1.0)]


def test_aggregate_form_mines_each_group(con):
    grouped = con.execute("""
        SELECT outlook, s.itemset, s.support_count FROM (
          SELECT outlook, unnest(fp_growth_agg(items, 2, target := 'maximal')) AS s
          FROM (SELECT outlook, ['temperature=' || temperature, 'play=' || play] AS items
                FROM weather) GROUP BY outlook)""").fetchall()
    for outlook in ("sunny", "overcast", "rainy"):
        alone = con.execute(f"""SELECT * FROM fp_growth(
            '(SELECT temperature, play FROM weather WHERE outlook = ''{outlook}'')', 2,
            target := 'maximal')""").fetchall()
        assert sorted((s, n) for o, s, n in grouped if o == outlook) == \
            sorted((s, n) for s, n, _ in alone)
    rules = con.execute("""SELECT len(association_rules_agg(items, 2, min_confidence := 0.5))
        FROM (SELECT ['temperature=' || temperature, 'play=' || play] AS items
              FROM weather)""").fetchall()[0][0]
    whole = con.execute("SELECT count(*) FROM association_rules('(SELECT temperature, "
                        "play FROM weather)', 2, min_confidence := 0.5)").fetchall()[0][0]
    assert rules == whole > 0


def test_empty_table_and_null_items(fresh):
    fresh.execute("CREATE TABLE e (tid INTEGER, item VARCHAR)")
    assert fresh.execute("SELECT * FROM fp_growth('e', 0.1)").fetchall() == []
    assert fresh.execute("SELECT * FROM association_rules('e', 1)").fetchall() == []
    fresh.execute("CREATE TABLE nulls AS SELECT * FROM (VALUES (1, NULL), (2, NULL)) "
                  "t(tid, item)")
    assert fresh.execute("SELECT * FROM fp_growth('nulls', 1)").fetchall() == []
    fresh.execute("CREATE TABLE l (items VARCHAR[])")
    fresh.execute("INSERT INTO l VALUES (['a', NULL]), (NULL), (['a'])")
    assert fresh.execute("SELECT * FROM fp_growth('l', 2)").fetchall() == \
        [(["a"], 2, 2 / 3)]


def test_long_layout_counts_repeated_items_once(fresh):
    fresh.execute("CREATE TABLE r AS SELECT * FROM (VALUES (1, 'a'), (1, 'a'), (2, 'b')) "
                  "t(tid, item)")
    assert fresh.execute("SELECT * FROM fp_growth('r', 1)").fetchall() == \
        [(["a"], 1, 0.5), (["b"], 1, 0.5)]


def test_column_names_do_not_clash(fresh):
    fresh.execute("CREATE TABLE odd AS SELECT * FROM (VALUES (1, 'a'), (1, 'b'), (2, 'a')) "
                  "t(s, _dm_s)")
    assert fresh.execute("SELECT * FROM fp_growth('odd', 2, layout := 'long')").fetchall() \
        == [(["a"], 2, 1.0)]
    fresh.execute("CREATE TABLE odd_wide AS SELECT * FROM (VALUES ('x', 'y'), ('x', 'z')) "
                  "t(s, v)")
    assert fresh.execute("SELECT * FROM fp_growth('odd_wide', 2)").fetchall() == \
        [(["s=x"], 2, 1.0)]


def test_threaded_mining_matches_one_thread():
    """Large inputs build the first tree in parts and mine on two threads."""
    offsets, codes = quest_baskets(30_000, n_items=200, seed=3)
    assert len(codes) >= 200_000  # large enough for the threaded path
    rank = np.arange(200, dtype=np.int32)
    results = []
    for threads in (1, 2):
        parent, item, count, status = fp_growth(offsets, codes, rank, 200, 150, 99, 10**7,
                                                threads=threads)
        o, flat = expand(parent, item, np.arange(len(parent)), np.arange(200))
        results.append(sorted((tuple(flat[o[q]:o[q + 1]]), int(count[q]))
                              for q in range(len(parent))))
        assert status == 0
    assert len(results[0]) > 1000
    assert results[0] == results[1]


# item codes far apart, so that a sort key holds only three items of a path (the
# tree's sort then orders runs of equal keys by their next items), and few of them,
# so that paths share long prefixes
WIDE_ITEMS = 1 << 20
CODES = [0, 1, 7, 4_000, 65_536, 500_000, WIDE_ITEMS - 1]
long_paths = st.lists(st.lists(st.sampled_from(CODES), max_size=10), max_size=40)


def tree_paths(up):
    """Each node's path of items from the root, read by walking up its parents."""
    parent, item = (up >> 32) - 1, up & 0xFFFFFFFF
    out = []
    for c in range(len(up)):
        path, p = [], c
        while p >= 0:
            path.append(int(item[p]))
            p = parent[p]
        out.append(tuple(reversed(path)))
    return out


@settings(max_examples=60, deadline=None)
@given(long_paths, st.sampled_from([1, 2]))
def test_first_tree_is_the_prefix_tree_of_the_transactions(tx, threads):
    """The first tree holds one node per distinct prefix of the transactions' sorted
    items, counting the transactions that begin with it, in depth-first order; the
    prefix paths of an item's nodes are their paths to the root."""
    from concurrent.futures import ThreadPoolExecutor

    offsets = np.cumsum([0] + [len(t) for t in tx]).astype(np.int64)
    codes = np.array([c for t in tx for c in t], np.int32)
    rank = np.arange(WIDE_ITEMS, dtype=np.int32)
    with ThreadPoolExecutor(threads) as pool:
        up, count, item_count, bounds = build_tree(offsets, codes, rank, WIDE_ITEMS, pool,
                                                   threads)
        items = np.array(CODES[1:], np.int32)
        sizes = path_sizes(up, count, bounds, items, WIDE_ITEMS, pool.map)
        pitems, end, weight, at, begin, pos = prefix_paths(up, count, bounds, items,
                                                           WIDE_ITEMS, sizes, pool.map)
    prefixes = Counter(p for t in tx for s in [sorted(set(t))]
                       for p in (tuple(s[:k]) for k in range(1, len(s) + 1)))
    paths = tree_paths(up)
    assert dict(zip(paths, count.tolist())) == prefixes and len(paths) == len(prefixes)
    assert bounds[0] == 0 and bounds[-1] == len(up)
    parent = (up >> 32) - 1
    assert all(parent[c] < c for c in range(len(up)))  # parents first
    for c in range(1, len(up)):  # depth first: a node follows its parent's subtree
        assert paths[c][:-1] == paths[c - 1][:len(paths[c]) - 1]
    for code in CODES:
        assert item_count[code] == sum(code in t for t in map(set, tx))
    for q, code in enumerate(items):
        assert pos[code] == q
        got = Counter()
        starts = np.concatenate(([begin[q]], end[at[q]:at[q + 1] - 1]))
        for j, s in zip(range(at[q], at[q + 1]), starts):
            got[tuple(pitems[s:end[j]][::-1])] += int(weight[j])
        want = Counter()
        for path, n in zip(paths, count.tolist()):
            if path[-1] == code and len(path) > 1:
                want[path[:-1]] += n
        assert got == want


@pytest.mark.parametrize("threads", [1, 2])
def test_prefix_paths_copied_in_rounds_give_the_same_itemsets(threads):
    """Prefix paths larger than their budget are copied and mined a round of items
    at a time; any budget gives the same itemsets."""
    from concurrent.futures import ThreadPoolExecutor

    from duckmine.algorithms import stop

    offsets, codes = quest_baskets(3_000, n_items=60, seed=5)
    rank = np.arange(60, dtype=np.int32)
    found = []
    with ThreadPoolExecutor(threads) as pool:
        tree = build_tree(offsets, codes, rank, 60, pool, threads)
        items = np.flatnonzero(tree[2] >= 30).astype(np.int32)
        for budget in (None, 1, 4_000):
            parent, item, count, status = mine_tree(*tree, items, 60, 30, 99, 10**7,
                                                    stop.flag(), pool, 2 * threads,
                                                    budget)
            assert status == 0
            o, flat = expand(parent, item, np.arange(len(parent)), np.arange(60))
            found.append(sorted((tuple(flat[o[q]:o[q + 1]]), int(count[q]))
                                for q in range(len(parent))))
    assert len(found[0]) > 500
    assert found[1] == found[0] and found[2] == found[0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), max_size=9), max_size=40), st.integers(1, 7),
       st.randoms(use_true_random=False))
def test_group_dependent_transactions_are_each_groups_prefixes(tx, groups, rnd):
    """Each transaction (its items' ranks, sorted and distinct) gives a group every
    group it holds an item of (each rank's group drawn at random) its prefix up to
    that group's last item; the shards come a group after another, in transaction
    order, and each group's row of the batch Spark shuffles holds just those, as
    lengths and ranks. Checked against the definition, one transaction at a time."""
    from duckmine.algorithms.pfp import shards
    from duckmine.spark.pfp import SHARD_DTYPE, _packed

    tx = [sorted(set(t)) for t in tx]
    offsets = np.cumsum([0] + [len(t) for t in tx]).astype(np.int64)
    ranks = np.array([r for t in tx for r in t], np.int32)
    group_of = np.array([rnd.randrange(groups) for _ in range(31)], np.int64)
    want = {}
    for t in tx:
        for g in range(groups):
            held = [i for i, r in enumerate(t) if group_of[r] == g]
            if held:
                want.setdefault(g, []).append(t[:held[-1] + 1])
    count, size, lengths, flat = shards(offsets, ranks, group_of, groups)
    assert count.tolist() == [len(want.get(g, [])) for g in range(groups)]
    assert size.tolist() == [sum(map(len, want.get(g, []))) for g in range(groups)]
    batch = _packed(count, size, lengths, flat)
    got = {}
    for g, lens, rs in zip(*(batch.column(c).to_pylist() for c in ("g", "lengths", "ranks"))):
        lens, rs = np.frombuffer(lens, SHARD_DTYPE), np.frombuffer(rs, SHARD_DTYPE).tolist()
        ends = np.cumsum(lens).tolist()
        got[g] = [rs[e - n:e] for n, e in zip(lens.tolist(), ends)]
    assert got == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 1000), min_size=1, max_size=7), st.integers(1, 4))
def test_groups_are_runs_of_ranks_with_the_least_largest_expected_shard(counts, groups):
    """``groups_of`` cuts the ranks into at most ``groups`` runs of consecutive
    ranks, and no other cut has a smaller largest shard, by the expected size the
    docstring gives (items independent): checked against every cut."""
    from itertools import combinations

    from duckmine.algorithms.pfp import groups_of

    counts = sorted(counts, reverse=True)
    n = 1000
    p = np.array(counts) / n

    def size(a, b):  # the expected shard of ranks a..b-1, one transaction
        held = 1 - np.prod(1 - p[a:b])
        return held * p[:a].sum() + p[a:b].sum()

    def largest(starts):
        ends = list(starts[1:]) + [len(p)]
        return max(size(a, b) for a, b in zip(starts, ends))

    got = groups_of(counts, n, groups)
    assert got[0] == 0 and got.max() < groups
    assert set(np.diff(got).tolist()) <= {0, 1}
    starts = [0] + [r for r in range(1, len(p)) if got[r] != got[r - 1]]
    best = min(largest([0, *cut]) for m in range(min(groups, len(p)))
               for cut in combinations(range(1, len(p)), m))
    assert largest(starts) <= best * (1 + 1e-9)


def test_consecutive_groups_shard_quest_baskets_evenly():
    """On baskets with patterns (items not independent), four groups' shards are
    within a tenth of each other, and smaller in all than round-robin's."""
    from duckmine.algorithms.pfp import groups_of, ranked, shards

    offsets, codes = quest_baskets(20_000, n_items=200, seed=3)
    support = np.bincount(codes, minlength=200)
    order = np.argsort(-support, kind="stable")
    rank = np.empty(200, np.int32)
    rank[order] = np.arange(200)
    offsets, ranks = ranked(offsets.astype(np.int64), rank[codes])
    group_of = groups_of(support[order], len(offsets) - 1, 4)
    size = shards(offsets, ranks, group_of, 4)[1]
    assert size.max() < 1.1 * size.min()
    assert size.sum() < shards(offsets, ranks, np.arange(200) % 4, 4)[1].sum()


def test_shards_of_many_batches_are_joined_in_order():
    """A group's rows of shards, from many batches in chunks of any offset (a slice
    of a larger array), read as the one array of their numbers in order."""
    from duckmine.spark.pfp import SHARD_DTYPE, _joined

    rng = np.random.default_rng(5)
    values = [rng.integers(-5, 1000, rng.integers(0, 6)).astype(SHARD_DTYPE)
              for _ in range(30)]
    binary = pa.array([v.tobytes() for v in values], pa.binary())
    chunks = [binary.slice(0, 7), binary.slice(7, 0), binary.slice(7, 13), binary.slice(20)]
    got = _joined(pa.chunked_array(chunks, pa.binary()))
    assert got.tolist() == np.concatenate(values).tolist()
    assert _joined(pa.chunked_array([], pa.binary())).tolist() == []
