#!/usr/bin/env bash
# End-to-end tests of the GEMM engines: each engine forced through the CLI
# (--gemm-engine) and the environment (CALIBRATE_GEMM_ENGINE), the profile
# saying which engine ran, the headline being the best verified engine's,
# bad engine names refused with exit 2, every profile schema-valid.
# usage: e2e_gemm.sh CALIBRATE SOURCE_DIR
# covers: calibrator/sections/gemm.c calibrator/report/table_gemm.c
CAL=$1 SRC=$2
. "$SRC/tests/e2e_lib.sh"
e2e_measure_setup
PY=/usr/bin/python3
# --allow-busy: these check function, not speed (others may load the cores)
FAST=(--quick --no-progress --allow-busy --budget-scale 0.2 --samples 3 --min-time 0.002 --sections gemm,scaling)
unset CALIBRATE_GEMM_ENGINE

# bad engine names: one line on stderr, exit 2, nothing written
expect_usage "--gemm-engine bogus" "$CAL" --gemm-engine bogus -o "$TMP/x.json"
expect_usage "--gemm-engine empty" "$CAL" --gemm-engine "" -o "$TMP/x.json"
expect_usage "--gemm-engine without value" "$CAL" --gemm-engine
expect_usage "CALIBRATE_GEMM_ENGINE bogus" env CALIBRATE_GEMM_ENGINE=mkl "$CAL" --quick -o "$TMP/x.json"
grep -q "CALIBRATE_GEMM_ENGINE" "$TMP/err" && ok || bad "the message does not name the variable"
[ ! -e "$TMP/x.json" ] && ok || bad "a rejected run left a profile behind"
"$CAL" run --help | grep -q -- "--gemm-engine" && ok || bad "run --help does not document --gemm-engine"

# what every profile must say about its engines: $1 profile, $2 the
# engine that was forced ("auto": none)
check_engines() {
  $PY - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
forced = sys.argv[2]
g = d["gemm"]
assert d["settings"]["gemm_engine"] == forced and g["engine_choice"] == forced
pts = g["points"]
assert pts, "no GEMM points"
for p in pts:
    assert p["engine"] in ("openblas", "onednn"), p
    if forced != "auto":
        assert p["engine"] == forced, (p["id"], p["engine"])
    if p["engine"] == "onednn" and p["status"] == "ok":
        assert p["impl"], p["id"]  # oneDNN names what it dispatched to
    if "role_of" in p:  # a stable role id, whichever engine and size made it
        assert p["id"].startswith("gemm/%s/best/t" % p["dtype"]), p["id"]
    elif p.get("confirms") and not p["id"].endswith("/confirm"):
        # a confirmation's role id: the size is a field
        assert p["id"] == "gemm/%s/%s/confirm/t%d" % (p["dtype"], p["engine"], p["threads"]), p["id"]
    elif p["engine"] == "openblas":
        assert p["id"].startswith("gemm/" + p["dtype"] + "/"), p["id"]
    else:
        assert p["id"].startswith("gemm/%s/%s/" % (p["engine"], p["dtype"])), p["id"]
    if p["status"] == "ok":
        assert p["metric"] == ("gops" if p["dtype"] == "int8" else "gflops")
t = d["settings"]["threads"]
def shared_a_core(dt, engine=None):
    """Every all-thread point of dt (of engine, if given) ran with its
    threads on one core (the host's doing) and says so: none, no figure"""
    mine = [p for p in pts if p["dtype"] == dt and p["status"] == "ok" and p["threads"] == t
            and engine in (None, p["engine"])]
    return mine and all(p.get("threads_not_parallel") for p in mine)
for dt, entry in g["dtypes"].items():
    top = d["gemm_best"][dt]
    assert top["status"] == entry["status"]
    if entry["status"] != "measured":
        assert entry["reason"] and top["reason"]
        continue
    m = entry["metric"]
    for which, key, topkey, tk in (("1_thread", "best_1_thread", m + "_per_core", "per_core"),
                                   ("all_threads", "best_all_threads", m, "all_threads")):
        head = entry["best_%s_%s" % (m, which)]
        who = entry[key]
        if head is None and which == "all_threads":
            assert shared_a_core(dt), dt
            assert top.get(topkey) is None
            continue
        assert head and who and top[topkey] == head and top[tk] == who
        # the headline is the best of the verified engines, and names it
        figs = {e: v["best_%s_%s" % (m, which)] for e, v in entry["engines"].items()
                if v["status"] == "measured"}
        for e, v in figs.items():
            if v is None:  # an engine without a figure here
                assert which == "all_threads" and shared_a_core(dt, e), (dt, e, which)
        figs = {e: v for e, v in figs.items() if v is not None}
        assert head == max(figs.values()), (dt, which, head, figs)
        assert figs[who["engine"]] == head and entry["engines"][who["engine"]][key] == who
    assert entry.get("best_all_threads") is None or top["engine"] == entry["best_all_threads"]["engine"]
    if forced != "auto":
        assert set(e for e, v in entry["engines"].items() if v["status"] != "not_selected") == {forced}
fp32 = d["gemm_best"]["fp32"]
assert d["gflops"] == fp32["gflops"] and d["gflops_per_core"] == fp32["gflops_per_core"]
# the scaling curve runs on the fp32 headline's engine
sc = [p for p in d["scaling"]["points"] if p["dtype"] == "fp32"]
if fp32.get("gflops") is None:
    assert not sc  # no all-thread headline (checked above): no engine, no curve
else:
    assert sc and all(p["engine"] == fp32["engine"] for p in sc)
# ids do not depend on the sizes the budget reached: the scaling size is
# fixed, the id a role (the size a field); confirmations likewise
for p in d["scaling"]["points"]:
    want = "scaling/%s/%s/t%d" % (p["dtype"], p["engine"], p["threads"])
    assert p["id"] == want or (p.get("role_of") and p["id"] == "scaling/%s/best/t%d" % (p["dtype"], p["threads"])), p["id"]
    assert p["n"] == d["scaling"]["n"] == 2048
conf = [p for p in d["gemm"]["points"] if p.get("confirms") and "role_of" not in p]
roles = ["gemm/%s/%s/confirm/t%d" % (p["dtype"], p["engine"], p["threads"]) for p in conf]
assert conf and all(p["id"] == r or p["id"].endswith("/confirm") for p, r in zip(conf, roles)), [p["id"] for p in conf]
assert len(set(p["id"] for p in d["gemm"]["points"])) == len(d["gemm"]["points"])
PY
}

for engine in openblas onednn; do
  expect_exit 0 "--gemm-engine $engine" "$CAL" "${FAST[@]}" --gemm-engine "$engine" -o "$TMP/$engine.json"
  $PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/$engine.json" gemm scaling \
    && ok || bad "--gemm-engine $engine profile does not validate"
  check_engines "$TMP/$engine.json" "$engine" && ok || bad "--gemm-engine $engine: engines in the profile"
  grep -E "^  (fp32|int8)" "$TMP/out" | grep -q "$engine" && ok || bad "the table does not show engine $engine"
done
$PY - "$TMP/onednn.json" "$TMP/openblas.json" <<'PY' && ok || bad "what each forced engine offers"
import json, sys
one, ob = (json.load(open(f)) for f in sys.argv[1:])
# oneDNN offers no fp64, OpenBLAS (Debian's) no int8: unsupported, with why
assert one["gemm"]["dtypes"]["fp64"]["status"] == "unsupported"
assert "--gemm-engine" in one["gemm"]["dtypes"]["fp64"]["reason"]
assert one["gemm_best"]["int8"]["status"] == "measured" and one["gemm_best"]["int8"]["gops_per_core"] > 0
assert ob["gemm"]["dtypes"]["int8"]["status"] == "unsupported"
assert ob["gemm_best"]["fp64"]["gflops_per_core"] > 0
PY

# the environment variable, and the flag winning over it
expect_exit 0 "CALIBRATE_GEMM_ENGINE=onednn" env CALIBRATE_GEMM_ENGINE=onednn "$CAL" "${FAST[@]}" -o "$TMP/env.json"
check_engines "$TMP/env.json" onednn && ok || bad "CALIBRATE_GEMM_ENGINE=onednn: engines in the profile"
expect_exit 0 "flag over variable" env CALIBRATE_GEMM_ENGINE=onednn "$CAL" "${FAST[@]}" --gemm-engine auto -o "$TMP/auto.json"
$PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/auto.json" gemm scaling \
  && ok || bad "auto profile does not validate"
check_engines "$TMP/auto.json" auto && ok || bad "auto: engines in the profile"
$PY - "$TMP/auto.json" <<'PY' && ok || bad "auto measures every engine"
import json, sys
d = json.load(open(sys.argv[1]))
eng = {p["engine"] for p in d["gemm"]["points"] if p["status"] == "ok"}
assert eng == {"openblas", "onednn"}, eng
assert set(d["gemm_best"]) == {"fp32", "fp64", "bf16", "int8"}
PY

finish
