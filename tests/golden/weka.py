"""What the golden scripts need from the reference: its jar, running Java, and
compiling a small harness class against the jar."""

import subprocess
from pathlib import Path

WEKA = "/usr/share/java/weka.jar"


def java(*args, cwd=None):
    """The standard output of ``java args`` (an error if it fails)."""
    return subprocess.run(["java", "-Xmx4g", *args], capture_output=True, text=True,
                          cwd=cwd, check=True).stdout


def compile_harness(folder, name, source):
    """Compile class ``name`` from ``source`` in ``folder`` against the jar; return
    the class path that runs it."""
    (Path(folder) / f"{name}.java").write_text(source)
    subprocess.run(["javac", "-nowarn", "-cp", WEKA, f"{name}.java"], cwd=folder,
                   check=True, capture_output=True)
    return f"{WEKA}:{folder}"
