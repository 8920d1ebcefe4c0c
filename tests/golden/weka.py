"""What the golden scripts need from the reference: its jar, running Java, and
compiling a small harness class against the jar."""

import json
import subprocess
from pathlib import Path

WEKA = "/usr/share/java/weka.jar"


def java(*args, cwd=None):
    """The standard output of ``java args`` (an error if it fails)."""
    return subprocess.run(["java", "-Xmx4g", *args], capture_output=True, text=True,
                          cwd=cwd, check=True).stdout


# What harnesses that write JSON extend: numbers at full precision (Java's
# Double.toString, which reads back to the same double) and escaped strings.
JSON_OUT = r"""
public class JsonOut {

  static String d(double v) { return Double.toString(v); }

  static String arr(double[] a) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < a.length; i++) b.append(i > 0 ? "," : "").append(d(a[i]));
    return b.append("]").toString();
  }

  static String arr(int[] a) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < a.length; i++) b.append(i > 0 ? "," : "").append(a[i]);
    return b.append("]").toString();
  }

  static String str(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c == '\n') b.append("\\n");
      else if (c == '\r') b.append("\\r");
      else if (c == '\t') b.append("\\t");
      else if (c < 32) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }
}
"""


def compile_harness(folder, name, source):
    """Compile class ``name`` from ``source`` (with ``JsonOut``, which it may extend)
    in ``folder`` against the jar; return the class path that runs it."""
    (Path(folder) / "JsonOut.java").write_text(JSON_OUT)
    (Path(folder) / f"{name}.java").write_text(source)
    subprocess.run(["javac", "-nowarn", "-cp", WEKA, "JsonOut.java", f"{name}.java"],
                   cwd=folder, check=True, capture_output=True)
    return f"{WEKA}:{folder}"


CLASSIFIER_HARNESS = r"""
import weka.classifiers.Classifier;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

public class ClassifierGolden extends JsonOut {
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


def classifier_harness(folder):
    """A function ``run(arff, classifier, options) -> JSON text`` that builds the
    classifier (class = last attribute, instance weights as the file gives them)
    on the whole file and writes ``options``, ``text`` (its ``toString()``) and
    ``dist``: per row, in order, ``distributionForInstance`` (for a numeric class
    one number, the prediction), at full precision."""
    cp = compile_harness(folder, "ClassifierGolden", CLASSIFIER_HARNESS)

    def run(arff, classifier, options):
        text = java("-cp", cp, "ClassifierGolden", str(arff), classifier, *options)
        json.loads(text)  # it must parse
        return text
    return run


SERVER = r"""
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import weka.classifiers.Classifier;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;

public class ClassifierServer extends JsonOut {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split("\t", -1);
      try {
        Instances train = DataSource.read(f[2]);
        train.setClassIndex(train.numAttributes() - 1);
        Instances test = DataSource.read(f[3]);
        test.setClassIndex(test.numAttributes() - 1);
        Classifier c = Classifier.forName(f[0], Utils.splitOptions(f[1]));
        c.buildClassifier(train);
        StringBuilder b = new StringBuilder("{\"text\":").append(str(c.toString()));
        b.append(",\"dist\":[");
        for (int i = 0; i < test.numInstances(); i++)
          b.append(i > 0 ? "," : "").append(arr(c.distributionForInstance(test.instance(i))));
        out.println(b.append("]}"));
      } catch (Throwable e) {  // a StackOverflowError too
        out.println("{\"error\":" + str(e.toString()) + "}");
      }
    }
  }
}
"""


class ClassifierServer:
    """One JVM that builds classifiers on request, so that many small data sets
    cost milliseconds each: ``ask(classifier, options, train_arff, test_arff)``
    gives ``{"text": toString(), "dist": [distributionForInstance of each test
    row]}`` (class = last attribute), or ``{"error": what it threw}``."""

    def __init__(self, folder):
        cp = compile_harness(folder, "ClassifierServer", SERVER)
        self.process = subprocess.Popen(
            ["java", "-Xmx1g", "-cp", cp, "ClassifierServer"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, encoding="utf-8")

    def ask(self, classifier, options, train, test):
        self.process.stdin.write(f"{classifier}\t{options}\t{train}\t{test}\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)
