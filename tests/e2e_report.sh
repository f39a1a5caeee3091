#!/bin/sh
# calibrate report (issue 18) end to end on the reference profile and on a
# copy with hostile names: a well-formed, self-contained page with every
# chart, the comparison for two profiles, escaping, -o -, a missing
# gnuplot and bad inputs (exit 2, one line, nothing left behind); and
# `calibrate compare --format html`.
# usage: e2e_report.sh CALIBRATE PYTHON3 SOURCE_DIR WORKDIR
# covers: calibrator/commands/report.c calibrator/report/html_compare.c
CAL=$1 PY=$2 SRC=$3 WORK=$4
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$WORK"
REF=$SRC/tests/data/kvm-xeon-2core-avx512.json
CHECK="$PY $SRC/tests/html_check.py"
CALIBRATE_PLOTS_DIR=$SRC/plots
TMPDIR=$TMP/tmp
export CALIBRATE_PLOTS_DIR TMPDIR
mkdir -p "$TMPDIR"
"$PY" "$SRC/tests/report_hostile.py" "$REF" "$TMP/evil.json" ||
  bad "cannot write the hostile profile"

# one profile: every part of the page, every chart
if expect_exit 0 "report" "$CAL" report "$REF" -o "$TMP/one.html"; then
  check "one.html is not well-formed or refers outside" $CHECK "$TMP/one.html"
  for want in '<h2>Machine</h2>' '<h2>Headline figures</h2>' \
    'Quality notes' 'id="chart-roofline"' 'id="chart-peak"' \
    'id="chart-gemm"' 'id="chart-scaling"' 'id="chart-attention"' \
    'id="chart-bandwidth"' 'id="chart-batch_sweep"' '@media print' \
    '219.4 GFLOPS'; do
    grep -q -F "$want" "$TMP/one.html" && ok || bad "one.html lacks $want"
  done
  size=$(wc -c <"$TMP/one.html")
  [ "$size" -lt 1500000 ] && ok || bad "one.html is $size bytes"
  grep -q "wrote $TMP/one.html ($size bytes)" "$TMP/err" && ok ||
    bad "report did not say what it wrote"
fi
# a profile with one mode of the batch sweep: the other panel says
# "not measured" instead of gnuplot failing on an empty plot
for keep in prefill decode; do
  "$PY" - "$REF" "$TMP/only-$keep.json" "$keep" <<'PY' || bad "cannot write only-$keep.json"
import json, sys
d = json.load(open(sys.argv[1]))
modes = d["batch_sweep"]["modes"]
for m in list(modes):
    if m != sys.argv[3]:
        del modes[m]
json.dump(d, open(sys.argv[2], "w"))
PY
  expect_exit 0 "report of a $keep-only sweep" "$CAL" report "$TMP/only-$keep.json" -o "$TMP/only-$keep.html"
  grep -q 'id="chart-batch_sweep"' "$TMP/only-$keep.html" && ok ||
    bad "only-$keep.html lacks the batch chart"
done
# the charts' temporary directory is gone
[ -z "$(ls -A "$TMPDIR")" ] && ok || bad "left in TMPDIR: $(ls "$TMPDIR")"

# two profiles, one hostile: escaped everywhere, the comparison present
if expect_exit 0 "report of two" "$CAL" report "$TMP/evil.json" "$REF" \
  -o "$TMP/two.html"; then
  check "two.html: markup from a profile got through" $CHECK "$TMP/two.html" \
    --forbid '<script>' --forbid '<b>host' --forbid '<img' \
    --forbid '<iframe' --forbid '<svg onload' --forbid '<k>' --forbid '<eng'
  grep -q -F '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;' \
    "$TMP/two.html" && ok || bad "two.html: the hostile name is not shown escaped"
  grep -q -F '<h2>Comparison</h2>' "$TMP/two.html" && ok ||
    bad "two.html: no comparison"
  grep -q -F 'id="chart-compare_1"' "$TMP/two.html" && ok ||
    bad "two.html: no compare chart"
fi

# two profiles of one CPU model (one profile under two file names): each
# machine named by its file, never by the brand string both carry
cp "$REF" "$TMP/host-a.json" && cp "$REF" "$TMP/host-b.json" ||
  bad "cannot copy the reference profile"
# host-b's curve ended at its best point: its optimal batch a lower bound
"$PY" - "$TMP/host-b.json" <<'PY' || bad "cannot mark host-b's optimum"
import json, sys
d = json.load(open(sys.argv[1]))
# (a profile from before batch_source: the mode its figures follow)
src = d.setdefault("batch_source", {"mode": d["batch_sweep"]["top_level_mode"]})
src["optimal_is_lower_bound"] = True
json.dump(d, open(sys.argv[1], "w"))
PY
if expect_exit 0 "report of one model twice" "$CAL" report "$TMP/host-a.json" \
  "$TMP/host-b.json" -o "$TMP/same.html"; then
  for want in '<th>host-a</th>' '<th>host-b</th>' '<h2>Tables: host-a</h2>' \
    '<h2>Tables: host-b</h2>'; do
    grep -q -F "$want" "$TMP/same.html" && ok || bad "same.html lacks $want"
  done
  brand=$(sed -n 's/.*"device_name": "\([^"]*\)".*/\1/p' "$REF" | head -1)
  grep -q -F "<th>$brand</th>" "$TMP/same.html" &&
    bad "same.html heads a column with the shared brand string '$brand'" || ok
  grep -q -F "<h2>Tables: $brand</h2>" "$TMP/same.html" &&
    bad "same.html names a machine's tables by '$brand'" || ok
  [ "$(grep -o 'a lower bound: the sweep ended at its best point' \
    "$TMP/same.html" | wc -l)" -eq 1 ] && ok ||
    bad "same.html: host-b's optimal batch not the one said to be a lower bound"
fi

# -o - writes the page to stdout
if expect_exit 0 "report -o -" "$CAL" report "$REF" -o -; then
  head -c 15 "$TMP/out" | grep -q -i '<!DOCTYPE html>' && ok ||
    bad "report -o -: no page on stdout"
fi

# compare --format html
if expect_exit 0 "compare --format html" "$CAL" compare --format html \
  --allow-different-machines -o "$TMP/cmp.html" "$REF" "$TMP/evil.json"; then
  check "cmp.html is not well-formed" $CHECK "$TMP/cmp.html" --forbid '<script>'
  grep -q -F 'id="chart-compare_1"' "$TMP/cmp.html" && ok ||
    bad "cmp.html: no compare chart"
  # the software compared, each side's commit (the base's recorded)
  grep -q "Software: tool.git" "$TMP/cmp.html" && ok ||
    bad "cmp.html: the commits compared not stated"
fi

# gnuplot missing: exit 2 with the install hint, nothing written
CALIBRATE_GNUPLOT=calibrate-test-no-such-gnuplot \
  expect_usage "report without gnuplot" "$CAL" report "$REF" -o "$TMP/no.html"
grep -q "apt-get install gnuplot-nox" "$TMP/err" && ok ||
  bad "no install hint: $(cat "$TMP/err")"
[ ! -e "$TMP/no.html" ] && ok || bad "report without gnuplot left no.html"

# bad inputs: one line, exit 2, nothing left
expect_usage "no profile" "$CAL" report -o "$TMP/x.html"
# without -o the page goes to standard output
if expect_exit 0 "report without -o" "$CAL" report "$REF"; then
  grep -q -i '^<!doctype html' "$TMP/out" && ok ||
    bad "report without -o: no page on standard output"
  grep -q '^wrote ' "$TMP/err" && bad "report without -o: said it wrote a file" || ok
fi
expect_usage "unknown option" "$CAL" report --bogus "$REF" -o "$TMP/x.html"
expect_usage "missing profile" "$CAL" report /nonexistent.json -o "$TMP/x.html"
expect_usage "not a profile" "$CAL" report "$SRC/README.md" -o "$TMP/x.html"
expect_usage "bad threshold" "$CAL" report --threshold 7 "$REF" -o "$TMP/x.html"
expect_usage "no such directory" "$CAL" report "$REF" -o "$TMP/no/dir/x.html"
grep -q "see 'calibrate report --help'" "$TMP/err" && ok ||
  bad "error without the help hint: $(cat "$TMP/err")"
[ ! -e "$TMP/x.html" ] && ok || bad "a bad input left x.html"
ls -A "$TMP" | grep -q '\.tmp\.' && bad "temporary files left: $(ls -A "$TMP")" || ok
if expect_exit 0 "report --help" "$CAL" report --help; then
  grep -q '^Exit status' "$TMP/out" && ok || bad "--help does not list exit codes"
fi
expect_match 0 '^calibrate ' "$CAL" report --version
finish
