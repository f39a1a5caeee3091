#!/usr/bin/env python3
"""Measure how often `calibrate compare` raises a false alarm and how often
it catches a planted slowdown, at its defaults, on this machine, and print
the table docs/ci.md quotes.  Not run by ctest: it needs a quiet machine
and about (RUNS + CORE_RUNS) x 20 s.

usage: scripts/verdict-rates.py CALIBRATE DIR [--runs N] [--core-runs K]
                                [--analyse-only]

1. RUNS (default 26) `calibrate --ci` runs one after another into DIR
   (N01.json ...) and CORE_RUNS (default 3) with OPENBLAS_CORETYPE=Haswell
   (H01.json ...), interleaved; a run that exits 5 (the machine was busy)
   stops the script: measure again on a quiet machine.  --analyse-only
   reads the runs already in DIR.
2. Single-run A/A: each consecutive pair (N01 vs N02, N02 vs N03, ...; at
   least 20): how many exit non-zero (false alarms).
3. Alternated 3 vs 3: windows of 6 consecutive runs, the odd ones against
   the even ones (A B A B A B), starting every second run (10 windows
   with 26 runs): false alarms.
4. A planted 10% GEMM slowdown (every gemm/ point's samples x 0.9,
   tests/compare/runs_tool.py scale) in the new side of each pair and each
   window: caught when compare exits 1 with a GEMM point regressed and
   nothing else regressed.
5. The Haswell kernels (same machine, another environment): the K Haswell
   runs against the K plain runs next to them; exit status, environment
   line, what regressed (GEMM points only is the expected answer).
Standard library only."""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "tests", "compare", "runs_tool.py")


def measure(cal, out, env=None):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([cal, "--ci", "--no-progress", "-o", out], env=e,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode == 5:
        sys.exit(f"{out}: the machine was busy (exit 5); measure on a quiet "
                 f"machine:\n{r.stderr.strip()}")
    if r.returncode != 0:
        sys.exit(f"{out}: calibrate exited {r.returncode}:\n{r.stderr}")


def compare(cal, base, new):
    r = subprocess.run([cal, "compare", "--format", "json", "--base", *base,
                        "--new", *new], capture_output=True, text=True)
    rep = json.loads(r.stdout) if r.stdout.strip() else {"points": []}
    reg = [p["id"] for p in rep["points"] if p["verdict"] == "regressed"]
    return r.returncode, reg, rep


def slowed(tmp, files):
    out = []
    for f in files:
        o = os.path.join(tmp, "slow_" + os.path.basename(f))
        if not os.path.exists(o):
            subprocess.run([sys.executable, TOOL, "scale", o, f, "gemm/",
                            "0.9"], check=True)
        out.append(o)
    return out


def caught(rc, reg):
    gemm = [r for r in reg if r.startswith("gemm/")]
    return rc == 1 and gemm and len(gemm) == len(reg)


def rates(cal, tmp, pairs):
    """False alarms and catches over (base, new) lists."""
    fa = hit = 0
    notes = []
    for base, new in pairs:
        rc, reg, _ = compare(cal, base, new)
        fa += rc != 0
        if rc != 0:
            notes.append(f"false alarm {os.path.basename(base[0])}..: exit "
                         f"{rc} {reg[:4]}")
        rc2, reg2, _ = compare(cal, base, slowed(tmp, new))
        hit += bool(caught(rc2, reg2))
    return fa, hit, notes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cal")
    ap.add_argument("dir")
    ap.add_argument("--runs", type=int, default=26)
    ap.add_argument("--core-runs", type=int, default=3)
    ap.add_argument("--analyse-only", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    if not a.analyse_only:
        every = max(1, a.runs // max(1, a.core_runs))
        h = 0
        for i in range(1, a.runs + 1):
            measure(a.cal, os.path.join(a.dir, f"N{i:02d}.json"))
            if h < a.core_runs and i % every == 0:
                h += 1
                measure(a.cal, os.path.join(a.dir, f"H{h:02d}.json"),
                        {"OPENBLAS_CORETYPE": "Haswell"})
            print(f"run {i} of {a.runs}", file=sys.stderr)
    n = sorted(glob.glob(os.path.join(a.dir, "N*.json")))
    hs = sorted(glob.glob(os.path.join(a.dir, "H*.json")))
    if len(n) < 8:
        sys.exit(f"{a.dir}: {len(n)} runs; need at least 8")
    tmp = tempfile.mkdtemp()
    single = [([n[k]], [n[k + 1]]) for k in range(len(n) - 1)]
    wins = [(n[s:s + 6][0::2], n[s:s + 6][1::2])
            for s in range(0, len(n) - 5, 2)]
    fa1, hit1, notes1 = rates(a.cal, tmp, single)
    fa3, hit3, notes3 = rates(a.cal, tmp, wins)
    print(f"| measured with `scripts/verdict-rates.py` ({len(n)} `--ci` runs, "
          f"compare at its defaults) | |")
    print("|---|---|")
    print(f"| A/A, single runs ({len(single)} consecutive pairs) | "
          f"**{fa1}** false alarm{'s' if fa1 != 1 else ''} |")
    print(f"| A/A, alternated 3 vs 3 ({len(wins)} windows of 6 consecutive "
          f"runs) | **{fa3}** false alarm{'s' if fa3 != 1 else ''} |")
    print(f"| 10% GEMM slowdown planted in the new side, single runs | caught "
          f"in **{hit1} of {len(single)}** |")
    print(f"| 10% GEMM slowdown planted in the new side, 3 vs 3 | caught in "
          f"**{hit3} of {len(wins)}** |")
    if hs:
        k = len(hs)
        rc, reg, rep = compare(a.cal, n[-k:], hs)
        env = ", ".join(f"{d['key']} {d['base']} -> {d['new']}"
                        for d in rep.get("environment_differences", []))
        other = [r for r in reg if not r.startswith("gemm/")]
        print(f"| `OPENBLAS_CORETYPE=Haswell`, {k} vs {k} | exit {rc}; "
              f"environment: {env or 'none'}; GEMM points regressed: "
              f"{len(reg) - len(other)}; others regressed: "
              f"{', '.join(other) or 'none'} |")
    for line in notes1 + notes3:
        print("  " + line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
