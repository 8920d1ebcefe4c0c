"""How far long work has got, through one hook: a core says where it is
(``report``: a task, how much of it is done, out of how much if that is known),
and whoever watches the work's tag hears it (``watch``). Cores report
cross-validation folds, EM's choice of the number of clusters (each number, each
fold), its k-means starts and restarts, the rows PART's rules have covered,
RIPPER's classes, and the nodes REPTree and CART have grown.

Work runs as a job (``stop``) whose tag the engine gives: on DuckDB the id of the
connection that runs the query, so that a watcher hears its own queries only.
Reporting with nobody watching costs one dictionary lookup."""

import threading

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


def report(task, done, total=None):
    """``done`` of ``total`` (None: not known) of ``task``, to the watchers of the
    calling job's tag. A watcher that fails is not the work's failure."""
    if not _WATCHERS:
        return
    with _LOCK:
        callbacks = list(_WATCHERS.get(stop.tag(), ()))
    for callback in callbacks:
        try:
            callback(task, done, total)
        except Exception:  # noqa: S110 - a display's error must not stop a fit
            pass
