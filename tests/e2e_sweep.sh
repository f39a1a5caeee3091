#!/usr/bin/env bash
# End-to-end tests of the batch sweep: a quick sweep with the tiny preset
# writes a schema-valid batch_sweep section, a small memory budget skips
# points instead of running them, --workload inference, sft, dpo and grpo
# have their curves and the headline (dpo also with --lora-rank), and bad
# sweep options are refused (--lora-rank where no training step runs).
# usage: e2e_sweep.sh CALIBRATE SOURCE_DIR
# covers: calibrator/sections/batch_sweep.c calibrator/sections/batch_curve.c
# covers: calibrator/sections/batch_pace.c
# covers: calibrator/sections/batch_plan.c calibrator/profile/batch_json.c
# covers: calibrator/report/table_batch.c calibrator/sections/batch_rates.c
CAL=$1 SRC=$2
. "$SRC/tests/e2e_lib.sh"
e2e_measure_setup
PY=/usr/bin/python3
# --allow-busy: these check function, not speed; on a busy machine a
# point others disturbed is kept and marked instead of dropped
FAST=(--quick --no-progress --allow-busy --budget-scale 0.3 --preset tiny --sections batch)
# runs whose batches are bounded (a list, or the memory limit): short
# samples and a budget they do not reach on a quiet machine, so that a
# busy one, measuring slower, still measures every batch instead of
# skipping for time
LISTED=(--quick --no-progress --allow-busy --samples 3 --min-time 0.002 --budget-scale 2
        --preset tiny --sections batch)

expect_exit 0 "quick tiny sweep" "$CAL" --sweep-batch "${FAST[@]}" --target-effective-batch 32 -o "$TMP/sweep.json"
grep -q "Batch sweep" "$TMP/out" && ok || bad "no batch sweep table"
grep -q "<- peak" "$TMP/out" && ok || bad "the table does not mark the peak"
$PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/sweep.json" batch_sweep \
  && ok || bad "sweep profile does not validate"
$PY - "$TMP/sweep.json" <<'PY' && ok || bad "batch_sweep content"
import json, sys
d = json.load(open(sys.argv[1]))
bs = d["batch_sweep"]
assert bs["model"]["preset"] == "tiny"
def headline(p):
    # a point that can be the peak: measured quietly with its threads side
    # by side (a busy machine or a host that put both vCPUs on one core
    # marks the others, and no curve figure may come from them)
    return p["status"] == "ok" and not p.get("threads_not_parallel") and not p.get("swapped")
def evidence(name, m):
    # no peak only where every measured point is marked
    assert all(p["status"] != "ok" or p.get("threads_not_parallel") for p in m["points"]), m["points"]
    print("note: %s has no peak: every point busy or not side by side" % name)
for mode in ("prefill", "decode"):
    m = bs["modes"][mode]
    ok = [p for p in m["points"] if p["status"] == "ok"]
    assert [p for p in m["points"] if p["status"] in ("ok", "contaminated")], (mode, m["points"])
    best = [p for p in ok if headline(p)]
    if not best:
        assert m["peak_batch_size"] is None, (mode, m["peak_batch_size"])
        evidence(mode, m)
        continue
    best = max(best, key=lambda p: p["examples_per_s"])
    assert m["peak_batch_size"] == best["batch_size"], (mode, m["peak_batch_size"], m["points"])
    assert m["shape"] in ("rising", "plateau", "peaked", "single")
    assert m["recommendation"]["target_effective_batch"] == 32
    r = m["recommendation"]
    assert r["batch_size"] * r["accumulation_steps"] >= 32
    for p in ok:
        lq = 1 if mode == "decode" else bs["model"]["seq"]
        assert abs(p["tokens_per_s"] - p["examples_per_s"] * lq) <= 1e-6 * p["tokens_per_s"]
        assert p["memory_bytes"] > 0 and p["latency_ms"] > 0
# the default sweep measures the training step and inference; the top
# level is the model's: the training step's curve when it has an optimal
# batch (else prefill's, else decode's), never invented, and says so
assert set(bs["modes"]) == {"prefill", "decode", "train"}, bs["modes"].keys()
src = d["batch_source"]
order = [m for m in ("train", "prefill", "decode")
         if bs["modes"][m].get("optimal_batch_size")]
if not order:
    assert src is None and d["optimal_batch_size"] is None, src
    for name, m in bs["modes"].items():
        evidence(name, m)
else:
    assert src["mode"] == order[0], (src["mode"], order)
    top = bs["modes"][src["mode"]]
    assert d["optimal_batch_size"] == top["optimal_batch_size"]
    opt = [p for p in top["points"] if p.get("batch_size") == d["optimal_batch_size"]][0]
    assert headline(opt) and d["throughput"] == opt["examples_per_s"], opt
    b1 = [p for p in top["points"] if p.get("batch_size") == 1][0]
    if headline(b1):
        assert abs(d["latency_ms"] - b1["latency_ms"]) < 1e-9
    else:
        assert d["latency_ms"] is None, (d["latency_ms"], b1)
    assert src["preset"] == "tiny" and src["layers"] == 2 and src["vocab"] == 1000
    assert src["layers_measured"] == top["layers_measured"] and src["choice"], src
    assert ("scaled_from_layers" in src) == (top["layers_measured"] < 2), src
    assert src["optimal_is_lower_bound"] is top["optimal_is_lower_bound"], src
# an optimal batch is a lower bound exactly where the best point is the
# largest measured and the sweep did not end at a wall (memory, swap, a
# failed check)
walls = ("memory limit", "the process swapped", "verification failed")
for name, m in bs["modes"].items():
    want = m["shape"] in ("single", "rising") and m["stop_reason"] not in walls \
        and m["peak_batch_size"] is not None
    assert m["optimal_is_lower_bound"] is want, (name, m["shape"], m["stop_reason"])
# every mode is the model's step: both layers (distinct: tiny fits) and the head
tr = bs["modes"]["train"]
assert tr["layers_measured"] in (None, 2) and "scaled_from_layers" not in tr, tr
for mode in ("prefill", "decode"):
    m = bs["modes"][mode]
    assert m["layers"] == 2 and m["layers_measured"] == 2 and "scaled_from_layers" not in m
    assert "LM head" in m["workload"] and m["lm_head"], m["workload"]
    for p in m["points"]:
        if p["status"] == "ok":
            assert p["kernel"].startswith("model_") and p["layers_measured"] == 2, p
            assert "head" in p["impl"], p["impl"]
PY
# decode points carry the bytes a step reads and the GB/s; without the
# bandwidth section there is no read bandwidth at memory, so the
# efficiency is null and says why
$PY - "$TMP/sweep.json" <<'PY' && ok || bad "decode bandwidth keys (no reference)"
import json, sys
d = json.load(open(sys.argv[1]))
bs = d["batch_sweep"]
m, mod = bs["modes"]["decode"], bs["model"]
assert m["memory_read_gbps"] is None and m["memory_read_point"] is None
assert m["memory_read_beside_gbps"] is None and "no memory read" in m["memory_read_beside_why"], m
assert "no efficiency: the bandwidth section did not run" in m["bandwidth_note"], m["bandwidth_note"]
ok = [p for p in m["points"] if p["status"] == "ok"]
wb = 2 if bs["dtype"] == "bf16" else 4
for p in ok:
    # the model's step: every layer's weights and KV cache (bf16: a bf16
    # cache), the head's weights
    kv = p["batch_size"] * mod["kv_heads"] * (mod["seq"] + 1) * mod["head_dim"] * 2 * wb
    head = m["vocab"] * mod["hidden"] * wb + 4 * mod["hidden"]
    want = m["layers"] * (mod["weights_bytes"] + kv) + head
    assert abs(p["read_bytes_per_step"] - want) <= 1e-9 * want, (p["read_bytes_per_step"], want)
    assert abs(p["read_gbps"] - p["read_bytes_per_step"] / p["latency_ms"] * 1e-6) <= 1e-6 * p["read_gbps"]
    assert p["bandwidth_efficiency"] is None and p["bandwidth_efficiency_beside"] is None
    # up to batch 32 both paths run and the faster is the point
    if p["batch_size"] <= 32:
        o = p["other_path"]
        assert {p["matrix_path"], o["matrix_path"]} == {"gemv", "blas"}, p
        assert o["latency_ms"] >= p["latency_ms"], (p["latency_ms"], o)
    else:
        assert p["matrix_path"] == "blas" and "other_path" not in p
for p in bs["modes"]["prefill"]["points"]:
    assert "bandwidth_efficiency" not in p and "read_gbps" not in p
PY
grep -q "%bw: not known: the bandwidth section did not run" "$TMP/out" \
  && ok || bad "the decode table does not say why %bw is unknown"
$PY - "$TMP/sweep.json" <<'PY' && ok || bad "the sweep's dtype"
import json, sys
d = json.load(open(sys.argv[1]))
bs = d["batch_sweep"]
assert set(d) >= {"batch_sweep"} and "gemm" not in d  # --sections batch
# bf16 by default exactly where the CPU has a native bf16 path
native = bs["dtype_choice"].startswith("auto: the CPU has")
assert bs["dtype"] == ("bf16" if native else "fp32"), bs["dtype_choice"]
assert d["batch_source"]["dtype"] == bs["dtype"]
for p in bs["modes"]["prefill"]["points"]:
    assert ("/bf16/" in p["id"]) == (bs["dtype"] == "bf16"), p["id"]
    if p["status"] == "ok":
        assert p["dtype"] == bs["dtype"] and p["engine"] in ("openblas", "onednn", "builtin")
PY
expect_exit 0 "--dtype fp32" "$CAL" --sweep-batch "${LISTED[@]}" --dtype fp32 --mode decode --batches 1,32 --no-extend -o "$TMP/f32.json"
$PY - "$TMP/f32.json" <<'PY' && ok || bad "--dtype fp32"
import json, sys
d = json.load(open(sys.argv[1]))
bs = d["batch_sweep"]
assert bs["dtype"] == "fp32" and bs["dtype_choice"] == "--dtype fp32"
pts = bs["modes"]["decode"]["points"]
assert [p["batch_size"] for p in pts] == [1, 32]
assert pts[0]["status"] == "ok", pts[0]
for p in pts:
    if p["status"] != "ok":
        assert p["reason"] == "time budget", p  # a busy machine's slow first point
        continue
    want = "gemv fp32" if p["matrix_path"] == "gemv" else "openblas sgemm"
    assert p["impl"].startswith(want) and p["dtype"] == "fp32", p
PY

# a memory budget too small for larger batches: recorded as skipped (the
# list named: on a busy machine the time budget could end a longer one first)
expect_exit 0 "memory budget" "$CAL" --sweep-batch "${LISTED[@]}" --mode prefill --memory-budget 3M --batches 1,64 --no-extend -o "$TMP/mem.json"
$PY - "$TMP/mem.json" <<'PY' && ok || bad "memory-limited points were not skipped"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["batch_sweep"]["modes"]["prefill"]
sk = [p for p in m["points"] if p["status"] == "skipped"]
assert sk and "memory budget" in sk[0]["reason"], m["points"]
assert sk[0]["reason"].startswith("batch %d needs " % sk[0]["batch_size"]), sk[0]
assert all(p["memory_bytes"] > 3 * 2**20 for p in sk if "memory budget" in p["reason"])
assert m["stop_reason"] == "memory limit"
# a larger batch cannot run here: the optimum is no lower bound
assert m["optimal_is_lower_bound"] is False, m["shape"]
# measured points: the memory they met beside the estimate
for p in m["points"]:
    if p["status"] != "ok":
        continue
    assert isinstance(p["swapped"], bool) and p["rss_before_bytes"] > 0, p
    assert p["peak_rss_bytes"] is None or p["peak_rss_bytes"] >= p["rss_before_bytes"], p
assert "decode" not in d["batch_sweep"]["modes"]
PY

# explicit lists and ranges
expect_exit 0 "batch range" "$CAL" --sweep-batch "${LISTED[@]}" --mode decode --batches 1-4*2 --no-extend -o "$TMP/r.json"
$PY -c 'import json,sys; m=json.load(open(sys.argv[1]))["batch_sweep"]["modes"]["decode"]; assert [p["batch_size"] for p in m["points"]]==[1,2,4], m["points"]' "$TMP/r.json" \
  && ok || bad "--batches 1-4*2 did not give 1,2,4"
$PY - "$TMP/r.json" "$TMP/out" <<'PY' && ok || bad "the table and the profile disagree on the lower bound"
import json, sys
m = json.load(open(sys.argv[1]))["batch_sweep"]["modes"]["decode"]
out = open(sys.argv[2]).read()
assert ("is a lower bound" in out) == m["optimal_is_lower_bound"], (m["shape"], m["stop_reason"])
PY

# --ci: fixed GEMM size and batch list, samples pooled over interleaved
# rounds (kept small here: 2 rounds of 2 samples, one thread; the batch
# sweep takes its 4 samples in one round)
expect_exit 0 "--ci" "$CAL" --ci --allow-busy --threads 1 --budget-scale 0.1 --samples 2 --rounds 2 --min-time 0.002 --preset tiny --no-progress -o "$TMP/ci.json"
$PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/ci.json" gemm attention batch_sweep \
  && ok || bad "--ci profile does not validate"
$PY - "$TMP/ci.json" <<'PY' && ok || bad "--ci settings and pooled samples"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["settings"]
assert s["ci"] is True and s["rounds"] == 2 and s["samples"] == 2
assert "scaling" not in d
gemm = [p for p in d["gemm"]["points"] if p["status"] == "ok"]
assert sorted({p["n"] for p in gemm}) == [1024]
# role points: the headline of fp32 and fp64 under ids that do not move
roles = {p["id"]: p["role_of"] for p in gemm if "role_of" in p}
assert set(roles) == {"gemm/fp32/best/t1", "gemm/fp64/best/t1"}, roles
assert all(r in {p["id"] for p in gemm} for r in roles.values())
assert {p["dtype"] for p in gemm} == {"fp32", "fp64"}
assert all(p["stats"]["n"] == 4 and len(p["samples_" + p["metric"]]) == 4 for p in gemm)
assert {p["engine"] for p in gemm} == {"openblas", "onednn"}
assert all(sw["stop_reason"] == "fixed sizes (--ci)" for sw in d["gemm"]["sweeps"])
pre = d["batch_sweep"]["modes"]["prefill"]
assert [p["batch_size"] for p in pre["points"]] == [1, 4]
assert not any(p["kernel"] == "attn_ref" for p in d["attention"]["points"])
# full bandwidth section: decode efficiency against its read point
dec = d["batch_sweep"]["modes"]["decode"]
bw = {p["id"]: p for p in d["bandwidth"]["points"]}
ref = bw[dec["memory_read_point"]]
assert dec["memory_read_point"] == "bandwidth/stream_read/memory/t1"
assert dec["memory_read_gbps"] == ref["stats"]["median"] > 0
# and against the same read measured again just before and just after the
# decode points, the higher (null, with why, only when both repeats were
# disturbed)
beside = dec["memory_read_beside_gbps"]
assert beside is None and dec["memory_read_beside_why"] or beside > 0, dec
again = [g for g in (dec["memory_read_before_gbps"], dec["memory_read_after_gbps"]) if g is not None]
assert beside == (max(again) if again else None), dec
for p in dec["points"]:
    if p["status"] == "ok":
        assert abs(p["bandwidth_efficiency"] - p["read_gbps"] / dec["memory_read_gbps"]) <= 1e-9 * p["bandwidth_efficiency"]
        if beside:
            assert abs(p["bandwidth_efficiency_beside"] - p["read_gbps"] / beside) <= 1e-9 * p["read_gbps"] / beside
        else:
            assert p["bandwidth_efficiency_beside"] is None
PY
grep -q "%bw: share of the memory read bandwidth" "$TMP/out" \
  && ok || bad "the decode table does not name its bandwidth"

# train: the model's step per batch (3 layers of the tiny shape and its LM
# head), its keys, and the top level taken from it.  Its own 15 s (x 2, a
# cap the listed batches reach only on a busy machine) with
# --quick (not a share of the sweep's); --allow-busy: a contaminated point
# here would hide the keys this checks, not test them
TRAIN=(--quick --no-progress --preset tiny --sections batch --allow-busy --samples 3
       --min-time 0.002 --budget-scale 2)
expect_exit 0 "train sweep" "$CAL" --sweep-batch "${TRAIN[@]}" --mode train --dtype fp32 --layers 3 --batches 1,2,4 --no-extend -o "$TMP/train.json"
grep -q "train    batch" "$TMP/out" && ok || bad "no train table"
$PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/train.json" batch_sweep \
  && ok || bad "train profile does not validate"
$PY - "$TMP/train.json" <<'PY' && ok || bad "train content"
import json, os, sys
d = json.load(open(sys.argv[1]))
bs = d["batch_sweep"]
m, mod = bs["modes"]["train"], bs["model"]
assert set(bs["modes"]) == {"train"}, bs["modes"].keys()
# --layers 3 fits: the whole stack measured, nothing scaled
assert m["layers"] == 3 and m["layers_measured"] == 3 and m["vocab"] == 1000
# fp32 layers: the fp32 head, and what ran
assert m["lm_head_dtype"] == "fp32" and m["lm_head_impl"] == "openblas sgemm", m
assert m["lm_head_choice"].startswith("fp32")
assert "scaled_from_layers" not in m
assert "3 x forward" in m["flops_convention"]
ok = [p for p in m["points"] if p["status"] == "ok"]
assert len(ok) == 3, [p["status"] for p in m["points"]]
for p in ok:
    assert p["kernel"] == "layer_train" and p["dtype"] == "fp32"
    t = p["batch_size"] * mod["seq"]
    head = 6.0 * t * m["vocab"] * mod["hidden"]
    assert p["layers_measured"] == 3
    assert abs(p["flops_per_step"] - (p["flops_per_run"] + head)) <= 1e-9 * p["flops_per_step"]
    assert p["step_ms"] > p["layer_step_ms"] * 0.5 and p["step_ms"] > p["lm_head_step_ms"]
    assert p["latency_ms"] == p["step_ms"]
    assert abs(p["activation_bytes"] - (3 * p["activation_bytes_layer"] + 4.0 * t * (mod["hidden"] + 1000))) < 1
    assert p["activation_bytes_checkpointed"] < p["activation_bytes"]
    assert p["model_memory_bytes"] == m["model_state_bytes"] + p["activation_bytes"]
# activations grow with the batch
acts = [p["activation_bytes_layer"] / p["batch_size"] for p in ok]
assert max(acts) - min(acts) < 1e-6 * max(acts)
if m["optimal_batch_size"] is None:
    # every point's threads shared a core (the host's placement, or others'
    # work): no optimal batch, and the evidence on each point
    assert d["batch_source"] is None and all(p.get("threads_not_parallel") for p in ok), ok
else:
    assert d["batch_source"]["mode"] == "train"
    assert d["optimal_batch_size"] == m["optimal_batch_size"]
    opt = [p for p in ok if p["batch_size"] == d["optimal_batch_size"]][0]
    assert d["throughput"] == opt["examples_per_s"]
# the rates against the run's ceilings: no gemm or bandwidth section here,
# so the fractions are null and say why; AdamW measured on its own
for p in ok:
    assert p["lm_head_gflops"] > 0, p
    assert p["step_gemm_fraction"] is None and p["lm_head_gemm_fraction"] is None
assert m["gemm_gflops"] is None and m["gemm_point"] is None
assert "gemm section" in m["gemm_why"], m["gemm_why"]
aw = m["adamw"]
assert aw["kernel"] == "adamw" and aw["bytes_per_pass"] == 28 * aw["elements"], aw
assert aw["gbps"] > 0 and aw["time_s"] > 0, aw
assert aw["triad_gbps"] is None and aw["triad_fraction"] is None
assert "bandwidth section" in m["adamw_why"], m["adamw_why"]
# its loops: the widest the CPU has (CALIBRATE_ISA caps them)
flags = set(next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split())
have = ["scalar"] + (["avx2"] if {"avx2", "fma"} <= flags else [])
if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
    have.append("avx512")
cap = os.environ.get("CALIBRATE_ISA", "auto")
want = have[-1] if cap in ("", "auto") else cap
assert aw["variant"] == want, (aw["variant"], want)
PY
grep -q "LM head (vocab 1000, fp32)" "$TMP/out" && ok || bad "train table: the head's dtype"
# bf16 (where the CPU runs it natively): the head's products in bf16 on
# oneDNN, as the layers' (the default engine without a GEMM section)
if $PY -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["batch_sweep"]["dtype"] != "bf16")' "$TMP/sweep.json"; then
  expect_exit 0 "bf16 train sweep" "$CAL" --sweep-batch "${TRAIN[@]}" --mode train --dtype bf16 --batches 1 --no-extend -o "$TMP/train16.json"
  grep -q "LM head (vocab 1000, bf16)" "$TMP/out" && ok || bad "bf16 train table: the head's dtype"
  $PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/train16.json" batch_sweep \
    && ok || bad "bf16 train profile does not validate"
  $PY - "$TMP/train16.json" <<'PY' && ok || bad "bf16 train: the LM head"
import json, sys
bs = json.load(open(sys.argv[1]))["batch_sweep"]
m = bs["modes"]["train"]
assert bs["engine"] == "onednn", bs["engine_choice"]
assert m["lm_head_dtype"] == "bf16", m["lm_head_choice"]
assert m["lm_head_impl"].startswith("onednn ") and "ref" not in m["lm_head_impl"], m["lm_head_impl"]
p = m["points"][0]
assert p["status"] == "ok" and p["dtype"] == "bf16" and p["lm_head_step_ms"] > 0, p
assert m["adamw"]["kernel"] == "adamw_bf16", m["adamw"]
assert m["adamw"]["bytes_per_pass"] == 30 * m["adamw"]["elements"]
PY
else
  echo "bf16 train sweep not run: no native bf16 on this CPU"
fi
# the curve stops at the memory limit; a budget that holds one layer's
# training step but not the preset's two: one measured, scaled to two
expect_exit 0 "train memory limit" "$CAL" --sweep-batch "${TRAIN[@]}" --mode train --dtype fp32 --batches 1,64 --no-extend --memory-budget 12M -o "$TMP/trainmem.json"
$PY - "$TMP/trainmem.json" <<'PY' && ok || bad "train memory limit"
import json, sys
m = json.load(open(sys.argv[1]))["batch_sweep"]["modes"]["train"]
assert m["stop_reason"] == "memory limit", m["stop_reason"]
assert m["optimal_is_lower_bound"] is False
assert m["layers"] == 2 and m["scaled_from_layers"] == 1 and m["layers_measured"] == 1
p = [p for p in m["points"] if p["batch_size"] == 64][0]
assert p["status"] == "skipped" and "memory budget" in p["reason"], p
PY

# --workload: inference (prefill, then --gen-len decode steps in one
# timed step), dpo (a pair: the training step over both sequences and
# the reference's forward over them) and grpo (a prompt: its completions
# generated, then trained on) have their own curves, sft is the
# training step under its user-facing name; the headline follows each
# workload W NAME [ARGS...]: run it, its table and a valid profile $TMP/W.json
workload() {
  _w=$1 _mode=$2
  shift 2
  expect_exit 0 "$_w workload" "$CAL" "${TRAIN[@]}" --workload "$_w" --dtype fp32 --no-extend -o "$TMP/$_w.json" "$@"
  grep -q "workload $_w (--workload)" "$TMP/out" && grep -q "$_mode    batch" "$TMP/out" \
    && ok || bad "$_w table"
  $PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/$_w.json" batch_sweep \
    && ok || bad "$_w profile does not validate"
  $PY - "$TMP/$_w.json" "$_w" "$_mode" <<'PY' && ok || bad "$_w: the headline"
import json, sys
d, w, mode = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
bs = d["batch_sweep"]
assert bs["workload"] == w and set(bs["modes"]) == {mode}, bs["modes"].keys()
m = bs["modes"][mode]
if d.get("batch_source") is None:
    # a busy machine: no point may be the headline when every one was
    # contaminated or its threads did not run side by side
    assert all("threads_not_parallel" in p or p["status"] != "ok"
               for p in m["points"]), m["points"]
    print("note: no headline: every point busy or not side by side")
    sys.exit(0)
src = d["batch_source"]
assert src["mode"] == mode and src["workload_name"] == w, src
assert d["optimal_batch_size"] == m["optimal_batch_size"]
opt = [p for p in m["points"] if p["batch_size"] == d["optimal_batch_size"]][0]
assert d["throughput"] == opt["examples_per_s"]
PY
}
workload inference inference --gen-len 4 --batches 1,2
$PY - "$TMP/inference.json" <<'PY' && ok || bad "inference content"
import json, sys
bs = json.load(open(sys.argv[1]))["batch_sweep"]
m, seq = bs["modes"]["inference"], bs["model"]["seq"]
assert m["gen_len"] == 4 and "in sequence inside each timed sample" in m["method"]
ok = [p for p in m["points"] if p["status"] == "ok"]
assert len(ok) == 2, [p["status"] for p in m["points"]]
for p in ok:
    assert p["kernel"] == "model_infer" and "/g4/" in p["id"], p["id"]
    assert abs(p["tokens_per_s"] - p["examples_per_s"] * (seq + 4)) <= 1e-6 * p["tokens_per_s"]
PY
workload sft train --batches 1
$PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["batch_sweep"]["modes"]["train"]["workload"].startswith("sft, ")' "$TMP/sft.json" \
  && ok || bad "sft: the train note names it"
workload dpo dpo --batches 1
$PY - "$TMP/dpo.json" <<'PY' && ok || bad "dpo content"
import json, sys
bs = json.load(open(sys.argv[1]))["batch_sweep"]
m, seq = bs["modes"]["dpo"], bs["model"]["seq"]
assert m["workload"].startswith("dpo, ") and "reference" in m["method"]
p = m["points"][0]
assert p["status"] == "ok" and p["kernel"] == "layer_train", p
assert p["reference_forward_ms"] > 0
assert p["step_ms"] > p["reference_forward_ms"] + p["lm_head_step_ms"]
assert abs(p["tokens_per_s"] - p["examples_per_s"] * 2 * seq) <= 1e-6 * p["tokens_per_s"]
PY
# grpo: one example a prompt: its group's generation, then the training
# step over the completions
workload grpo grpo --group 2 --gen-len 3 --batches 1
$PY - "$TMP/grpo.json" <<'PY' && ok || bad "grpo content"
import json, sys
bs = json.load(open(sys.argv[1]))["batch_sweep"]
m, seq = bs["modes"]["grpo"], bs["model"]["seq"]
assert m["workload"].startswith("grpo, ") and m["group"] == 2 and m["gen_len"] == 3
p = m["points"][0]
assert p["status"] == "ok" and p["kernel"] == "layer_train" and "/G2/" in p["id"], p
assert p["generation_ms"] > 0 and "reference_forward_ms" not in p
assert p["step_ms"] > p["generation_ms"] + p["lm_head_step_ms"]
assert abs(p["tokens_per_s"] - p["examples_per_s"] * 2 * (seq + 3)) <= 1e-6 * p["tokens_per_s"]
PY
# LoRA: dpo's policy step trains rank-4 adapters on the frozen base; its
# points keep ids of their own, the mode and the headline say the rank
workload dpo dpo --batches 1 --lora-rank 4
$PY - "$TMP/dpo.json" <<'PY' && ok || bad "dpo with LoRA"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["batch_sweep"]["modes"]["dpo"]
assert m["lora_rank"] == 4 and m["lora_params"] > 0, m
assert "reference" in m["method"] and "LoRA rank 4" in m["method"], m["method"]
p = m["points"][0]
assert p["status"] == "ok" and "/lora4/" in p["id"] and "LoRA r4" in p["impl"], p
assert d.get("batch_source") is None or d["batch_source"]["lora_rank"] == 4
PY
expect_usage "--lora-rank with inference" "$CAL" --workload inference --lora-rank 8 -o "$TMP/x.json"
expect_usage "--lora-rank without a training step" "$CAL" --sweep-batch --mode prefill,decode --lora-rank 8 -o "$TMP/x.json"
expect_usage "--lora-rank without the sweep" "$CAL" --lora-rank 8 -o "$TMP/x.json"
expect_usage "--lora-rank 0" "$CAL" --workload sft --lora-rank 0 -o "$TMP/x.json"
expect_usage "--group 0" "$CAL" --workload grpo --group 0 -o "$TMP/x.json"
expect_usage "--workload unknown" "$CAL" --workload pretrain -o "$TMP/x.json"
expect_usage "--gen-len 0" "$CAL" --workload inference --gen-len 0 -o "$TMP/x.json"

# bad sweep options
expect_usage "--batches 0" "$CAL" --sweep-batch --batches 0 -o "$TMP/x.json"
expect_usage "--batches descending" "$CAL" --sweep-batch --batches 64-8*2 -o "$TMP/x.json"
expect_usage "--mode" "$CAL" --sweep-batch --mode sideways -o "$TMP/x.json"
expect_usage "--mode list" "$CAL" --sweep-batch --mode train,sideways -o "$TMP/x.json"
expect_usage "--mode empty item" "$CAL" --sweep-batch --mode train, -o "$TMP/x.json"
expect_usage "--layers 0" "$CAL" --sweep-batch --mode train --layers 0 -o "$TMP/x.json"
expect_usage "--layers word" "$CAL" --sweep-batch --mode train --layers many -o "$TMP/x.json"
expect_usage "--preset" "$CAL" --sweep-batch --preset gpt-17 -o "$TMP/x.json"
expect_usage "--heads not dividing hidden" "$CAL" --sweep-batch --preset tiny --heads 5 -o "$TMP/x.json"
expect_usage "--kv-heads not dividing heads" "$CAL" --sweep-batch --preset tiny --kv-heads 3 -o "$TMP/x.json"
expect_usage "--memory-budget" "$CAL" --sweep-batch --memory-budget lots -o "$TMP/x.json"
expect_usage "--tolerance" "$CAL" --sweep-batch --tolerance 5 -o "$TMP/x.json"
expect_usage "--optimize" "$CAL" --sweep-batch --optimize speed -o "$TMP/x.json"
expect_usage "--target-effective-batch" "$CAL" --sweep-batch --target-effective-batch 0 -o "$TMP/x.json"
[ ! -e "$TMP/x.json" ] && ok || bad "a rejected sweep left a profile behind"
expect_exit 0 "--preset list" "$CAL" --preset list
grep -q "qwen2-0.5b" "$TMP/out" && ok || bad "--preset list"

finish
