"""Regenerate the M5P and M5Rules golden files under tests/golden/m5p.

Reference: Weka 3.6.14 (``/usr/share/java/weka.jar``, java and javac on PATH).
Run from the repository root: ``python tests/golden/make_m5p_golden.py``.

Data sets (all with a numeric class as the last attribute), in tests/data:

- ``cpu.arff``: as shipped (numeric attributes only).
- ``cpu.missing.arff``: cpu.arff with about 10% of the attribute cells (never the
  class) replaced by ``?``, chosen by ``random.Random(MISSING_SEED)``; written here.
- ``regression.nominal.arff``: 300 rows of Weka's MexicanHat generator
  (``-S 1 -n 300 -A 5 -N 0.1 -V 0.5``: ``x`` and the class ``y``) with two nominal
  attributes derived here by ``random.Random(NOMINAL_SEED)``: ``colour`` (from
  bins of ``x``, 10% of rows reassigned at random, 5% missing; the declared
  value ``violet`` never occurs) and ``size`` (``large`` when ``|x| < 2.5``, 10%
  flipped, 3% missing). The class gets a shift per colour and size so that both
  attributes carry information. Attribute order: x, colour, size, y.

For each data set and option set (``TAGS``):

- ``<data>__<tag>.txt``: the full stdout of
  ``java weka.classifiers.trees.M5P -t <file> <options>`` (model, training-set
  figures, ten-fold cross-validation with seed 1). The "Time taken" lines vary
  by run.
- ``<data>__<tag>.pred.json``: the predictions of M5P built on the whole file,
  for every row in file order, as a JSON list of numbers written with Java's
  ``Double.toString`` (reads back to the same double).

and for M5Rules with the default options and -R, -N, -U: ``m5rules__<data>__<tag>.txt`` and
``m5rules__<data>__<tag>.pred.json`` in the same way.
"""

import random
import re
import tempfile
import time
from pathlib import Path

from weka import WEKA, compile_harness, java

HERE = Path(__file__).parent
OUT = HERE / "m5p"
DATA = HERE.parent / "data"
MISSING_SEED = 20240611
NOMINAL_SEED = 7
TAGS = {
    "default": ["-M", "4"],
    "R": ["-R"],
    "N": ["-N"],
    "U": ["-U"],
    "M10": ["-M", "10"],
}
RULES_TAGS = {"default": [], "R": ["-R"], "N": ["-N"], "U": ["-U"]}
DATASETS = ["cpu", "cpu.missing", "regression.nominal", "cpu.missing-weighted"]

PRED = r"""
import weka.core.Instances;
import weka.classifiers.Classifier;
import weka.core.converters.ConverterUtils.DataSource;

public class M5Pred {
  public static void main(String[] args) throws Exception {
    Instances data = DataSource.read(args[1]);
    data.setClassIndex(data.numAttributes() - 1);
    Classifier model = (Classifier) Class.forName(args[0]).newInstance();
    String[] options = new String[args.length - 2];
    System.arraycopy(args, 2, options, 0, options.length);
    model.setOptions(options);
    model.buildClassifier(data);
    StringBuilder out = new StringBuilder("[");
    for (int i = 0; i < data.numInstances(); i++) {
      out.append(i > 0 ? ",\n" : "");
      out.append(Double.toString(model.classifyInstance(data.instance(i))));
    }
    System.out.println(out.append("]"));
  }
}
"""



def split_arff(text):
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data")
    return lines[:at + 1], lines[at + 1:]


def make_cpu_missing():
    header, rows = split_arff((DATA / "cpu.arff").read_text())
    rng = random.Random(MISSING_SEED)
    out = []
    for row in rows:
        if not row.strip() or row.lstrip().startswith("%"):
            out.append(row)
            continue
        cells = row.split(",")
        for j in range(len(cells) - 1):
            if rng.random() < 0.10:
                cells[j] = "?"
        out.append(",".join(cells))
    (DATA / "cpu.missing.arff").write_text("\n".join(header + out) + "\n")


def make_regression_nominal():
    text = java("-cp", WEKA, "weka.datagenerators.classifiers.regression.MexicanHat",
                "-S", "1", "-n", "300", "-A", "5", "-N", "0.1", "-V", "0.5")
    _, rows = split_arff(text)
    pairs = [tuple(float(v) for v in r.split(",")) for r in rows
             if r.strip() and not r.startswith("%")]
    rng = random.Random(NOMINAL_SEED)
    colours = ["red", "green", "blue", "amber"]
    shift = {"red": 0.0, "green": 0.8, "blue": -0.6, "amber": 1.5}
    lines = [
        "% MexicanHat (Weka 3.6.14: -S 1 -n 300 -A 5 -N 0.1 -V 0.5) with two",
        "% nominal attributes derived by tests/golden/make_m5p_golden.py",
        "@relation regression.nominal",
        "@attribute x numeric",
        "@attribute colour {red,green,blue,amber,violet}",
        "@attribute size {small,large}",
        "@attribute y numeric",
        "@data",
    ]
    for x, y in pairs:
        colour = colours[min(3, int((x + 10.0) / 5.0))]
        if rng.random() < 0.10:
            colour = colours[rng.randrange(4)]
        size = "large" if abs(x) < 2.5 else "small"
        if rng.random() < 0.10:
            size = "small" if size == "large" else "large"
        y = y + shift[colour] + (0.7 if size == "large" else 0.0)
        colour_cell = "?" if rng.random() < 0.05 else colour
        size_cell = "?" if rng.random() < 0.03 else size
        lines.append(f"{x:.6f},{colour_cell},{size_cell},{round(y, 6)!r}")
    (DATA / "regression.nominal.arff").write_text("\n".join(lines) + "\n")


def timed(timings, label, *args, cwd=None):
    start = time.perf_counter()
    result = java(*args, cwd=cwd)
    timings.append((label, time.perf_counter() - start))
    return result


def main():
    OUT.mkdir(exist_ok=True)
    make_cpu_missing()
    make_regression_nominal()
    timings = []
    runs = [("weka.classifiers.trees.M5P", "", TAGS),
            ("weka.classifiers.rules.M5Rules", "m5rules__", RULES_TAGS)]
    with tempfile.TemporaryDirectory() as tmp:
        cp = compile_harness(tmp, "M5Pred", PRED)
        for name in DATASETS:
            arff = DATA / f"{name}.arff"
            for cls, prefix, tags in runs:
                short = cls.rsplit(".", 1)[1]
                for tag, options in tags.items():
                    stem = f"{prefix}{name}__{tag}"
                    text = timed(timings, f"{short} {name} {tag} cli", "-cp", WEKA, cls,
                                 "-t", str(arff), *options, cwd=DATA)
                    (OUT / f"{stem}.txt").write_text(text)
                    pred = timed(timings, f"{short} {name} {tag} pred", "-cp",
                                 cp, "M5Pred", cls, str(arff), *options)
                    if not re.fullmatch(r"\[[^\]]*\]\s*", pred):
                        raise RuntimeError(f"unexpected prediction output for {stem}")
                    (OUT / f"{stem}.pred.json").write_text(pred)
    for label, seconds in timings:
        print(f"{label}: {seconds:.2f} s")


if __name__ == "__main__":
    main()
