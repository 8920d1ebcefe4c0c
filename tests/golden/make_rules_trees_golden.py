"""Regenerate the golden files of the rule learners and trees under
tests/golden/rules_trees.

Reference: Weka 3.6.14 (``/usr/share/java/weka.jar``, java and javac on PATH).
Run from the repository root: ``python tests/golden/make_rules_trees_golden.py
[config ...] [data ...]`` (the configurations and data sets named, or all).

For each configuration (``CONFIGS``: a Weka classifier with its options) and each
data set it applies to (every ARFF file of ../shared/data/weka, copied to
tests/data, and iris.weighted, iris with instance weights that are not whole,
written by ``weighted_iris``; the class is the last attribute):

- ``<data>__<config>.json``: from ``weka.classifier_harness``: the options, the
  printed model (``toString()``) and ``distributionForInstance`` of every row;
- ``cli__<data>__<config>.txt``: the stdout of ``java <classifier> <options> -t
  <data>.arff``, which ends with the stratified ten-fold cross-validation (seed 1).

Ridor runs with its defaults (one shuffle: ``-S 1`` is its default), with ``-A``,
with ``-M`` and with ``-F 4 -N 3 -S 3`` (its seed option ``-s`` is taken by the
command line's own cross-validation seed, so it is left at 1). JRip (``ripper``)
runs with its defaults, with ``-P`` (no pruning), with ``-E`` (no error-rate check)
and with ``-F 4 -N 3 -O 1 -S 7``. SimpleCart (``cart``) runs with its defaults, with
``-U`` (unpruned), with ``-A -N 10`` (the one-SE rule, ten pruning folds) and with
``-H -C 0.5`` (no heuristic nominal ordering, half the data). PART runs with its
defaults, with ``-R`` (reduced-error pruning), with ``-B -M 5`` (binary splits, 5
rows a leaf) and with ``-U`` (unpruned). REPTree runs with its defaults, with
``-P`` (no pruning) and with ``-L 3 -M 5``; on numeric targets (cpu, cpu.missing
with missing attribute values, and cpu.missing-weighted with weights and missing
targets) as regression trees. PART also runs on the generated data sets of
``make_j48_golden.py`` with missing values, ``missing-deep`` and its weighted copy,
where its splits spread rows over every branch and its rules cover rows in part.
"""

import sys
import tempfile
from pathlib import Path

from weka import WEKA, classifier_harness, java

HERE = Path(__file__).parent
OUT = HERE / "rules_trees"
DATA = HERE.parent / "data"
NOMINAL = ["weather.nominal", "weather.numeric", "contact-lenses", "labor", "iris",
           "diabetes", "soybean", "breast-cancer", "supermarket", "iris.weighted"]
NUMERIC = ["cpu", "cpu.missing", "cpu.missing-weighted"]
DEEP = ["missing-deep", "missing-deep-weighted"]  # made by make_j48_golden.py
REPTREE = "weka.classifiers.trees.REPTree"
PART = "weka.classifiers.rules.PART"
RIDOR = "weka.classifiers.rules.Ridor"
JRIP = "weka.classifiers.rules.JRip"
CART = "weka.classifiers.trees.SimpleCart"
CONFIGS = {  # config: (classifier, options, data sets)
    "ridor": (RIDOR, [], NOMINAL),
    "ridor_a": (RIDOR, ["-A"], NOMINAL),
    "ridor_m": (RIDOR, ["-M"], NOMINAL),
    "ridor_f4_n3_s3": (RIDOR, ["-F", "4", "-N", "3", "-S", "3"], NOMINAL),
    "ripper": (JRIP, [], NOMINAL),
    "ripper_p": (JRIP, ["-P"], NOMINAL),
    "ripper_e": (JRIP, ["-E"], NOMINAL),
    "ripper_f4_n3_o1_s7": (JRIP, ["-F", "4", "-N", "3", "-O", "1", "-S", "7"], NOMINAL),
    "cart": (CART, [], NOMINAL),
    "cart_u": (CART, ["-U"], NOMINAL),
    "cart_a_n10": (CART, ["-A", "-N", "10"], NOMINAL),
    "cart_h_c05": (CART, ["-H", "-C", "0.5"], NOMINAL),
    "part": (PART, [], NOMINAL + DEEP),
    "part_r": (PART, ["-R"], NOMINAL + DEEP),
    "part_b_m5": (PART, ["-B", "-M", "5"], NOMINAL + DEEP),
    "part_u": (PART, ["-U"], NOMINAL + DEEP),
    "rep_tree": (REPTREE, [], NOMINAL + NUMERIC),
    "rep_tree_unpruned": (REPTREE, ["-P"], NOMINAL + NUMERIC),
    "rep_tree_l3_m5": (REPTREE, ["-L", "3", "-M", "5"], NOMINAL + NUMERIC),
}


def weighted_iris():
    """tests/data/iris.weighted.arff: iris with instance weights 0.1 to 1.3 that are
    not whole (so sums depend on the order rows are added in)."""
    lines, row = [], 0
    for line in (DATA / "iris.arff").read_text().splitlines():
        if line and not line.startswith(("@", "%")):
            line += f", {{{(row * 7 % 13 + 1) / 10}}}"
            row += 1
        lines.append(line)
    (DATA / "iris.weighted.arff").write_text("\n".join(lines) + "\n")


def main():
    OUT.mkdir(exist_ok=True)
    weighted_iris()
    named = set(sys.argv[1:])  # configurations and data sets to make again (all: none)
    only = named & set(CONFIGS)
    sets = named - only
    with tempfile.TemporaryDirectory() as tmp:
        run = classifier_harness(tmp)
        for config, (cls, options, datasets) in CONFIGS.items():
            if only and config not in only:
                continue
            for data in datasets:
                if sets and data not in sets:
                    continue
                arff = DATA / f"{data}.arff"
                (OUT / f"{data}__{config}.json").write_text(run(arff, cls, options))
                cli = java("-cp", WEKA, cls, *options, "-t", str(arff))
                (OUT / f"cli__{data}__{config}.txt").write_text(cli)
                print(data, config)


if __name__ == "__main__":
    main()
