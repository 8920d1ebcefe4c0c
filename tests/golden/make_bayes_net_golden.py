"""Regenerate the Bayesian network classifier golden files under tests/golden/bayes_net.

Reference: Weka 3.6.14 (``/usr/share/java/weka.jar``, java and javac on PATH).
Run from the repository root: ``python tests/golden/make_bayes_net_golden.py``.

Data sets (``DATASETS``, from tests/data, class = last attribute, all nominal)
and configurations (``CONFIGS``), where ``SE`` stands for
``-E weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A 0.5`` and the
search classes live in ``weka.classifiers.bayes.net.search.local``:

- ``k2_p1``: ``BayesNet -D -Q ...K2 -- -P 1 -S BAYES SE`` (this is naive Bayes:
  K2 starts from the naive Bayes structure and one parent leaves nothing to add);
- ``k2_p3``: the same with ``-P 3``;
- ``k2_p3_adtree``: ``k2_p3`` without ``-D``, i.e. counting with an ADTree. In
  3.6.14 ``-D`` means *do not* use the ADTree and ``setOptions`` turns the
  ADTree on whenever ``-D`` is absent (a fresh ``BayesNet`` has it off, and
  ``getOptions`` writes ``-D`` when it is off), so every other configuration
  passes ``-D`` explicitly;
- ``tan``: ``BayesNet -D -Q ...TAN -- -S BAYES SE``;
- ``hill_climb``: ``BayesNet -D -Q ...HillClimber -- -P 2 -R -S BAYES SE`` (``-R``:
  arc reversal allowed);
- ``aode``: ``weka.classifiers.bayes.AODE`` with its defaults (``-F 1``, Laplace).
  AODE refuses numeric attributes, so on the sets that have some (weather.numeric,
  labor, iris, diabetes) it is given the file after Weka's supervised
  ``Discretize`` filter with default options (Fayyad-Irani MDL, the same
  discretisation BayesNet applies internally), discretised once on the whole
  file; the ten-fold cross-validation then runs on that discretised file.

supermarket (4627 rows, 216 one-valued attributes, missing almost everywhere, so
every attribute is constant once BayesNet fills in missing values) is run with
every configuration except ``hill_climb``, whose command-line run takes about
110 s on it (``tan`` takes about 50 s, ``k2_p3`` about 20 s; the rest a few
seconds). The whole script takes about two minutes.

For each data set and configuration:

- ``<data>__<config>.txt``: stdout of ``java <classifier> -t <file> <options>``:
  the printed model, the figures on the training data and the stratified ten-fold
  cross-validation with seed 1. The "Time taken" lines vary by run. (BayesNet's
  "Warning: filling in missing values" messages go to stderr and are not kept.)
- ``<data>__<config>.json``: from a harness that builds the same classifier with
  the same options on the whole file, doubles at full precision (Java's
  ``Double.toString``, which reads back to the same double; ``-Infinity`` and
  ``NaN`` tokens are accepted by Python's ``json``):

  - ``options``: the options given to ``setOptions``;
  - ``attributes``: the attributes the classifier works on, as ``{"name",
    "values"}``; for BayesNet those of the filtered data it keeps
    (``m_Instances``: numeric attributes replaced by their discretised versions,
    named as Weka names the bins, quotes included: ``"'(-inf-2.45]'"``,
    ``"'(2.45-4.75]'"``, ``"'(4.75-inf)'"``, ``"'All'"``); for AODE those
    of the (discretised) file it is given;
  - ``cut_points``: for each numeric attribute of the original file, ``{"index",
    "name", "cuts"}`` with the supervised Discretize cut points (``[]`` when the
    attribute gets a single bin); empty when the file has no numeric attribute;
  - ``missing_filled`` (BayesNet): whether the data went through
    ReplaceMissingValues (after discretisation, so missing values become the
    mode of the discretised attribute);
  - ``nodes`` (BayesNet), one per attribute in order: ``name``, ``parents``
    (attribute indices in the parent set's order) and ``cpt``: one row per parent
    configuration, with the probability of each value of the node
    (``getDistributions()[node][row].getProbability(value)``). Rows are in
    Weka's order: ``row = 0``, then ``row = row * card(p) + value(p)`` for each
    parent ``p`` in order, so the last parent varies fastest;
  - ``scores`` (BayesNet): ``bayes``, ``bdeu``, ``mdl``, ``entropy``, ``aic``
    from ``measureBayesScore``, ``measureBDeuScore``, ``measureMDLScore``,
    ``measureEntropyScore`` and ``measureAICScore``;
  - ``text``: ``toString()`` of the built classifier;
  - ``dist``: per row of the file, in order, ``distributionForInstance`` (for AODE
    on the discretised rows).
"""

import json
import tempfile
import time
from pathlib import Path

from weka import WEKA, compile_harness, java

HERE = Path(__file__).parent
OUT = HERE / "bayes_net"
DATA = HERE.parent / "data"
DATASETS = ["weather.nominal", "weather.numeric", "contact-lenses", "labor", "iris",
            "diabetes", "soybean", "breast-cancer", "supermarket"]
SKIP = {"supermarket": {"hill_climb"}}

BAYES_NET = "weka.classifiers.bayes.BayesNet"
AODE = "weka.classifiers.bayes.AODE"
SEARCH = "weka.classifiers.bayes.net.search.local."
ESTIMATOR = ["-E", "weka.classifiers.bayes.net.estimate.SimpleEstimator", "--", "-A", "0.5"]
K2 = SEARCH + "K2"
CONFIGS = {
    "k2_p1": (BAYES_NET, ["-D", "-Q", K2, "--", "-P", "1", "-S", "BAYES", *ESTIMATOR]),
    "k2_p3": (BAYES_NET, ["-D", "-Q", K2, "--", "-P", "3", "-S", "BAYES", *ESTIMATOR]),
    "k2_p3_adtree": (BAYES_NET, ["-Q", K2, "--", "-P", "3", "-S", "BAYES", *ESTIMATOR]),
    "tan": (BAYES_NET, ["-D", "-Q", SEARCH + "TAN", "--", "-S", "BAYES", *ESTIMATOR]),
    "hill_climb": (BAYES_NET, ["-D", "-Q", SEARCH + "HillClimber", "--", "-P", "2", "-R",
                               "-S", "BAYES", *ESTIMATOR]),
    "aode": (AODE, []),
}

HARNESS = r"""
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.lang.reflect.Field;

import weka.classifiers.bayes.AODE;
import weka.classifiers.bayes.BayesNet;
import weka.core.Attribute;
import weka.core.Instances;
import weka.core.converters.ArffSaver;
import weka.core.converters.ConverterUtils.DataSource;
import weka.filters.Filter;
import weka.filters.supervised.attribute.Discretize;

public class BayesNetGolden extends JsonOut {

  static Object get(Object o, Class<?> cls, String name) throws Exception {
    Field f = cls.getDeclaredField(name);
    f.setAccessible(true);
    return f.get(o);
  }

  static Instances read(String path) throws Exception {
    Instances data = DataSource.read(path);
    data.setClassIndex(data.numAttributes() - 1);
    return data;
  }

  static void head(StringBuilder b, String[] options) {
    b.append("{\"options\":[");
    for (int i = 0; i < options.length; i++) b.append(i > 0 ? "," : "").append(str(options[i]));
    b.append("]");
  }

  static void attributes(StringBuilder b, Instances data) {
    b.append(",\n\"attributes\":[");
    for (int j = 0; j < data.numAttributes(); j++) {
      Attribute a = data.attribute(j);
      b.append(j > 0 ? ",\n" : "").append("{\"name\":").append(str(a.name()));
      b.append(",\"values\":[");
      for (int v = 0; v < a.numValues(); v++) b.append(v > 0 ? "," : "").append(str(a.value(v)));
      b.append("]}");
    }
    b.append("]");
  }

  // the cut points of every numeric attribute of the original data
  static void cutPoints(StringBuilder b, Instances original, Discretize filter) {
    b.append(",\n\"cut_points\":[");
    boolean first = true;
    for (int j = 0; j < original.numAttributes(); j++) {
      if (!original.attribute(j).isNumeric()) continue;
      double[] cuts = filter.getCutPoints(j);
      b.append(first ? "" : ",\n").append("{\"index\":").append(j);
      b.append(",\"name\":").append(str(original.attribute(j).name()));
      b.append(",\"cuts\":").append(arr(cuts == null ? new double[0] : cuts)).append("}");
      first = false;
    }
    b.append("]");
  }

  static String bayesNet(String path, String[] options) throws Exception {
    Instances data = read(path);
    BayesNet net = new BayesNet();
    net.setOptions(options.clone());
    net.buildClassifier(data);
    StringBuilder b = new StringBuilder();
    head(b, options);
    attributes(b, net.m_Instances);
    Discretize filter = (Discretize) get(net, BayesNet.class, "m_DiscretizeFilter");
    cutPoints(b, data, filter);
    b.append(",\n\"missing_filled\":")
        .append(get(net, BayesNet.class, "m_MissingValuesFilter") != null);
    b.append(",\n\"nodes\":[");
    for (int node = 0; node < net.getNrOfNodes(); node++) {
      int[] parents = new int[net.getNrOfParents(node)];
      for (int p = 0; p < parents.length; p++) parents[p] = net.getParent(node, p);
      b.append(node > 0 ? ",\n" : "").append("{\"name\":").append(str(net.getNodeName(node)));
      b.append(",\"parents\":").append(arr(parents)).append(",\"cpt\":[");
      int rows = net.getParentSet(node).getCardinalityOfParents();
      for (int row = 0; row < rows; row++) {
        double[] probs = new double[net.getCardinality(node)];
        for (int v = 0; v < probs.length; v++) {
          probs[v] = net.getDistributions()[node][row].getProbability(v);
        }
        b.append(row > 0 ? "," : "").append(arr(probs));
      }
      b.append("]}");
    }
    b.append("]");
    b.append(",\n\"scores\":{\"bayes\":").append(d(net.measureBayesScore()));
    b.append(",\"bdeu\":").append(d(net.measureBDeuScore()));
    b.append(",\"mdl\":").append(d(net.measureMDLScore()));
    b.append(",\"entropy\":").append(d(net.measureEntropyScore()));
    b.append(",\"aic\":").append(d(net.measureAICScore())).append("}");
    b.append(",\n\"text\":").append(str(net.toString()));
    b.append(",\n\"dist\":[");
    for (int i = 0; i < data.numInstances(); i++) {
      b.append(i > 0 ? ",\n" : "").append(arr(net.distributionForInstance(data.instance(i))));
    }
    return b.append("]}").toString();
  }

  // AODE on the file, or, when it has numeric attributes, on the file after the
  // supervised Discretize filter (saved to `saveTo` for the command-line run)
  static String aode(String path, String saveTo, String[] options) throws Exception {
    Instances original = read(path);
    Discretize filter = null;
    Instances data = original;
    if (original.checkForAttributeType(Attribute.NUMERIC)) {
      filter = new Discretize();
      filter.setInputFormat(original);
      Instances discretised = Filter.useFilter(original, filter);
      ArffSaver saver = new ArffSaver();
      saver.setInstances(discretised);
      saver.setFile(new File(saveTo));
      saver.writeBatch();
      data = read(saveTo);
    }
    AODE model = new AODE();
    model.setOptions(options.clone());
    model.buildClassifier(data);
    StringBuilder b = new StringBuilder();
    head(b, options);
    b.append(",\n\"discretised\":").append(filter != null);
    attributes(b, data);
    if (filter != null) cutPoints(b, original, filter);
    else b.append(",\n\"cut_points\":[]");
    b.append(",\n\"text\":").append(str(model.toString()));
    b.append(",\n\"dist\":[");
    for (int i = 0; i < data.numInstances(); i++) {
      b.append(i > 0 ? ",\n" : "").append(arr(model.distributionForInstance(data.instance(i))));
    }
    return b.append("]}").toString();
  }

  // args: bayes <arff> <options...> | aode <arff> <discretised arff> <options...>
  public static void main(String[] args) throws Exception {
    int skip = args[0].equals("aode") ? 3 : 2;
    String[] options = new String[args.length - skip];
    System.arraycopy(args, skip, options, 0, options.length);
    // keep the classifiers' own messages out of the JSON on stdout
    PrintStream out = System.out;
    System.setOut(new PrintStream(new ByteArrayOutputStream(), true));
    String json;
    try {
      json = skip == 3 ? aode(args[1], args[2], options) : bayesNet(args[1], options);
    } finally {
      System.setOut(out);
    }
    System.out.println(json);
  }
}
"""


def main():
    OUT.mkdir(exist_ok=True)
    timings = []
    with tempfile.TemporaryDirectory() as tmp:
        cp = compile_harness(tmp, "BayesNetGolden", HARNESS)
        for name in DATASETS:
            arff = DATA / f"{name}.arff"
            for tag, (cls, options) in CONFIGS.items():
                if tag in SKIP.get(name, ()):
                    continue
                started = time.perf_counter()
                if cls == AODE:
                    discretised = Path(tmp) / f"{name}.discretised.arff"
                    body = java("-cp", cp, "BayesNetGolden", "aode", str(arff),
                                str(discretised), *options)
                    train = discretised if json.loads(body)["discretised"] else arff
                else:
                    body = java("-cp", cp, "BayesNetGolden", "bayes", str(arff), *options)
                    json.loads(body)  # well-formed
                    train = arff
                (OUT / f"{name}__{tag}.json").write_text(body)
                text = java("-cp", WEKA, cls, "-t", str(train), *options, cwd=DATA)
                (OUT / f"{name}__{tag}.txt").write_text(text)
                timings.append((f"{name} {tag}", time.perf_counter() - started))
                print(f"{name} {tag}: {timings[-1][1]:.1f} s", flush=True)
    print(f"total: {sum(t for _, t in timings):.1f} s")


if __name__ == "__main__":
    main()
