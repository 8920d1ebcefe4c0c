"""The Python daemon of a Spark executor that runs duckmine
(``spark.python.daemon.module=duckmine.spark.daemon``; ``session`` sets it).

Spark forks a Python worker from its daemon for each task it runs at once, and a
worker that is reused runs a full ``gc.collect()`` after every task. With numba,
pyarrow and duckmine loaded, a worker holds about 130,000 objects, so each task
paid about 0.15 s to scan them, and each new worker about 1 s to import them. This
daemon imports them once, before it forks, and freezes them (``gc.freeze``): a
worker starts with them loaded, and its collections skip them.

What runs before a fork must start no thread that holds a lock across it. The
imports start two threads, OpenBLAS's (numpy) and jemalloc's (pyarrow), and both
libraries ready themselves for a fork (``pthread_atfork``); no kernel runs, and
no numba context is built, until a worker needs it."""

import gc
import importlib
import pkgutil


def preload():
    """pyspark's worker, and every module a duckmine function runs on a worker:
    its Spark side and each declared learner's core."""
    import pyspark.worker  # noqa: F401

    import duckmine.spark
    from duckmine.algorithms import contract

    for module in pkgutil.iter_modules(duckmine.spark.__path__):
        if module.name != "daemon":
            importlib.import_module(f"duckmine.spark.{module.name}")
    for decl in contract.learners().values():
        decl.fit_function()
        decl.model_class()
        if decl.to_sql:
            decl.sql_writer()
    gc.collect()
    gc.freeze()


if __name__ == "__main__":
    from pyspark.daemon import manager

    preload()
    manager()
