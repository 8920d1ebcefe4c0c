"""Each tool of a benchmark runs in a process of its own, so that its peak memory is
its own: the parent re-runs the benchmark module with ``--child`` and reads the
last line of its output as JSON."""

import argparse
import json
import subprocess
import sys


def run_child(module, args, timeout):
    """The child's JSON result, or None when it runs out of time."""
    cmd = [sys.executable, "-m", module, "--child", *map(str, args)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        raise RuntimeError(f"{args[0]} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def tool_options(parser, tools, timeout, child_args, weka=True):
    """The options every benchmark has: which tools, how many runs, how long a
    tool's process may take, whether cached Weka results are run again; and the
    hidden ``--child`` of the re-run."""
    parser.add_argument("--tools", nargs="+", default=list(tools), choices=tools)
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per measurement; the median is shown")
    parser.add_argument("--timeout", type=float, default=timeout,
                        help="seconds allowed to one tool's process")
    if weka:
        parser.add_argument("--fresh-weka", action="store_true",
                            help="run Weka even when a cached result exists")
    parser.add_argument("--child", nargs=child_args, help=argparse.SUPPRESS)


def answer(child, duckmine, weka):
    """The child's part of a benchmark whose children take (tool, rows, repeat,
    timeout): ``duckmine(rows, repeat)`` or ``weka(rows, repeat, timeout)``,
    printed as JSON."""
    tool, n, repeat, timeout = child
    n, repeat, timeout = int(n), int(repeat), float(timeout)
    out = duckmine(n, repeat) if tool == "duckmine" else weka(n, repeat, timeout)
    print(json.dumps(out))
