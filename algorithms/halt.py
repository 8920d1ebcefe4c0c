"""The stop flag as kernels read it: ``halted(flag)``, an atomic load.

Kept apart from ``stop`` (the jobs, in plain Python), so that loading duckmine on a
connection imports no compiler.
"""

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from .jit import njit


@intrinsic
def _load_acquire(typingctx, halt):
    """``halt[0]`` read as an atomic load: another thread sets it while a kernel
    runs, and a plain read in a loop that never writes it may be hoisted out."""
    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        value = builder.load_atomic(data, "acquire", 1)
        return builder.icmp_unsigned("!=", value, ir.Constant(value.type, 0))
    return types.boolean(halt), codegen


@njit(cache=True, python=False)
def halted(halt):
    """Whether the stop flag ``halt`` (from ``flag``) is set: what a kernel reads
    at its loop boundaries."""
    return _load_acquire(halt)
