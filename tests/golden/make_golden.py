"""Regenerate the golden files under tests/golden from independent references.

- ``<data>_<target>_<count>.json``: frequent itemsets of supermarket.arff and
  contact-lenses.arff mined by pyfim (Borgelt's C implementation of FP-growth),
  from transactions built here with a separate ARFF reading: every non-missing
  cell is the item ``column=value``.
- ``weka_fpgrowth_<count>.txt``: the rules Weka 3.6.14's FPGrowth prints for the
  same file with ``-P 1`` (the value 't', and 'low' for total), at a support count
  and confidence 0.8, all rules (``-S``).

Run from the repository root: ``python tests/golden/make_golden.py`` (needs pyfim
and Weka: ``pip install pyfim``, ``apt-get install weka``).
"""

import json
import subprocess
from pathlib import Path

import fim

HERE = Path(__file__).parent
ARFF = HERE.parent / "data" / "supermarket.arff"
DATA = {  # file: support counts (supermarket has 4627 transactions)
    ARFF: (2314, 1388, 926, 463),
    HERE.parent.parent / "extension" / "data" / "contact-lenses.arff": (6, 3, 2),
}
TARGETS = {"all": "s", "closed": "c", "maximal": "m"}
WEKA_COUNTS = (926, 694)


def transactions(path):
    names, rows, data = [], [], False
    for line in path.read_text().splitlines():
        if line.startswith("%"):
            continue
        if not data:
            if line.lower().startswith("@attribute"):
                rest = line[len("@attribute"):].strip()
                names.append(rest.split("'")[1] if rest.startswith("'")
                             else rest.split()[0])
            data = data or line.lower().startswith("@data")
            continue
        if line.strip():
            cells = [c.strip() for c in line.split(",")]
            rows.append([f"{n}={c}" for n, c in zip(names, cells, strict=True)
                         if c != "?"])
    return rows


def main():
    for path, counts in DATA.items():
        tx = transactions(path)
        for count in counts:
            for target, code in TARGETS.items():
                found = fim.fpgrowth(tx, target=code, supp=-count, zmin=1, report="a")
                rows = sorted([sorted(items), n] for items, n in found)
                name = f"{path.stem}_{target}_{count}.json"
                (HERE / name).write_text(json.dumps(rows, separators=(",", ":")))
                print(name, len(rows))
    for count in WEKA_COUNTS:
        out = subprocess.run(
            ["java", "-Xmx2g", "-cp", "/usr/share/java/weka.jar",
             "weka.associations.FPGrowth", "-t", str(ARFF), "-P", "1", "-M", str(count),
             "-C", "0.8", "-S", "-N", "10000000"],
            check=True, capture_output=True, text=True).stdout
        (HERE / f"weka_fpgrowth_{count}.txt").write_text(out)
        print("weka", count, out.splitlines()[0])


if __name__ == "__main__":
    main()
