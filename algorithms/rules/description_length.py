"""RIPPER's description-length bookkeeping, as the reference's RuleStats keeps it:
a rule set's statistics on its data (each rule counted on the rows the rules before
it leave), the bits of its theory and of its errors, the bits a rule adds, and the
deletion of rules that lengthen the description."""

import math
from functools import lru_cache

import numpy as np

from ..jit import njit

SMALL = 1e-6
LOG2 = math.log(2.0)
MAX_DL_SURPLUS = 64.0  # bits above the least description length seen


@njit(cache=True)
def _log2(x):
    """Java's Math.log(x) / Math.log(2): -inf at 0, NaN below."""
    if x > 0:
        return math.log(x) / LOG2
    return -math.inf if x == 0 else math.nan


@njit(cache=True)
def _subset_dl(t, k, p):
    """Bits to name ``k`` of ``t`` elements, each in with probability ``p``."""
    rt = -k * _log2(p) if p > SMALL else 0.0
    return rt - (t - k) * _log2(1 - p)


@njit(cache=True)
def data_dl(exp_fp, cover, uncover, fp, fn):
    """Bits to name the errors of a rule set covering ``cover`` weight."""
    total_bits = _log2(cover + uncover + 1.0)
    if cover - uncover > SMALL:
        exp_err = exp_fp * (fp + fn)
        cover_bits = _subset_dl(cover, fp, exp_err / cover)
        uncover_bits = _subset_dl(uncover, fn, fn / uncover) if uncover > SMALL else 0.0
    else:
        exp_err = (1.0 - exp_fp) * (fp + fn)
        cover_bits = _subset_dl(cover, fp, fp / cover) if cover > SMALL else 0.0
        uncover_bits = _subset_dl(uncover, fn, exp_err / uncover)
    return total_bits + cover_bits + uncover_bits


@lru_cache(maxsize=4096)
def _theory_dl(k, total_conditions):
    """Half the bits of a rule of ``k`` conditions, of ``total_conditions`` possible."""
    if k == 0:
        return 0.0
    k = float(k)
    tdl = _log2(k)
    if k > 1:
        tdl += 2.0 * _log2(tdl)
    tdl += _subset_dl(total_conditions, k, k / total_conditions)
    return 0.5 * tdl


@njit(cache=True)
def _potential(exp_fp, ruleset_stat, rule_stat, theory, check_err):
    """``RuleStats.potential`` of a rule of statistics ``rule_stat`` and theory bits
    ``theory``."""
    pcov = ruleset_stat[0] - rule_stat[0]
    puncov = ruleset_stat[1] + rule_stat[0]
    pfp = ruleset_stat[4] - rule_stat[4]
    pfn = ruleset_stat[5] + rule_stat[2]
    with_ = data_dl(exp_fp, ruleset_stat[0], ruleset_stat[1], ruleset_stat[4],
                    ruleset_stat[5])
    without = data_dl(exp_fp, pcov, puncov, pfp, pfn)
    potential = with_ + theory - without
    err = rule_stat[4] / rule_stat[0] if rule_stat[0] != 0 else math.nan
    over_err = check_err and err - 0.5 > -SMALL
    if potential - 0.0 > -SMALL or over_err:
        ruleset_stat[0], ruleset_stat[1] = pcov, puncov
        ruleset_stat[4], ruleset_stat[5] = pfp, pfn
        return potential
    return math.nan


@njit(cache=True)
def _saved(exp_fp, ruleset_stat, stats, theory, check_err):
    """The bits saved by deleting, in turn, each rule of statistics ``stats`` (rows)
    and theory bits ``theory`` where deleting helps; ``ruleset_stat`` updated."""
    total = 0.0
    for k in range(len(stats)):
        saved = _potential(exp_fp, ruleset_stat, stats[k], theory[k], check_err)
        if not np.isnan(saved):
            total += saved
    return total


class Left:
    """The rows each rule of a rule set leaves, of those the rules before it leave
    (in their order): each kept as one bit a row of the rows before it, and made
    whole when asked for. Lists of rows a rule (the reference keeps them) held the
    rule set's size times the rows: 2.2 KB a row for RIPPER on a million rows whose
    class two columns tell."""

    def __init__(self, data):
        self.data = data
        self.kept = []  # a rule's: its rows (an array), or its bits, or None (unknown)
        self.whole = {}  # rows made whole, by rule, the latest asked for last

    def __len__(self):
        return len(self.kept)

    def rows(self, i):
        """The rows rule ``i`` leaves (``data`` for ``i`` = -1)."""
        j = i  # the nearest rule at or before it whose rows are whole
        while j >= 0 and j not in self.whole and not isinstance(self.kept[j], np.ndarray):
            j -= 1
        rows = self.data if j < 0 else self.whole.get(j, self.kept[j])
        for k in range(j + 1, i + 1):
            bits, n = self.kept[k]
            rows = rows[np.unpackbits(bits, count=n).view(np.bool_)]
        if j != i:
            self._remember(i, rows)
        return rows

    def _remember(self, i, rows):
        """Keep rule ``i``'s rows whole, with those of the two rules asked for last."""
        self.whole.pop(i, None)
        self.whole[i] = rows
        while len(self.whole) > 3:
            del self.whole[next(iter(self.whole))]

    def add(self, uncovered):
        """The next rule leaves ``uncovered`` (a mask over the rows before it)."""
        self.kept.append((np.packbits(uncovered), len(uncovered)))
        self._remember(len(self.kept) - 1, self.rows(len(self.kept) - 2)[uncovered])

    def put(self, i, rows):
        """The last rule, ``i``, leaves ``rows`` (its rows, in an order of their own)."""
        self.kept[i] = rows
        self.whole.pop(i, None)
        for k in [k for k in self.whole if k > i]:
            del self.whole[k]

    def pop(self):
        self.kept.pop()
        self.whole.pop(len(self.kept), None)


class RuleStats:
    """A rule set and its statistics on a data set, each rule on the rows the rules
    before it leave: what the reference's description-length arithmetic needs."""

    def __init__(self, fit, data, rules=None):
        self.fit = fit
        self.data = data  # row ids, in order
        self.rules = [] if rules is None else rules
        self.stats, self.left, self.dists = [], Left(data), []

    def add(self, rule):
        """Append ``rule``, counted on the rows the last rule leaves."""
        self.rules.append(rule)
        stats, hit, dist = self.fit.stats(rule, self.left.rows(len(self.left) - 1))
        self.left.add(~hit)
        self.stats.append(stats)
        self.dists.append(dist)

    def remove_last(self):
        self.rules.pop()
        self.left.pop()
        self.stats.pop()
        if self.dists:
            self.dists.pop()

    def count(self):
        """Count every rule again from the data."""
        rules = list(self.rules)
        self.rules.clear()  # the same list, which a caller may hold
        self.stats, self.left, self.dists = [], Left(self.data), []
        for rule in rules:
            self.add(rule)

    def count_from(self, index, uncovered, previous, counted):
        """The statistics of rules ``index`` on, ``counted`` from ``uncovered`` (the
        rows the rules before leave), after the given ones of the rules before."""
        self.stats = list(previous) + counted
        self.left = Left(self.data)  # the rows each rule leaves: only those before
        self.left.kept = [None] * index
        if index > 0:
            self.left.put(index - 1, uncovered)

    def theory_dl(self, index):
        return _theory_dl(int(self.rules[index].shape[0]), float(self.fit.total_conditions))

    def potential(self, index, exp_fp, ruleset_stat, rule_stat, check_err):
        """The bits saved by deleting rule ``index``: ``ruleset_stat`` updated and
        the saving returned when deleting helps, else NaN."""
        return _potential(exp_fp, ruleset_stat, np.asarray(rule_stat, np.float64),
                          self.theory_dl(index), bool(check_err))

    def _saved(self, first, stats, exp_fp, ruleset_stat, check_err):
        """``potential`` of rules ``first`` on (statistics ``stats``), summed where
        deleting helps."""
        if not len(stats):
            return 0.0
        theory = np.array([self.theory_dl(k) for k in range(first, first + len(stats))])
        return _saved(exp_fp, ruleset_stat, np.array(stats, np.float64).reshape(-1, 6),
                      theory, bool(check_err))

    def _cumulative(self):
        out = np.zeros(6)
        for s in self.stats:
            out[0] += s[0]
            out[2] += s[2]
            out[4] += s[4]
        if self.stats:
            out[1], out[3], out[5] = self.stats[-1][[1, 3, 5]]
        return out

    def after_deleting(self, index):
        """The statistics of the rules after rule ``index``, counted as if it were
        not there (on the rows the rules before it leave)."""
        return self.fit.cascade(self.rules[index + 1:], self.left.rows(index - 1))

    def min_data_dl_if_deleted(self, index, exp_fp, check_err, after=None):
        ruleset_stat = np.zeros(6)
        for j in range(index):
            ruleset_stat[0] += self.stats[j][0]
            ruleset_stat[2] += self.stats[j][2]
            ruleset_stat[4] += self.stats[j][4]
        if after is None:
            after = self.after_deleting(index)
        for stats in after:
            ruleset_stat[0] += stats[0]
            ruleset_stat[2] += stats[2]
            ruleset_stat[4] += stats[4]
        if after:
            ruleset_stat[1], ruleset_stat[3], ruleset_stat[5] = after[-1][[1, 3, 5]]
        elif index > 0:
            ruleset_stat[1], ruleset_stat[3], ruleset_stat[5] = \
                self.stats[index - 1][[1, 3, 5]]
        else:  # no rule left: everything uncovered
            s = self.stats[0]
            ruleset_stat[1], ruleset_stat[3], ruleset_stat[5] = \
                s[0] + s[1], s[3] + s[4], s[2] + s[5]
        potential = self._saved(index + 1, after, exp_fp, ruleset_stat, check_err)
        return data_dl(exp_fp, ruleset_stat[0], ruleset_stat[1], ruleset_stat[4],
                        ruleset_stat[5]) - potential

    def min_data_dl_if_exists(self, index, exp_fp, check_err):
        ruleset_stat = self._cumulative()
        potential = self._saved(index + 1, self.stats[index + 1:], exp_fp, ruleset_stat,
                                check_err)
        return data_dl(exp_fp, ruleset_stat[0], ruleset_stat[1], ruleset_stat[4],
                        ruleset_stat[5]) - potential

    def relative_dl(self, index, exp_fp, check_err, after=None):
        """The bits rule ``index`` adds to the rule set's description (``after``:
        ``after_deleting(index)``, when known)."""
        return (self.min_data_dl_if_exists(index, exp_fp, check_err)
                + self.theory_dl(index)
                - self.min_data_dl_if_deleted(index, exp_fp, check_err, after))

    def reduce_dl(self, exp_fp, check_err):
        """Delete, from the last rule back, each rule whose deletion does not
        lengthen the description (or whose error is at least one half)."""
        ruleset_stat = self._cumulative()
        update = False
        for k in range(len(self.stats) - 1, -1, -1):
            saved = self.potential(k, exp_fp, ruleset_stat, self.stats[k], check_err)
            if not math.isnan(saved):
                if k == len(self.stats) - 1:
                    self.remove_last()
                else:
                    del self.rules[k]
                    update = True
        if update:
            self.count()


def check_stop(rst, min_dl, dl, check_err):
    if dl > min_dl + MAX_DL_SURPLUS:
        return True
    if not rst[2] > SMALL:  # no positive covered
        return True
    if rst[0] != 0 and rst[4] / rst[0] >= 0.5:
        return check_err
    return False
