#!/bin/sh
# `calibrate plan` end to end on the committed inputs: a `calibrate peak`
# JSON document and a curve CSV next to a profile, time and cost, the
# no-fit rule, and bad inputs (exit 2, one line on stderr, no output file).
# usage: e2e_plan.sh CALIBRATE SOURCE_DIR WORKDIR
CAL=$1 SRC=$2 WORK=$3
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$WORK"
DATA=$SRC/tests/data
CSV=$DATA/seed_curves.csv
REF=$SRC/tests/data/kvm-xeon-2core-avx512.json

# the peak document of the CSV's curves, as a machine's owner would send it
check "peak --format json" "$CAL" peak "$CSV" --format json -o "$TMP/peak.json"

# curves from the peak document next to a profile: three machines, the
# proportional shares 776 : 278 : 56.63 of 1000 steps of 64 examples
if expect_match 0 "machine_a .* 69\.87% " "$CAL" plan "$TMP/peak.json" "$REF" \
  --steps 1000 --global-batch 64 --price-per-hour machine_a=4.10 \
  --price-per-hour 0.05; then
  grep -q '^64000 examples (1000 steps of 64) finish in 57\.6 s' "$TMP/out" &&
    ok || bad "plan: no wall-clock line for 64000 examples"
  grep -q '^Cost of the split: 0\.06723 USD' "$TMP/out" && ok ||
    bad "plan: cost of the split is not 0.06723 USD (4.20 USD/h for 57.63 s)"
fi
if expect_exit 0 "plan json" "$CAL" plan "$TMP/peak.json" "$CSV" "$REF" \
  --examples 1000 --format json -o "$TMP/plan.json"; then
  grep -q '"source": "peak_json"' "$TMP/plan.json" && ok ||
    bad "plan json: no machine from the peak document"
  grep -q '"source": "curve_csv"' "$TMP/plan.json" && ok ||
    bad "plan json: no machine from the CSV"
  [ "$(grep -c '"in_split": true' "$TMP/plan.json")" -eq 5 ] && ok ||
    bad "plan json: not five machines in the split"
  # a profile from before optimal_is_lower_bound: not a lower bound
  grep -q '"optimal_batch_is_lower_bound": true' "$TMP/plan.json" &&
    bad "plan json: an optimum its profile does not call a lower bound is one" || ok
fi

# a CSV without a machine column is one machine named by its file
printf 'batch_size,throughput\n8,900\n16,1500\n32,2100\n64,2050\n' \
  >"$TMP/gpu-box.csv"
if expect_match 0 "^gpu-box .* 97\.37% " "$CAL" plan "$TMP/gpu-box.csv" "$REF" \
  --epochs 3 --dataset-examples 200000 --price-per-hour gpu-box=2.40 \
  --price-per-hour 0.10; then
  grep -q '^600000 examples (3 epochs of 200000) finish in 4 min 38 s' \
    "$TMP/out" && ok || bad "plan: no wall-clock line for 3 epochs"
  grep -q '^gpu-box .* 2\.4 .* 0\.1855 .* 0\.1905$' "$TMP/out" && ok ||
    bad "plan: gpu-box's price, split and alone cost are not 2.4, 0.1855, 0.1905"
fi

# 70B in fp16 for inference (140 GB): machine_b's 16 GB cannot hold it and
# gets no share; machine_a with 200 GB takes all the work
if expect_match 0 "^No share: machine_b: cannot hold the model" "$CAL" plan \
  "$DATA/profile_a.json" "$DATA/profile_b.json" --examples 1000 \
  --model-params 7e10 --dtype fp16 --training inference \
  --memory-gb machine_a=200; then
  grep -q '^machine_b .*  0\.00% .*no share: no fit' "$TMP/out" && ok ||
    bad "plan: machine_b still has a share"
  grep -q '^machine_a .*100\.00% ' "$TMP/out" && ok ||
    bad "plan: machine_a does not take all the work"
fi

# a plan for a model other than the one measured: the reference profile's
# headline is one qwen2-0.5b layer's prefill (14909440 parameters a token),
# said so without a model and scaled by FLOPs per token with one
if expect_match 0 "one decoder layer's forward pass" "$CAL" plan "$REF" \
  --examples 1000; then
  grep -q "warning: .*one decoder layer" "$TMP/err" && ok ||
    bad "plan: no warning that the throughput is one layer's"
fi
if expect_match 0 "x 0\.02982 = 1\.689" "$CAL" plan "$REF" --examples 1000 \
  --model-params 5e8; then
  grep -q "^Scaled by FLOPs per token" "$TMP/out" && ok ||
    bad "plan: the scaling's method is not stated"
fi
# profile_a as a profile of this version: its headline the model's prefill
# (24 layers and a 151936-word head: 493961216 parameters a token)
sed -e 's/^ "schema": "calibrate-profile\/1",/&\
 "batch_source": {"mode": "prefill", "preset": "qwen2-0.5b", "workload": "the model"},/' \
  -e 's/^ "batch_sweep": {/&\
  "model": {"preset": "qwen2-0.5b", "hidden": 896, "heads": 14, "kv_heads": 2, "head_dim": 64, "ffn": 4864, "seq": 128},/' \
  -e 's/"prefill": {/& "layers": 24, "vocab": 151936,/' \
  "$DATA/profile_a.json" >"$TMP/model.json"
if expect_exit 0 "plan scaled to 7e9" "$CAL" plan "$TMP/model.json" \
  --examples 1000 --model-params 7e9 --training inference --format json \
  -o "$TMP/scaled.json"; then
  grep -q '"flops_per_token_ratio": 0\.07056' "$TMP/scaled.json" && ok ||
    bad "plan json: no flops_per_token_ratio 0.07056 (493961216 / 7e9)"
  grep -q '"preset": "qwen2-0.5b"' "$TMP/scaled.json" && ok ||
    bad "plan json: scaled_from names no preset"
fi
# the trainer's words: per machine in the split, the plan's own
# micro-batch and accumulation for the target, and bf16 from the dtype the
# profile measured in (a curve does not say: false); env, sourced by sh,
# says the same
sed 's/^  "schema": "calibrate-profile\/1",/&\
  "batch_source": {"dtype": "bf16", "optimal_is_lower_bound": true},/' "$REF" >"$TMP/bf16.json"
if expect_exit 0 "plan --format json, target 48" "$CAL" plan "$CSV" \
  "$TMP/bf16.json" --target-effective-batch 48 --format json \
  -o "$TMP/target.json" &&
  expect_exit 0 "plan --format hf" "$CAL" plan "$CSV" "$TMP/bf16.json" \
    --target-effective-batch 48 --format hf -o "$TMP/hf.json" &&
  expect_exit 0 "plan --format env" "$CAL" plan "$CSV" "$TMP/bf16.json" \
    --target-effective-batch 48 --format env -o "$TMP/plan.env"; then
  if command -v python3 >/dev/null 2>&1; then
    python3 - "$TMP/target.json" "$TMP/hf.json" "$TMP/plan.env" <<'PY' &&
import json, re, subprocess, sys
plan = json.load(open(sys.argv[1]))
hf = json.load(open(sys.argv[2]))
split = [m for m in plan["machines"] if m["in_split"]]
assert len(split) == 3 and sorted(hf) == sorted(m["name"] for m in split), hf
env = subprocess.run(["sh", "-c", 'set -a; . "$1"; env', "_", sys.argv[3]],
                     capture_output=True, text=True, check=True).stdout
env = dict(l.split("=", 1) for l in env.splitlines() if l.startswith("CALIBRATE_"))
for m in split:
    h = hf[m["name"]]
    bf16 = m["source"] == "profile"
    assert set(h) == {"per_device_train_batch_size",
                      "gradient_accumulation_steps", "bf16"}, h
    assert h["per_device_train_batch_size"] == m["micro_batch_size"], (h, m)
    assert h["gradient_accumulation_steps"] == m["grad_accum_steps"], (h, m)
    assert m["micro_batch_size"] * m["grad_accum_steps"] == 48, m
    assert h["bf16"] is bf16, (h, m)
    # the profile's optimum is a lower bound (its batch_source says so),
    # and the plan passes that on; a curve's is not
    assert m["optimal_batch_is_lower_bound"] is bf16, m
    assert ("lower bound" in m["batch_note"]) is bf16, m["batch_note"]
    ident = "CALIBRATE_" + re.sub("[^A-Z0-9]", "_", m["name"].upper())
    assert env[ident + "_NAME"] == m["name"], env
    assert int(env[ident + "_BATCH_SIZE"]) == m["micro_batch_size"], env
    assert int(env[ident + "_GRAD_ACCUM"]) == m["grad_accum_steps"], env
    assert env[ident + "_BF16"] == ("1" if bf16 else "0"), env
PY
      ok || bad "plan --format hf / env: not the plan's figures"
  fi
fi
expect_usage "plan --format yaml" "$CAL" plan "$CSV" --format yaml

# a one-layer headline whose shape the profile lost cannot be scaled:
# refused in one line, nothing written
sed -e 's/^ "schema": "calibrate-profile\/1",/&\
 "batch_source": {"mode": "prefill", "workload": "one decoder layer, forward pass"},/' \
  "$DATA/profile_a.json" >"$TMP/layer.json"
out=$TMP/never.json
expect_usage "plan of a one-layer figure for a model" "$CAL" plan \
  "$TMP/layer.json" --examples 1000 --model-params 7e9 -o "$out" &&
  grep -q "one decoder layer" "$TMP/err" && ok ||
  bad "plan: a one-layer figure for a model is not refused with its reason"
[ ! -e "$out" ] && ok || bad "plan of a one-layer figure: left $out behind"

# bad inputs: one line on stderr, exit 2, and no -o file
out=$TMP/never.json
for args in "--examples 10 --price-per-hour gpu=3" \
  "--price-per-hour 3" \
  "--examples 10 --price-per-hour machine_a=1" \
  "--examples 10 --steps 5 --global-batch 2" \
  "--epochs 2" \
  "--steps 2" \
  "--model-params 5e8 --layers 24" \
  "--memory-gb 80" \
  "--examples 10 --memory-gb nobody=80"; do
  # shellcheck disable=SC2086
  expect_usage "plan CSV $args" "$CAL" plan "$CSV" $args --format json -o "$out"
  [ ! -e "$out" ] && ok || bad "plan CSV $args: left $out behind"
done
printf '' >"$TMP/empty.csv"
printf 'machine,batch_size,throughput\nx,abc,3\n' >"$TMP/junk.csv"
printf '{"schema": "calibrate-peak/1", "curves": []}' >"$TMP/nocurves.json"
printf '{"schema": "calibrate-profile/1"}' >"$TMP/notprofile.json"
for f in empty.csv junk.csv nocurves.json notprofile.json; do
  expect_usage "plan $f" "$CAL" plan "$TMP/$f" "$REF" -o "$out"
  [ ! -e "$out" ] && ok || bad "plan $f: left $out behind"
done
finish
