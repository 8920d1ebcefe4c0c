"""Regenerate the filter golden files under tests/golden/filters.

Reference: Weka 3.6.14 (``/usr/share/java/weka.jar``, java on PATH). Run from the
repository root: ``python tests/golden/make_filters_golden.py`` (a few seconds).

For each data set of tests/data and each configuration it applies to, the file
``<data>__<config>.arff`` is what ``java <filter> <options> -i <data>.arff``
writes: the whole file filtered in one batch (values with six decimals, instance
weights kept). The unsupervised filters run without a class, so they transform
every attribute; the supervised ones take the last attribute as the class:

- ``replace_missing``: ``unsupervised.attribute.ReplaceMissingValues``;
- ``normalize``: ``unsupervised.attribute.Normalize``;
- ``standardize``: ``unsupervised.attribute.Standardize``;
- ``nominal_to_binary``: ``unsupervised.attribute.NominalToBinary`` (numeric 0/1
  attributes, its default);
- ``discretize_bins``: ``unsupervised.attribute.Discretize -B 10`` (equal width);
- ``discretize_mdl``: ``supervised.attribute.Discretize -c last`` (nominal class);
- ``nominal_to_binary_ranked``: ``supervised.attribute.NominalToBinary -c last``
  (numeric class: values ranked by the class mean).
"""

import subprocess
from pathlib import Path

from weka import WEKA

HERE = Path(__file__).parent
OUT = HERE / "filters"
DATA = HERE.parent / "data"
U = "weka.filters.unsupervised.attribute."
S = "weka.filters.supervised.attribute."
UNSUPERVISED = {
    "replace_missing": (U + "ReplaceMissingValues", []),
    "normalize": (U + "Normalize", []),
    "standardize": (U + "Standardize", []),
    "nominal_to_binary": (U + "NominalToBinary", []),
    "discretize_bins": (U + "Discretize", ["-B", "10"]),
}
NOMINAL_CLASS = {"discretize_mdl": (S + "Discretize", ["-c", "last"])}
NUMERIC_CLASS = {"nominal_to_binary_ranked": (S + "NominalToBinary", ["-c", "last"])}
DATASETS = {
    "weather.numeric": NOMINAL_CLASS,
    "labor": NOMINAL_CLASS,
    "iris": NOMINAL_CLASS,
    "breast-cancer": NOMINAL_CLASS,
    "cpu.missing-weighted": NUMERIC_CLASS,
    "weather.nominal.missing-weighted": NOMINAL_CLASS,
    "regression.nominal": NUMERIC_CLASS,
}


def main():
    OUT.mkdir(exist_ok=True)
    for data, supervised in DATASETS.items():
        for config, (cls, options) in {**UNSUPERVISED, **supervised}.items():
            text = subprocess.run(
                ["java", "-cp", WEKA, cls, *options, "-i", str(DATA / f"{data}.arff")],
                capture_output=True, text=True, check=True).stdout
            (OUT / f"{data}__{config}.arff").write_text(text)
            print(data, config)


if __name__ == "__main__":
    main()
