#!/bin/sh
# End to end: the peak section's matrix-engine (amx_bf16, amx_int8) and
# fp16 rows on this machine, measured where /proc/cpuinfo has the flags
# (and, for AMX, the kernel grants the tile state), else skipped with the
# reason that says which; the profile against the schema; and the
# synthetic AMX profile that test_matrix_profile writes, against the schema's
# peak and roofline parts, so an AMX machine's keys are checked everywhere.
# usage: e2e_matrix_peak.sh CALIBRATE TEST_MATRIX_PROFILE SOURCE_DIR SCRATCH
CAL=$1 UNIT=$2 SRC=$3
. "$SRC/tests/e2e_lib.sh"
e2e_measure_setup "$4"
PY=python3

expect_exit 0 "peak-flops" "$CAL" peak-flops --quick --no-progress --allow-busy \
  --samples 3 --min-time 0.002 -o "$TMP/pk.json"
cp "$TMP/out" "$TMP/table.txt"
check "peak profile against the schema" \
  $PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/pk.json" peak
for k in amx_bf16 amx_int8 fma_fp16; do
  check "the table has a $k row" grep -q "^  $k " "$TMP/table.txt"
done
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
$PY - "$TMP/pk.json" "$flags" <<'PY' && ok || bad "matrix-engine and fp16 rows"
import json, sys
d = json.load(open(sys.argv[1]))
flags = set(sys.argv[2].split())
pk = d["peak"]
pts = {p["kernel"]: p for p in pk["points"] if p["threads"] == 1}
cpu_reasons = ("CPU has no AMX (", "CPU has AMX but not this dtype (")
refused = "the kernel refused the AMX tile state (arch_prctl: "
for k in ("amx_bf16", "amx_int8"):
    p = pts[k]
    if "amx_tile" not in flags or k not in flags:
        # no flags: the CPU lacks them, or the kernel does not know AMX
        assert p["status"] == "skipped", p
        assert p["reason"].startswith(cpu_reasons + (refused,)), p["reason"]
    elif p["status"] == "skipped":
        assert p["reason"].startswith(refused), p["reason"]
    else:
        assert p["status"] == "ok" and p["variant"] == "amx", p
        assert p["id"] == "peak/%s/amx/t1" % k and p["efficiency"] > 0, p
        assert pk["model"]["matrix"]["engine"] == "amx"
        assert k[4:] in pk["theoretical_matrix"], pk.get("theoretical_matrix")
if pts["amx_bf16"].get("reason", "").startswith("CPU has no AMX ("):
    # no tile bit: no matrix engine in the model either
    assert "matrix" not in pk["model"] and "theoretical_matrix" not in pk
p = pts["fma_fp16"]
if p["status"] == "ok":
    assert "avx512_fp16" in flags and p["efficiency"] > 0, p
    assert "fp16" in pk["theoretical"], pk["theoretical"]
else:
    assert p["status"] == "skipped", p
    assert "AVX512_FP16" in p["reason"] or "avx512 variant" in p["reason"], p
    if "avx512_fp16" not in flags:
        assert p["reason"] == "CPU has no AVX512_FP16 (vfmadd231ph)", p
PY

# the synthetic profile of a 2-core AMX machine, from the unit test
CAL_TEST_PROFILE_OUT="$TMP/amx.json" expect_exit 0 "test_matrix_profile" "$UNIT"
$PY - "$SCHEMA" "$TMP/amx.json" <<'PY' && ok || bad "AMX keys against the schema"
import copy, json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))

def errors(section, value):
    sub = dict(schema["properties"][section])
    sub["$defs"] = schema["$defs"]
    v = jsonschema.Draft202012Validator(sub)
    return [e.message for e in v.iter_errors(value)]

assert not errors("peak", d["peak"]), errors("peak", d["peak"])
assert not errors("roofline", d["roofline"]), errors("roofline", d["roofline"])
assert d["peak"]["model"]["matrix"]["ops_per_cycle"] == {"bf16": 1024, "int8": 2048}
assert d["roofline"]["efficiencies"]["gemm_bf16_of_matrix_peak"] == 0.5
# null is a valid unknown; the schema catches wrong shapes
r = copy.deepcopy(d["roofline"])
r["efficiencies"]["gemm_bf16_of_matrix_peak"] = None
assert not errors("roofline", r)
r["efficiencies"]["gemm_bf16_of_matrix_peak"] = "high"
assert errors("roofline", r)
r = copy.deepcopy(d["roofline"])
r["matrix_gflops"]["bf16"] = -1
assert errors("roofline", r)
p = copy.deepcopy(d["peak"])
del p["model"]["matrix"]["engine"]
assert errors("peak", p)
p = copy.deepcopy(d["peak"])
p["theoretical_matrix"]["bf16"]["gflops_per_core"] = "fast"
assert errors("peak", p)
p = copy.deepcopy(d["peak"])
p["points"][2]["efficiency"] = -0.5
assert errors("peak", p)
PY

finish
