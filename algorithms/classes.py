"""Classes, shared by every classifier, the scoring functions and the SQL writers:
the codes a fit holds them as, and the class a classifier predicts from its class
probabilities."""

import numpy as np

MARGIN = 1e-6  # how much a later class must beat the best so far by (the reference's)


def code_type(k):
    """The narrowest integer type that holds the codes of ``k`` classes and -1
    (missing)."""
    return np.int8 if k < 128 else np.int32


def class_codes(y, k):
    """Class codes (-1 missing) as narrow as ``k`` classes allow: the trees and rule
    learners keep one a row, and C4.5, PART and REPTree one an entry of each
    numeric attribute."""
    return np.asarray(y, code_type(k))


def labels(proba):
    """The predicted class of each row: the first of largest probability (a later
    class must be larger by more than MARGIN to win, as in the reference)."""
    n, k = proba.shape
    best = np.zeros(n, np.int64)
    top = np.full(n, -1.0)
    for c in range(k):
        better = proba[:, c] - top > MARGIN
        best[better] = c
        top[better] = proba[better, c]
    return best
