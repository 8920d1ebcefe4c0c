"""Stopping a long computation from outside.

An interrupt (Ctrl-C, ``duckmine.interrupt``) must end a fit within a moment and
leave the process and the connection as they were. A computation that may be long
runs through ``run``: on a thread of its own, while the calling thread waits for
it. To stop it, ``Job.stop`` sets the job's flag, and the computation itself
notices: kernels with long loops read it at their loop boundaries (they take
``flag()``, test it with ``halt.halted``, return early, and their caller raises with
``check``), and Python loops over nodes, folds or iterations call ``checkpoint``.
Kernels release the GIL (``jit``), so the waiting thread always gets to run,
whatever the job is doing.

Nothing is raised into the job from outside: an asynchronous exception lands at
whatever bytecode runs next, which may be Python code that a kernel's C wrapper
calls (seen: a corrupt result tuple and a segfault, in a kernel's first call).

A job that does not notice its flag within ``GRACE`` (it is compiling a kernel,
which cannot be stopped) is left behind: its caller is stopped at once, and the
job ends by itself at its next check. At exit the process waits for such jobs
(``_drain``), because finalising Python while a compilation runs aborts it.

Nothing here knows a database: the engines decide when to stop, by tag.
"""

import atexit
import threading
import time

import numpy as np


class Stopped(BaseException):
    """A computation stopped by an interrupt. Like KeyboardInterrupt it is not an
    Exception, so that no ``except Exception`` on its way swallows it."""


_local = threading.local()
_IDLE = np.zeros(1, np.uint8)  # the flag of a computation outside a job: never set
_JOBS = set()
_JOBS_LOCK = threading.Lock()
_WAIT = 0.05  # seconds between checks of the waiting thread
GRACE = 0.5  # seconds a stopped job has to end before its caller stops without it
_LEFT = set()  # stopped jobs still running (compiling), which the exit waits for
# rows below which a fit's independent parts run on its own thread: starting threads
# costs more than they save there (C4.5 on 1,000 rows: 1.0 ms on two, 0.5 on one;
# the same at 20,000), and per-group fits are mostly that small
SERIAL_ROWS = 20_000
# how the jobs of this process ended: "stopped" (they noticed their flag and gave
# up their work), "finished", or "failed" (an error of their own)
OUTCOMES = {"stopped": 0, "finished": 0, "failed": 0}


def flag():
    """The stop flag of the calling thread's job, for kernels to poll: once
    ``flag()[0]`` is set, a kernel returns early and its caller is stopped."""
    return getattr(_local, "flag", _IDLE)


def tag():
    """The tag of the calling thread's job (None outside a job)."""
    return getattr(_local, "tag", None)


def current():
    """The calling thread's job (None outside a job)."""
    return getattr(_local, "job", None)


def check(halt):
    """Raise ``Stopped`` if the flag ``halt`` is set: after a kernel that returns
    early, before its result is used."""
    if halt[0]:
        raise Stopped()


def checkpoint():
    """Raise ``Stopped`` if the calling thread's job is being stopped: once per
    node, fold or iteration of a Python loop."""
    if getattr(_local, "flag", _IDLE)[0]:
        raise Stopped()


class Job:
    """One computation on its own thread, stoppable from any other."""

    def __init__(self, fn, args, tag):
        self.fn, self.args, self.tag = fn, args, tag
        self.flag = np.zeros(1, np.uint8)
        self.tickers = []  # called while the job is waited for (progress.counter)
        self.result = self.error = None
        self.thread = threading.Thread(target=self._main, name="duckmine-job", daemon=True)

    def _main(self):
        _local.flag = self.flag
        _local.tag = self.tag
        _local.job = self
        try:
            self.result = self.fn(*self.args)
            outcome = "finished"
        except Stopped as err:
            self.error, outcome = err, "stopped"
        except BaseException as err:  # handed to the waiting thread
            self.error, outcome = err, "failed"
        with _JOBS_LOCK:
            OUTCOMES[outcome] += 1

    def stop(self):
        """Set the flag; the job ends at its next check."""
        self.flag[0] = 1


def run(fn, *args, tag=None):
    """``fn(*args)``, stoppable by ``stop`` (all jobs, or those of ``tag``) and by a
    KeyboardInterrupt in the calling thread; a stopped job raises ``Stopped``, or
    the KeyboardInterrupt. Inside a job, ``fn`` simply runs."""
    if hasattr(_local, "flag"):
        return fn(*args)
    job = Job(fn, args, tag)
    with _JOBS_LOCK:
        _JOBS.add(job)
    try:
        job.thread.start()
        _wait(job)
    except BaseException:  # the waiting thread was interrupted: stop the job first
        job.stop()
        _wait(job)
        raise
    finally:
        with _JOBS_LOCK:
            _JOBS.discard(job)
            if job.thread.is_alive():
                _LEFT.add(job)
    if job.flag[0]:
        raise Stopped()
    if job.error is not None:
        raise job.error
    return job.result


def each(fn, items, threads=None, rows=None):
    """``[fn(x) for x in items]`` on ``threads`` threads (numba's number by default,
    the calling thread one of them) that act for the calling thread's job: they read
    its stop flag and report to its watchers. For work whose parts are independent
    and whose kernels release the GIL, each part run serially: threads at the
    outermost level, not in every kernel's loops. ``rows``, the rows the parts cover
    between them, keeps the parts on this thread below ``SERIAL_ROWS``.

    The parts are taken in ``items``' order as threads come free, and ``items`` is
    read only as they are taken (a generator makes a part when it is needed). Once a
    part fails no further part is begun, and the first error in ``items``' order is
    raised once the parts begun have ended: the error a loop would have raised."""
    if rows is not None and rows < SERIAL_ROWS:
        threads = 1
    elif threads is None:
        import numba  # here: loading duckmine imports no compiler (see halt)

        threads = numba.get_num_threads()
    if hasattr(items, "__len__"):
        threads = min(threads, len(items))
    if threads <= 1:
        return [fn(x) for x in items]
    context = {k: getattr(_local, k) for k in ("flag", "tag", "job") if hasattr(_local, k)}
    items, lock, out, failed = iter(items), threading.Lock(), [], []

    def work():
        while True:
            with lock:
                if failed:
                    return
                i = len(out)
                try:
                    x = next(items)
                except StopIteration:
                    return
                except BaseException as err:  # making the part failed
                    failed.append((i, err))
                    return
                out.append(None)
            try:
                out[i] = fn(x)
            except BaseException as err:
                with lock:
                    failed.append((i, err))
                return

    def helper():
        _local.__dict__.update(context)
        try:
            work()
        finally:
            _local.__dict__.clear()

    helpers = [threading.Thread(target=helper, daemon=True) for _ in range(threads - 1)]
    for t in helpers:
        t.start()
    try:
        work()
    finally:
        for t in helpers:
            t.join()
    if failed:
        raise min(failed, key=lambda f: f[0])[1]
    return out


def _wait(job):
    """Until the job ends; once it is stopped, ``GRACE`` more seconds at most, for a
    job that is compiling notices nothing until it is done."""
    stopped_at = None
    while job.thread.is_alive():  # in steps, so that Ctrl-C reaches this thread
        job.thread.join(_WAIT)
        _tick(job)
        if job.flag[0]:
            stopped_at = stopped_at or time.monotonic()
            if time.monotonic() - stopped_at >= GRACE:
                return
    _tick(job)  # once more: a job may end before the first step


def _tick(job):
    for tick in list(job.tickers):
        tick()


@atexit.register
def _drain():
    """Stop every job and wait for those still running: Python must not be
    finalised while one of them compiles a kernel (LLVM aborts the process)."""
    stop()
    with _JOBS_LOCK:
        jobs = list(_JOBS | _LEFT)
    for job in jobs:
        job.thread.join()


def stop(tag=None):
    """Stop the running jobs (those of ``tag``, or all); how many there were."""
    with _JOBS_LOCK:
        jobs = [j for j in _JOBS if tag is None or j.tag == tag]
    for job in jobs:
        job.stop()
    return len(jobs)


def running():
    """How many jobs are running (stopped ones still compiling included)."""
    with _JOBS_LOCK:
        _LEFT.difference_update([j for j in _LEFT if not j.thread.is_alive()])
        return len(_JOBS) + len(_LEFT)
