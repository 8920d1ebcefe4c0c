"""Regenerate tests/golden/near_ties/cases.json: data sets drawn from the near-ties
and crossings strategies of tests/test_near_ties.py, each with what J48 and PART
(Weka 3.6.14, ``/usr/share/java/weka.jar``) print and the class probabilities of
its probe rows. The crossings kept are those where C4.5 grows its tree again,
because a threshold moved across a value of its node.

Run from the repository root: ``python tests/golden/make_near_ties_golden.py [N] [M]``
(N near-ties data sets, 24 by default, and M crossings, 12 by default)."""

import json
import sys
import tempfile
import warnings
from pathlib import Path

from weka import ClassifierServer

import duckmine
from duckmine.tests.test_near_ties import CONFIGS, GOLDEN, crossings, growths, near_ties

warnings.filterwarnings("ignore", "The `.example\\(\\)` method")


def grown_again(folder, text):
    """Whether C4.5 grows the tree of ``text`` (an ARFF) a second time."""
    with growths() as grown, duckmine.connect() as db:
        (Path(folder) / "seen.arff").write_text(text)
        duckmine.read_arff(db, Path(folder) / "seen.arff", "train")
        db.sql("SELECT model FROM fit('c45', 'train', 'y')").fetchall()
    return True in grown


def main(n=24, m=12):
    cases = []
    with tempfile.TemporaryDirectory() as folder:
        server = ClassifierServer(folder)
        train, probe = Path(folder) / "train.arff", Path(folder) / "probe.arff"
        for strategy, count, keep in ((near_ties, n, None), (crossings, m, grown_again)):
            made = 0
            while made < count:
                text, probes = strategy().example()
                if keep is not None and not keep(folder, text):
                    continue
                train.write_text(text)
                probe.write_text(probes)
                want = {config: server.ask(cls, opts, train, probe)
                        for config, (cls, opts, _, _) in CONFIGS.items()}
                cases.append({"train": text, "probes": probes, "want": want})
                made += 1
        server.close()
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(cases, indent=1) + "\n")
    print(f"{len(cases)} cases in {GOLDEN}")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
