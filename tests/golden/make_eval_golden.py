"""Regenerate the cross-validation golden files under tests/golden/eval.

Reference: Weka 3.6.14 (``/usr/share/java/weka.jar``, java and javac on PATH).
Run from the repository root: ``python tests/golden/make_eval_golden.py``.

- ``zeror__<data>__x<folds>_s<seed>.txt``: the full stdout of
  ``weka.classifiers.rules.ZeroR -t <data>.arff -x <folds> -s <seed>``; the test
  rebuilds ZeroR (Laplace-corrected class counts, weighted mean) and compares
  the cross-validation block at the printed precision.
- ``cv__<data>__<learner>__x<folds>_s<seed>[_u<k>].json``: one run of Weka's own
  ``Evaluation.crossValidateModel`` with the learner wrapped in a recorder. The
  recorder sees the data with a row-number attribute in front, notes the row
  numbers of every training fold (in the order the learner gets them) and of
  every test row, strips the row number and passes through to the learner, whose
  predictions it notes at full precision (``_u<k>``: every row whose number is a
  multiple of k gets no prediction instead: all-zero probabilities or NaN).
  Stored with it: Weka's figures at full precision and its printed summary.
- ``cli__<data>__<learner>__x<folds>_s<seed>.txt``: stdout of the same learner
  run from the command line, to check the recorder changes nothing.
- ``java_random.json``: sequences of ``java.util.Random`` for a few seeds.

The ARFF files are copied to tests/data, with two variants made here:
``weather.nominal.missing-weighted.arff`` and ``cpu.missing-weighted.arff``
(some class values replaced by ``?`` and some rows given ``{w}`` weights).
"""

import json
import re
import shutil
import tempfile
from pathlib import Path

from weka import WEKA, compile_harness, java

HERE = Path(__file__).parent
OUT = HERE / "eval"
DATA = HERE.parent / "data"
SOURCE = Path("/work/shared/data/weka")

NOMINAL = ["weather.nominal", "weather.numeric", "contact-lenses", "labor", "iris",
           "diabetes", "soybean", "breast-cancer", "weather.nominal.missing-weighted"]
NUMERIC = ["cpu", "cpu.missing-weighted"]
# a fold count above the size of some class (up to leave-one-out) per data set
MANY_FOLDS = {"weather.nominal": 14, "weather.numeric": 13, "contact-lenses": 24,
              "labor": 57, "iris": 75, "diabetes": 40, "soybean": 50,
              "breast-cancer": 100, "weather.nominal.missing-weighted": 14,
              "cpu": 209, "cpu.missing-weighted": 30}
J48 = ("j48", ["weka.classifiers.trees.J48"])
NB = ("nb", ["weka.classifiers.bayes.NaiveBayes"])
LR = ("lr", ["weka.classifiers.functions.LinearRegression"])
ZR = ("zeror", ["weka.classifiers.rules.ZeroR"])
M5P = ("m5p", ["weka.classifiers.trees.M5P"])
# (data, learner, folds, seed, no prediction for every k-th row or 0)
RECORDED = (
    [(d, J48, 10, 1, 0) for d in NOMINAL]
    + [(d, J48, 3, 7, 0) for d in ("iris", "soybean", "breast-cancer", "labor")]
    + [(d, NB, 10, 1, 0) for d in ("weather.nominal", "soybean", "diabetes")]
    + [("contact-lenses", J48, 24, 1, 0), ("iris", NB, 75, 7, 0)]
    + [("weather.nominal.missing-weighted", J48, 10, 1, 4),
       ("weather.nominal.missing-weighted", NB, 3, 7, 0)]
    + [("cpu", m, 10, 1, 0) for m in (LR, ZR, M5P)]
    + [("cpu", LR, 3, 7, 0), ("cpu.missing-weighted", LR, 10, 1, 0),
       ("cpu.missing-weighted", LR, 5, 7, 5), ("cpu.missing-weighted", ZR, 10, 1, 0)]
)

HARNESS = r"""
import java.util.*;
import weka.core.*;
import weka.classifiers.*;
import weka.core.converters.ConverterUtils.DataSource;
import weka.filters.Filter;
import weka.filters.unsupervised.attribute.AddID;
import weka.filters.unsupervised.attribute.Remove;

public class EvalHarness extends JsonOut {
  static List<StringBuilder> trains = new ArrayList<StringBuilder>();
  static List<StringBuilder> tests = new ArrayList<StringBuilder>();
  static List<StringBuilder> preds = new ArrayList<StringBuilder>();

  static String num(double d) {
    if (Double.isNaN(d)) return "NaN";
    if (Double.isInfinite(d)) return d > 0 ? "Infinity" : "-Infinity";
    return Double.toString(d);
  }

  static void add(StringBuilder b, String s) {
    if (b.length() > 0) b.append(',');
    b.append(s);
  }

  public static class Recorder extends Classifier {
    Classifier inner;
    int every;
    Remove remove;

    public void buildClassifier(Instances train) throws Exception {
      StringBuilder ids = new StringBuilder();
      for (int i = 0; i < train.numInstances(); i++)
        add(ids, Integer.toString((int) train.instance(i).value(0) - 1));
      trains.add(ids);
      tests.add(new StringBuilder());
      preds.add(new StringBuilder());
      remove = new Remove();
      remove.setAttributeIndices("1");
      remove.setInputFormat(train);
      inner.buildClassifier(Filter.useFilter(train, remove));
    }

    int note(Instance inst) {
      int id = (int) inst.value(0) - 1;
      add(tests.get(tests.size() - 1), Integer.toString(id));
      return id;
    }

    Instance strip(Instance inst) throws Exception {
      remove.input(inst);
      return remove.output();
    }

    public double[] distributionForInstance(Instance inst) throws Exception {
      int id = note(inst);
      double[] dist = inner.distributionForInstance(strip(inst));
      if (every > 0 && (id + 1) % every == 0 && inst.classAttribute().isNominal())
        dist = new double[dist.length];
      StringBuilder row = new StringBuilder();
      for (double d : dist) add(row, num(d));
      add(preds.get(preds.size() - 1), "[" + row + "]");
      return dist;
    }

    public double classifyInstance(Instance inst) throws Exception {
      if (inst.classAttribute().isNominal()) return super.classifyInstance(inst);
      int id = note(inst);
      double p = inner.classifyInstance(strip(inst));
      if (every > 0 && (id + 1) % every == 0) p = Instance.missingValue();
      add(preds.get(preds.size() - 1), num(p));
      return p;
    }

    public String getRevision() { return "1"; }
  }

  static void random() {
    long[] seeds = {1L, 7L, 42L, -5L, 123456789012L};
    int[] bounds = {1, 2, 3, 5, 7, 10, 16, 100, 1000, 1073741825, 2147483647};
    StringBuilder out = new StringBuilder("[");
    for (int s = 0; s < seeds.length; s++) {
      Random r = new Random(seeds[s]);
      StringBuilder ints = new StringBuilder(), bounded = new StringBuilder();
      StringBuilder doubles = new StringBuilder(), longs = new StringBuilder();
      for (int i = 0; i < 20; i++) add(ints, Integer.toString(r.nextInt()));
      for (int k = 0; k < 3; k++)
        for (int b : bounds) add(bounded, "[" + b + "," + r.nextInt(b) + "]");
      for (int i = 0; i < 10; i++) add(doubles, num(r.nextDouble()));
      for (int i = 0; i < 5; i++) add(longs, "\"" + r.nextLong() + "\"");
      if (s > 0) out.append(",\n");
      out.append("{\"seed\":" + seeds[s] + ",\"ints\":[" + ints + "],\"bounded\":["
          + bounded + "],\"doubles\":[" + doubles + "],\"longs\":[" + longs + "]}");
    }
    System.out.println(out.append("]"));
  }

  public static void main(String[] args) throws Exception {
    if (args[0].equals("random")) { random(); return; }
    Instances data = DataSource.read(args[0]);
    int folds = Integer.parseInt(args[1]);
    long seed = Long.parseLong(args[2]);
    Recorder rec = new Recorder();
    rec.every = Integer.parseInt(args[3]);
    rec.inner = Classifier.forName(args[4], Arrays.copyOfRange(args, 5, args.length));
    AddID addId = new AddID();
    addId.setInputFormat(data);
    data = Filter.useFilter(data, addId);
    data.setClassIndex(data.numAttributes() - 1);
    Evaluation eval = new Evaluation(new Instances(data, 0));
    eval.crossValidateModel(rec, data, folds, new Random(seed));
    boolean nominal = data.classAttribute().isNominal();
    StringBuilder o = new StringBuilder("{");
    o.append("\"folds\":[");
    for (int f = 0; f < trains.size(); f++) {
      if (f > 0) o.append(",\n");
      o.append("{\"train\":[" + trains.get(f) + "],\"test\":[" + tests.get(f)
          + "],\"pred\":[" + preds.get(f) + "]}");
    }
    o.append("],\n\"stats\":{");
    if (nominal) {
      o.append("\"correct\":" + num(eval.correct()) + ",\"incorrect\":" + num(eval.incorrect()));
      o.append(",\"pct_correct\":" + num(eval.pctCorrect()));
      o.append(",\"pct_incorrect\":" + num(eval.pctIncorrect()));
      o.append(",\"kappa\":" + num(eval.kappa()) + ",");
    } else {
      o.append("\"correlation\":" + num(eval.correlationCoefficient()) + ",");
    }
    o.append("\"mean_absolute_error\":" + num(eval.meanAbsoluteError()));
    o.append(",\"root_mean_squared_error\":" + num(eval.rootMeanSquaredError()));
    o.append(",\"relative_absolute_error\":" + num(eval.relativeAbsoluteError()));
    o.append(",\"root_relative_squared_error\":" + num(eval.rootRelativeSquaredError()));
    o.append(",\"instances\":" + num(eval.numInstances()));
    o.append(",\"unclassified\":" + num(eval.unclassified()));
    o.append(",\"pct_unclassified\":" + num(eval.pctUnclassified()));
    if (nominal) {
      o.append(",\"confusion\":[");
      double[][] m = eval.confusionMatrix();
      for (int i = 0; i < m.length; i++) {
        StringBuilder row = new StringBuilder();
        for (double d : m[i]) add(row, num(d));
        o.append((i > 0 ? "," : "") + "[" + row + "]");
      }
      o.append("]");
    }
    String text = eval.toSummaryString("=== Summary ===\n", false);
    if (nominal) text += "\n" + eval.toMatrixString();
    o.append("},\n\"summary\":" + str(text) + "}");
    System.out.println(o);
  }
}
"""



def rewrite(src: Path, dst: Path, missing, weights):
    """Copy an ARFF with the class (last cell) of rows ``missing`` set to ``?``
    and weights ``{w}`` appended to rows in ``weights`` (1-based row numbers)."""
    out, row, data = [], 0, False
    for line in src.read_text().splitlines():
        if data and line.strip() and not line.startswith("%"):
            row += 1
            if row in missing:
                line = line[:line.rindex(",") + 1] + "?"
            if row in weights:
                line += f", {{{weights[row]}}}"
        data = data or line.strip().lower().startswith("@data")
        out.append(line)
    dst.write_text("\n".join(out) + "\n")


def prepare_data():
    DATA.mkdir(exist_ok=True)
    for name in NOMINAL + NUMERIC:
        src = SOURCE / f"{name}.arff"
        if src.exists():
            shutil.copyfile(src, DATA / src.name)
    rewrite(DATA / "weather.nominal.arff", DATA / "weather.nominal.missing-weighted.arff",
            {3, 8}, {**{r: 2.5 for r in (3, 6, 9, 12)}, 4: 0.5, 8: 0.5, 14: 0})
    rewrite(DATA / "cpu.arff", DATA / "cpu.missing-weighted.arff",
            set(range(5, 210, 17)), {r: (r % 7) / 2 for r in range(1, 210, 3)})


def figures(text):
    """The lines of figures of the first summary in ``text``."""
    lines = text.strip().splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith(("Correctly", "Correlation")))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def main():
    prepare_data()
    OUT.mkdir(exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        cp = compile_harness(tmp, "EvalHarness", HARNESS)
        (OUT / "java_random.json").write_text(java("-cp", cp, "EvalHarness", "random"))
        for name in NOMINAL + NUMERIC:
            arff = DATA / f"{name}.arff"
            for folds, seed in ((10, 1), (3, 1), (10, 7), (3, 7), (MANY_FOLDS[name], 1)):
                text = java("-cp", WEKA, "weka.classifiers.rules.ZeroR", "-t", str(arff),
                            "-x", str(folds), "-s", str(seed))
                (OUT / f"zeror__{name}__x{folds}_s{seed}.txt").write_text(text)
        for name, (tag, learner), folds, seed, every in RECORDED:
            arff = DATA / f"{name}.arff"
            stem = f"{name}__{tag}__x{folds}_s{seed}"
            text = java("-cp", cp, "EvalHarness", str(arff), str(folds), str(seed),
                        str(every), *learner)
            record = json.loads(text)  # checks it parses
            (OUT / f"cv__{stem}{f'_u{every}' if every else ''}.json").write_text(text)
            if not every:
                cli = java("-cp", WEKA, *learner, "-t", str(arff), "-x", str(folds),
                           "-s", str(seed))
                (OUT / f"cli__{stem}.txt").write_text(cli)
                block = re.split(r"=== (?:Stratified c|C)ross-validation ===\n", cli)[1]
                assert figures(block) == figures(record["summary"]), stem
            print(stem, every or "")


if __name__ == "__main__":
    main()
