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


class RuleStats:
    """A rule set and its statistics on a data set, each rule on the rows the rules
    before it leave: what the reference's description-length arithmetic needs."""

    def __init__(self, fit, data, rules=None):
        self.fit = fit
        self.data = data  # row ids, in order
        self.rules = [] if rules is None else rules
        self.stats, self.filtered, self.dists = [], [], []

    def _compute(self, rule, rows):
        stats, hit, dist = self.fit.stats(rule, rows)
        return stats, (rows[hit], rows[~hit]), dist

    def add(self, rule):
        """Append ``rule``, counted on the rows the last rule leaves."""
        self.rules.append(rule)
        rows = self.filtered[-1][1] if self.filtered else self.data
        stats, split, dist = self._compute(rule, rows)
        self.filtered.append(split)
        self.stats.append(stats)
        self.dists.append(dist)

    def remove_last(self):
        self.rules.pop()
        self.filtered.pop()
        self.stats.pop()
        if self.dists:
            self.dists.pop()

    def count(self):
        """Count every rule again from the data."""
        self.stats, self.filtered, self.dists = [], [], []
        rows = self.data
        for rule in self.rules:
            stats, split, dist = self._compute(rule, rows)
            self.stats.append(stats)
            self.filtered.append(split)
            self.dists.append(dist)
            rows = split[1]

    def count_from(self, index, uncovered, previous, counted):
        """The statistics of rules ``index`` on, ``counted`` from ``uncovered`` (the
        rows the rules before leave), after the given ones of the rules before."""
        self.stats = list(previous) + counted
        self.filtered = [None] * index  # the rows each rule leaves: only those before
        if index > 0:
            self.filtered[index - 1] = (None, uncovered)

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
        rows = self.data if index == 0 else self.filtered[index - 1][1]
        return self.fit.cascade(self.rules[index + 1:], rows)

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
