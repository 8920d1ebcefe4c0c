"""Regenerate the golden files of the baseline learners under tests/golden/baselines.

Reference: Weka 3.6.14 (``/usr/share/java/weka.jar``, java and javac on PATH).
Run from the repository root: ``python tests/golden/make_baselines_golden.py``
(about a minute).

For each data set of tests/data (class = last attribute) and each configuration
(``CONFIGS``: ZeroR; OneR with ``-B 6`` and ``-B 3``; NaiveBayes as it is, with
``-K`` and with ``-D``) ``weka.classifier_harness`` builds the classifier on the
whole file and writes ``<data>__<config>.json`` (its options, ``toString()`` and
``distributionForInstance`` of every row; see there).

And ``cli__<data>__<config>.txt``, for every configuration but ZeroR (whose runs are
in tests/golden/eval): the stdout of ``java <classifier> <options> -t <data>.arff``,
which ends with the stratified ten-fold cross-validation with seed 1.
"""

import tempfile
from pathlib import Path

from weka import WEKA, classifier_harness, java

HERE = Path(__file__).parent
OUT = HERE / "baselines"
DATA = HERE.parent / "data"
NOMINAL = ["weather.nominal", "weather.numeric", "contact-lenses", "labor", "iris",
           "diabetes", "soybean", "breast-cancer", "weather.nominal.missing-weighted"]
NUMERIC = ["cpu", "cpu.missing-weighted", "regression.nominal"]
ZERO_R = "weka.classifiers.rules.ZeroR"
ONE_R = "weka.classifiers.rules.OneR"
NAIVE_BAYES = "weka.classifiers.bayes.NaiveBayes"
CONFIGS = {  # config: (classifier, options, data sets)
    "zero_r": (ZERO_R, [], NOMINAL + NUMERIC),
    "one_r": (ONE_R, ["-B", "6"], NOMINAL),
    "one_r_b3": (ONE_R, ["-B", "3"], NOMINAL),
    "naive_bayes": (NAIVE_BAYES, [], NOMINAL),
    "naive_bayes_kernel": (NAIVE_BAYES, ["-K"], NOMINAL),
    "naive_bayes_discretize": (NAIVE_BAYES, ["-D"], NOMINAL),
}

def main():
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        run = classifier_harness(tmp)
        for config, (cls, options, datasets) in CONFIGS.items():
            for data in datasets:
                text = run(DATA / f"{data}.arff", cls, options)
                (OUT / f"{data}__{config}.json").write_text(text)
                if cls != ZERO_R:
                    cli = java("-cp", WEKA, cls, *options, "-t", str(DATA / f"{data}.arff"))
                    (OUT / f"cli__{data}__{config}.txt").write_text(cli)
                print(data, config)


if __name__ == "__main__":
    main()
