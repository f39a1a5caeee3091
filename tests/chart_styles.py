#!/usr/bin/env python3
"""Check the gnuplot scripts `calibrate plot --script-only` wrote: within
each chart no two series share colour and marker (series_lt[], series_pt[]),
no two lines without markers share colour and dash (roofs, memory slopes,
measured peaks, cache and drop marks), every series is named in the key
(a label of its own), and every plot clause of the template that names a
series in the key draws it with its colour and its marker (or as a bar).
Usage: chart_styles.py DIR [MIN_SERIES]  (MIN_SERIES: the fewest series
the gemm chart must have; a test that checks nothing fails).  Exit 0 good,
1 with one line per problem."""
import glob
import os
import re
import sys

ASSIGN = re.compile(r"([a-z_]+)\[(\d+)\] = (\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^;\n]+)")


def arrays(header):
    """name -> {index: value} of every NAME[i] = VALUE of the header."""
    out = {}
    for m in ASSIGN.finditer(header):
        out.setdefault(m.group(1), {})[int(m.group(2))] = m.group(3).strip()
    return out


def scalar(header, name):
    m = re.search(r"^%s = (\d+)$" % name, header, re.M)
    return int(m.group(1)) if m else 0


def distinct(problems, chart, what, items):
    """items: [(style tuple, name)]; each style used once."""
    seen = {}
    for style, name in items:
        if style in seen:
            problems.append("%s: %s %s and %s share %s" %
                            (chart, what, seen[style], name, style))
        seen[style] = name


def split_top(text):
    """text split at the commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    return parts + [cur.strip()]


def clauses(template):
    """The plot clauses of the template, continuation lines joined."""
    text = re.sub(r"\\\n", " ", template)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("plot "):
            out.extend(split_top(line[5:]))
    return out


def check(path, problems):
    chart = os.path.basename(path)
    text = open(path, encoding="utf-8", errors="replace").read()
    header, _, template = text.partition("# ---- template ")
    a = arrays(header)
    n = scalar(header, "nseries")
    series, labels = [], []
    for i in range(1, n + 1):
        lt = a.get("series_lt", {}).get(i)
        pt = a.get("series_pt", {}).get(i)
        label = a.get("label", {}).get(i, "")
        if lt is None or pt is None:
            problems.append("%s: series %d has no colour or marker" % (chart, i))
            continue
        if label in ('""', "''", ""):
            problems.append("%s: series %d is not named in the key" % (chart, i))
        series.append(((lt, pt), "%d %s" % (i, label)))
        labels.append(((label,), str(i)))
    distinct(problems, chart, "series", series)
    distinct(problems, chart, "labels", labels)
    lines = {"compute": ("compute_lt", "compute_dt", "compute_label", "ncompute"),
             "memory": ("memory_grey", "memory_dt", "memory_label", "nmemory"),
             "peak": ("peak_lt", "peak_dt", "peak_label", "npeaks"),
             "markkey": ("markkey_drop", "markkey_dt", "markkey", "nmarkkeys")}
    for kind, (colour, dash, name, count) in lines.items():
        k = scalar(header, count)
        items = [((a.get(colour, {}).get(j), a.get(dash, {}).get(j)),
                  a.get(name, {}).get(j, str(j))) for j in range(1, k + 1)]
        distinct(problems, chart, kind + " lines", items)
    for c in clauses(template):
        if "label[i]" not in c:
            continue
        if "lt series_lt[i]" not in c:
            problems.append("%s: a clause names series without their colour: "
                            "%.60s" % (chart, c))
        if "series_pt[i]" not in c and "with boxes" not in c:
            problems.append("%s: a clause names series without their marker: "
                            "%.60s" % (chart, c))
    return n


def main():
    problems = []
    paths = sorted(glob.glob(os.path.join(sys.argv[1], "*.gp")))
    if not paths:
        problems.append("no scripts in %s" % sys.argv[1])
    counts = {os.path.basename(p): check(p, problems) for p in paths}
    want = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    if counts.get("gemm.gp", 0) < want:
        problems.append("gemm.gp has %d series, expected at least %d" %
                        (counts.get("gemm.gp", 0), want))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
