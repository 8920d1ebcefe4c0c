"""How an interrupt reaches a running fit.

DuckDB checks for interrupts between the chunks it processes, but a fit is one
call of a Python UDF, and DuckDB tells a running UDF nothing: neither
``con.interrupt()`` nor Ctrl-C (when the UDF runs on one of DuckDB's threads, the
main thread waits in DuckDB and runs no Python signal handler until the UDF
returns). So the stoppable UDFs run as jobs (``algorithms.stop``), tagged with
their connection's id, and two things stop them:

- ``interrupt(con)``: stops ``con``'s jobs, then interrupts ``con`` as
  ``con.interrupt()`` does;
- Ctrl-C: Python's C-level signal handler writes to a wakeup socket, watched by a
  thread that stops every job, whichever thread runs it.
"""

import signal
import socket
import threading
import weakref

from ..algorithms import stop

_IDS = weakref.WeakKeyDictionary()  # a loaded connection or cursor: its key
_WATCH = threading.Lock()
_watching = False


def remember(con):
    """Note ``con``'s key (``duckmine_connection``, set by ``load``), which its jobs
    are tagged with; the rows its failed queries left go with it."""
    from ..udfs import feed

    known = con in _IDS
    _IDS[con] = con.execute("SELECT getvariable('duckmine_connection')").fetchall()[0][0]
    if not known:
        weakref.finalize(con, feed.forget, _IDS[con])


def interrupt(con=None):
    """Stop the duckmine jobs of ``con`` (every job when ``con`` is None or was not
    loaded), then ``con.interrupt()``. Callable from any thread; the interrupted
    query fails and stores nothing, and ``con`` stays usable. Returns how many
    jobs were stopped."""
    if con is not None:  # first, so that the query fails as interrupted
        con.interrupt()
    return stop.stop(_IDS.get(con) if con is not None else None)


def _watch(sock):
    while True:
        try:
            data = sock.recv(512)
        except OSError:
            return
        if not data:
            return
        if signal.SIGINT in data:
            stop.stop()


def watch_ctrl_c():
    """Have Ctrl-C stop running jobs on any thread. Needs the main thread (Python
    sets signal wakeups only there) and a wakeup fd nobody else uses (an asyncio
    loop with signal handlers has one): otherwise Ctrl-C still stops a job whose
    UDF runs on the main thread, as a KeyboardInterrupt while it waits."""
    global _watching
    if threading.current_thread() is not threading.main_thread():
        return False
    with _WATCH:
        if _watching:
            return True
        reader, writer = socket.socketpair()
        writer.setblocking(False)
        try:
            previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except ValueError:
            reader.close(), writer.close()
            return False
        if previous != -1:  # someone else's: give it back
            signal.set_wakeup_fd(previous)
            reader.close(), writer.close()
            return False
        threading.Thread(target=_watch, args=(reader,), name="duckmine-ctrl-c",
                         daemon=True).start()
        _watching = True
        _watch.sockets = (reader, writer)  # kept open for the life of the process
        return True
