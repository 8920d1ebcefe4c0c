"""Regenerate the EM and SimpleKMeans golden files under tests/golden/em.

Reference: Weka 3.6.14 (``/usr/share/java/weka.jar``, java and javac on PATH).
Run from the repository root: ``python tests/golden/make_em_golden.py``.

For each data set of ``DATASETS`` (read from tests/data):

- ``<data>__k3.txt``: stdout of
  ``weka.clusterers.EM -t <data>.arff -N 3 -I 100 -S 100 -M 1e-6``;
- ``<data>__auto.txt``: the same with ``-N -1`` (number of clusters chosen by
  ten-fold cross-validated log-likelihood);
- ``<data>__kmeans3.txt``: stdout of ``weka.clusterers.SimpleKMeans -t <data>.arff
  -N 3 -S 10``.

``-t`` without ``-c`` leaves the class index unset, so every attribute,
the last one included, is clustered (EM and SimpleKMeans also clear the class
index themselves before they build).

And from a small harness that builds the same models on the same data in-process
(doubles at full precision, as Java's ``Double.toString``, which reads back to the
same double; ``NaN``/``Infinity`` tokens are accepted by Python's ``json``):

- ``<data>__k3.json`` and ``<data>__auto.json`` (EM):
  ``num_clusters``; ``loglikely``, the value the training loop ends on (the mean
  weighted log-density of the training rows, computed in the E step before the
  final M step or before a revert); ``eval_loglikely``, the figure the text prints
  (the plain mean of ``logDensityForInstance`` over the rows, with the final
  model); ``trace``, the mean log-likelihood of each E step of the final fit;
  ``cv`` (auto only), per number of clusters tried, the ten fold
  log-likelihoods and their mean; ``priors``; per cluster and attribute
  ``mean``, ``std`` and ``weight`` (numeric attributes, else null) and
  ``counts``/``total``/``probs`` (nominal attributes, else null; the counts are
  the estimator's, with the initial 1 of each value included); ``init``, the same
  parameters as EM starts its final fit from (a reflective call of its own
  initialisation on the missing-value-replaced data), with the seeds, squared
  errors and cluster counts of the ten k-means runs it chooses from and the index
  of the chosen one; per row ``dist`` (``distributionForInstance``),
  ``log_density`` (``logDensityForInstance``), ``log_density_per_cluster``
  (``logDensityPerClusterForInstance``) and ``cluster`` (``clusterInstance``);
  ``stderr``, anything EM printed there (stack traces of restarts; empty when
  none happened).
- ``<data>__kmeans3.json`` (SimpleKMeans): ``num_clusters``, ``iterations``,
  ``centroids`` (per cluster, per attribute: the value, a nominal one as its code,
  null if missing), ``sizes``, ``squared_error`` (the printed within-cluster sum)
  and ``squared_errors`` (per cluster), and per row ``cluster``
  (``clusterInstance``).

Each JSON file also holds ``options`` and ``attributes`` (name, kind, values).
The script runs in about two minutes, 90 s of it for soybean (its automatic
choice of the number of clusters in particular).
"""

import json
import tempfile
import time
from pathlib import Path

from weka import WEKA, compile_harness, java

HERE = Path(__file__).parent
OUT = HERE / "em"
DATA = HERE.parent / "data"
DATASETS = ["weather.numeric", "weather.nominal", "iris", "diabetes", "labor", "soybean",
            "cpu", "contact-lenses", "breast-cancer"]
EM_OPTIONS = {
    "k3": ["-N", "3", "-I", "100", "-S", "100", "-M", "1e-6"],
    "auto": ["-N", "-1", "-I", "100", "-S", "100", "-M", "1e-6"],
}
KMEANS_OPTIONS = {"kmeans3": ["-N", "3", "-S", "10"]}

HARNESS = r"""
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import weka.clusterers.EM;
import weka.clusterers.SimpleKMeans;
import weka.core.Attribute;
import weka.core.Instance;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;
import weka.estimators.DiscreteEstimator;
import weka.estimators.Estimator;
import weka.filters.Filter;
import weka.filters.unsupervised.attribute.ReplaceMissingValues;

public class EmGolden extends JsonOut {

  static Object get(Object o, String name) throws Exception {
    Field f = o.getClass().getDeclaredField(name);
    f.setAccessible(true);
    return f.get(o);
  }

  static void set(Object o, String name, Object v) throws Exception {
    Field f = o.getClass().getDeclaredField(name);
    f.setAccessible(true);
    f.set(o, v);
  }

  static String header(Instances data, String[] options) {
    StringBuilder b = new StringBuilder("{\"options\":[");
    for (int i = 0; i < options.length; i++) b.append(i > 0 ? "," : "").append(str(options[i]));
    b.append("],\n\"attributes\":[");
    for (int j = 0; j < data.numAttributes(); j++) {
      Attribute a = data.attribute(j);
      b.append(j > 0 ? ",\n" : "").append("{\"name\":").append(str(a.name()));
      b.append(",\"kind\":").append(str(a.isNominal() ? "nominal" : "numeric"));
      if (a.isNominal()) {
        b.append(",\"values\":[");
        for (int v = 0; v < a.numValues(); v++) b.append(v > 0 ? "," : "").append(str(a.value(v)));
        b.append("]");
      }
      b.append("}");
    }
    return b.append("]").toString();
  }

  // mean, std, weight (numeric) and counts, total, probs (nominal) per cluster and attribute
  static void model(StringBuilder b, Instances data, double[][][] normal, Estimator[][] est,
                    double[] priors) {
    int k = priors.length;
    b.append(",\n\"priors\":").append(arr(priors));
    String[] keys = {"mean", "std", "weight"};
    for (int q = 0; q < 3; q++) {
      b.append(",\n\"").append(keys[q]).append("\":[");
      for (int c = 0; c < k; c++) {
        b.append(c > 0 ? ",\n[" : "[");
        for (int j = 0; j < data.numAttributes(); j++) {
          b.append(j > 0 ? "," : "");
          b.append(data.attribute(j).isNominal() ? "null" : d(normal[c][j][q]));
        }
        b.append("]");
      }
      b.append("]");
    }
    String[] nkeys = {"counts", "total", "probs"};
    for (int q = 0; q < 3; q++) {
      b.append(",\n\"").append(nkeys[q]).append("\":[");
      for (int c = 0; c < k; c++) {
        b.append(c > 0 ? ",\n[" : "[");
        for (int j = 0; j < data.numAttributes(); j++) {
          b.append(j > 0 ? "," : "");
          if (!data.attribute(j).isNominal()) { b.append("null"); continue; }
          DiscreteEstimator e = (DiscreteEstimator) est[c][j];
          if (q == 1) { b.append(d(e.getSumOfCounts())); continue; }
          double[] v = new double[data.attribute(j).numValues()];
          for (int s = 0; s < v.length; s++) v[s] = q == 0 ? e.getCount(s) : e.getProbability(s);
          b.append(arr(v));
        }
        b.append("]");
      }
      b.append("]");
    }
  }

  static Instances replaced(Instances data) throws Exception {
    Instances copy = new Instances(data);
    copy.setClassIndex(-1);
    ReplaceMissingValues rm = new ReplaceMissingValues();
    rm.setInputFormat(copy);
    return Filter.useFilter(copy, rm);
  }

  static String em(Instances data, String[] options) throws Exception {
    EM em = new EM();
    em.setOptions(options.clone());
    em.setDebug(true);
    PrintStream out = System.out, err = System.err;
    ByteArrayOutputStream bout = new ByteArrayOutputStream(), berr = new ByteArrayOutputStream();
    System.setOut(new PrintStream(bout, true));
    System.setErr(new PrintStream(berr, true));
    try {
      em.buildClusterer(data);
    } finally {
      System.setOut(out);
      System.setErr(err);
    }
    int k = em.numberOfClusters();
    StringBuilder b = new StringBuilder(header(data, options));
    b.append(",\n\"num_clusters\":").append(k);
    b.append(",\n\"loglikely\":").append(d((Double) get(em, "m_loglikely")));

    List<String> trace = new ArrayList<String>();
    List<Integer> cvK = new ArrayList<Integer>();
    List<List<String>> cvFolds = new ArrayList<List<String>>();
    List<String> cvMean = new ArrayList<String>();
    Pattern fold = Pattern.compile("^# clust: (\\d+) Fold: (\\d+) Loglikely: (\\S+)$");
    Pattern mean = Pattern.compile("^# clust: (\\d+) Mean Loglikely: (\\S+)$");
    for (String line : bout.toString().split("\n")) {
      Matcher m;
      if (line.startsWith("Loglikely: ")) {
        trace.add(line.substring("Loglikely: ".length()).trim());
      } else if ((m = fold.matcher(line)).matches()) {
        int c = Integer.parseInt(m.group(1));
        if (cvK.isEmpty() || cvK.get(cvK.size() - 1) != c) {
          cvK.add(c);
          cvFolds.add(new ArrayList<String>());
          cvMean.add("null");
        }
        cvFolds.get(cvFolds.size() - 1).add(m.group(3));
      } else if ((m = mean.matcher(line)).matches()) {
        cvMean.set(cvMean.size() - 1, m.group(2));
      }
    }
    b.append(",\n\"trace\":[").append(String.join(",", trace)).append("]");
    if (em.getNumClusters() == -1) {
      b.append(",\n\"cv\":[");
      for (int i = 0; i < cvK.size(); i++) {
        b.append(i > 0 ? ",\n" : "").append("{\"k\":").append(cvK.get(i));
        b.append(",\"folds\":[").append(String.join(",", cvFolds.get(i))).append("]");
        b.append(",\"mean\":").append(cvMean.get(i)).append("}");
      }
      b.append("]");
    }

    model(b, data, em.getClusterModelsNumericAtts(), (Estimator[][]) get(em, "m_model"),
          em.clusterPriors());

    // the starting point of the final fit: EM's own initialisation, called reflectively
    Instances work = replaced(data);
    int seed = em.getSeed();
    EM init = new EM();
    init.setOptions(options.clone());
    int n = work.numInstances(), p = work.numAttributes();
    double[] min = new double[p], max = new double[p];
    for (int j = 0; j < p; j++) min[j] = max[j] = Double.NaN;
    for (int i = 0; i < n; i++) {
      Instance in = work.instance(i);
      for (int j = 0; j < p; j++) {
        if (in.isMissing(j)) continue;
        double v = in.value(j);
        if (Double.isNaN(min[j])) { min[j] = max[j] = v; }
        else if (v < min[j]) min[j] = v;
        else if (v > max[j]) max[j] = v;
      }
    }
    set(init, "m_theInstances", work);
    set(init, "m_minValues", min);
    set(init, "m_maxValues", max);
    set(init, "m_num_instances", n);
    set(init, "m_num_attribs", p);
    set(init, "m_num_clusters", k);
    Random rr = new Random(seed);
    for (int i = 0; i < 10; i++) rr.nextDouble();
    set(init, "m_rr", rr);
    Method emInit = EM.class.getDeclaredMethod("EM_Init", Instances.class);
    emInit.setAccessible(true);
    emInit.invoke(init, work);

    // the ten k-means runs EM_Init chooses from, replayed with the same seeds
    Random seeds = new Random(seed);
    for (int i = 0; i < 10; i++) seeds.nextDouble();
    int[] kmSeed = new int[10], kmK = new int[10];
    double[] kmSse = new double[10];
    int best = -1;
    double bestSse = Double.MAX_VALUE;
    for (int r = 0; r < 10; r++) {
      SimpleKMeans sk = new SimpleKMeans();
      kmSeed[r] = seeds.nextInt();
      sk.setSeed(kmSeed[r]);
      sk.setNumClusters(k);
      sk.setDisplayStdDevs(true);
      sk.buildClusterer(work);
      kmSse[r] = sk.getSquaredError();
      kmK[r] = sk.numberOfClusters();
      if (kmSse[r] < bestSse) { bestSse = kmSse[r]; best = r; }
    }
    b.append(",\n\"init\":{\"kmeans_seeds\":").append(arr(kmSeed));
    b.append(",\n\"kmeans_squared_errors\":").append(arr(kmSse));
    b.append(",\n\"kmeans_num_clusters\":").append(arr(kmK));
    b.append(",\n\"kmeans_best\":").append(best);
    model(b, data, (double[][][]) get(init, "m_modelNormal"), (Estimator[][]) get(init, "m_model"),
          (double[]) get(init, "m_priors"));
    b.append("}");

    String[] rkeys = {"dist", "log_density", "log_density_per_cluster", "cluster"};
    double total = 0;
    StringBuilder[] rows = new StringBuilder[4];
    for (int q = 0; q < 4; q++) rows[q] = new StringBuilder();
    for (int i = 0; i < data.numInstances(); i++) {
      Instance in = data.instance(i);
      String sep = i > 0 ? ",\n" : "";
      double ld = em.logDensityForInstance(in);
      total += ld;
      rows[0].append(sep).append(arr(em.distributionForInstance(in)));
      rows[1].append(i > 0 ? "," : "").append(d(ld));
      rows[2].append(sep).append(arr(em.logDensityPerClusterForInstance(in)));
      rows[3].append(i > 0 ? "," : "").append(em.clusterInstance(in));
    }
    b.append(",\n\"eval_loglikely\":").append(d(total / data.numInstances()));
    for (int q = 0; q < 4; q++) {
      b.append(",\n\"").append(rkeys[q]).append("\":[").append(rows[q]).append("]");
    }
    b.append(",\n\"stderr\":").append(str(berr.toString()));
    return b.append("}").toString();
  }

  static String kmeans(Instances data, String[] options) throws Exception {
    SimpleKMeans sk = new SimpleKMeans();
    sk.setOptions(options.clone());
    sk.buildClusterer(data);
    int k = sk.numberOfClusters();
    StringBuilder b = new StringBuilder(header(data, options));
    b.append(",\n\"num_clusters\":").append(k);
    b.append(",\n\"iterations\":").append((Integer) get(sk, "m_Iterations"));
    Instances cent = sk.getClusterCentroids();
    b.append(",\n\"centroids\":[");
    for (int c = 0; c < cent.numInstances(); c++) {
      b.append(c > 0 ? ",\n[" : "[");
      for (int j = 0; j < cent.numAttributes(); j++) {
        b.append(j > 0 ? "," : "");
        b.append(cent.instance(c).isMissing(j) ? "null" : d(cent.instance(c).value(j)));
      }
      b.append("]");
    }
    b.append("]");
    b.append(",\n\"sizes\":").append(arr(sk.getClusterSizes()));
    b.append(",\n\"squared_error\":").append(d(sk.getSquaredError()));
    b.append(",\n\"squared_errors\":").append(arr((double[]) get(sk, "m_squaredErrors")));
    int[] cl = new int[data.numInstances()];
    for (int i = 0; i < cl.length; i++) cl[i] = sk.clusterInstance(data.instance(i));
    b.append(",\n\"cluster\":").append(arr(cl));
    return b.append("}").toString();
  }

  public static void main(String[] args) throws Exception {
    Instances data = DataSource.read(args[1]);
    data.setClassIndex(-1);
    String[] options = new String[args.length - 2];
    System.arraycopy(args, 2, options, 0, options.length);
    System.out.println(args[0].equals("em") ? em(data, options) : kmeans(data, options));
  }
}
"""



def main():
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cp = compile_harness(tmp, "EmGolden", HARNESS)
        for name in DATASETS:
            arff = f"{name}.arff"
            started = time.perf_counter()
            runs = [("weka.clusterers.EM", "em", tag, options)
                    for tag, options in EM_OPTIONS.items()]
            runs += [("weka.clusterers.SimpleKMeans", "kmeans", tag, options)
                     for tag, options in KMEANS_OPTIONS.items()]
            for cls, kind, tag, options in runs:
                text = java("-cp", WEKA, cls, "-t", arff, *options, cwd=DATA)
                (OUT / f"{name}__{tag}.txt").write_text(text)
                body = java("-cp", cp, "EmGolden", kind, str(DATA / arff),
                            *options)
                json.loads(body)  # well-formed
                (OUT / f"{name}__{tag}.json").write_text(body)
            print(f"{name}: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
