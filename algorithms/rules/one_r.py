"""1R (the book's section 4.1): one rule on the single attribute that classifies the
training rows best, built as the reference's OneR builds it.

For each attribute, in order, a rule maps each value to its majority class
(counting rows, not weights, as the reference does). A numeric attribute is cut
into intervals first: one bucket per distinct value, then a left-to-right pass
merges a bucket into the next while the next has the same majority class or the
bucket's majority count is below ``min_bucket``, and a second pass merges
neighbours with the same class; a cut lies midway between the values either side.
Rows missing the attribute get their own branch (their majority class) when there
are any. The rule with the most correct rows wins, the first of equal ones.
"""

import numpy as np

from ..dataset import Attribute
from ..javafmt import java_double
from ..jit import njit
from ..models import check_array, check_attribute


class OneRModel:
    learner = "one_r"

    def __init__(self, attributes, target, attribute, classes, breakpoints,
                 missing_class, counts, missing_counts, correct, options, instances):
        self.attributes = list(attributes)
        self.target = target
        self.attribute = int(attribute)  # the index of the rule's attribute
        self.used = [self.attribute]
        self.rule_classes = np.asarray(classes, np.int64)  # per branch
        self.breakpoints = None if breakpoints is None else np.asarray(breakpoints,
                                                                         np.float64)
        self.missing_class = int(missing_class)  # -1: no missing branch
        self.classes = next(a for a in self.attributes if a.name == target).values
        self.counts = np.asarray(counts, np.int64).reshape(len(self.rule_classes),
                                                           len(self.classes))
        self.missing_counts = np.asarray(missing_counts, np.int64)
        self.correct = int(correct)
        self.options = dict(options)
        self.instances = int(instances)

    def to_json(self):
        return {"attributes": [a.to_json() for a in self.attributes], "target": self.target,
                "attribute": self.attribute, "classes": self.rule_classes.tolist(),
                "breakpoints": None if self.breakpoints is None
                else self.breakpoints.tolist(),
                "missing_class": self.missing_class, "counts": self.counts.tolist(),
                "missing_counts": self.missing_counts.tolist(), "correct": self.correct,
                "options": self.options, "instances": self.instances}

    @classmethod
    def from_json(cls, d):
        return cls([Attribute.from_json(a) for a in d["attributes"]], d["target"],
                   d["attribute"], d["classes"], d["breakpoints"], d["missing_class"],
                   d["counts"], d["missing_counts"], d["correct"], d["options"],
                   d["instances"])

    def validate(self):
        """The rule's attribute (not the target), one class per branch (a nominal
        attribute's values, or one more than the ascending cut points), the missing
        branch's class, and counts of those shapes."""
        attr = check_attribute(self.attributes, self.attribute, self.target, "its rule")
        k = len(self.classes)
        n = len(self.rule_classes)
        if attr.nominal:
            if self.breakpoints is not None or n != len(attr.values):
                raise ValueError(f"its rule does not have a branch per value of {attr.name!r}")
        else:
            cuts = check_array(self.breakpoints, "its cut points", (None,))
            if n != len(cuts) + 1 or (np.diff(cuts) < 0).any():
                raise ValueError("its cut points are not ascending, one fewer than its "
                                 "branches")
        check_array(self.rule_classes, "its branches' classes", (n,), 0, k, whole=True)
        check_array([self.missing_class], "its missing branch's class", (1,), -1, k)
        check_array(self.counts, "its counts", (n, k), low=0)
        check_array(self.missing_counts, "its missing counts", (k,), low=0)

    def classify(self, x):
        """The class code of each value ``x`` of the rule's attribute (NaN missing)."""
        missing = np.isnan(x)
        if self.breakpoints is None:
            branch = np.where(missing, 0, x).astype(np.int64)
        else:  # the first interval whose cut the value is below
            branch = np.searchsorted(self.breakpoints, np.where(missing, 0, x), side="right")
        out = self.rule_classes[branch] if len(self.rule_classes) else \
            np.zeros(len(x), np.int64)
        out[missing] = max(self.missing_class, 0)  # no missing branch: class 0
        return out

    def proba(self, columns, n):
        out = np.zeros((n, len(self.classes)))
        out[np.arange(n), self.classify(np.asarray(columns[0], np.float64))] = 1.0
        return out

    def conditions(self):
        """Per branch: (value text, low, high) as the reference prints the branch."""
        attr = self.attributes[self.attribute]
        out = []
        for v in range(len(self.rule_classes)):
            if attr.nominal:
                out.append((attr.values[v], None, None))
                continue
            bp = self.breakpoints
            low = float(bp[v - 1]) if v > 0 else None
            high = float(bp[v]) if v < len(bp) else None
            if high is not None:
                text = "< " + java_double(high)
            elif low is not None:
                text = ">= " + java_double(low)
            else:
                text = "not ?"
            out.append((text, low, high))
        return out

    def text(self):
        lines = [self.attributes[self.attribute].name + ":"]
        for (text, _, _), c in zip(self.conditions(), self.rule_classes):
            lines.append(f"\t{text}\t-> {self.classes[c]}")
        if self.missing_class >= 0:
            lines.append(f"\t?\t-> {self.classes[self.missing_class]}")
        lines.append(f"({self.correct}/{self.instances} instances correct)")
        return "\n".join(lines) + "\n"

    def rows(self):
        name = self.attributes[self.attribute].name
        nominal = self.attributes[self.attribute].nominal
        out = []
        for v, ((text, low, high), c) in enumerate(zip(self.conditions(), self.rule_classes)):
            out.append({"branch": v, "attribute": name, "value": text if nominal else None,
                        "low": low, "high": high, "class": self.classes[c],
                        "instances": int(self.counts[v].sum()),
                        "correct": int(self.counts[v, c])})
        if self.missing_class >= 0:
            out.append({"branch": len(out), "attribute": name, "value": "?", "low": None,
                        "high": None, "class": self.classes[self.missing_class],
                        "instances": int(self.missing_counts.sum()),
                        "correct": int(self.missing_counts[self.missing_class])})
        return out


def _first_max(a):
    return int(np.argmax(a)) if len(a) else 0


def _nominal_rule(x, y, n_values, k):
    """(classes per value, counts (values, k), correct) of a nominal attribute."""
    known = ~np.isnan(x)
    counts = np.bincount(x[known].astype(np.int64) * k + y[known],
                         minlength=n_values * k).reshape(n_values, k)
    classes = np.array([_first_max(c) for c in counts], np.int64)
    correct = int(sum(counts[v, c] for v, c in enumerate(classes)))
    return classes, None, counts, correct


@njit(cache=True)
def _max_index(d):
    best = 0
    for c in range(1, len(d)):
        if d[c] > d[best]:
            best = c
    return best


@njit(cache=True)
def _merge(dist, cuts, min_bucket):
    """The reference's two passes over the buckets of distinct values (``dist``
    (m, k) class counts, ``cuts`` the cut after each, the last +max): (merged
    counts, their cuts, correct rows)."""
    m, k = dist.shape
    out = np.empty((m, k), np.int64)
    out_cut = np.empty(m)
    top = 0
    for i in range(m):  # merge while the same class or a bucket too small
        new = dist[i].copy()
        if top > 0:
            old = out[top - 1]
            if _max_index(new) == _max_index(old) or old[_max_index(old)] < min_bucket:
                new += old
                top -= 1
        out[top] = new
        out_cut[top] = cuts[i]
        top += 1
    final = np.empty((top, k), np.int64)
    final_cut = np.empty(top)
    correct = 0
    size = 0
    for i in range(top):  # then neighbours of the same class
        new = out[i].copy()
        correct += new[_max_index(new)]
        if size > 0 and _max_index(new) == _max_index(final[size - 1]):
            new += final[size - 1]
            size -= 1
        final[size] = new
        final_cut[size] = out_cut[i]
        size += 1
    return final[:size], final_cut[:size], correct


def _numeric_rule(x, y, k, min_bucket):
    known = ~np.isnan(x)
    xs, ys = x[known], y[known]
    if len(xs) == 0:
        return None  # the reference skips an attribute with no value
    values, group = np.unique(xs, return_inverse=True)
    dist = np.bincount(group * k + ys, minlength=len(values) * k).reshape(len(values), k)
    cuts = np.append((values[:-1] + values[1:]) / 2.0, np.finfo(np.float64).max)
    counts, cuts, correct = _merge(dist, cuts, min_bucket)
    classes = np.array([_max_index(c) for c in counts], np.int64)
    return classes, cuts[:-1], counts, int(correct)


def fit(data, target, options, settings):
    """The contract's fit for one_r: the best rule over the attributes in order."""
    keep, columns, y, _ = data.labelled(target)
    yk = y.astype(np.int64)
    k = len(data.attributes[target].values)
    used = [j for j in range(len(data.attributes)) if j != target]
    best = None
    for j, x in zip(used, columns):
        a = data.attributes[j]
        rule = _nominal_rule(x, yk, len(a.values), k) if a.nominal else \
            _numeric_rule(x, yk, k, options["min_bucket"])
        if rule is None:
            continue
        missing = np.bincount(yk[np.isnan(x)], minlength=k)
        miss = _first_max(missing)
        correct = rule[3] + int(missing[miss])
        if best is None or correct > best[0]:
            best = (correct, j, rule, miss if missing[miss] > 0 else -1, missing)
    if best is None:
        raise ValueError("no attribute has a value to build a rule on")
    correct, j, (classes, cuts, counts, _), miss, missing = best
    return OneRModel(data.attributes, data.attributes[target].name, j, classes, cuts,
                     miss, counts, missing, correct, options, int(keep.sum()))
