#!/usr/bin/env bash
# End-to-end tests of the calibrate program: help, version, info, a quick
# run validated against the JSON Schema, and bad inputs.
# usage: e2e_cli.sh CALIBRATE SOURCE_DIR
# covers: calibrator/commands/main.c calibrator/commands/commands.c
# covers: calibrator/commands/info.c calibrator/commands/run.c
# covers: calibrator/commands/measure.c calibrator/run/context.c
# covers: calibrator/run/sanity.c calibrator/profile/profile_run.c
# covers: calibrator/profile/machine_json.c calibrator/profile/point_json.c
# covers: calibrator/sections/gemm.c calibrator/sections/scaling.c
# covers: calibrator/report/table.c calibrator/report/table_gemm.c
CAL=$1 SRC=$2
. "$SRC/tests/e2e_lib.sh"
e2e_measure_setup
PY=/usr/bin/python3

# help and version, for the program and every command
expect_exit 0 "--help" "$CAL" --help
grep -q "Commands:" "$TMP/out" && ok || bad "--help lists no commands"
expect_exit 0 "--version" "$CAL" --version
grep -q "^calibrate [0-9]" "$TMP/out" && ok || bad "--version output"
for cmd in $("$CAL" --help | awk '/^Commands:/{f=1;next} f&&/^  [a-z]/{print $1}'); do
  expect_exit 0 "$cmd --help" "$CAL" "$cmd" --help
  grep -qi "usage" "$TMP/out" && ok || bad "$cmd --help prints no usage"
done
# fleet scans its own options before the nodes' run options: --help after
# one of them (with its value or not) is still the help
for opt in "--timeout 5" "--timeout=5" "--p2p-max 1K" "-o x" "--compare-plain" \
           "--quick"; do
  # shellcheck disable=SC2086
  expect_exit 0 "fleet $opt --help" "$CAL" fleet $opt --help
  grep -q "^Usage: calibrate fleet" "$TMP/out" && ok ||
    bad "fleet $opt --help prints no usage"
done

# info
expect_exit 0 "info" "$CAL" info
grep -q "Usable cores" "$TMP/out" && ok || bad "info shows no usable cores"
expect_exit 0 "info --json" "$CAL" info --json
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["machine"]; assert m["usable_cores"]>=1 and m["cpu"]["brand"] and d["blas"]["library"]' "$TMP/out" \
  && ok || bad "info --json is not the expected JSON"
# the hypervisor (this machine's, whatever it is) and the steal seen: a
# hypervisor named only with the CPUID bit or /sys/hypervisor, shares in [0, 1]
$PY - "$TMP/out" <<'PY' && ok || bad "info --json: virtualization is not as documented"
import json, sys
v = json.load(open(sys.argv[1]))["virtualization"]
assert set(v) == {"hypervisor", "hypervisor_bit", "cpuid_signature",
                  "sys_hypervisor_type", "steal_share", "steal_watch_s",
                  "steal_share_since_boot"}, v
if v["hypervisor"] is not None:
    assert v["hypervisor_bit"] or v["sys_hypervisor_type"], v
for k in ("steal_share", "steal_share_since_boot"):
    assert v[k] is None or 0 <= v[k] <= 1, v
assert (v["steal_share"] is None) == (v["steal_watch_s"] is None), v
PY
expect_exit 0 "info" "$CAL" info
grep -q "^Hypervisor    " "$TMP/out" && grep -q "^Steal         " "$TMP/out" && ok ||
  bad "info names no hypervisor or steal"
if grep -q '^flags.* hypervisor' /proc/cpuinfo 2>/dev/null; then
  grep -q "^Hypervisor    none" "$TMP/out" &&
    bad "info: the CPU says hypervisor, info says none" || ok
fi
expect_exit 0 "info -o FILE" "$CAL" info --json -o "$TMP/info.json"
[ ! -s "$TMP/out" ] && $PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/info.json" \
  && ok || bad "info -o FILE: not written there"
if command -v taskset >/dev/null; then
  taskset -c 0 "$CAL" info --json >"$TMP/one.json" 2>"$TMP/err"
  $PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["machine"]["usable_cores"]==1' "$TMP/one.json" \
    && ok || bad "taskset -c 0 does not give one usable core"
  OMP_PROC_BIND=close OMP_PLACES=cores taskset -c 0 "$CAL" info --json >"$TMP/one.json" 2>"$TMP/err"
  $PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["machine"]["usable_cores"]==1' "$TMP/one.json" \
    && ok || bad "taskset -c 0 under OMP_PROC_BIND does not give one usable core"
fi
# with OMP_PROC_BIND (or OMP_PLACES) set, the OpenMP runtime binds the
# initial thread to its first place before main(): the usable cores and
# the affinity are still the whole mask's
"$CAL" info --json >"$TMP/all.json" 2>"$TMP/err" &&
  OMP_PROC_BIND=close OMP_PLACES=cores "$CAL" info --json >"$TMP/omp.json" 2>"$TMP/err" &&
  $PY -c '
import json, sys
a, b = (json.load(open(f))["machine"] for f in sys.argv[1:])
assert (a["usable_cores"], a["affinity"]) == (b["usable_cores"], b["affinity"]), (a["affinity"], b["affinity"])
' "$TMP/all.json" "$TMP/omp.json" \
  && ok || bad "OMP_PROC_BIND=close OMP_PLACES=cores narrows the usable cores"

# bad input: one line on stderr, exit 2, nothing written
expect_usage "unknown flag" "$CAL" --no-such-flag
expect_usage "unknown command" "$CAL" frobnicate
expect_usage "--threads 0" "$CAL" --threads 0 -o "$TMP/x.json"
expect_usage "--threads abc" "$CAL" --threads abc -o "$TMP/x.json"
expect_usage "--threads too many" "$CAL" --threads 100000 -o "$TMP/x.json"
expect_usage "--threads without value" "$CAL" --threads
expect_usage "--samples 0" "$CAL" --samples 0 -o "$TMP/x.json"
expect_usage "--seed -3" "$CAL" --seed -3 -o "$TMP/x.json"
expect_usage "missing -o directory" "$CAL" --quick -o "$TMP/no/such/dir/p.json"
expect_usage "-o is a directory" "$CAL" --quick -o "$TMP"
expect_usage "stray argument" "$CAL" run extra
expect_usage "info unknown flag" "$CAL" info --bogus
[ ! -e "$TMP/x.json" ] && ok || bad "a rejected run left a profile behind"

# a quick run writes a schema-valid profile whose figures match its samples
# (--allow-busy: this checks function, not speed; others may load the cores)
expect_exit 0 "quick run" "$CAL" --quick --no-progress --allow-busy -o "$TMP/quick.json"
grep -q "GEMM" "$TMP/out" && ok || bad "the quick run printed no table"
$PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/quick.json" gemm scaling \
  && ok || bad "quick profile does not validate"
ls -A "$TMP" | grep -q '\.tmp\.' && bad "temporary file left behind" || ok
$PY - "$TMP/quick.json" <<'PY' && ok || bad "top-level keys of the quick profile"
import json, statistics, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "calibrate-profile/1"
assert d["gflops_per_core"] > 0
t = d["settings"]["threads"]
# no all-thread headline only where every all-thread fp32 point ran with
# its threads on one core (the host's doing), each saying so
allt = [p for p in d["gemm"]["points"] if p["dtype"] == "fp32" and p["status"] == "ok" and p["threads"] == t]
assert d["gflops"] > 0 or (d["gflops"] is None and allt and all(p.get("threads_not_parallel") for p in allt))
# fields of later sections are null, never invented
assert d["optimal_batch_size"] is None and d["throughput"] is None
assert d["latency_ms"] is None
# the figures are the best fp32 engine's sweeps' best sizes, measured once more
pts = [p for p in d["gemm"]["points"] if p["status"] == "ok" and p["dtype"] == "fp32"]
byid = {p["id"]: p for p in pts}
for threads, key, who in ((t, "gflops", "all_threads"), (1, "gflops_per_core", "per_core")):
    if d[key] is None:
        continue
    kernel = d["gemm_best"]["fp32"][who]["kernel"]
    sw = [s for s in d["gemm"]["sweeps"] if s["kernel"] == kernel and s["threads"] == threads][0]
    best = byid[sw["best_id"]]
    if not best.get("confirms"):
        # its confirmation ran with its threads on one core (the host's
        # doing) and says so: never a best, the size stays the sweep's
        conf = [p for p in d["gemm"]["points"] if p.get("confirms") == best["id"]]
        assert conf and all(p.get("threads_not_parallel") for p in conf), best["id"]
        continue
    # the confirmation's id is its role, its size a field
    assert best["id"] == "gemm/fp32/%s/confirm/t%d" % (best["engine"], threads), best["id"]
    first = byid[best["confirms"]]
    pooled = statistics.median(first["samples_gflops"] + best["samples_gflops"])
    assert abs(d[key] - pooled) < 1e-6 * pooled and abs(best["pooled_gflops"] - pooled) < 1e-6 * pooled
    # the confirmed size is the one whose median less 1.4826 x its MAD is
    # highest (among those whose threads ran side by side)
    sizes = [p for p in pts if p["threads"] == threads and p["kernel"] == kernel
             and not p.get("confirms") and "role_of" not in p
             and not p.get("threads_not_parallel")]
    lead = max(sizes, key=lambda p: p["stats"]["median"] - 1.4826 * p["stats"]["mad"])
    assert best["n"] == lead["n"] and abs(sw["best_gflops_in_sweep"] - lead["gflops"]) < 1e-6
assert all(p["pinned"] for p in pts), "threads were not pinned"
assert all(len(p["samples_gflops"]) >= 7 for p in pts)
PY

# -o - writes the profile to stdout and the table to stderr (one section
# is enough to show where each goes)
expect_exit 0 "-o -" "$CAL" --quick --no-progress --allow-busy --budget-scale 0.2 \
  --samples 3 --min-time 0.002 --sections gemm -o -
$PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out" && ok || bad "-o - is not JSON"
grep -q "GEMM" "$TMP/err" && ok || bad "-o - did not print the table on stderr"

finish
