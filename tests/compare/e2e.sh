#!/bin/sh
# End-to-end tests of `calibrate compare` and `calibrate export` on
# SYNTHETIC profiles written by gen_profile.py.
# usage: e2e.sh CALIBRATE PYTHON3 GENERATOR WORKDIR CASE
# covers: calibrator/commands/compare.c calibrator/commands/export.c
# covers: calibrator/analysis/export.c
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
  # single runs: the mechanics of a call at a 15% run-to-run allowance
  # (a quiet machine); the default (50%) leaves a 20% change inconclusive
  gen slow.json --seed 2 --scale gemm/fp32/512x512x512/t1=0.8
  expect_match 0 "inside the run-to-run allowance of 50%" "$CAL" compare base.json slow.json
  gen halved.json --seed 2 --scale gemm/fp32/512x512x512/t1=0.45
  expect_match 1 "REGRESSED *gemm/fp32/512x512x512/t1" "$CAL" compare base.json halved.json
  gen slow.json --seed 2 --scale gemm/fp32/512x512x512/t1=0.8
  expect_match 1 "REGRESSED *gemm/fp32/512x512x512/t1" "$CAL" compare --run-allowance 15% base.json slow.json
  expect_match 1 "\*\*regressed\*\* | \`gemm/fp32/512x512x512/t1\`" \
    "$CAL" compare --run-allowance 15% --format md base.json slow.json
  expect_match 1 '"verdict": "regressed"' "$CAL" compare --run-allowance 15% --format json base.json slow.json
  expect_match 0 "REGRESSED" "$CAL" compare --run-allowance 15% --warn-only base.json slow.json
  # a 20% slowdown does not pass a 25% threshold
  expect_match 0 "no regression" "$CAL" compare --run-allowance 15% --threshold 25% base.json slow.json
  # lower-is-better: time grows by 25%
  gen lat.json --seed 2 --scale attention/fp32/b1h8n512d64/t1=1.25
  expect_match 1 "REGRESSED *attention/fp32/b1h8n512d64/t1" "$CAL" compare --run-allowance 15% base.json lat.json
  # faster is an improvement, not a failure
  gen fast.json --seed 2 --scale gemm/fp32/256x256x256/t1=1.25
  expect_match 0 "improved *gemm/fp32/256x256x256/t1" "$CAL" compare --run-allowance 15% base.json fast.json
  # an alias (a role point) is judged once: where it names the same point
  # on both sides, under that point's id only
  AL=gemm/fp32/best/t1=gemm/fp32/512x512x512/t1
  gen al_a.json --seed 1 --alias $AL
  gen al_b.json --seed 2 --alias $AL --scale gemm/fp32/512x512x512/t1=0.45
  "$CAL" compare --format json al_a.json al_b.json >al.json
  "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); reg=[p["id"] for p in r["points"] if p["verdict"]=="regressed"]; sk=[s["reason"] for s in r["not_compared"] if s["id"]=="gemm/fp32/best/t1"]; sys.exit(reg != ["gemm/fp32/512x512x512/t1"] or r["summary"]["regressed"] != 1 or not sk or "alias of" not in sk[0])' al.json \
    && ok || bad "an alias counted twice"
  # where the best size moved, the alias is the series that matches: judged
  gen al_c.json --seed 2 --alias gemm/fp32/best/t1=gemm/fp32/256x256x256/t1
  "$CAL" compare --format json al_a.json al_c.json >al2.json
  "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit("gemm/fp32/best/t1" not in [p["id"] for p in r["points"]])' al2.json \
    && ok || bad "moved alias not judged"
  # three samples can never be significant at alpha 0.01
  gen few_a.json --seed 1 --samples 3
  gen few_b.json --seed 2 --samples 3 --scale gemm/fp32/512x512x512/t1=0.8
  expect_match 0 "too few samples" "$CAL" compare --run-allowance 15% few_a.json few_b.json
  # -o writes the report, nothing else left behind
  expect_match 1 "" "$CAL" compare --run-allowance 15% -o report.md --format md base.json slow.json
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
  # nothing lower-is-better: an error, not an empty list
  gen nolat.json --seed 3 --drop attention/fp32/b1h8n512d64/t1
  sed 's/"latency_ms": 2.5/"latency_ms": null/' nolat.json >nolat2.json
  expect_usage "gab-smaller with nothing smaller-is-better" \
    "$CAL" export --format gab-smaller nolat2.json
  grep -q "no lower-is-better figure" "$TMP/err" && ok || bad "gab-smaller: message"
  ;;
machine)
  gen other.json --seed 2 --cpu "Another CPU"
  expect_match 2 "different machines" "$CAL" compare base.json other.json
  expect_match 2 "machine.cpu.brand" "$CAL" compare base.json other.json
  expect_match 0 "different machine" "$CAL" compare --allow-different-machines base.json other.json
  gen model.json --seed 2 --model 207
  expect_match 2 "machine.cpu.model: 143 in base, 207 in new" "$CAL" compare base.json model.json
  # the environment (tool, BLAS) is what compare judges: listed, not refused
  gen release.json --seed 2 --tool-version 0.2.0
  expect_match 0 'environment changed: tool.version "0.1.0" -> "0.2.0"' \
    "$CAL" compare base.json release.json
  expect_match 0 "no regression" "$CAL" compare base.json release.json
  expect_match 0 '"key": "tool.version"' "$CAL" compare --format json base.json release.json
  expect_match 0 'Environment changed: `tool.version`' "$CAL" compare --format md base.json release.json
  expect_match 0 'The environment changed (the points are judged): tool.version' \
    "$CAL" compare --format html base.json release.json
  "$CAL" compare --format json base.json release.json >rel.json
  "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(bool(r["machine_differences"]) or len(r["environment_differences"]) != 1)' rel.json \
    && ok || bad "tool.version listed as a machine difference"
  # another BLAS kernel set that halves GEMM: GEMM regressed, nothing else
  gen haswell.json --seed 2 --coretype Haswell \
    --scale gemm/fp32/256x256x256/t1=0.45 --scale gemm/fp32/512x512x512/t1=0.45 \
    --scale gemm/fp64/512x512x512/t1=0.45
  expect_match 1 "blas.coretype \"SkylakeX\" -> \"Haswell\"" "$CAL" compare base.json haswell.json
  "$CAL" compare --format json base.json haswell.json >hw.json
  "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); reg=[p["id"] for p in r["points"] if p["verdict"]=="regressed"]; sys.exit(len(reg) != 3 or any(not i.startswith("gemm/") for i in reg))' hw.json \
    && ok || bad "coretype: not exactly the GEMM points regressed"
  # points present in one profile only are listed, not failed
  gen fewer.json --seed 2 --drop bandwidth/l1/read
  expect_match 0 "only in base (1): bandwidth/l1/read" "$CAL" compare base.json fewer.json
  expect_match 0 "only in new (1): bandwidth/l1/read" "$CAL" compare fewer.json base.json
  ;;
runs)
  # Five runs a side, each process landing a few % apart (run factors with
  # a ~2.5% spread) while its samples agree within 1%.
  mkdir A B S M
  i=0
  for f in 1.00 0.97 1.03 0.99 1.02; do
    i=$((i + 1))
    gen A/a$i.json --seed $((10 + i)) --run-factor $f
    gen S/s$i.json --seed $((30 + i)) --run-factor $f \
      --scale gemm/fp32/512x512x512/t1=0.8
  done
  i=0
  # the new side: other factors, all 2.5% lower (a shift the size of the
  # between-run spread)
  for f in 0.955 1.005 0.945 0.985 0.975; do
    i=$((i + 1))
    gen B/b$i.json --seed $((20 + i)) --run-factor $f
  done
  # directories as sides, and lists of files
  expect_match 0 "no regression" "$CAL" compare A B
  expect_match 0 "5 runs (run-to-run spread" "$CAL" compare A B
  expect_match 0 '"method": "welch-log-runs"' "$CAL" compare --format json A B
  expect_match 0 "no regression" "$CAL" compare --base A/a1.json A/a2.json A/a3.json \
    --new B/b1.json B/b2.json B/b3.json
  # any pair of single runs has certain samples: never a regression inside
  # the run-to-run allowance
  expect_match 0 "inside the run-to-run allowance" "$CAL" compare A/a4.json B/b4.json
  expect_match 0 "runs per side" "$CAL" compare A/a4.json B/b4.json
  # two single runs 8% apart in the machine's own speed (the FMA loop):
  # nothing in them can be compared
  expect_match 0 "machine itself ran at 0.9[0-9] times" "$CAL" compare A/a3.json B/b3.json
  gen fast.json --seed 50 --run-factor 1.2 --scale gemm/fp32/512x512x512/t1=0.45
  expect_match 0 "machine itself" "$CAL" compare --run-allowance 15% A/a1.json fast.json
  # 20% slower with 5 runs a side: regressed; only that point
  expect_match 1 "REGRESSED *gemm/fp32/512x512x512/t1" "$CAL" compare A S
  "$CAL" compare --format json -o s.json A S
  [ "$(grep -c '"verdict": "regressed"' s.json)" -eq 1 ] && ok || bad "one regressed point"
  # a stored baseline (a directory) against one new run
  expect_match 1 "REGRESSED *gemm/fp32/512x512x512/t1" "$CAL" compare --base A --new S/s2.json
  # --only-changed, --filter and the markdown layout
  expect_match 1 "REGRESSED" "$CAL" compare --only-changed A S
  "$CAL" compare --only-changed A S >only.txt
  grep -q "all points" only.txt && bad "--only-changed listed all points" || ok
  expect_match 0 "no regression" "$CAL" compare --filter 'bandwidth/*,attention/*' A S
  "$CAL" compare --format json --filter 'bandwidth/*' -o f.json A S
  [ "$(grep -c '"id": ' f.json)" -eq 1 ] && ok || bad "--filter kept other points"
  expect_match 2 "matches no point" "$CAL" compare --filter 'nothing/*' A S
  "$CAL" compare --format md A S >r.md
  head -1 r.md | grep -q ":x: 1 regression" && ok || bad "markdown does not lead with the verdict"
  grep -q "<details><summary>All" r.md && ok || bad "markdown has no collapsed full table"
  # mixed machines within a side or across sides are refused, listing keys
  cp A/*.json M/
  gen M/other.json --seed 9 --model 207 --coretype Haswell
  expect_match 2 "different machines" "$CAL" compare M B
  expect_match 2 "machine.cpu.model: 143 in base, 207 in new" "$CAL" compare M B
  "$CAL" compare M B 2>&1 | grep -q "blas.coretype" && bad "coretype refused as the machine" || ok
  expect_match 0 "" "$CAL" compare --allow-different-machines M B
  # bad inputs: one line, exit 2
  expect_usage "stdin twice" "$CAL" compare - - <A/a1.json
  grep -q "only once" "$TMP/err" && ok || bad "stdin twice: message"
  mkdir empty
  expect_usage "empty directory" "$CAL" compare empty B
  expect_usage "--base without --new" "$CAL" compare --base A
  expect_usage "--base with nothing" "$CAL" compare --base --new B
  expect_usage "lists and positionals" "$CAL" compare A --base A --new B
  expect_usage "run allowance" "$CAL" compare --run-allowance 5 A B
  # one profile from stdin is fine
  expect_match 0 "no regression" "$CAL" compare --base - --new B <A/a1.json
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
# measures named for their unit: not Bencher's built-in throughput
assert b["profile"]["examples_per_s"]["value"] == 1000.0 and "throughput" not in b["profile"], b["profile"]
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
