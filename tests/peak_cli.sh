#!/bin/sh
# End-to-end test of `calibrate curve` and of `calibrate peak`, its former
# name (the same command: the same output, messages naming `peak`).
# usage: peak_cli.sh CALIBRATE DATA_DIR WORK_DIR
# covers: calibrator/commands/curve.c calibrator/report/curve_render.c
CAL=$1
DATA=$2
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$3"
WORK=$TMP
# the table's marks are glyphs under a UTF-8 locale (ASCII under C)
LC_ALL=C.UTF-8
export LC_ALL
SEED=$DATA/seed_curves.csv
# the system Python's json module when present, else grep
PY=
if [ -x /usr/bin/python3 ]; then
  PY=/usr/bin/python3
elif command -v python3 >/dev/null 2>&1; then
  PY=python3
fi

# run EXPECTED_RC ARGS...: calibrate ARGS, stdout to $WORK/out, stderr to
# $WORK/err; status 0 only when it exited EXPECTED_RC
run() {
  _want_rc=$1
  shift
  expect_exit "$_want_rc" "calibrate $*" "$CAL" "$@"
}

# A usage error: exit 2 and exactly one line on stderr starting with PREFIX,
# nothing on stdout.
usage_error() {
  prefix=$1
  shift
  expect_usage "calibrate $*" "$CAL" "$@" || return
  case $(cat "$WORK/err") in
  "$prefix"*) ok ;;
  *) bad "calibrate $*: stderr '$(cat "$WORK/err")' does not start with '$prefix'" ;;
  esac
  [ -s "$WORK/out" ] && bad "calibrate $*: wrote to stdout on error" || ok
}

# section MACHINE: that machine's block of the table in $WORK/out
section() { sed -n "/^$1:/,/^\$/p" "$WORK/out"; }

# knee_is MACHINE KNEE PEAK TOLERANCE: the table names KNEE as the knee and
# as the optimal batch (--optimize knee), and PEAK still as the peak
knee_is() {
  section "$1" | grep -q "^  knee: *batch $2 (smallest batch within $4 of the peak)" &&
    ok || bad "--optimize knee --tolerance $4: $1's knee is not batch $2"
  section "$1" | grep -q "^  optimal: *batch $2 (optimize knee)" &&
    ok || bad "--optimize knee --tolerance $4: $1's optimal batch is not the knee $2"
  section "$1" | grep -q "^  peak: *batch $3," &&
    ok || bad "--optimize knee --tolerance $4: $1's peak is not batch $3"
}

# check_json FILE: machine_a peaks at 32, machine_b at 4, both peaked,
# machine_b's recommendation for 32 is 4 x 8.
check_json() {
  if [ -n "$PY" ]; then
    "$PY" - "$1" <<'EOF' && ok || bad "JSON check of $1"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "calibrate-peak/1", doc["schema"]
c = {x["machine"]: x for x in doc["curves"]}
assert c["machine_a"]["peak_batch_size"] == 32, c["machine_a"]
assert c["machine_b"]["peak_batch_size"] == 4, c["machine_b"]
for m in c.values():
    assert m["shape"] == "peaked", m["shape"]
    assert m["optimal_batch_size"] == m["peak_batch_size"]
    assert m["tied_batch_sizes"] == [m["peak_batch_size"]]
assert len(c["machine_a"]["points"]) == 5
assert abs(c["machine_b"]["degradation_pct"] - 68 / 278 * 100) < 1e-6
rec = c["machine_b"]["recommendation"]
assert (rec["batch_size"], rec["accumulation_steps"]) == (4, 8), rec
assert rec["target_effective_batch"] == 32 and rec["exact"] is True
EOF
  else
    grep -q '"peak_batch_size": 32' "$1" && ok || bad "no peak 32 in $1"
    grep -q '"peak_batch_size": 4' "$1" && ok || bad "no peak 4 in $1"
    grep -q '"accumulation_steps": 8' "$1" && ok || bad "no 4 x 8 in $1"
  fi
}

# JSON to stdout, from a file and from standard input
if run 0 peak "$SEED" --format json --target-effective-batch 32; then
  cp "$WORK/out" "$WORK/seed.json"
  check_json "$WORK/seed.json"
fi
if "$CAL" peak - --format=json --target-effective-batch=32 <"$SEED" \
  >"$WORK/stdin.json" 2>"$WORK/err"; then
  check_json "$WORK/stdin.json"
else
  bad "peak - (stdin) failed: $(cat "$WORK/err")"
fi

# -o writes the file and nothing to stdout
if run 0 peak "$SEED" --format json --target-effective-batch 32 -o "$WORK/o.json"; then
  [ -s "$WORK/out" ] && bad "-o also wrote to stdout"
  check_json "$WORK/o.json"
  ls "$WORK"/.calibrate.tmp.* >/dev/null 2>&1 && bad "-o left a temporary file"
fi

# table
if run 0 peak "$SEED" --target-effective-batch 32; then
  grep -q '^machine_a: 5 points, peaked' "$WORK/out" || bad "table: machine_a header"
  grep -q '^machine_b: 5 points, peaked' "$WORK/out" || bad "table: machine_b header"
  grep -E -q '^ +32 .*◀ peak' "$WORK/out" || bad "table: peak mark at 32"
  grep -E -q '^ +4 .*◀ peak' "$WORK/out" || bad "table: peak mark at 4"
  grep -q 'batch 4 x 8 accumulation steps' "$WORK/out" || bad "table: 4 x 8"
fi
# --optimize knee: the optimal batch is the knee, the smallest batch within
# the tolerance of the peak.  At 5% that is the peak itself on both curves;
# at 25% machine_a's knee is 16 (620 of 776 examples/s), below its peak 32.
if run 0 peak "$SEED" --optimize knee --tolerance 5% --format table; then
  knee_is machine_a 32 32 5%
  knee_is machine_b 4 4 5%
fi
if run 0 peak "$SEED" --optimize knee --tolerance 25%; then
  knee_is machine_a 16 32 25%
  knee_is machine_b 4 4 25%
fi
run 0 curve --help && grep -q 'Usage: calibrate curve' "$WORK/out" ||
  bad "--help text"

# malformed input: exit 2, one line "calibrate peak: FILE:LINE: ..."
printf 'batch_size,throughput\n1,100\n2,fast\n' >"$WORK/nonnum.csv"
usage_error "calibrate peak: $WORK/nonnum.csv:3: " peak "$WORK/nonnum.csv"
printf 'batch_size,speed\n1,100\n' >"$WORK/nocol.csv"
usage_error "calibrate peak: $WORK/nocol.csv:1: " peak "$WORK/nocol.csv"
: >"$WORK/empty.csv"
usage_error "calibrate peak: $WORK/empty.csv:1: " peak "$WORK/empty.csv"
printf 'batch_size,throughput\n1,100\n2,-5\n' >"$WORK/neg.csv"
usage_error "calibrate peak: $WORK/neg.csv:3: " peak "$WORK/neg.csv" --format json
printf 'batch_size,throughput\n1,100\n' | "$CAL" peak - --format json \
  >"$WORK/out" 2>"$WORK/err" || bad "single-point stdin"
grep -q '"shape": "single"' "$WORK/out" || bad "single point shape"
printf 'batch_size,throughput\n1,100\n2,x\n' | "$CAL" peak - >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] || bad "malformed stdin exit code"
grep -q '^calibrate peak: <stdin>:3: ' "$WORK/err" || bad "stdin error message"
usage_error "calibrate peak: $WORK/missing.csv: cannot open" peak "$WORK/missing.csv"

# bad flags and values
usage_error "calibrate peak: " peak
usage_error "calibrate peak: " peak "$SEED" --format xml
usage_error "calibrate peak: " peak "$SEED" --tolerance abc
usage_error "calibrate peak: " peak "$SEED" --tolerance 100
usage_error "calibrate peak: " peak "$SEED" --optimize speed
usage_error "calibrate peak: " peak "$SEED" --target-effective-batch 0
usage_error "calibrate peak: " peak "$SEED" --target-effective-batch 8x
usage_error "calibrate peak: " peak "$SEED" --bogus
usage_error "calibrate peak: " peak "$SEED" --format
usage_error "calibrate peak: " peak "$SEED" "$SEED"
usage_error "calibrate peak: cannot write" peak "$SEED" -o "$WORK/no/such/dir/x.json"


# `curve` is the command's name: the same output as `peak`, its own
# messages, and `peak` is no longer listed (it is not `peak-flops`)
"$CAL" peak "$SEED" --format json >"$WORK/as-peak.json" 2>/dev/null
if run 0 curve "$SEED" --format json; then
  cmp -s "$WORK/out" "$WORK/as-peak.json" && ok ||
    bad "curve and peak write different documents"
fi
usage_error "calibrate curve: " curve "$SEED" --format xml
usage_error "calibrate curve: " curve "$SEED" --bogus
usage_error "calibrate curve: " curve
if run 0 --help; then
  grep -q '^  curve ' "$WORK/out" && ok || bad "--help does not list curve"
  grep -q '^  peak ' "$WORK/out" && bad "--help still lists peak" || ok
fi
if run 0 peak --help; then
  grep -q '^Usage: calibrate curve ' "$WORK/out" && ok ||
    bad "peak --help is not curve's help"
fi

finish
