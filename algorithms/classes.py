"""The class a classifier predicts from its class probabilities, shared by every
classifier, the scoring functions and the SQL writers."""

import numpy as np

MARGIN = 1e-6  # how much a later class must beat the best so far by (the reference's)


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
