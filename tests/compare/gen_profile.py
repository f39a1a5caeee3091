#!/usr/bin/env python3
"""Write a SYNTHETIC calibrate-profile/1 file for the compare/export tests.

Every point's samples are its nominal value times log-normal noise drawn
from a seeded generator, so two seeds give two honest "runs" of the same
machine.  --scale ID=F multiplies one point's samples by F (a planted
change, 0 a figure that fell to nothing); --run-factor F multiplies every
point by F (a whole process landing F apart: the run-to-run variance that
samples within one run do not show); --drop ID leaves a point out; --alias ID=TARGET adds a role point, a
copy of TARGET with role_of naming it (as gemm/<dtype>/best/t1); --cpu
and --model change the machine, --coretype and --tool-version the
environment (listed by compare, never refused).
Standard library only."""
import argparse
import json
import math
import random
import statistics

# id, section, metric, nominal value, higher_is_better
POINTS = [
    ("gemm/fp32/256x256x256/t1", "gemm", "gflops", 100.0, True),
    ("gemm/fp32/512x512x512/t1", "gemm", "gflops", 120.0, True),
    ("gemm/fp64/512x512x512/t1", "gemm", "gflops", 60.0, True),
    ("bandwidth/l1/read", "bandwidth", "gbps", 300.0, True),
    ("attention/fp32/b1h8n512d64/t1", "attention", "ms", 2.5, False),
    # the machine's own speed (compare's check between single runs)
    ("peak/fma_f32/avx512/t1", "peak", "gflops", 200.0, True),
]


def stats(xs):
    s = sorted(xs)
    n = len(s)
    med = statistics.median(s)
    mean = statistics.fmean(s)
    sd = statistics.stdev(s) if n > 1 else 0.0
    j = max(1, n // 2 - int(math.ceil(0.98 * math.sqrt(n))))
    return {
        "n": n, "median": med, "mean": mean, "min": s[0], "max": s[-1],
        "stddev": sd, "mad": statistics.median(abs(x - med) for x in s),
        "cv": sd / mean if mean else 0.0,
        "ci_low": s[j - 1], "ci_high": s[n - j], "ci_level": 0.95,
        "unstable": False,
    }


def synth_profile(seed=1, samples=15, noise=0.01, scale=None, drop=(),
                  cpu="Synthetic CPU @ 2.0GHz", model=143,
                  coretype="SkylakeX", run_factor=1.0, latency=2.5,
                  tool_version="0.1.0", aliases=None):
    """The synthetic profile as a dict, seeded."""
    scale = scale or {}
    rng = random.Random(seed)
    prof = {
        "schema": "calibrate-profile/1",
        "device_name": "synthetic", "device": "cpu",
        "gflops": 120.0, "gflops_per_core": 60.0, "optimal_batch_size": 32,
        "throughput": 1000.0, "memory_gb": 24.0, "latency_ms": latency,
        "created": "2024-01-01T00:00:00Z",
        "tool": {"name": "calibrate", "version": tool_version, "git": "test"},
        "machine": {"cpu": {"brand": cpu, "family": 6, "model": model},
                    "usable_cores": 2},
        "blas": {"library": "OpenBLAS", "version": "0.3.21",
                 "coretype": coretype},
        "settings": {}, "quality": {"noisy": False, "warnings": []},
    }
    for pid, section, metric, nominal, hib in POINTS:
        if pid in drop:
            continue
        f = scale.get(pid, 1.0) * run_factor
        xs = [nominal * f * math.exp(rng.gauss(0.0, noise))
              for _ in range(samples)]
        st = stats(xs)
        pt = {"id": pid, "status": "ok", "metric": metric,
              metric: st["median"], "samples_" + metric: xs,
              "higher_is_better": hib, "stats": st}
        prof.setdefault(section, {"points": []})["points"].append(pt)
    for alias, target in (aliases or {}).items():
        for sec in list(prof.values()):
            pts = sec.get("points", []) if isinstance(sec, dict) else []
            for pt in [p for p in pts if p["id"] == target]:
                pts.append(dict(pt, id=alias, role_of=target))
    prof.setdefault("batch_sweep", {"points": []})["points"].append(
        {"id": "batch_sweep/b4096", "status": "skipped",
         "reason": "does not fit in memory"})
    return prof


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--noise", type=float, default=0.01)
    ap.add_argument("--scale", action="append", default=[])
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--cpu", default="Synthetic CPU @ 2.0GHz")
    ap.add_argument("--model", type=int, default=143)
    ap.add_argument("--coretype", default="SkylakeX")
    ap.add_argument("--run-factor", type=float, default=1.0)
    ap.add_argument("--tool-version", default="0.1.0")
    ap.add_argument("--alias", action="append", default=[])
    a = ap.parse_args()
    scale = {k: float(v) for k, v in (s.split("=", 1) for s in a.scale)}
    prof = synth_profile(a.seed, a.samples, a.noise, scale, a.drop, a.cpu,
                         a.model, a.coretype, a.run_factor,
                         tool_version=a.tool_version,
                         aliases=dict(x.split("=", 1) for x in a.alias))
    with open(a.out, "w") as fh:
        json.dump(prof, fh, indent=1)


if __name__ == "__main__":
    main()
