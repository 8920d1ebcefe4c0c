"""Regenerate tests/golden/near_ties/cases.json: data sets drawn from the near-ties
strategy of tests/test_near_ties.py, each with what J48 and PART (Weka 3.6.14,
``/usr/share/java/weka.jar``) print and the class probabilities of its probe rows.

Run from the repository root: ``python tests/golden/make_near_ties_golden.py [N]``
(N data sets, 24 by default)."""

import json
import sys
import tempfile
import warnings
from pathlib import Path

from weka import ClassifierServer

from duckmine.tests.test_near_ties import CONFIGS, GOLDEN, near_ties

warnings.filterwarnings("ignore", "The `.example\\(\\)` method")


def main(n=24):
    cases = []
    with tempfile.TemporaryDirectory() as folder:
        server = ClassifierServer(folder)
        train, probe = Path(folder) / "train.arff", Path(folder) / "probe.arff"
        while len(cases) < n:
            text, probes = near_ties().example()
            train.write_text(text)
            probe.write_text(probes)
            want = {config: server.ask(cls, opts, train, probe)
                    for config, (cls, opts, _, _) in CONFIGS.items()}
            cases.append({"train": text, "probes": probes, "want": want})
        server.close()
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(cases, indent=1) + "\n")
    print(f"{len(cases)} cases in {GOLDEN}")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
