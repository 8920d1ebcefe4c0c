"""Refuse a fit that would not fit in memory, before it starts.

A fit holds its data as float64 columns and, at its peak, some bytes more per
cell (row x column) that depend on the learner: its ``memory`` declaration,
measured by ``benchmarks/memory.py``. The estimate is made from the row and column
counts alone: before a group's rows are taken for its fit, and as the rows arrive
for rows fed from a scan or held for an aggregate's groups (so a fit is refused
after the first chunks that would take it over). It is compared with the limit: the
session's ``duckmine_memory_limit`` or else DuckDB's ``memory_limit``. A fit over
the limit is refused with the estimate, the limit and the ways out, instead of
running the machine out of memory.
"""

import functools
import math
import re

UNITS = {"": 1, "b": 1, "byte": 1, "bytes": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3,
         "tb": 1000**4, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.I)


def parse_size(text, what="duckmine_memory_limit"):
    """Bytes of a size written as DuckDB writes them ('19.1 GiB', '500MB') or a
    number of bytes; ValueError naming ``what`` otherwise."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value, unit = float(text), ""
    else:
        found = _SIZE.match(str(text))
        if not found or found.group(2).lower() not in UNITS:
            raise ValueError(f"{what} must be a size such as '8GB' or '512 MiB', got "
                             f"{str(text)[:40]!r}")
        value, unit = float(found.group(1)), found.group(2).lower()
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a positive size, got {str(text)[:40]!r}")
    return value * UNITS[unit]


def size_text(n):
    """``n`` bytes as a reader reads them."""
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        scale = UNITS[unit.lower()]
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,.0f} bytes"


# A learner declares the bytes a cell its fit holds over the float64 columns,
# measured (benchmarks/memory.py, a million rows) with its rows fed from a scan, the
# largest on the benchmark's own table, its all-numeric one and the one whose
# target two columns tell (--data numeric, signal), rounded up.
# An aggregate form's rows, held once for their groups (udfs/stash.py), are allowed
# HELD bytes a row more: each row's place in DuckDB's list of its group (13 bytes a
# row with a function that does nothing; 25 when it was a 64-bit id) and the order
# its group is put in. At a million rows they took 20 to 53 more than fed rows with
# 64-bit ids, and a few learners more (ZeroR 85, RIPPER 118), within their declared
# bytes a cell.
HELD = 48.0


def needed(per_cell, rows, columns, per_row=0.0):
    """The bytes a fit of ``rows`` x ``columns`` holds at its peak: the float64
    columns and weights, ``per_cell`` more per cell and ``per_row`` more per row."""
    return rows * ((columns + 1) * 8.0 + per_cell * columns + per_row)


LIMIT = ("the limit is SET VARIABLE duckmine_memory_limit = '...' (by default DuckDB's "
         "memory_limit)")
ADVICE = ("fit a sample (FROM t USING SAMPLE 10%), fewer columns, one model per group "
          "(GROUP BY), or run it on Spark; " + LIMIT)
# for the aggregate form, which also holds its groups' ids and puts each in order
ADVICE_GROUP = ("fit the whole table with the table form or fit(...), or every group "
                "with fit_groups(...), which take less memory than an aggregate, or "
                + ADVICE)


def check(fn, per_cell, rows, columns, limit, so_far=False, advice=ADVICE,
          what="duckmine_memory_limit", per_row=0.0):
    """Refuse (ValueError naming ``fn``) a fit whose estimate exceeds ``limit``
    (a size, or None for no limit). ``so_far``: ``rows`` are those read so far of
    rows still arriving, so the fit would take more. ``advice``: the ways out, as
    the engine words them; ``what``: the limit's setting; ``per_row``: bytes a row
    held beside the fit (``HELD``)."""
    counted = f"{rows:,} rows x {columns} columns{' read so far' if so_far else ''}"
    refuse(fn, "fit", needed(per_cell, rows, columns, per_row), counted, limit, so_far,
           advice, what)


def refuse(fn, job, estimate, counted, limit, so_far=False, advice=ADVICE,
           what="duckmine_memory_limit"):
    """Refuse (ValueError naming ``fn``) a ``job`` whose ``estimate`` in bytes,
    made from what ``counted`` says, exceeds ``limit`` (a size, or None)."""
    if limit is None:
        return
    bytes_ = parse_size(limit, f"{fn}: {what}")
    if estimate > bytes_:
        size = f"{'over' if so_far else 'about'} {size_text(estimate)}"
        raise ValueError(
            f"{fn}: this {job} would take {size} of memory ({counted}), more than the "
            f"limit of {size_text(bytes_)}; {advice}")


@functools.cache
def _libc(name, *argtypes):
    """The C library's function ``name`` (glibc's ``malloc_trim``, Linux's
    ``madvise``), where there is one (looked up on first use); None elsewhere."""
    import ctypes

    try:
        call = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError, TypeError):  # not glibc; Windows takes no None
        return None
    if argtypes:
        call.argtypes = list(argtypes)
    return call


# glibc's allocator raises its threshold for serving a block from fresh pages
# (mmap, returned whole when freed) to the largest block freed so far, up to 32 MiB;
# the arrays a fit makes and frees by the thousand (a node's rows, a rule's) then
# come from its heap, where freed pieces are kept and held beside the next larger
# ones. Fixed at its starting value, a freed array's pages go back at once.
STEADY_THRESHOLD = 128 * 1024
M_MMAP_THRESHOLD = -3  # mallopt's parameter number


@functools.cache
def steady_allocator():
    """Fix the allocator's threshold for fresh pages at ``STEADY_THRESHOLD`` (once
    a process, where the C library has ``mallopt``): CART at 1,000,000 rows of
    noise peaks 90 bytes a row lower, in the same time."""
    import ctypes

    call = _libc("mallopt", ctypes.c_int, ctypes.c_int)
    if call is not None:
        call(M_MMAP_THRESHOLD, STEADY_THRESHOLD)


# from a table of this many rows, a fit hands freed memory back between its phases
# (each hand-back walks the allocator's heap: about 3 ms at 200,000 rows, where
# the next phase's arrays would reuse what it keeps, and the peak is the same)
GIVE_BACK_ROWS = 1_000_000


def give_back(rows):
    """Hand the memory of freed arrays back to the system, for a fit of a table of
    ``rows`` rows (from ``GIVE_BACK_ROWS``). The allocator keeps what is freed in
    pieces below its threshold for later arrays of those sizes; a fit whose next
    arrays are larger would hold both, and its peak would be their sum."""
    trim = _libc("malloc_trim") if rows >= GIVE_BACK_ROWS else None
    if trim is not None:
        trim(0)


MADV_DONTNEED = 4  # Linux: the pages go back; read again, they are zeros


def give_back_columns(a, n):
    """Hand back to the system the whole pages of every row of the C-ordered matrix
    ``a`` past its first ``n`` columns, which nothing reads again: a fit that has
    packed what it still needs to the front of each row frees the rest without a
    smaller copy beside it (the copy would be a peak of its own)."""
    import ctypes
    import mmap
    import sys

    call = _libc("madvise", ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int) \
        if sys.platform.startswith("linux") else None
    if call is None or n >= a.shape[1] or not a.flags.c_contiguous:
        return
    page = mmap.PAGESIZE
    for row in a:
        start = row.ctypes.data + int(n) * a.itemsize
        end = row.ctypes.data + a.shape[1] * a.itemsize
        start, end = -(-start // page) * page, end // page * page
        if end > start:
            call(start, end - start, MADV_DONTNEED)
