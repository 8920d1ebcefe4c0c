"""Each tool of a benchmark runs in a process of its own, so that its peak memory is
its own: the parent re-runs the benchmark module with ``--child`` and reads the
last line of its output as JSON."""

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
