#!/bin/sh
# The charts of one, two and three profiles (issue 27): within each chart
# no two series share colour and marker and every series is named
# (chart_styles.py on the scripts); gnuplot writes nothing on stderr for
# any chart we ship, under `plot` (PNG, SVG) and `report`; the batch
# sweep's title and the report's headline name model, mode and dtype per
# profile; and profiles the reader accepts with figures no chart can draw
# (a batch point of 0 or 1e308 examples/s, no compute roofs, a
# bandwidth_gbps that is not an object, an L3 of 5e-324 GB/s) are drawn
# without them, saying so.  The style checks run without gnuplot; the rest
# skips (77) without it.
# usage: e2e_report_charts.sh CALIBRATE PYTHON3 SOURCE_DIR WORKDIR
# covers: calibrator/report/charts_style.c calibrator/report/charts_bandwidth.c
CAL=$1 PY=$2 SRC=$3 WORK=$4
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$WORK"
CALIBRATE_PLOTS_DIR=$SRC/plots
TMPDIR=$TMP/tmp
export CALIBRATE_PLOTS_DIR TMPDIR
mkdir -p "$TMPDIR"
ZEN=$SRC/results/reference/kvm-epyc-zen4-2core.json
XEON=$SRC/tests/data/kvm-xeon-2core-avx512.json
"$PY" "$SRC/tests/chart_profiles.py" "$ZEN" "$TMP" ||
  bad "cannot write the chart test profiles"
THIRD=$TMP/third.json

# Only notes and "wrote" lines on stderr: anything else came from gnuplot.
quiet_stderr() {
  if grep -v -e '^note: ' -e '^wrote ' "$TMP/err" >"$TMP/gnuplot.err"; then
    bad "$1: gnuplot wrote on stderr: $(head -3 "$TMP/gnuplot.err")"
  else
    ok
  fi
}

# the scripts of 1, 2 and 3 profiles: colour and marker told apart
n=0
for set in "$ZEN" "$ZEN $XEON" "$ZEN $XEON $THIRD"; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  if expect_exit 0 "plot --script-only of $n" "$CAL" plot --script-only \
    -o "$TMP/s$n" $set; then
    check "styles of $n profiles: $("$PY" "$SRC/tests/chart_styles.py" \
      "$TMP/s$n" $((n * 4)) | head -3)" \
      "$PY" "$SRC/tests/chart_styles.py" "$TMP/s$n" $((n * 4))
  fi
done
# an fp32 and a bf16 profile: the batch sweep's title names both
title=$(grep '^title = ' "$TMP/s3/batch_sweep.gp")
for want in bf16 fp32 qwen2-0.5b train; do
  case $title in *"$want"*) ok ;; *) bad "batch title lacks $want: $title" ;; esac
done

if ! gnuplot -e 'exit' >/dev/null 2>&1; then
  finish >/dev/null && { echo "SKIP: gnuplot is not installed"; exit 77; }
  finish
  exit 1
fi

# every chart drawn, nothing from gnuplot on stderr
n=0
for set in "$ZEN" "$ZEN $XEON" "$ZEN $XEON $THIRD"; do
  n=$((n + 1))
  for fmt in png svg; do
    # shellcheck disable=SC2086
    expect_exit 0 "plot --format $fmt of $n" "$CAL" plot --format $fmt \
      -o "$TMP/p$n" $set && quiet_stderr "plot --format $fmt of $n"
  done
  # shellcheck disable=SC2086
  if expect_exit 0 "report of $n" "$CAL" report $set -o "$TMP/r$n.html"; then
    quiet_stderr "report of $n"
    for want in 'train, bf16, qwen2-0.5b, seq 128' 'id="chart-peak"'; do
      grep -q -F "$want" "$TMP/r$n.html" && ok || bad "r$n.html lacks $want"
    done
  fi
done
grep -q -F 'train, fp32, qwen2-0.5b' "$TMP/r3.html" && ok ||
  bad "r3.html: the third profile's headline does not name fp32"

# figures the reader accepts and no chart can draw: drawn without them,
# said in a note and in the chart's title
for bad_profile in batch-extreme no-compute bandwidth-true l3-tiny; do
  p=$TMP/$bad_profile.json
  if expect_exit 0 "plot of $bad_profile" "$CAL" plot -o "$TMP/b-$bad_profile" "$p"; then
    quiet_stderr "plot of $bad_profile"
  fi
  if expect_exit 0 "report of $bad_profile" "$CAL" report "$p" \
    -o "$TMP/b-$bad_profile.html"; then
    quiet_stderr "report of $bad_profile"
  fi
done
for case in batch-extreme:batch_sweep l3-tiny:roofline; do
  p=${case%%:*} chart=${case#*:}
  "$CAL" plot --script-only -o "$TMP/n-$p" "$TMP/$p.json" 2>"$TMP/err" >/dev/null
  grep -q "^note: $chart chart: .* left out" "$TMP/err" && ok ||
    bad "$p: no note of what $chart left out: $(cat "$TMP/err")"
  grep -q 'left out: .* cannot be drawn' "$TMP/n-$p/$chart.gp" && ok ||
    bad "$p: $chart.gp does not say what it left out"
done
[ -z "$(ls -A "$TMPDIR")" ] && ok || bad "left in TMPDIR: $(ls "$TMPDIR")"
finish
