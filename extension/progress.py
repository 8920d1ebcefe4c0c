"""Progress of the queries of one connection, heard through the core's hook
(``algorithms/progress``): ``watching(con, callback)`` around a query, and the
command line's bars (``Bars``: a ``tqdm`` bar per task on stderr)."""

import shutil
import sys
from contextlib import contextmanager

from ..algorithms import progress as core


@contextmanager
def watching(con, callback):
    """Have ``callback(task, done, total)`` hear how far the queries ``con`` runs
    meanwhile have got (``total`` None where it is not known). ``con`` is a
    connection or a cursor: each is its own tag, so nothing of others is heard."""
    ((tag,),) = con.execute("SELECT getvariable('duckmine_connection')").fetchall()
    unwatch = core.watch(tag, callback)
    try:
        yield
    finally:
        unwatch()


class Bars:
    """A ``tqdm`` bar per task on stderr, one under the other, cleared at the end."""

    def __init__(self, file=None):
        self.file = file or sys.stderr
        self.bars = {}

    def __call__(self, task, done, total):
        from tqdm import tqdm

        bar = self.bars.get(task)
        if bar is None:
            # a terminal that gives no size (0 x 0) would hide every bar
            size = shutil.get_terminal_size((100, 24))
            bar = self.bars[task] = tqdm(total=total, desc=task, file=self.file,
                                         leave=False, position=len(self.bars),
                                         ncols=size.columns, nrows=size.lines)
        bar.n = done
        bar.refresh()

    def close(self):
        for bar in self.bars.values():
            bar.close()
        self.bars.clear()
