#!/usr/bin/env bash
# End-to-end tests of the single-section commands: attention (one shape by
# flags, bad shapes refused before anything runs), peak-flops, bandwidth.
# usage: e2e_sections.sh CALIBRATE SOURCE_DIR
# covers: calibrator/commands/attention.c calibrator/commands/limits.c
# covers: calibrator/sections/attention.c calibrator/profile/attention_json.c
# covers: calibrator/report/table_attention.c
# covers: calibrator/sections/compute_peak.c calibrator/sections/bandwidth.c
# covers: calibrator/report/table_limits.c
CAL=$1 SRC=$2
. "$SRC/tests/e2e_lib.sh"
e2e_measure_setup
PY=/usr/bin/python3
# --allow-busy: these check function, not speed (others may load the cores)
FAST=(--quick --no-progress --allow-busy --samples 3 --min-time 0.002)

expect_exit 0 "attention, one shape" "$CAL" attention "${FAST[@]}" --batch 2 --heads 4 --kv-heads 2 --seq 96 --head-dim 80 --with-reference -o "$TMP/at.json"
$PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/at.json" attention && ok || bad "attention profile"
$PY - "$TMP/at.json" <<'PY' && ok || bad "attention content"
import json, sys
d = json.load(open(sys.argv[1]))
pts = d["attention"]["points"]
fused = [p for p in pts if p["kernel"] == "attn_fused" and p["status"] == "ok"]
ref = [p for p in pts if p["kernel"] == "attn_ref" and p["status"] == "ok"]
assert fused and ref
for p in fused:
    assert (p["batch"], p["heads"], p["kv_heads"], p["nq"], p["nk"], p["head_dim"]) == (2, 4, 2, 96, 96, 80)
    # analytic count: 4*B*H*D*sum(1..N) for causal prefill
    assert p["flops_per_run"] == 4 * 2 * 4 * 80 * (96 * 97 // 2), p["flops_per_run"]
    assert p["ratio_to_gemm"] > 0 and p["gbps"] > 0 and "speedup_vs_reference" in p
assert "gemm" not in d and d["gflops"] is None  # only this section ran
# the bf16 kernel on the same shape: measured against the bf16 GEMM where
# the CPU has bf16 dot products, a skipped point saying why elsewhere
bf = [p for p in pts if p["kernel"] == "attn_fused_bf16"]
assert bf and all(p["dtype"] == "bf16" and p["id"].startswith("attention/bf16/fused/b2h4kv2/q96k96/d80/causal/t") for p in bf), bf
assert all(p["id"].startswith("attention/fused/") for p in fused)
for p in bf:
    if p["status"] == "ok":
        assert p["variant"] in ("avx512_bf16", "amx"), p["variant"]
        assert p["flops_per_run"] == 4 * 2 * 4 * 80 * (96 * 97 // 2)
        assert p["ratio_to_gemm"] > 0 and "speedup_vs_reference" not in p
        assert d["attention"]["gemm_reference_bf16"]["t1"]["gflops"] > 0
    else:
        assert p["status"] == "skipped" and "AVX512_BF16" in p["reason"], p
PY
expect_exit 0 "attention, fp32 only" "$CAL" attention "${FAST[@]}" --seq 64 --head-dim 64 --dtype fp32 -o "$TMP/f32.json"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["attention"]; assert {p["dtype"] for p in d["points"]}=={"fp32"} and "gemm_reference_bf16" not in d' "$TMP/f32.json" \
  && ok || bad "attention --dtype fp32"
expect_usage "unknown dtype" "$CAL" attention --dtype fp8 -o "$TMP/x.json"
expect_exit 0 "attention, decode" "$CAL" attention "${FAST[@]}" --decode --nk 512 --heads 8 --kv-heads 1 -o "$TMP/dec.json"
$PY -c 'import json,sys; p=json.load(open(sys.argv[1]))["attention"]["points"][0]; assert p["nq"]==1 and p["nk"]==512 and p["mode"]=="decode"' "$TMP/dec.json" \
  && ok || bad "decode shape"
expect_exit 0 "attention, scalar variant" "$CAL" attention "${FAST[@]}" --seq 64 --head-dim 64 --variant scalar -o "$TMP/sc.json"
$PY -c 'import json,sys; p=json.load(open(sys.argv[1]))["attention"]["points"][0]; assert p["variant"]=="scalar", p["variant"]' "$TMP/sc.json" \
  && ok || bad "--variant scalar did not run the scalar kernel"

expect_usage "zero size" "$CAL" attention --seq 0 -o "$TMP/x.json"
expect_usage "negative size" "$CAL" attention --batch -2 -o "$TMP/x.json"
expect_usage "heads not a multiple" "$CAL" attention --heads 6 --kv-heads 4 -o "$TMP/x.json"
expect_usage "head dim too big" "$CAL" attention --head-dim 1024 -o "$TMP/x.json"
expect_usage "does not fit in memory" "$CAL" attention --seq 100000000 -o "$TMP/x.json"
expect_usage "causal nq > nk" "$CAL" attention --nq 64 --nk 32 -o "$TMP/x.json"
expect_usage "unknown variant" "$CAL" attention --variant avx9000 -o "$TMP/x.json"
expect_usage "non-numeric" "$CAL" attention --heads many -o "$TMP/x.json"
[ ! -e "$TMP/x.json" ] && ok || bad "a rejected attention run left a profile"

expect_exit 0 "peak-flops" "$CAL" peak-flops "${FAST[@]}" -o "$TMP/pk.json"
$PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/pk.json" peak && ok || bad "peak profile"
$PY - "$TMP/pk.json" <<'PY' && ok || bad "peak content"
import json, sys
d = json.load(open(sys.argv[1]))
pk = d["peak"]
assert pk["clock"]["ghz"] > 0.2
ok = [p for p in pk["points"] if p["status"] == "ok"]
assert any(p["kernel"] == "fma_f64" for p in ok) and any(p["kernel"] == "fma_f32" for p in ok)
for p in ok:
    assert p["efficiency"] > 0
PY

expect_exit 0 "bandwidth" "$CAL" bandwidth "${FAST[@]}" -o "$TMP/bw.json"
$PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/bw.json" bandwidth && ok || bad "bandwidth profile"
$PY - "$TMP/bw.json" <<'PY' && ok || bad "bandwidth content"
import json, sys
d = json.load(open(sys.argv[1]))
bw = d["bandwidth"]
levels = {p.get("level") for p in bw["points"] if p["status"] == "ok"}
assert "memory" in levels and "L1" in levels, levels
llc = max(c["size_bytes"] for c in bw["caches"])
mem = [p for p in bw["points"] if p.get("level") == "memory"]
# STREAM's 4x the last level, capped at 512 MiB (a VM may report a
# socket's whole L3), never below twice the L3 point's working set
l3 = [p["working_set_bytes"] for p in bw["points"] if p.get("level") == "L3"]
floor = min(4 * llc * 0.99, 512 * 2**20)
assert all(p["working_set_bytes"] >= max(floor, 2 * max(l3 or [0])) for p in mem), mem
assert all(p["working_set_bytes"] <= max(512 * 2**20, 2 * max(l3 or [0])) for p in mem)
assert "512 MiB" in bw["working_sets"]
assert any(p.get("level") is None for p in bw["points"])  # the staircase
PY
expect_usage "bandwidth stray argument" "$CAL" bandwidth extra
expect_usage "peak-flops bad threads" "$CAL" peak-flops --threads 0

finish
