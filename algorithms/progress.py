"""How far long work has got, through one hook: a core says where it is
(``report``: a task, how much of it is done, out of how much if that is known),
and whoever watches the work's tag hears it (``watch``). Cores report
cross-validation folds, EM's choice of the number of clusters (each number, each
fold), its k-means starts, restarts and iterations, k-means' iterations, K2's
nodes, the rows PART's rules have covered, RIPPER's classes, and the nodes C4.5,
REPTree and CART have grown.

Work runs as a job (``stop``) whose tag the engine gives: on DuckDB the id of the
connection that runs the query, so that a watcher hears its own queries only.
Reporting with nobody watching costs one dictionary lookup."""

import threading

import numpy as np

from . import stop

_WATCHERS = {}  # tag -> callbacks(task, done, total)
_LOCK = threading.Lock()


def watch(tag, callback):
    """Have ``callback(task, done, total)`` hear the work of ``tag``; returns the
    function that stops it."""
    with _LOCK:
        _WATCHERS.setdefault(tag, []).append(callback)

    def unwatch():
        with _LOCK:
            callbacks = _WATCHERS.get(tag, [])
            if callback in callbacks:
                callbacks.remove(callback)
            if not callbacks:
                _WATCHERS.pop(tag, None)
    return unwatch


def report(task, done, total=None, tag=None):
    """``done`` of ``total`` (None: not known) of ``task``, to the watchers of
    ``tag`` (by default the calling job's). A watcher that fails is not the work's
    failure."""
    if not _WATCHERS:
        return
    with _LOCK:
        callbacks = list(_WATCHERS.get(stop.tag() if tag is None else tag, ()))
    for callback in callbacks:
        try:
            callback(task, done, total)
        except Exception:  # noqa: S110 - a display's error must not stop a fit
            pass


def counter(task, total=None):
    """A cell (``int64[1]``) for a kernel to count its work into, at ``cell[0]``
    (nodes grown, iterations done): a kernel cannot call Python, so the thread
    that waits for the job reads the cell every 50 ms and reports ``task`` when it
    has moved. Outside a job, or with nobody watching, the cell is only written."""
    cell = np.zeros(1, np.int64)
    job = stop.current()
    if job is None or job.tag not in _WATCHERS:
        return cell
    seen = [-1]

    def tick():
        done = int(cell[0])
        if done != seen[0]:
            seen[0] = done
            report(task, done, total, tag=job.tag)

    job.tickers.append(tick)
    return cell
