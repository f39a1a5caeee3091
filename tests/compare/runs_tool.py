#!/usr/bin/env python3
"""Helpers of e2e_compare_runs.sh, standard library only.

  measure LOG -- CMD...   run CMD; append to LOG the CPU-seconds other
                          processes used meanwhile (from /proc/stat, steal
                          included) and the wall time; exit with CMD's code
  merge OUT IN...         pool the samples of every point that is ok in all
                          INs (same machine, same settings) and recompute
                          its median and stats
  scale OUT IN PREFIX F   multiply the samples of the points whose id starts
                          with PREFIX by F (their time samples by 1/F) and
                          recompute median and stats
  busy LOG                print "others_cpu_s wall_s" summed over LOG and
                          the most cores other processes used in one run
  regressed REPORT        print the ids a compare JSON report calls regressed
"""
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time

SECTIONS = ("gemm", "scaling", "peak", "bandwidth", "attention", "batch_sweep")


def points(node, out):
    if isinstance(node, dict):
        if "id" in node and "status" in node:
            out.append(node)
            return
        for v in node.values():
            points(v, out)
    elif isinstance(node, list):
        for v in node:
            points(v, out)


def all_points(doc):
    out = []
    for s in SECTIONS:
        if s in doc:
            points(doc[s], out)
    return out


def binom_cdf(k, n):
    """P(Binomial(n, 1/2) <= k)."""
    return sum(math.comb(n, i) for i in range(0, k + 1)) / 2.0 ** n


def restat(p, cv_threshold, level=0.95):
    """Median field and stats of point p from its samples."""
    m = p["metric"]
    x = sorted(p["samples_" + m])
    n = len(x)
    med = statistics.median(x)
    mean = statistics.fmean(x)
    sd = statistics.stdev(x) if n > 1 else 0.0
    # distribution-free interval of the median: order statistics
    # [x_(j), x_(n+1-j)] with the largest j whose coverage reaches level
    j, cover = 1, 1.0 - 2.0 * binom_cdf(0, n)
    while j + 1 <= n // 2:
        c = 1.0 - 2.0 * binom_cdf(j, n)
        if c < level:
            break
        j, cover = j + 1, c
    st = p.setdefault("stats", {})
    st.update({
        "n": n, "median": med, "mean": mean, "min": x[0], "max": x[-1],
        "stddev": sd, "mad": statistics.median(abs(v - med) for v in x),
        "cv": sd / mean if mean else 0.0,
        "ci_low": x[j - 1], "ci_high": x[n - j], "ci_level": cover,
    })
    st["unstable"] = st["cv"] > cv_threshold
    p[m] = med
    if "samples_ms" in p and m != "ms":
        p["time_ms"] = statistics.median(p["samples_ms"])


def cv_limit(doc):
    return doc.get("settings", {}).get("cv_threshold", 0.05)


def load(path):
    with open(path) as f:
        return json.load(f)


def dump(doc, path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def merge(out, ins):
    docs = [load(f) for f in ins]
    others = [{p["id"]: p for p in all_points(d) if p["status"] == "ok"}
              for d in docs[1:]]
    for p in all_points(docs[0]):
        if p["status"] != "ok":
            continue
        if not all(p["id"] in o for o in others):
            p["status"] = "skipped"
            p["reason"] = "not measured in every pooled run"
            continue
        for o in others:
            q = o[p["id"]]
            for k in [k for k in p if k.startswith("samples_")]:
                p[k] = p[k] + q.get(k, [])
        restat(p, cv_limit(docs[0]))
    dump(docs[0], out)


def scale(out, inp, prefix, f):
    doc = load(inp)
    n = 0
    for p in all_points(doc):
        if p["status"] != "ok" or not p["id"].startswith(prefix):
            continue
        m = p["metric"]
        p["samples_" + m] = [v * f for v in p["samples_" + m]]
        if "samples_ms" in p and m != "ms":
            p["samples_ms"] = [v / f for v in p["samples_ms"]]
        restat(p, cv_limit(doc))
        n += 1
    if n == 0:
        sys.exit("scale: no ok point starts with " + prefix)
    dump(doc, out)


def busy_s():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def measure(log, cmd):
    b0, t0 = busy_s(), time.monotonic()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = subprocess.call(cmd)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    b1, t1 = busy_s(), time.monotonic()
    own = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    with open(log, "a") as f:
        f.write("%.3f %.3f\n" % (max(0.0, b1 - b0 - own), t1 - t0))
    return rc


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "measure" and len(argv) > 4 and argv[3] == "--":
        return measure(argv[2], argv[4:])
    if cmd == "merge" and len(argv) > 3:
        merge(argv[2], argv[3:])
    elif cmd == "scale" and len(argv) == 6:
        scale(argv[2], argv[3], argv[4], float(argv[5]))
    elif cmd == "busy" and len(argv) == 3:
        o = w = top = 0.0
        with open(argv[2]) as f:
            for line in f:
                a, b = (float(v) for v in line.split())
                o, w, top = o + a, w + b, max(top, a / b if b > 0 else 0.0)
        print("%.2f %.2f %.3f" % (o, w, top))
    elif cmd == "regressed" and len(argv) == 3:
        for e in load(argv[2])["points"]:
            if e["verdict"] == "regressed":
                print(e["id"])
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
