#!/usr/bin/env bash
# A real end-to-end A/A test of `calibrate compare` on profiles MEASURED on
# this machine (tests/compare/e2e.sh covers the statistics on synthetic
# profiles).
# usage: e2e_compare_runs.sh CALIBRATE PYTHON3 RUNS_TOOL WORKDIR
#
#  1. A/A: two sides measured with the same build on the same machine must
#     compare with exit 0 at --threshold 10% and the default alpha (0.01).
#  2. B' = B with every GEMM sample scaled by 0.8 (a 20% slowdown) must
#     exit 1 and name only GEMM points as regressed.
#  3. A truncated profile must exit 2 with one line on stderr.
#
# Why each side pools RUNS short runs, interleaved A B A B ...: on a shared
# 2-core VM the machine's speed drifts over seconds (other tenants on the
# host, another job on the box).  One --quick run takes each point's 7
# samples within a fraction of a second, so they see one state of the
# machine; between two runs the same point moved by up to 30% while its
# samples within a run spread by 5-10%.  Compared run against run, the rank
# test then reaches its smallest p (complete separation) and the verdict is
# "regressed" or "improved" on A/A: measured here, single-run A/A failed
# in 6 of 9 tries, with ratios 0.69-0.92 and 1.1-1.45, far past any
# threshold we could defend (so --threshold 10% would not help and alpha
# cannot: p sat at its minimum).  The honest cure is the one `calibrate
# --ci` uses inside a run (interleaved rounds): let each side's samples span
# the drift, so the test sees the variation that is really there.  Pooling
# RUNS runs per side, taken alternately, does that at the process level;
# alpha stays at its default.
#
# Why --threshold 10% and not the default 5%: even pooled, and with the box
# otherwise idle (other processes < 0.01 cores), 2 of 5 A/A runs here had one
# point shifted by 5-8.5% (ratios 0.949 and 0.916) with p < alpha: the
# machine's own run-to-run wander on a shared 2-core VM, made "significant"
# because samples within a run are not independent of the run.  10% is the
# smallest round threshold above what this box does on unchanged code; the
# 20% slowdown of check 2 stays far past it.  CI runners should use --ci
# (interleaved rounds in one run) at the default 5%.
#
# What no interleaving can fix: another job using the CPUs during only some
# of the runs (on 2 cores it halves a point's speed).  The test measures the
# CPU time other processes used while calibrate ran (/proc/stat minus our
# own); past BUSY_LIMIT of a core on average the A/A premise "same machine,
# same conditions" did not hold, and failures of checks 1 and 2 are then
# reported as a skip (exit 77) naming the load, never hidden as a pass.
# ctest runs this test RUN_SERIAL so the suite itself does not disturb it.
#
# Measured on the 2-core development VM, idle otherwise (other processes
# < 0.01 cores): even with 2 pooled runs per side and --threshold 10%, 5 of
# 5 A/A tries flagged 2-5 points with ratios 0.66-0.88 and p down to 1e-7
# (GEMM at 2 threads, attention): this box's speed changes between
# processes by more than any threshold that would still catch check 2's 20%
# slowdown.  So the timing checks (1, and 2's "a GEMM point regressed") are
# reported, with their evidence, and end the test as SKIPPED unless
# CAL_E2E_STRICT=1 (a dedicated, quiet runner); everything that does not
# depend on timing (runs succeed, untouched points keep their verdicts, the
# table names regressions, a truncated profile is exit 2) always fails hard.
CAL=$1 PY=$2 TOOL=$3 WORK=$4
. "$(dirname "$0")/e2e_lib.sh"
RUNS=${CAL_E2E_RUNS:-2}          # runs pooled per side
SCALE=${CAL_E2E_BUDGET:-0.2}     # --budget-scale of each run (~7 s each)
THRESHOLD=10%
BUSY_LIMIT=0.1                   # cores of other work during any one run

e2e_setup "$WORK"
cd "$WORK" || exit 99
soft=0

tool() { "$PY" "$TOOL" "$@" || { echo "runs_tool $1 failed"; exit 99; }; }

# ABBA order (A1 B1 B2 A2 A3 B3 ...): a drift that is linear in time
# falls on both sides equally, which ABAB would not give.
for i in $(seq 1 "$RUNS"); do
  order="A B"; [ $((i % 2)) -eq 0 ] && order="B A"
  for side in $order; do
    "$PY" "$TOOL" measure load.txt -- "$CAL" --quick --no-progress \
      --budget-scale "$SCALE" -o "$side$i.json" >"run_$side$i.txt" 2>&1 \
      || { echo "FAIL: run $side$i exited $?"; cat "run_$side$i.txt"; exit 1; }
  done
done
tool merge A.json $(seq -f "A%g.json" 1 "$RUNS")
tool merge B.json $(seq -f "B%g.json" 1 "$RUNS")
read -r others wall busiest < <(tool busy load.txt)
busy=$("$PY" -c "print(int($busiest > $BUSY_LIMIT))")
echo "runs: $((2 * RUNS)) x --quick --budget-scale $SCALE, ${wall}s;" \
     "other processes used ${others} CPU-s meanwhile," \
     "at most ${busiest} cores during one run"

# A timing check that failed: a failure, or a skip when the machine was busy.
timing_fail() {
  if [ "$busy" = 0 ] && [ "${CAL_E2E_STRICT:-0}" = 0 ]; then
    echo "SKIP: $* (timing verdicts are hard failures only with" \
         "CAL_E2E_STRICT=1: see the comment at the top)"
    soft=$((soft + 1))
  elif [ "$busy" = 1 ]; then
    echo "SKIP: $* (other processes used ${busiest} cores during a run:" \
         "the A/A premise of an otherwise idle machine did not hold)"
    soft=$((soft + 1))
  else
    bad "$*"
  fi
}

# 1. A/A
"$CAL" compare --threshold "$THRESHOLD" A.json B.json >aa.txt 2>aa.err
rc=$?
if [ "$rc" -eq 0 ]; then
  ok; echo "ok: A/A exit 0; $(grep '^summary:' aa.txt)"
else
  timing_fail "A/A compare exited $rc, expected 0"
  grep -E '^(REGRESSED|summary)' aa.txt; cat aa.err
fi

# 2. a 20% GEMM slowdown.  Points other than GEMM are the same samples as
# in the A/A compare and must get the same verdicts there.
tool scale Bslow.json B.json gemm/ 0.8
"$CAL" compare --threshold "$THRESHOLD" A.json Bslow.json >slow.txt 2>slow.err
rc=$?
"$CAL" compare --threshold "$THRESHOLD" --format json -o aa_report.json A.json B.json 2>/dev/null
"$CAL" compare --threshold "$THRESHOLD" --format json -o slow_report.json A.json Bslow.json 2>/dev/null
regressed=$(tool regressed slow_report.json)
other_new=$(comm -13 <(tool regressed aa_report.json | sort) \
                     <(echo "$regressed" | grep -v '^gemm/' | sort))
if [ -n "$other_new" ]; then
  bad "points the GEMM scaling did not touch changed verdict:" $other_new
elif [ "$rc" -ne 1 ] || ! echo "$regressed" | grep -q '^gemm/'; then
  timing_fail "A vs B' (GEMM x0.8) exited $rc and flagged no GEMM point," \
              "expected exit 1 naming GEMM points"
  grep -E '^(REGRESSED|summary)' slow.txt; cat slow.err
elif ! grep -q "^REGRESSED .*gemm/" slow.txt; then
  bad "the table does not name the regressed points"; cat slow.txt
else
  ok; echo "ok: A vs B' exit 1, regressed: $(echo $regressed)"
fi

# 3. a truncated profile is an input error
head -c "$(($(wc -c <A.json) / 2))" A.json >trunc.json
"$CAL" compare trunc.json B.json >trunc.txt 2>trunc.err
rc=$?
if [ "$rc" -ne 2 ] || [ "$(wc -l <trunc.err)" -ne 1 ]; then
  bad "truncated profile: exit $rc, expected 2 with one line on stderr"
  cat trunc.err
else
  ok; echo "ok: truncated profile exit 2: $(cat trunc.err)"
fi

finish || exit 1
[ "$soft" -eq 0 ] || exit 77
exit 0
