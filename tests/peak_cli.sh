#!/bin/sh
# End-to-end test of `calibrate peak`.
# usage: peak_cli.sh CALIBRATE DATA_DIR WORK_DIR
set -u
CAL=$1
DATA=$2
WORK=$3
SEED=$DATA/seed_curves.csv
rm -rf "$WORK"
mkdir -p "$WORK" || exit 1
failures=0
# the system Python's json module when present, else grep
PY=
if [ -x /usr/bin/python3 ]; then
  PY=/usr/bin/python3
elif command -v python3 >/dev/null 2>&1; then
  PY=python3
fi

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run EXPECTED_RC ARGS...: stdout to $WORK/out, stderr to $WORK/err
run() {
  want=$1
  shift
  "$CAL" "$@" >"$WORK/out" 2>"$WORK/err"
  got=$?
  if [ "$got" -ne "$want" ]; then
    fail "calibrate $* exited $got, expected $want; stderr: $(cat "$WORK/err")"
    return 1
  fi
  return 0
}

# A usage error: exit 2 and exactly one line on stderr starting with PREFIX.
usage_error() {
  prefix=$1
  shift
  run 2 "$@" || return
  lines=$(wc -l <"$WORK/err")
  [ "$lines" -eq 1 ] || fail "calibrate $*: $lines lines on stderr"
  case $(cat "$WORK/err") in
  "$prefix"*) ;;
  *) fail "calibrate $*: stderr '$(cat "$WORK/err")' does not start with '$prefix'" ;;
  esac
  [ -s "$WORK/out" ] && fail "calibrate $*: wrote to stdout on error"
}

# check_json FILE: machine_a peaks at 32, machine_b at 4, both peaked,
# machine_b's recommendation for 32 is 4 x 8.
check_json() {
  if [ -n "$PY" ]; then
    "$PY" - "$1" <<'EOF' || fail "JSON check of $1"
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
    grep -q '"peak_batch_size": 32' "$1" || fail "no peak 32 in $1"
    grep -q '"peak_batch_size": 4' "$1" || fail "no peak 4 in $1"
    grep -q '"accumulation_steps": 8' "$1" || fail "no 4 x 8 in $1"
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
  fail "peak - (stdin) failed: $(cat "$WORK/err")"
fi

# -o writes the file and nothing to stdout
if run 0 peak "$SEED" --format json --target-effective-batch 32 -o "$WORK/o.json"; then
  [ -s "$WORK/out" ] && fail "-o also wrote to stdout"
  check_json "$WORK/o.json"
  ls "$WORK"/o.json.tmp.* >/dev/null 2>&1 && fail "-o left a temporary file"
fi

# table
if run 0 peak "$SEED" --target-effective-batch 32; then
  grep -q '^machine_a: 5 points, peaked' "$WORK/out" || fail "table: machine_a header"
  grep -q '^machine_b: 5 points, peaked' "$WORK/out" || fail "table: machine_b header"
  grep -E -q '^ +32 .*◀ peak' "$WORK/out" || fail "table: peak mark at 32"
  grep -E -q '^ +4 .*◀ peak' "$WORK/out" || fail "table: peak mark at 4"
  grep -q 'batch 4 x 8 accumulation steps' "$WORK/out" || fail "table: 4 x 8"
fi
run 0 peak "$SEED" --optimize knee --tolerance 5% --format table || true
run 0 peak --help && grep -q 'usage: calibrate peak' "$WORK/out" ||
  fail "--help text"

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
  >"$WORK/out" 2>"$WORK/err" || fail "single-point stdin"
grep -q '"shape": "single"' "$WORK/out" || fail "single point shape"
printf 'batch_size,throughput\n1,100\n2,x\n' | "$CAL" peak - >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] || fail "malformed stdin exit code"
grep -q '^calibrate peak: <stdin>:3: ' "$WORK/err" || fail "stdin error message"
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

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "peak_cli: all checks passed"
