#!/usr/bin/env bash
# End-to-end tests of a busy or interrupted machine: a process spinning on
# one usable core while calibrate measures (headline figures withheld,
# exit 5; kept and marked under --allow-busy), two runs at once (the
# second waits for the machine-wide lock, or refuses with --no-wait), and
# SIGINT/SIGTERM at several moments with and without --partial.
# usage: e2e_busy.sh CALIBRATE SOURCE_DIR
CAL=$1 SRC=$2
. "$SRC/tests/e2e_lib.sh"
e2e_measure_setup
PY=/usr/bin/python3
# samples long enough (3 x 50 ms) that a competitor's share shows through
# /proc/stat's 10 ms ticks; short budgets keep each run to seconds, and the
# GEMM section alone holds every headline figure checked here (the other
# sections under a competitor only add minutes)
RUN=(--quick --no-progress --samples 3 --min-time 0.05 --budget-scale 0.1 --gemm-engine openblas
     --sections gemm)
LONG=(--quick --no-progress)
# the lock checks test function: --allow-busy, so that other work on the
# cores does not turn a run into exit 5
SHORT=(--quick --no-progress --allow-busy --samples 3 --min-time 0.01)
skip=

# the first CPU this process may use: the competitor goes there
cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
SPIN=
spin_start() {
  taskset -c "$cpu" sh -c 'while :; do :; done' &
  SPIN=$!
}
spin_stop() {
  [ -n "$SPIN" ] && kill "$SPIN" 2>/dev/null && wait "$SPIN" 2>/dev/null
  SPIN=
}
trap 'spin_stop; rm -rf "$TMP"' EXIT

# ---- a competitor on one usable core for the whole run
spin_start
expect_exit 5 "busy machine: headline withheld" "$CAL" "${RUN[@]}" -o "$TMP/busy.json"
grep -q "the machine was busy" "$TMP/err" && ok || { bad "busy: no 'machine was busy' line"; cat "$TMP/err"; }
$PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/busy.json" && ok || bad "busy profile valid"
$PY - "$TMP/busy.json" <<'PY' && ok || bad "busy profile content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["headline_status"] == "withheld", d["headline_status"]
for k in ("gflops", "gflops_per_core", "gemm_best"):
    assert d[k] is None, (k, d[k])
    assert "contaminated" in d["headline_null_reasons"][k]
q = d["quality"]
assert q["contaminated_points"] > 0 and q["remeasured_points"] > 0, q
bad = [p for p in d["gemm"]["points"] if p["status"] == "contaminated"]
assert bad and all(p["load"]["others"] > 0.1 and p["reason"] for p in bad)
assert all(any(k.startswith("samples_") for k in p) for p in bad)  # evidence
PY
expect_exit 0 "busy machine, --allow-busy" "$CAL" "${RUN[@]}" --allow-busy -o "$TMP/allow.json"
$PY - "$TMP/allow.json" <<'PY' && ok || bad "--allow-busy profile content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["headline_status"] == "measured"
assert d["gflops"] is not None and d["gflops"] > 0
q = d["quality"]
assert q["allow_busy"] and q["contaminated_points"] > 0
marked = [p for p in d["gemm"]["points"] if p.get("contaminated")]
assert marked and all(p["status"] == "ok" for p in marked)
PY
spin_stop

# ---- two runs at once: the second waits, or refuses with --no-wait
# (the lock file keeps the last holder's pid: emptied first, it has one
# again only once the first run holds the lock); what others load the
# cores with meanwhile, measured while this test runs nothing
load_before=$(others_load 1)
: >"$CALIBRATE_LOCK"
"$CAL" peak-flops "${SHORT[@]}" -o "$TMP/a.json" >/dev/null 2>"$TMP/a.err" &
A=$!
for _ in $(seq 100); do [ -s "$CALIBRATE_LOCK" ] && break; sleep 0.05; done
expect_exit 5 "second run with --no-wait" "$CAL" peak-flops "${SHORT[@]}" --no-wait -o "$TMP/b.json"
grep -q "is measuring this machine" "$TMP/err" && [ "$(wc -l <"$TMP/err")" -eq 1 ] && ok || { bad "--no-wait message"; cat "$TMP/err"; }
[ ! -e "$TMP/b.json" ] && ok || bad "--no-wait wrote a profile"
expect_exit 0 "second run waits" "$CAL" peak-flops "${SHORT[@]}" -o "$TMP/c.json"
grep -q "waiting for it" "$TMP/err" && ok || { bad "no waiting message"; cat "$TMP/err"; }
wait "$A" && ok || { bad "first run"; cat "$TMP/a.err"; }
# the runs did not overlap: neither saw the other's load.  A timing check:
# with other work on the cores it cannot tell whose load a point saw, and
# is skipped with the evidence (exit 77 at the end)
clean=$($PY - "$TMP/a.json" "$TMP/c.json" <<'PY'
import json, sys
print(sum(json.load(open(f))["quality"]["contaminated_points"] for f in sys.argv[1:]))
PY
)
load_after=$(others_load 1)
if [ "$clean" = 0 ]; then
  ok
elif awk -v a="$load_before" -v b="$load_after" 'BEGIN { exit !(a >= 0.25 || b >= 0.25) }'; then
  echo "SKIP: two runs one after the other: $clean points contaminated, but" \
       "others kept $load_before cores busy before them and $load_after after"
  skip=1
else
  bad "two runs one after the other: $clean points contaminated on a quiet machine"
fi
# a reading command never takes the lock
: >"$CALIBRATE_LOCK"
"$CAL" peak-flops "${SHORT[@]}" -o "$TMP/d.json" >/dev/null 2>&1 &
D=$!
for _ in $(seq 100); do [ -s "$CALIBRATE_LOCK" ] && break; sleep 0.05; done
expect_exit 0 "export while a run measures" timeout 10 "$CAL" export --format bmf "$TMP/a.json" -o "$TMP/a.bmf"
wait "$D"

# ---- signals (a background job of a script ignores SIGINT unless the
# program asks for it, as --partial does: without it, SIGTERM)
# without --partial: the previous file at -o stays, no temp file is left
echo '{"keep": true}' >"$TMP/old.json"
"$CAL" "${LONG[@]}" -o "$TMP/old.json" >/dev/null 2>&1 &
P=$!
sleep 2
kill -TERM "$P"
wait "$P"
rc=$?
[ "$rc" -eq 143 ] && ok || bad "SIGTERM without --partial: exit $rc, expected 143"
grep -q '"keep": true' "$TMP/old.json" && ok || bad "SIGTERM replaced the previous profile"
ls "$TMP" | grep -q 'old.json.' && bad "SIGTERM left a temp file: $(ls "$TMP")" || ok

# with --partial, early and late, SIGINT and SIGTERM
partial() { # DELAY SIGNAL CODE
  "$CAL" "${LONG[@]}" --partial -o "$TMP/p.json" >/dev/null 2>"$TMP/p.err" &
  P=$!
  sleep "$1"
  kill -"$2" "$P"
  wait "$P"
  rc=$?
  [ "$rc" -eq "$3" ] && ok || { bad "--partial $2 at $1 s: exit $rc, expected $3"; cat "$TMP/p.err"; }
  grep -q "interrupted by" "$TMP/p.err" && ok || { bad "--partial $2 at $1 s: no message"; cat "$TMP/p.err"; }
  $PY "$SRC/tests/validate_profile.py" "$SCHEMA" "$TMP/p.json" >/dev/null && ok || bad "--partial $2 at $1 s: profile invalid"
  $PY - "$TMP/p.json" "$2" <<'PY' && ok || bad "--partial $2 at $1 s: content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["headline_status"] == "incomplete"
inc = d["incomplete"]
assert inc["signal"], inc
for s in inc["finished_sections"]:
    assert s in d, s
if inc.get("interrupted_section"):
    assert inc["interrupted_section"] not in d
if "gemm" not in d:
    assert d["gflops"] is None
PY
}
partial 1 INT 130
partial 4 TERM 143

finish || exit 1
[ -z "$skip" ] || exit 77
exit 0
