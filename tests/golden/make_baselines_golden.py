"""Regenerate the golden files of the baseline learners under tests/golden/baselines.

Reference: Weka 3.6.14 (``/usr/share/java/weka.jar``, java and javac on PATH).
Run from the repository root: ``python tests/golden/make_baselines_golden.py``
(about a minute).

For each data set of tests/data (class = last attribute) and each configuration
(``CONFIGS``: ZeroR; OneR with ``-B 6`` and ``-B 3``; NaiveBayes as it is, with
``-K`` and with ``-D``) a harness builds the classifier on the whole file and
writes ``<data>__<config>.json``:

- ``options``: the options given to ``setOptions``;
- ``text``: ``toString()`` of the built classifier;
- ``dist``: per row of the file, in order, ``distributionForInstance`` (one
  number, the prediction, for a numeric class), doubles at full precision (Java's
  ``Double.toString``, which reads back to the same double).

Data sets with instance weights (``*.missing-weighted``) are read with them, as
the reference reads ``{w}`` in an ARFF file.

And ``cli__<data>__<config>.txt``, for every configuration but ZeroR (whose runs are
in tests/golden/eval): the stdout of ``java <classifier> <options> -t <data>.arff``,
which ends with the stratified ten-fold cross-validation with seed 1.
"""

import json
import tempfile
from pathlib import Path

from weka import compile_harness, java

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

HARNESS = r"""
import weka.classifiers.Classifier;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

public class BaselineGolden extends JsonOut {
  public static void main(String[] args) throws Exception {
    Instances data = DataSource.read(args[0]);
    data.setClassIndex(data.numAttributes() - 1);
    String[] options = new String[args.length - 2];
    System.arraycopy(args, 2, options, 0, options.length);
    StringBuilder given = new StringBuilder("[");
    for (int i = 0; i < options.length; i++)
      given.append(i > 0 ? "," : "").append(str(options[i]));
    given.append("]");
    Classifier c = Classifier.forName(args[1], options.clone());
    c.buildClassifier(data);
    StringBuilder out = new StringBuilder("{\"options\":").append(given);
    out.append(",\"text\":").append(str(c.toString())).append(",\"dist\":[");
    for (int i = 0; i < data.numInstances(); i++)
      out.append(i > 0 ? "," : "").append(arr(c.distributionForInstance(data.instance(i))));
    System.out.println(out.append("]}"));
  }
}
"""


def main():
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cp = compile_harness(tmp, "BaselineGolden", HARNESS)
        for config, (cls, options, datasets) in CONFIGS.items():
            for data in datasets:
                text = java("-cp", cp, "BaselineGolden", str(DATA / f"{data}.arff"), cls,
                            *options)
                json.loads(text)  # it must parse
                (OUT / f"{data}__{config}.json").write_text(text)
                if cls != ZERO_R:
                    cli = java("-cp", cp, cls, *options, "-t", str(DATA / f"{data}.arff"))
                    (OUT / f"cli__{data}__{config}.txt").write_text(cli)
                print(data, config)


if __name__ == "__main__":
    main()
