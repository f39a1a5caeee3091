#!/bin/sh
# End-to-end tests of `calibrate compare` and `calibrate export` on
# SYNTHETIC profiles written by gen_profile.py.
# usage: e2e.sh CALIBRATE PYTHON3 GENERATOR WORKDIR CASE
CAL=$1 PY=$2 GEN=$3 WORK=$4 CASE=$5
. "$(dirname "$0")/../e2e_lib.sh"
e2e_setup "$WORK"
cd "$WORK" || exit 99

gen() { "$PY" "$GEN" "$@" || { echo "generator failed: $*"; exit 99; }; }

# Same machine, same distribution, independent noise.
gen base.json --seed 1

case $CASE in
aa)
  gen aa.json --seed 2
  expect_match 0 "no regression" "$CAL" compare base.json aa.json
  expect_match 0 '"regression": false' "$CAL" compare --format json base.json aa.json
  expect_match 0 "no regression" "$CAL" compare --format md base.json aa.json
  # another pair of seeds, the same answer
  gen aa2.json --seed 7
  expect_match 0 "" "$CAL" compare aa.json aa2.json
  ;;
regression)
  gen slow.json --seed 2 --scale gemm/fp32/512x512x512/t1=0.8
  expect_match 1 "REGRESSED *gemm/fp32/512x512x512/t1" "$CAL" compare base.json slow.json
  expect_match 1 "\*\*regressed\*\* | \`gemm/fp32/512x512x512/t1\`" \
    "$CAL" compare --format md base.json slow.json
  expect_match 1 '"verdict": "regressed"' "$CAL" compare --format json base.json slow.json
  expect_match 0 "REGRESSED" "$CAL" compare --warn-only base.json slow.json
  # a 20% slowdown does not pass a 25% threshold
  expect_match 0 "no regression" "$CAL" compare --threshold 25% base.json slow.json
  # lower-is-better: time grows by 25%
  gen lat.json --seed 2 --scale attention/fp32/b1h8n512d64/t1=1.25
  expect_match 1 "REGRESSED *attention/fp32/b1h8n512d64/t1" "$CAL" compare base.json lat.json
  # faster is an improvement, not a failure
  gen fast.json --seed 2 --scale gemm/fp32/256x256x256/t1=1.25
  expect_match 0 "improved *gemm/fp32/256x256x256/t1" "$CAL" compare base.json fast.json
  # three samples can never be significant at alpha 0.01
  gen few_a.json --seed 1 --samples 3
  gen few_b.json --seed 2 --samples 3 --scale gemm/fp32/512x512x512/t1=0.8
  expect_match 0 "too few samples" "$CAL" compare few_a.json few_b.json
  # -o writes the report, nothing else left behind
  expect_match 1 "" "$CAL" compare -o report.md --format md base.json slow.json
  grep -q "regression" report.md && ok || bad "report.md"
  [ -z "$(ls | grep tmp)" ] && ok || bad "temporary file left"
  ;;
badinput)
  printf '{"schema": "calibrate-profile/1", "device_name": ' >corrupt.json
  expect_match 2 "not valid JSON" "$CAL" compare base.json corrupt.json
  head -c 1000 base.json >trunc.json
  expect_match 2 "not valid JSON" "$CAL" compare trunc.json base.json
  sed 's#calibrate-profile/1#calibrate-profile/9#' base.json >schema.json
  expect_match 2 "schema" "$CAL" compare base.json schema.json
  expect_match 2 "cannot open profile missing.json" "$CAL" compare base.json missing.json
  expect_match 2 "need two profiles" "$CAL" compare base.json
  expect_match 2 "threshold" "$CAL" compare --threshold 5 base.json base.json
  expect_match 2 "alpha" "$CAL" compare --alpha 2 base.json base.json
  expect_match 2 "format" "$CAL" compare --format xml base.json base.json
  expect_match 2 "unknown option" "$CAL" compare --bogus base.json base.json
  expect_match 2 "needs a value" "$CAL" compare base.json base.json --alpha
  expect_match 0 "usage" "$CAL" compare --help
  expect_match 2 "cannot write" "$CAL" compare -o no/such/dir/r.txt base.json base.json
  expect_match 2 "cannot write" "$CAL" export --format bmf -o no/such/dir/r.json base.json
  expect_match 2 "not valid JSON" "$CAL" export --format bmf corrupt.json
  expect_match 2 "format" "$CAL" export --format csv base.json
  expect_match 2 "no --format" "$CAL" export base.json
  ;;
machine)
  gen other.json --seed 2 --cpu "Another CPU"
  expect_match 2 "different machines" "$CAL" compare base.json other.json
  expect_match 2 "machine.cpu.brand" "$CAL" compare base.json other.json
  expect_match 0 "different machine" "$CAL" compare --allow-different-machines base.json other.json
  # points present in one profile only are listed, not failed
  gen fewer.json --seed 2 --drop bandwidth/l1/read
  expect_match 0 "only in base (1): bandwidth/l1/read" "$CAL" compare base.json fewer.json
  expect_match 0 "only in new (1): bandwidth/l1/read" "$CAL" compare fewer.json base.json
  ;;
export)
  expect_match 0 "" "$CAL" export --format bmf -o bmf.json base.json
  expect_match 0 "" "$CAL" export --format gab -o gab.json base.json
  expect_match 0 "" "$CAL" export --format gab-smaller -o gabs.json base.json
  "$PY" - <<'PYEOF' && ok || bad "export contents"
import json
b = json.load(open("bmf.json"))
m = b["gemm/fp32/256x256x256/t1"]["gflops"]
assert m["lower_value"] <= m["value"] <= m["upper_value"], m
assert "batch_sweep/b4096" not in b
g = json.load(open("gab.json"))
names = [e["name"] for e in g]
assert "gemm/fp32/256x256x256/t1" in names and "attention/fp32/b1h8n512d64/t1" not in names, names
assert all(set(e) >= {"name", "unit", "value"} for e in g)
s = json.load(open("gabs.json"))
assert [e["name"] for e in s] == ["attention/fp32/b1h8n512d64/t1", "profile/latency_ms"], s
print("ok: export contents")
PYEOF
  ;;
*)
  echo "unknown case $CASE"
  exit 99
  ;;
esac
finish
