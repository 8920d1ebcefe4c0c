"""Property tests: FP-growth against a brute-force counter on small random
databases, for every target and for rules, through both SQL forms."""

from itertools import combinations

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ITEMS = "abcdefg"
transactions = st.lists(st.lists(st.sampled_from(ITEMS), max_size=6), max_size=25)
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def supports(tx):
    sets = [set(t) for t in tx]
    universe = sorted(set().union(*sets)) if sets else []
    out = {}
    for k in range(1, len(universe) + 1):
        for c in combinations(universe, k):
            n = sum(1 for t in sets if set(c) <= t)
            if n:
                out[frozenset(c)] = n
    return out


def brute_itemsets(tx, min_count, max_len, target):
    sup = {s: n for s, n in supports(tx).items() if n >= min_count}
    keep = {}
    for s, n in sup.items():
        if len(s) > max_len:
            continue
        supersets = [m for t, m in sup.items() if s < t]
        if target == "closed" and any(m == n for m in supersets):
            continue
        if target == "maximal" and supersets:
            continue
        keep[s] = n
    return keep


def brute_rules(tx, min_count, min_conf, max_len, max_cons):
    sup = supports(tx)
    n_tx = len(tx)
    rules = {}
    for whole, n in sup.items():
        if n < min_count or len(whole) > max_len or len(whole) < 2:
            continue
        for k in range(1, min(len(whole) - 1, max_cons) + 1):
            for cons in combinations(sorted(whole), k):
                cons = frozenset(cons)
                ant = whole - cons
                conf = n / sup[ant]
                if conf >= min_conf:
                    rules[(ant, cons)] = (n, conf, conf / (sup[cons] / n_tx))
    return rules


def as_table(tx):
    return pa.table({"items": pa.array(tx, pa.list_(pa.string()))})


def as_long_table(tx):
    """One row per (transaction, item), repeats kept; an empty transaction is one
    row with a NULL item."""
    pairs = [(t, i) for t, items in enumerate(tx) for i in (items or [None])]
    return pa.table({"tid": pa.array([t for t, _ in pairs], pa.int64()),
                     "item": pa.array([i for _, i in pairs], pa.string())})


@SETTINGS
@given(tx=transactions, min_count=st.integers(1, 5), max_len=st.integers(1, 7),
       target=st.sampled_from(["all", "closed", "maximal"]))
def test_itemsets_match_brute_force(con, tx, min_count, max_len, target):
    expect = brute_itemsets(tx, min_count, max_len, target)
    con.register("hyp", as_table(tx))
    rows = con.execute(f"SELECT * FROM fp_growth('hyp', {min_count}, max_length := "
                       f"{max_len}, target := '{target}')").fetchall()
    assert {frozenset(s): n for s, n, _ in rows} == expect
    assert all(s == sorted(s) for s, _, _ in rows)
    assert len(rows) == len(expect)
    assert all(abs(f - n / len(tx)) < 1e-12 for _, n, f in rows)
    con.register("hyp_long", as_long_table(tx))
    long_rows = con.execute(f"SELECT * FROM fp_growth('hyp_long', {min_count}, max_length "
                            f":= {max_len}, target := '{target}')").fetchall()
    assert long_rows == rows
    agg = con.execute(f"SELECT fp_growth_agg(items, {min_count}, max_length := "
                      f"{max_len}, target := '{target}') FROM hyp").fetchall()[0][0]
    assert {frozenset(r["itemset"]): r["support_count"] for r in agg} == expect


@SETTINGS
@given(tx=transactions, min_count=st.integers(1, 4),
       min_conf=st.sampled_from([0.0, 0.3, 0.5, 0.8, 1.0]),
       max_len=st.integers(2, 7), max_cons=st.integers(1, 6))
def test_rules_match_brute_force(con, tx, min_count, min_conf, max_len, max_cons):
    expect = brute_rules(tx, min_count, min_conf, max_len, max_cons)
    con.register("hyp", as_table(tx))
    rows = con.execute(
        f"SELECT antecedent, consequent, support_count, confidence, lift FROM "
        f"association_rules('hyp', {min_count}, min_confidence := {min_conf}, "
        f"max_length := {max_len}, max_consequent := {max_cons})").fetchall()
    got = {(frozenset(a), frozenset(c)): (n, conf, lift) for a, c, n, conf, lift in rows}
    assert len(got) == len(rows)
    assert got.keys() == expect.keys()
    for key, (n, conf, lift) in got.items():
        en, econf, elift = expect[key]
        assert n == en and abs(conf - econf) < 1e-12 and abs(lift - elift) < 1e-9

