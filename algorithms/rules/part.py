"""PART (the book's section 6.2, "Obtaining rules from partial decision trees"),
built as the reference's PART builds it.

Rules are read off partial C4.5 trees, one at a time. A partial tree chooses its
splits as J48 does (``c45.grow.select_split``); a node expands its branches in
order of increasing entropy, and stops at the first one that does not end as a
leaf. When every expanded branch is a leaf, the node is pruned: replaced by a leaf
when the pessimistic error of the leaf is at most that of the branches plus 0.1
(``reduced_error_pruning``: when the held-out error is not larger; ``pruned :=
false``: never). The rule is the path to the leaf covering the most weight; the
rows it covers leave the data (a row missing a tested value, partly), and the
next rule is grown on the rest. A row is scored by the first rules that cover it,
each taking the share of the row the earlier ones left.
"""

import math

import numpy as np

from .. import pictures, progress
from ..c45 import grow as c45
from ..c45.grow import NOMINAL_SPLIT, NUMERIC_SPLIT
from ..c45.model import _label as c45_label
from ..classes import class_codes
from ..dataset import missing_in, rows_where, stacked
from ..evaluation import check_folds, stratify, test_cv, train_cv
from ..javafmt import double_to_string, java_double
from ..javautil import JavaRandom, randomize
from ..jit import PRANGE_ONLY, frozen, njit, prange
from ..models import Classifier, attributes_of, body, check_attribute, check_weights
from ..stop import checkpoint
from .presorted import unit_weights

SMALL = 1e-6
_NO_WEIGHTS = np.empty(0)  # select_split's weights by row where every row weighs 1


class Data:
    """A node's rows: positions into the learner's rows, weights, and per numeric
    attribute the rows with a known value sorted by it (J48's sorted scan), as
    ranges of arrays. A tree's root reads the learner's sorted entries; a branch
    gets its own from its parent's split (``source``: the ``Dealing`` and the
    branch's number) when it is first expanded, since most branches never are."""

    def __init__(self, learner, pos, w, srt=None, source=None, unit=None, chain=0):
        self.learner, self.pos, self.w, self.srt = learner, pos, w, srt
        self.source = source
        self.chain = chain  # see c45.grow.split_point
        self._rows = None
        self._unit = unit  # whether every row weighs 1, where the parent tells

    @property
    def unit(self):
        if self._unit is None:
            self._unit = unit_weights(self.w)
        return self._unit

    @property
    def rows(self):
        if self._rows is None:  # positions are rows when every row has a class
            self._rows = self.pos if self.learner.every_row else self.learner.idx[self.pos]
        return self._rows

    def sorted(self):
        if self.srt is None:
            if self.source is None:
                self.srt = self.learner.entries
            else:
                dealing, b = self.source
                self.srt = dealing.entries(b)
                self.source = None
        return self.srt


class Dealing:
    """A split's branches' sorted entries, made from the parent's when a branch
    first needs them. A branch gets a copy of its own (``Learner.branch_entries``)
    where the parent's entries serve again: the root's, which serve every tree, and
    a root branch's kept for the next tree (``Learner.root_branch``); and where a
    row missing the tested value goes down several branches. Any other parent owns
    its entries and needs them no more, so every branch is dealt at once, in place,
    each getting ranges of the parent's arrays (``c45.deal``)."""

    def __init__(self, learner, parent, sub, frac, split, rows, missing):
        self.learner, self.parent, self.sub, self.frac = learner, parent, sub, frac
        self.split, self.rows = split, rows  # and each branch's row count
        self.root = parent.srt is learner.entries
        self.copies = missing or self.root or (
            learner.kept is not None and parent.srt is learner.kept[1])
        self.ranges = None  # the parent's arrays, and each branch's starts and ends

    def entries(self, b):
        learner, parent = self.learner, self.parent
        if self.root:
            return learner.root_branch(parent.pos, self.sub, self.frac[b], b, self.split,
                                       self.rows[b])
        if self.copies:
            return learner.branch_entries(parent.pos, self.sub, self.frac[b], b,
                                          self.rows[b], parent.srt)
        if self.ranges is None:
            srt = parent.srt
            learner.branch_of[parent.pos] = self.sub
            first = int(np.argmax(self.rows))  # the largest, which keeps its place
            wide = len(parent.pos) * learner.n_numeric >= c45.WIDE_CELLS  # on two threads
            self.ranges = srt[:3], *(c45.deal_wide if wide else c45.deal)(
                *srt, learner.branch_of, len(self.rows), first,
                len(parent.pos) - self.rows[first])
            learner.branch_of[parent.pos] = -1
            self.parent = self.sub = None
        arrays, starts, ends = self.ranges
        return (*arrays, starts[b], ends[b])


class DecList:
    """One node of a partial tree."""

    def __init__(self):
        self.split = None  # (attribute, kind, threshold, value, branches, the
        # threshold's midpoint) or None
        self.dist = None  # the split's distribution (branches, k), or (1, k) for a leaf
        self.tot = None  # a split's running totals (``c45.distribution``)
        self.total = 0.0  # a leaf's overall weight, a running sum as J48's ``totaL``
        self.sons = None
        self.leaf = False
        self.index = 0
        self.test = None  # held-out class weights per branch (reduced-error pruning)
        self.pos = None  # a leaf's rows (positions)
        self.cut = -1  # its split's place in the learner's cuts, where it moves later

    def per_bag(self):
        """A split's weight per branch, as J48's distribution sums it."""
        return self.tot[:len(self.dist)]

    def per_class(self):
        """The node's weight per class: a leaf's, or the split's running totals."""
        return self.dist[0] if self.tot is None else self.tot[len(self.dist):-1]

    def shares(self):
        """A split's branches' shares of its weight, which spread a row lacking the
        tested value."""
        return c45.shares(self.tot, len(self.dist))

    def become_leaf(self, dist, total):
        self.leaf, self.sons, self.split, self.dist, self.tot = True, None, None, dist, None
        self.total = total

    def path(self):
        """The conditions down to the rule's leaf, and the leaf: [(node, branch)]."""
        out, node = [], self
        while not node.leaf:
            out.append((node, node.index))
            node = node.sons[node.index]
        return out, node

    def size(self):
        """The (negated) weight of the leaf the branch chain ends in."""
        node = self
        while not node.leaf:
            node = node.sons[node.index]
        return -node.total


class Learner:
    """What a PART fit keeps for all its partial trees."""

    def __init__(self, columns, n_values, y, k, weights, options, rows, by_value,
                 runs=True):
        self.options = options
        self.k = k
        self.n_values = np.asarray(n_values, np.int64)
        n_all = len(y)
        self.X = stacked(columns, n_all)
        self.y = class_codes(np.where(y < 0, 0, y), k)
        self.idx = rows  # the learner's rows (all with a class), in order
        self.every_row = len(rows) == n_all
        self.cf, self.z = c45.confidence_quantile(options["confidence"])
        w = np.asarray(weights, np.float64)
        self.weights = w = w if self.every_row else w[rows]  # no copy of every row's
        self.ones = w if unit_weights(w) else None  # rows that all weigh 1 share it
        self.table = c45._table(w)
        self.min_obj = float(options["min_leaf"])
        self.binary = options["binary_splits"]
        # thresholds move at their nodes (``by_value``) or after the rules (``moved``),
        # from the cuts recorded as they are made: (attribute, midpoint, bounds)
        self.by_value = by_value
        self.runs = runs  # splits that send every row with a value one way, in a run
        self.deepest = 0  # the longest run made (c45.grow.split_point)
        self.cuts = []
        self.entries, self.values, self.value_off = self.presorted(rows)
        self.n_numeric = int(np.count_nonzero(self.n_values == 0))
        self.n_all = float(len(rows))
        # scratch: each position's branch (narrow, so that its lookups stay in cache)
        self.branch_of = np.full(len(rows), -1, np.int8 if self.n_values.max(initial=2) < 128
                                 else np.int32)
        self.kept = None  # (its split and branch, its entries): root_branch
        self.most = 0  # the most bytes a root's and a root branch's entries took
        self.row_w = None  # each position's weight in a node, once one needs them
        # scratch: the share of each position a rule covers, where it is not 0
        self.touched = np.zeros(len(rows), np.bool_)
        self.missing = missing_in(self.X, rows)  # per attribute
        self.share = np.zeros(len(rows))
        self.multi_valued = bool(len(self.n_values)) and all(
            nv > 0 and not 0.3 * len(rows) - nv > SMALL for nv in self.n_values)

    def presorted(self, rows):
        """Each numeric attribute's rows with a class and a value, sorted once by
        it: the first tree's root's sorted entries (positions, values, classes, and
        each attribute's start and end), then each next root's, the covered rows
        dropped (``_rest``); and, where thresholds move at their nodes
        (``by_value``), the same rows in the order of their values, by row
        (``values``, from ``value_off``), onto whose values they move."""
        position = np.full(len(self.y), -1, np.int32)
        position[rows] = np.arange(len(rows))
        known = [0 if nv else np.count_nonzero(~np.isnan(c if self.every_row else c[rows]))
                 for c, nv in zip(self.X, self.n_values)]
        off = np.cumsum([0] + known).astype(np.int64)
        out = (np.empty(off[-1], np.int32), np.empty(off[-1]), np.empty(off[-1], self.y.dtype),
               np.empty(off[-1] if self.by_value else 0, np.int32))
        for a, c in enumerate(self.X):
            if known[a]:  # one array of a row's length at a time, beside the entries
                _place(np.argsort(c), position, c, self.y, *out, off[a])
        pos, vals, clss, values = out
        return ((pos, vals, clss, off[:-1].copy(), off[1:].copy()), values,
                off if self.by_value else 0 * off)

    def root_branch(self, pos, sub, share, b, split, rows):
        """A root branch's sorted entries (``branch_entries``). The last one made
        is kept for the next tree, whose root is this one without the rows the
        rule covers (``_rest`` drops them from both): when that root makes the
        same split (on an attribute no row lacks) and expands the same branch, the
        branch's entries are these. A kept branch's own branches need copies (one
        at a time, each no larger), so it is kept only where the root's entries
        and its own twice over take no more bytes than a root's and a root
        branch's have taken already: keeping adds nothing to the fit's peak."""
        key = (*split[:4], b)
        known = not self.missing[split[0]]
        if known and self.kept is not None and self.kept[0] == key:
            return self.kept[1]
        self.kept = None  # not held beside the new one
        out = self.branch_entries(pos, sub, share, b, rows, self.entries)
        root, branch = (sum(x.nbytes for x in e[:3]) for e in (self.entries, out))
        self.most = max(self.most, root + branch)
        if known and root + 2 * branch <= self.most:
            self.kept = key, out
        return out

    def branch_entries(self, pos, sub, share, b, rows, srt):
        """Branch ``b``'s sorted entries, copied from its parent's (``srt``, of rows
        at positions ``pos``): rows whose branch (``sub``, per parent row) is ``b``,
        and rows missing the tested value where the branch's ``share`` exceeds
        1e-6; ``rows``: the branch's row count, the most any attribute can have."""
        self.branch_of[pos] = sub
        wide = len(pos) * self.n_numeric >= c45.WIDE_CELLS  # on two threads
        out = (_branch_entries_wide if wide else _branch_entries)(
            self.branch_of, b, share, rows, *srt)
        self.branch_of[pos] = -1
        return out

    def select(self, data):
        wide = len(data.pos) * self.X.shape[0] >= c45.WIDE_CELLS  # on two threads
        pos, vals, clss, start, end = data.sorted()
        weights = _NO_WEIGHTS  # an entry weighs what its row weighs in the node
        if not data.unit:
            if self.row_w is None:
                self.row_w = np.empty(len(self.idx))
            self.row_w[data.pos] = data.w
            weights = self.row_w
        a, kind, threshold, value, per_class, mid = (c45.select_split_wide if wide
                                                     else c45.select_split)(
            self.X, self.y, data.rows, data.w,
            (vals, clss, start, end, pos, weights), self.n_values, self.k,
            self.min_obj, True, self.binary, self.multi_valued, self.n_all, self.table,
            self.values, self.value_off, self.idx,
            np.bool_(self.runs and data.chain < c45.CHAIN))
        cut = -1
        if kind == c45.NUMERIC_SPLIT and not self.by_value:  # moved after the rules
            cut = len(self.cuts)
            self.cuts.append((a, threshold, c45.cut_bounds(vals, start[a], end[a], threshold)))
        return (None if a < 0 else (a, kind, threshold, value,
                                    self.n_values[a] if kind == c45.NOMINAL_SPLIT else 2,
                                    mid), per_class, cut)

    def branches(self, split, data):
        """(the split distribution, its totals, each branch's Data)."""
        sub, dist, tot, frac, at, weights, cut, missing = _split(
            self.X, self.y, *split, data.rows, data.w, self.k)
        unit = data.unit and not missing or None  # the branches' rows weigh 1 as well
        if unit and self.ones is not None:  # one array serves them all
            weights = self.ones[:len(weights)]
        dealing = Dealing(self, data, sub, frac, split, np.diff(cut), missing)
        known = sub[sub >= 0]
        one_way = len(known) > 0 and known.min() == known.max()  # every row with a value
        chain = data.chain + 1 if one_way else 0
        self.deepest = max(self.deepest, chain)
        return dist, tot, [Data(self, data.pos[at[cut[b]:cut[b + 1]]], weights[cut[b]:cut[b + 1]],
                           source=(dealing, b), unit=unit, chain=chain)
                      for b in range(len(cut) - 1)]

    # ------------------------------------------------------------ a partial tree

    def build(self, data, leaf, test=None):
        checkpoint()  # once per node of a partial tree
        node = DecList()
        node.pos = data.pos
        per_class = c45.class_weights(self.y, data.rows, data.w, self.k)
        split = None
        if not (leaf or c45.unsplittable(per_class, self.min_obj)):
            split, per_class, node.cut = self.select(data)
        node.leaf_dist = per_class[None, :]
        node.leaf_total = c45.running_total(data.w)
        if test is not None:
            test_dist = c45.class_weights(self.y, test.rows, test.w, self.k)
        if split is None:
            node.become_leaf(per_class[None, :], node.leaf_total)
            if test is not None:
                node.test = test_dist[None, :]
            return node
        node.split = split
        node.dist, node.tot, parts = self.branches(split, data)
        test_parts = None
        if test is not None:
            test_parts, node.test = self.branches_of_test(node, test)
        unexpanded = self.expand(node, parts, test_parts)
        if unexpanded and test is not None:
            node.test = test_dist[None, :]
        if not node.leaf:
            node.pos = None  # only a leaf's rows are read again (``_rest``)
        return node

    def expand(self, node, parts, test_parts):
        """A split node's branches, expanded in order of entropy until one is not a
        leaf. True when the first is not expandable: the node is a leaf again (as
        it is when pruned, once every expanded branch is a leaf)."""
        node.sons = [None] * node.split[4]
        i = 0
        while True:
            i += 1
            ind = self.choose_index(node)
            if ind == -1:
                for j in range(len(node.sons)):
                    if node.sons[j] is None:
                        node.sons[j] = self.build(parts[j], True,
                                                  None if test_parts is None else test_parts[j])
                if i < 2:
                    node.become_leaf(node.leaf_dist, node.leaf_total)
                    return True
                ind = 0
                break
            node.sons[ind] = self.build(parts[ind], False,
                                        None if test_parts is None else test_parts[ind])
            parts[ind] = None  # a built branch's rows go
            if not (i < len(node.sons) and node.sons[ind].leaf):
                break
        if self.options["pruned"] and all(s is not None and s.leaf for s in node.sons):
            self.prune_end(node)
            if not node.leaf:
                node.index = self.choose_last_index(node)
        else:
            node.index = self.choose_last_index(node)
        return False

    def branches_of_test(self, node, test):
        """The held-out rows dealt to the branches as the split deals rows, and their
        class weights per branch."""
        a, kind, threshold, value, nb, _ = node.split
        rows = test.rows
        sub = c45.subsets(frozen(self.X[a]), rows, kind, threshold, value)
        frac = node.shares()
        at, weights, cut = c45.branch_data(sub, nb, test.w, frac)
        parts = [Data(self, test.pos[at[cut[b]:cut[b + 1]]], weights[cut[b]:cut[b + 1]])
                 for b in range(nb)]
        # Distribution(test, model): the missing ones spread as the training split's
        return parts, c45.split_distribution(self.y, rows, test.w, sub, frac, self.k)

    def choose_index(self, node):
        """The unexpanded branch of least entropy (-1 when none holds ``min_leaf``)."""
        open_ = np.array([son is None for son in node.sons])
        return _least_entropy(node.dist, node.per_bag(), open_, self.min_obj)

    def choose_last_index(self, node):
        """The expanded branch whose leaf covers the most weight."""
        best, at = np.finfo(np.float64).max, 0
        if node.leaf:
            return 0
        per_bag = node.per_bag()
        for i, son in enumerate(node.sons):
            if son is not None and per_bag[i] - self.min_obj > -SMALL:
                estimated = son.size()
                if best - estimated > SMALL:
                    best, at = estimated, i
        return at

    def prune_end(self, node):
        if self.options["reduced_error_pruning"]:
            leaf_errors = self.test_errors_leaf(node)
            tree_errors = self.test_errors_tree(node)
            replace = leaf_errors - tree_errors < SMALL
        else:
            leaf_errors = self.errors_leaf(node)
            tree_errors = self.errors_tree(node)
            replace = leaf_errors - (tree_errors + 0.1) < SMALL
        if replace:
            node.become_leaf(node.per_class().copy()[None, :], float(node.tot[-1]))
            if node.test is not None:
                node.test = node.test.sum(axis=0)[None, :]

    def errors_leaf(self, node):
        per_class = node.per_class()
        e = per_class.sum() - per_class[c45.max_class(per_class)]
        return e + c45.add_errors(per_class.sum(), e, self.cf, self.z)

    def errors_tree(self, node):
        if node.leaf:
            return self.errors_leaf(node)
        return sum(self.errors_tree(s) for s in node.sons
                   if not abs(s.dist.sum()) < SMALL)

    def test_errors_leaf(self, node):
        majority = c45.max_class(node.per_class())
        test = node.test.sum(axis=0)
        return test.sum() - test[majority]

    def test_errors_tree(self, node):
        if node.leaf:
            return self.test_errors_leaf(node)
        majority = c45.max_class(node.per_class())
        error = 0.0
        for i, s in enumerate(node.sons):
            if abs(s.dist.sum()) < SMALL:
                error += node.test[i].sum() - node.test[i, majority]
            else:
                error += self.test_errors_tree(s)
        return error

    # ------------------------------------------------------------ the decision list

    def _rest(self, rule, data, root=False):
        """The rows the rule leaves (a partly covered row with its weight scaled);
        at the root of the growing (``root``), its sorted entries too, the covered
        ones dropped in place."""
        path, leaf = rule.path()
        touched = self.touched
        if root and not any(self.missing[node.split[0]] for node, _ in path):
            # every tested value known: the rule covers its leaf's rows, wholly
            touched[leaf.pos] = True
            self.share[leaf.pos] = 1.0
            keep = ~touched[data.pos]
            pos, w = data.pos[keep], data.w[keep]
        else:
            tests = np.array([node.split[:4] for node, _ in path],
                             np.float64).reshape(-1, 4)
            taken = np.array([b for _, b in path], np.int64)
            share = np.array([node.shares()[b] for node, b in path], np.float64)
            pos, w = _uncovered(self.X, self.idx, data.pos, data.w, tests, taken, share,
                                touched, self.share)
        if root:
            for entries in (self.entries,) + ((self.kept[1],) if self.kept else ()):
                self.drop(entries)
        touched[:] = False
        return Data(self, pos, w)

    def moved(self, rules):
        """Move the thresholds of ``rules`` that kept their midpoints onto the values
        J48 moves them to (``c45.moved_cuts``), once the entries are gone; False,
        leaving them, where a cut (of any node grown) would send a row of its node
        down the other branch than its midpoint did."""
        self.entries = self.kept = None
        if not self.cuts:
            return True
        attributes, mids, bounds = zip(*self.cuts)
        moved = c45.moved_cuts(
            lambda a: self.X[a] if self.every_row else self.X[a][self.idx],
            np.array(attributes), np.array(mids), np.array(bounds), len(self.idx))
        if moved is None:
            return False
        for rule in rules:
            for c, cut in zip(rule["conditions"], rule["cuts"]):
                if cut >= 0:
                    c[2] = moved[cut]
        return True

    def drop(self, entries):
        """The rows ``touched`` (and wholly covered, ``share``) out of sorted
        entries, in place (``_drop``)."""
        wide = len(entries[0]) >= c45.WIDE_CELLS
        (_drop_covered_wide if wide else _drop_covered)(self.touched, self.share, *entries)

    def rules(self):
        """The decision list: partial trees until no row is left, each kept as its
        rule (``_rule``) once it has taken its rows (a tree holds its nodes' rows)."""
        n = len(self.idx)
        pos = self.idx if self.every_row else np.arange(n, dtype=self.idx.dtype)  # 0 to n - 1
        w = self.weights
        grow, prune = Data(self, pos, w), None
        if self.options["reduced_error_pruning"]:
            folds = self.options["folds"]
            check_folds(folds, n)
            rng = JavaRandom(self.options["seed"])
            order = stratify(randomize(pos, rng), self.y[self.idx], folds)
            train = train_cv(order, folds, folds - 1, rng)  # 32-bit, as ``pos``
            held = test_cv(order, folds, folds - 1)
            grow, prune = Data(self, train, w[train]), Data(self, held, w[held])
            self.touched[held] = True  # held-out rows have no place in the entries
            self.share[held] = 1.0
            self.drop(self.entries)
            self.touched[:], self.share[:] = False, 0.0
        out = []
        while len(grow.pos) > 0:
            progress.report("PART: rows covered by rules", n - len(grow.pos), n)
            tree = self.build(grow, False, prune)
            grow = self._rest(tree, grow, root=True)
            if prune is not None:
                prune = self._rest(tree, prune)
            out.append(_rule(tree))
        return out

@njit(cache=True)
def _split(X, y, a, kind, threshold, value, nb, mid, rows, w, k):
    """A split of a node's rows: each row's branch, the split's distribution (at
    its threshold's midpoint ``mid``, ``c45.spread_at``), the branches' shares, the
    branches' rows as ``c45.branch_data`` deals them, and whether a row lacks the
    tested value."""
    sub, dist, tot = c45.spread_at(X, y, a, kind, threshold, mid, value, nb, rows, w, k)
    frac = c45.shares(tot, nb)
    at, weights, cut = c45.branch_data(sub, nb, w, frac)
    return sub, dist, tot, frac, at, weights, cut, (sub < 0).any()


@njit(cache=True)
def _least_entropy(dist, per_bag, open_, min_obj):
    """The open branch of least entropy, the first below 1e-6 at once (-1 when none
    holds ``min_obj``); ``per_bag``: each branch's weight."""
    best, at = np.finfo(np.float64).max, -1
    for i in range(dist.shape[0]):
        if not open_[i]:
            continue
        if min_obj - per_bag[i] > SMALL:
            estimated = np.finfo(np.float64).max
        else:
            estimated = 0.0
            for c in range(dist.shape[1]):
                estimated -= c45._lf(dist[i, c])
            estimated += c45._lf(per_bag[i])
            estimated /= per_bag[i]
        if estimated < SMALL:  # smOrEq(estimated, 0)
            return i
        if best - estimated > SMALL:
            best, at = estimated, i
    return at


@njit(cache=True)
def _uncovered(X, idx, pos, w, tests, taken, share, touched, covered):
    """The rows (positions ``pos``, weights ``w``) a rule leaves, given its tests
    (attribute, kind, threshold, value) top down, the branch it takes at each and
    that branch's share of the weight, which a row missing the tested value gets
    (multiplied from the leaf up). A row covered in part stays, its weight scaled
    by the part left; each row covered at all is ``touched``, with its share
    ``covered``."""
    keep = np.empty(len(pos), pos.dtype)
    left = np.empty(len(pos))
    n = 0
    for i in range(len(pos)):
        r = idx[pos[i]]
        missed = False
        for d in range(len(taken)):  # most rows leave at the first test
            b = c45.branch(X[int(tests[d, 0]), r], int(tests[d, 1]), tests[d, 2],
                           int(tests[d, 3]))
            if b >= 0 and b != taken[d]:
                missed = True
                break
        if missed:
            keep[n], left[n] = pos[i], w[i]
            n += 1
            continue
        s = 1.0
        for d in range(len(taken) - 1, -1, -1):
            if np.isnan(X[int(tests[d, 0]), r]):
                s = share[d] * s
        touched[pos[i]] = True
        covered[pos[i]] = s
        if 1.0 - s > SMALL:
            keep[n], left[n] = pos[i], w[i] * (1.0 - s)
            n += 1
    return keep[:n], left[:n]


@njit(cache=True)
def _place(ranked, position, c, y, pos, vals, clss, values, at):
    """An attribute's entries from its rows in order of value (``ranked``, missing
    last), from ``at`` on: the rows with a class (a ``position``) and a value; and
    the rows themselves in ``values`` unless it is empty."""
    by_row = values.shape[0] > 0
    for r in ranked:
        if np.isnan(c[r]):
            break
        p = position[r]
        if p >= 0:
            pos[at], vals[at], clss[at] = p, c[r], y[r]
            if by_row:
                values[at] = r
            at += 1


def _drop(touched, share, pos, vals, clss, start, end):
    """The root's sorted entries without the rows a rule covers (``share``: the
    part of each position it covers, ``touched`` where it is not 0), in place
    within each attribute's range (``end`` moves): a partly covered row stays (its
    weight, scaled, is the row's: ``_rest``)."""
    for a in prange(len(start)):
        c = start[a]
        for o in range(start[a], end[a]):
            p = pos[o]
            if not touched[p] or 1.0 - share[p] > SMALL:
                if c != o:
                    pos[c], vals[c], clss[c] = p, vals[o], clss[o]
                c += 1
        end[a] = c


def _branch(branch_of, b, share, rows, spos, sval, scls, start, end):
    """Branch ``b``'s sorted entries from its parent's: the entries whose position
    goes down it (``branch_of``), and those missing the tested value (-1) unless
    the branch's ``share`` is 1e-6 or less (as ``c45.branch_data`` deals them; the
    row's weight in the branch is scaled by it). Each attribute with entries gets a
    range of ``rows`` (the branch's rows, an attribute's most) and a slot after it,
    filled independently: every entry is written at the range's end, which moves
    on past those of the branch (no branch in the code on which they are)."""
    m = len(start)
    missing = share > 1e-6
    first = np.empty(m, np.int64)
    n = 0
    for a in range(m):
        first[a] = n
        if end[a] > start[a]:
            n += rows + 1
    pos = np.empty(n, spos.dtype)
    vals = np.empty(n)
    clss = np.empty(n, scls.dtype)
    last = first.copy()
    for a in prange(m):
        c = first[a]
        for o in range(start[a], end[a]):
            at = branch_of[spos[o]]
            pos[c], vals[c], clss[c] = spos[o], sval[o], scls[o]
            c += np.int64((at == b) | ((at < 0) & missing))
        last[a] = c
    return pos, vals, clss, first, last


# each on two threads (attributes side by side) for wide nodes, called from Python
_drop_covered = njit(cache=True)(_drop)
_drop_covered_wide = njit(cache=True, parallel=PRANGE_ONLY)(_drop)
_branch_entries = njit(cache=True)(_branch)
_branch_entries_wide = njit(cache=True, parallel=PRANGE_ONLY)(_branch)


@njit(cache=True)
def _score(X, conds, ends, probs, n):
    """Each row's class probabilities: the rules in order, each taking the share it
    covers of what the rules before it left (a missing tested value: the branch's
    share), until less than 1e-6 is left. The products associate as the reference's
    recursions do: a rule's cover from its last condition up, its probabilities'
    weight from its first down."""
    out = np.zeros((n, probs.shape[1]))
    for i in range(n):
        left = 1.0
        start = 0
        for r in range(len(ends)):
            if left <= SMALL:
                break
            cover = 1.0  # the shares of the conditions whose value is missing
            for c in range(start, ends[r]):
                v = X[int(conds[c, 0]), i]
                if np.isnan(v):
                    cover = conds[c, 5] * cover
                    continue
                kind = int(conds[c, 1])
                if kind == NUMERIC_SPLIT:
                    at = 0 if c45.below(v, conds[c, 2]) else 1
                elif kind == NOMINAL_SPLIT:
                    at = int(v)
                else:
                    at = 0 if v == conds[c, 3] else 1
                if at != int(conds[c, 4]):
                    cover = 0.0
                    break
            below = 0.0  # the cover again, from the last condition up
            if cover > 0.0:
                below = 1.0
                for c in range(ends[r] - 1, start - 1, -1):
                    if np.isnan(X[int(conds[c, 0]), i]):
                        below = conds[c, 5] * below
            if below > SMALL:
                for j in range(probs.shape[1]):
                    out[i, j] += left * (cover * probs[r, j])
                left = left * (1.0 - below)
            start = ends[r]
    return out


# ------------------------------------------------------------------ the model

class PartModel(Classifier):
    learner = "part"

    def __init__(self, attributes, target, rules, options, instances):
        super().__init__(attributes, target, options, instances)
        self.rules = [{"conditions": [[int(c[0]), int(c[1]), float(c[2]), int(c[3]),
                                       int(c[4]), float(c[5])] for c in r["conditions"]],
                       "label": [float(x) for x in r["label"]],
                       "leaf": [float(x) for x in r["leaf"]],
                       # a model from before the leaf's running total was kept:
                       "total": float(r["total"]) if "total" in r else  # its sum
                       float(np.asarray(r["leaf"], np.float64).sum())}
                      for r in rules]
        self.used = sorted({c[0] for r in self.rules for c in r["conditions"]})

    def to_json(self):
        return body(self, rules=self.rules)

    @classmethod
    def from_json(cls, d):
        return cls(attributes_of(d), d["target"],
                   d["rules"], d["options"], d["instances"])

    def validate(self):
        k = len(self.classes)
        if not self.rules:
            raise ValueError("it has no rules")
        for i, r in enumerate(self.rules):
            where = f"rule {i}"
            check_weights(r["label"], k, where)
            check_weights(r["leaf"], k, where)
            if not (math.isfinite(r["total"]) and r["total"] >= 0):
                raise ValueError(f"{where}'s leaf does not hold a finite total weight")
            for a, kind, threshold, value, branch, frac in r["conditions"]:
                attr = check_attribute(self.attributes, a, self.target, where)
                n = len(attr.values)
                ok = {c45.NUMERIC_SPLIT: not attr.nominal and math.isfinite(threshold)
                      and branch in (0, 1),
                      c45.NOMINAL_SPLIT: attr.nominal and 0 <= branch < n,
                      c45.VALUE_SPLIT: attr.nominal and 0 <= value < n and branch in (0, 1)
                      }.get(kind, False)
                if not ok or not (math.isfinite(frac) and 0 <= frac <= 1):
                    raise ValueError(f"{where}'s test does not fit attribute {attr.name!r}")

    # ---------------------------------------------------------------- scoring

    def proba(self, columns, n):
        where = {a: i for i, a in enumerate(self.used)}
        X = np.vstack([np.asarray(c, np.float64) for c in columns]) if columns else \
            np.empty((0, n))
        conds = np.array([[where[c[0]], c[1], c[2], c[3], c[4], c[5]]
                          for r in self.rules for c in r["conditions"]], np.float64)
        ends = np.cumsum([len(r["conditions"]) for r in self.rules]).astype(np.int64)
        return _score(X, conds.reshape(-1, 6), ends, self.leaf_probs(), n)

    def leaf_probs(self):
        """Each rule's class probabilities: its leaf's weights over its total weight
        (none for an empty leaf)."""
        probs = np.zeros((len(self.rules), len(self.classes)))
        for i, r in enumerate(self.rules):
            leaf, total = np.asarray(r["leaf"]), r["total"]
            if abs(total) >= SMALL:
                probs[i] = leaf / total
        return probs

    # ---------------------------------------------------------------- printing

    def _test(self, a, kind, threshold, value, branch):
        attr = self.attributes[a]
        if kind == c45.NUMERIC_SPLIT:
            t = java_double(threshold) if self.options["binary_splits"] else \
                double_to_string(threshold, 6)
            return f"{attr.name} {'<=' if branch == 0 else '>'} {t}"
        if kind == c45.NOMINAL_SPLIT:
            return f"{attr.name} = {attr.values[branch]}"
        return f"{attr.name} {'=' if branch == 0 else '!='} {attr.values[value]}"

    def _label(self, rule):
        dist = np.asarray(rule["label"])[None, :]
        return c45_label(dist, 0, self.classes)

    def text(self):
        out = ["PART decision list\n------------------\n\n"]
        for rule in self.rules:
            tests = [self._test(*c[:5]) for c in rule["conditions"]]
            body = " AND\n".join(tests)
            out.append(f"{body}: {self._label(rule)}\n\n" if tests
                       else f": {self._label(rule)}\n\n")
        out.append(f"Number of Rules  : \t{len(self.rules)}\n")
        return "".join(out)

    def picture(self):
        return pictures.decision_list(self.rows(), "part")

    def rows(self):
        out = []
        for i, rule in enumerate(self.rules):
            label = np.asarray(rule["label"])
            cls = c45.max_class(label) if label.sum() > SMALL else 0
            out.append({"rule": i, "conditions": [self._test(*c[:5])
                                                  for c in rule["conditions"]],
                        "class": self.classes[cls], "coverage": float(label.sum()),
                        "errors": float(label.sum() - label[cls])})
        return out


def _rule(tree):
    """A partial tree's rule: its conditions (attribute, kind, threshold, value,
    branch, the branch's share of the split's weight), the distribution its label
    shows and the leaf's class weights."""
    path, leaf = tree.path()
    conditions = []
    for node, b in path:
        a, kind, threshold, value = node.split[:4]
        conditions.append([a, kind, threshold, value, b, float(node.shares()[b])])
    label = path[-1][0].dist[path[-1][1]] if path else tree.dist[0]
    return {"conditions": conditions, "label": label, "leaf": leaf.dist.sum(axis=0),
            "total": leaf.total,
            "cuts": [node.cut for node, _ in path]}


def fit(data, target, options, settings):
    """The contract's fit for part."""
    if not options["pruned"] and options["reduced_error_pruning"]:
        raise ValueError("pruned := false and reduced_error_pruning := true cannot be "
                         "combined (an unpruned list has no pruning to do)")
    y = data.columns[target]
    k = len(data.attributes[target].values)
    codes = class_codes(np.where(np.isnan(y), -1, y), k)  # held through the fit
    others = [j for j in range(len(data.attributes)) if j != target]
    columns = data.others(target)
    data.spend(target)  # read no more: the classes are codes
    n_values = [len(data.attributes[j].values) if data.attributes[j].nominal else 0
                for j in others]
    rows = rows_where(codes >= 0)  # each node's positions are taken from them
    # thresholds move after the rules, unless one would send a row of its node the
    # other way than its midpoint, or held-out rows go by them (reduced-error
    # pruning): then they move at their nodes, from the rows in the order of values
    by_value, runs = options["reduced_error_pruning"], True
    while True:
        learner = Learner(columns, n_values, codes, k, data.weights, options, rows,
                          by_value, runs=runs)
        found = learner.rules()
        if learner.deepest >= c45.CHAIN:  # a run J48 makes without end, until its
            runs = False  # stack overflows: none, as C4.5 grows its tree again
            continue
        if by_value or learner.moved(found):
            break
        by_value = True
    rules = []
    for rule in found:
        for c in rule["conditions"]:
            c[0] = others[c[0]]  # attribute indices of the whole table
        rules.append(rule)
    return PartModel(data.attributes, data.attributes[target].name, rules, options,
                     len(rows))
