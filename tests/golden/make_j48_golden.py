"""Regenerate the J48 golden files under tests/golden/j48.

Reference: Weka 3.6.14 (``/usr/share/java/weka.jar``, java and javac on PATH).
Run from the repository root: ``python tests/golden/make_j48_golden.py``.

Every ARFF file of the source folder whose class (last attribute) is nominal is
copied to tests/data and run from there with
``java weka.classifiers.trees.J48 -t <file> <options>`` for each option set:

- ``<data>__<tag>.txt``: the full stdout (tree, training-set figures, stratified
  ten-fold cross-validation with seed 1). The "Time taken" lines vary by run.
- ``<data>__default.pred.txt``: ``-t <file> -T <file> -p 0 -distribution`` with
  the default options: per training row, the predicted class and the class
  probabilities printed to three decimals.
- ``<data>__dist.json``: the same probabilities at full precision (Java's
  ``Double.toString``, which reads back to the same double), for every option
  set, from the tree built on the whole file: ``{tag: {"dists": [[p, ...], ...],
  "row": [i, ...]}}``, the distinct distributions and, per row, which one
  (``np.array(d["dists"])[d["row"]]`` gives one row per data row).

supermarket.arff is kept: J48 needs well under a second on it (its 216
one-valued basket attributes admit no split, so every option set gives one leaf).

``missing-deep.arff`` is made here (``missing_deep``, seeded): 4,000 rows whose class
follows a curved boundary, with missing values in three of four attributes, so that
the tree is deep and many of its splits send rows down every branch.
``missing-deep-weighted.arff`` is the same rows with instance weights (``{w}``),
some not whole: the weights a split spreads are then never counts.

``many-classes.arff`` (``many_classes``): 130 classes, more than 8-bit class codes
hold, told apart in part by a numeric and a nominal attribute with missing values.

``python tests/golden/make_j48_golden.py NAME ...`` regenerates those data sets
only (by file stem).
"""

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
from weka import WEKA, compile_harness, java

HERE = Path(__file__).parent
OUT = HERE / "j48"
DATA = HERE.parent / "data"
SOURCE = Path("/work/shared/data/weka")
OPTIONS = {
    "default": ["-C", "0.25", "-M", "2"],
    "U": ["-U"],
    "M5": ["-M", "5"],
    "C0.1": ["-C", "0.1"],
    "S": ["-S"],
    "B": ["-B"],
}

DIST = r"""
import weka.core.Instances;
import weka.classifiers.trees.J48;
import weka.core.converters.ConverterUtils.DataSource;

public class J48Dist {
  public static void main(String[] args) throws Exception {
    Instances data = DataSource.read(args[0]);
    data.setClassIndex(data.numAttributes() - 1);
    J48 tree = new J48();
    String[] options = new String[args.length - 1];
    System.arraycopy(args, 1, options, 0, options.length);
    tree.setOptions(options);
    tree.buildClassifier(data);
    StringBuilder out = new StringBuilder("[");
    for (int i = 0; i < data.numInstances(); i++) {
      double[] dist = tree.distributionForInstance(data.instance(i));
      out.append(i > 0 ? ",\n[" : "[");
      for (int k = 0; k < dist.length; k++)
        out.append(k > 0 ? "," : "").append(Double.toString(dist[k]));
      out.append("]");
    }
    System.out.println(out.append("]"));
  }
}
"""


def class_is_nominal(path: Path) -> bool:
    last = None
    for line in path.read_text(errors="replace").splitlines():
        text = line.strip().lower()
        if text.startswith("@attribute"):
            last = line
        elif text.startswith("@data"):
            break
    return last is not None and "{" in last.split("%")[0]


def distinct(rows):
    index = {}
    row = [index.setdefault(tuple(r), len(index)) for r in rows]
    dists = [list(r) for r in index]
    return {"dists": dists, "row": row}



def missing_deep(path, n=4000, seed=7, weighted=False):
    """Write the generated data set (see the module docstring) to ``path``."""
    rng = np.random.default_rng(seed)
    a = np.round(rng.random(n) * 100, 3)
    b = rng.integers(0, 21, n).astype(float)
    c = np.round(rng.random(n), 4)
    s = rng.choice(["u", "v", "w"], n)
    seen_a = rng.random(n) >= 0.15
    cls = np.where(np.where(seen_a, a, 50) > 100 * c * c + b, "p",
                   np.where(s == "v", "r", "q"))
    cls = np.where(rng.random(n) < 0.05, rng.choice(["p", "q", "r"], n), cls)
    cells = [np.where(seen_a, a.astype(str), "?"),
             np.where(rng.random(n) < 0.1, "?", b.astype(int).astype(str)),
             c.astype(str), np.where(rng.random(n) < 0.2, "?", s), cls]
    lines = ["@relation missing-deep", "", "@attribute a numeric", "@attribute b numeric",
             "@attribute c numeric", "@attribute s {u,v,w}", "@attribute class {p,q,r}",
             "", "@data"] + [",".join(row) for row in zip(*cells)]
    if weighted:  # drawn after the rest: the same rows as the unweighted file
        w = rng.choice(["0.5", "1", "2", "3.25", "0.125"], n)
        lines = lines[:9] + [f"{row}, {{{x}}}" for row, x in zip(lines[9:], w)]
        lines[0] = "@relation missing-deep-weighted"
    path.write_text("\n".join(lines) + "\n")


def many_classes(path, n=520, seed=3):
    """Write the data set of many classes (see the module docstring) to ``path``."""
    rng = np.random.default_rng(seed)
    cls = np.arange(n) % 130
    a = np.round(cls + rng.random(n) * 1.5, 2)
    s = np.where(rng.random(n) < 0.2, "?", np.char.add("v", (cls // 10).astype(str)))
    names = [f"c{c:03d}" for c in range(130)]
    lines = ["@relation many-classes", "", "@attribute a numeric",
             "@attribute s {" + ",".join(f"v{v}" for v in range(13)) + "}",
             "@attribute class {" + ",".join(names) + "}", "", "@data"]
    lines += [f"{x},{t},{names[c]}" for x, t, c in zip(a, s, cls)]
    path.write_text("\n".join(lines) + "\n")


def main(only=()):
    OUT.mkdir(exist_ok=True)
    DATA.mkdir(exist_ok=True)
    missing_deep(DATA / "missing-deep.arff")
    missing_deep(DATA / "missing-deep-weighted.arff", weighted=True)
    many_classes(DATA / "many-classes.arff")
    with tempfile.TemporaryDirectory() as tmp:
        cp = compile_harness(tmp, "J48Dist", DIST)
        sources = sorted(SOURCE.glob("*.arff")) + [
            DATA / f"{name}.arff"
            for name in ("missing-deep", "missing-deep-weighted", "many-classes")]
        for src in sources:
            if not class_is_nominal(src) or (only and src.stem not in only):
                continue
            arff = DATA / src.name
            if src != arff:
                shutil.copyfile(src, arff)
            name = src.stem
            dists = {}
            for tag, options in OPTIONS.items():
                text = java("-cp", WEKA, "weka.classifiers.trees.J48", "-t", str(arff),
                            *options, cwd=DATA)
                (OUT / f"{name}__{tag}.txt").write_text(text)
                dists[tag] = json.loads(java("-cp", cp, "J48Dist", str(arff),
                                             *options))
            pred = java("-cp", WEKA, "weka.classifiers.trees.J48", "-t", str(arff),
                        "-T", str(arff), "-p", "0", "-distribution",
                        *OPTIONS["default"], cwd=DATA)
            (OUT / f"{name}__default.pred.txt").write_text(pred)
            (OUT / f"{name}__dist.json").write_text(
                "{" + ",\n".join(f"{json.dumps(tag)}: {json.dumps(distinct(rows))}"
                                 for tag, rows in dists.items()) + "}\n")
            print(name)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
