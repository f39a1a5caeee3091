#!/usr/bin/env python3
"""Write the profiles the chart tests draw, from the reference profile:
third.json (another machine: its own name, date, figures and an fp32
batch sweep) and the profiles the reader accepts with figures no chart
can draw: a batch point of 0 and one of 1e308 examples/s, no compute
roofs, a bandwidth_gbps that is not an object, an L3 of 5e-324 GB/s.
Usage: chart_profiles.py REFERENCE OUTDIR"""
import copy
import json
import os
import sys

ref = json.load(open(sys.argv[1]))
out = sys.argv[2]


def write(name, d):
    json.dump(d, open(os.path.join(out, name), "w"), indent=1)


def scaled(d, f):
    """Every measured rate of d times f (a slower machine)."""
    for sec in ("gemm", "peak", "attention", "scaling"):
        for p in d.get(sec, {}).get("points", []):
            for k in ("gflops", "gops", "value"):
                if isinstance(p.get(k), (int, float)):
                    p[k] *= f
                if isinstance(p.get("samples_" + k), list):
                    p["samples_" + k] = [v * f for v in p["samples_" + k]]
            st = p.get("stats") or {}
            for k in ("median", "ci_low", "ci_high", "min", "max", "mean"):
                if isinstance(st.get(k), (int, float)):
                    st[k] *= f
    for k, v in d.get("roofline", {}).get("compute_gflops", {}).items():
        d["roofline"]["compute_gflops"][k] = v * f


third = copy.deepcopy(ref)
third["device_name"] = "Zen 5 VM, 4 cores"
third["created"] = "2026-01-02T03:04:05Z"
scaled(third, 0.8)
for mode in third["batch_sweep"]["modes"].values():
    for p in mode["points"]:
        p["dtype"] = "fp32"
third["batch_sweep"]["dtype"] = "fp32"
if third.get("batch_source"):
    third["batch_source"]["dtype"] = "fp32"
write("third.json", third)

bad = copy.deepcopy(ref)
points = next(iter(bad["batch_sweep"]["modes"].values()))["points"]


def figure(p, v):
    """p's examples/s set to v, its samples and statistics with it."""
    p["examples_per_s"] = v
    n = len(p.get("samples_examples_per_s") or [1])
    p["samples_examples_per_s"] = [v] * n
    st = p.get("stats") or {}
    for k in ("median", "mean", "min", "max", "ci_low", "ci_high"):
        if k in st:
            st[k] = v
    for k in ("stddev", "mad", "cv"):
        if k in st:
            st[k] = 0


figure(points[0], 0)
figure(points[1], 1e308)
write("batch-extreme.json", bad)

bad = copy.deepcopy(ref)
del bad["roofline"]["compute_gflops"]
write("no-compute.json", bad)

bad = copy.deepcopy(ref)
bad["roofline"]["bandwidth_gbps"] = True
write("bandwidth-true.json", bad)

bad = copy.deepcopy(ref)
bad["roofline"]["bandwidth_gbps"]["L3"] = 5e-324
write("l3-tiny.json", bad)
