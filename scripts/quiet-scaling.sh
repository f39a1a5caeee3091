#!/usr/bin/env bash
# Run `calibrate --quick --sections peak,gemm,scaling` N times (default 10)
# on a quiet machine, one fresh process each, and print per run what tells
# a 2-thread point that ran at 1-thread speed from one that did not: the
# scaling points at all threads (id, GFLOPS, CPU time over wall time, the
# pipes probe after it (team_rate), the threads' round trip (team_rtt_ns:
# how far apart the hypervisor placed them), the CPU of each thread, the reason when
# its threads did not run side by side), the all-thread FMA loop over the one-thread one, the headline, and
# the spread of each scaling point and of each headline (the top-level one
# and every dtype's GEMM best, per core and all threads) over the runs.
#   scripts/quiet-scaling.sh BUILD/calibrator/calibrate [N] [OUTDIR]
#   scripts/quiet-scaling.sh - N OUTDIR    (the summary of runs made before)
set -euo pipefail
bin=${1:?usage: quiet-scaling.sh CALIBRATE [N] [OUTDIR]}
n=${2:-10}
out=${3:-$(mktemp -d)}
mkdir -p "$out"
for i in $(seq 1 "$n"); do
  [ "$bin" = - ] && break
  rc=0
  "$bin" --quick --sections peak,gemm,scaling -o "$out/run$i.json" \
    >"$out/run$i.txt" 2>&1 || rc=$?
  echo "run $i: exit $rc"
done
python3 - "$out" "$n" <<'PY'
import json, os, sys, statistics
out, n = sys.argv[1], int(sys.argv[2])
series = {}
for i in range(1, n + 1):
    path = os.path.join(out, f"run{i}.json")
    if not os.path.exists(path):
        print(f"run {i}: no profile"); continue
    d = json.load(open(path))
    peak = {p["id"]: p.get("gflops") for p in (d.get("peak") or {}).get("points", [])}
    f1, fn = peak.get("peak/fma_f64/avx512/t1"), None
    for k, v in peak.items():
        if k.startswith("peak/fma_f64/avx512/t") and not k.endswith("/t1"):
            fn = v
    ratio = f"{fn / f1:.2f}" if f1 and fn else "-"
    rtt = (d.get("quality") or {}).get("team_rtt_ns")
    rtt = f"{rtt['min']:.0f}-{rtt['max']:.0f} ns" if rtt else "-"
    print(f"run {i}: headline gflops {d.get('gflops')}, fma_f64 all/one {ratio},"
          f" threads' round trip {rtt}")
    series.setdefault("headline gflops", []).append(d.get("gflops"))
    for dt, b in sorted((d.get("gemm_best") or {}).items()):
        unit = b.get("metric", "gflops")
        for key in (unit, unit + "_per_core"):
            if b.get(key):
                series.setdefault(f"gemm_best {dt} {key}", []).append(b[key])
    for p in (d.get("scaling") or {}).get("points", []):
        if p.get("threads", 1) < 2 or "/best/" in p["id"]:
            continue
        print(f"  {p['id']}: {p.get('gflops')} cpu/wall {p.get('cpu_time_ratio')}"
              f" team_rate {p.get('team_rate')} rtt {p.get('team_rtt_ns')}"
              f" cpus {p.get('threads_cpus')}"
              f" {p.get('threads_not_parallel', '')}")
        series.setdefault(p["id"], []).append(p.get("gflops"))
for k, v in series.items():
    v = [x for x in v if x]
    if v:
        m = statistics.median(v)
        dev = max(abs(x - m) for x in v) / m
        print(f"{k}: {len(v)} runs, median {m:.1f}, range {min(v):.1f}..{max(v):.1f}"
              f" ({100 * (max(v) - min(v)) / m:.1f}% of the median; every run"
              f" within {100 * dev:.1f}% of it)")
PY
echo "profiles and outputs in $out"
