#!/bin/bash
# libcalibrate as a planner meets it: install the library, its header and
# calibrate.pc into a temporary prefix, build examples/planner against them
# with pkg-config, run it on the reference profiles and the test data, and
# check its figures, curves and split against `calibrate plan` and
# `calibrate peak` on the same inputs.  Also: only cal_ API symbols are
# exported, none of them a name the program uses inside, and the SONAME
# carries the major version.
#
# usage: e2e_libcalibrate.sh CALIBRATE BUILD_DIR SOURCE_DIR [SCRATCH]
set -u
CAL=$1 BUILD=$2 SRC=$3
. "$SRC/tests/e2e_lib.sh"
e2e_setup ${4:+"$4"}

for tool in cc make pkg-config python3 nm readelf; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed"
    exit 77
  fi
done

PREFIX=$TMP/prefix
PROFILES="$SRC/tests/data/kvm-xeon-2core-avx512.json
$SRC/tests/data/profile_a.json $SRC/tests/data/profile_b.json"

# -- install and build the example -------------------------------------
CMAKE=${CMAKE:-cmake}
check "install the library component" \
  "$CMAKE" --install "$BUILD" --prefix "$PREFIX" --component libcalibrate
check "install the development component" \
  "$CMAKE" --install "$BUILD" --prefix "$PREFIX" --component libcalibrate-dev
LIB=$PREFIX/lib/libcalibrate.so
check "header installed" test -f "$PREFIX/include/calibrate/calibrate.h"
check "calibrate.pc installed" test -f "$PREFIX/lib/pkgconfig/calibrate.pc"
hdr_version=$(for part in MAJOR MINOR PATCH; do
  sed -n "s/^#define CALIBRATE_VERSION_$part \([0-9]*\)$/\1/p" \
    "$PREFIX/include/calibrate/calibrate.h"; done | paste -sd.)
check "pkg-config gives the header's version ($hdr_version)" \
  test "$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --modversion \
          calibrate)" = "$hdr_version"

soname=$(readelf -d "$LIB" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
check "SONAME carries the major version (got '$soname')" \
  test "$soname" = "libcalibrate.so.0" -a -f "$PREFIX/lib/$soname"

nm -D --defined-only "$LIB" | awk '$2 ~ /^[TDBRW]$/ {print $3}' | sort \
  >"$TMP/exported"
check "some symbols exported" test -s "$TMP/exported"
if grep -Ev '^cal_(status_message|version_number|version_string|machine_|batchcurve_|worksplit_|memory_need$)' \
     "$TMP/exported" >"$TMP/stray"; then
  bad "exported beyond the public API: $(tr '\n' ' ' <"$TMP/stray")"
else
  ok
fi
nm "$CAL" | awk '{print $NF}' | sort -u >"$TMP/internal"
if comm -12 "$TMP/exported" "$TMP/internal" | grep . >"$TMP/clash"; then
  bad "public names also used inside the program: $(tr '\n' ' ' <"$TMP/clash")"
else
  ok
fi
check "header declares every export" \
  sh -c "for s in \$(cat '$TMP/exported'); do
           grep -q \"\\b\$s(\" '$PREFIX/include/calibrate/calibrate.h' || exit 1
         done"

cp -R "$SRC/examples/planner" "$TMP/planner"
rm -f "$TMP/planner/planner"
# a library built with the sanitizers needs their run-time in the program
san=
if readelf -d "$LIB" | grep -q 'libasan'; then
  san="-fsanitize=address,undefined"
fi
if ! PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig make -s -C "$TMP/planner" \
       CFLAGS="-O2 -Wall -Wextra -Werror $san" >"$TMP/make.log" 2>&1; then
  cat "$TMP/make.log"
  bad "the example does not build against the installed library"
  finish
  exit
fi
ok
PLANNER=$TMP/planner/planner
# the installed library, not one from the build tree
export LD_LIBRARY_PATH=$PREFIX/lib
check "the example runs on the installed library" \
  sh -c "ldd '$PLANNER' | grep -q '$PREFIX/lib/libcalibrate.so.0'"

# -- the same numbers as calibrate plan and calibrate peak --------------
# shellcheck disable=SC2086
expect_exit 0 "planner on the reference profiles" \
  "$PLANNER" --examples 12345 $PROFILES && cp "$TMP/out" "$TMP/planner.out"
# shellcheck disable=SC2086
expect_exit 0 "calibrate plan on the same profiles" \
  "$CAL" plan $PROFILES --examples 12345 --format json &&
  cp "$TMP/out" "$TMP/plan.json"

i=0
for p in $PROFILES; do
  python3 - "$p" "$TMP/curve$i.csv" "$TMP/curve$i.args" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
sw = d.get("batch_sweep") or {}
modes = sw.get("modes") or {}
mode = None
for m in (sw.get("top_level_mode"), "prefill", "decode"):
    if m and m in modes:
        mode = m
        break
with open(sys.argv[2], "w") as f:
    f.write("machine,batch_size,throughput,status\n")
    for pt in (modes.get(mode) or {}).get("points", []):
        s = pt.get("samples_examples_per_s") or []
        if pt.get("status") == "ok" and s:
            for v in s:
                f.write("m,%d,%r,ok\n" % (pt["batch_size"], v))
        else:
            f.write("m,%d,0,skipped\n" % pt["batch_size"])
with open(sys.argv[3], "w") as f:
    f.write("--tolerance %r --optimize %s\n"
            % (sw.get("tolerance_pct", 3.0), sw.get("optimize", "throughput")))
EOF
  # shellcheck disable=SC2046
  expect_exit 0 "calibrate peak on profile $i's curve" \
    "$CAL" peak "$TMP/curve$i.csv" --format json $(cat "$TMP/curve$i.args") &&
    cp "$TMP/out" "$TMP/peak$i.json"
  i=$((i + 1))
done

# shellcheck disable=SC2086
if python3 - "$TMP" $PROFILES >"$TMP/compare.log" 2>&1 <<'EOF'
import json, math, shlex, sys
tmp, profiles = sys.argv[1], sys.argv[2:]
rec = {}
for line in open(tmp + "/planner.out"):
    kind, *kv = shlex.split(line)
    fields = dict(x.split("=", 1) for x in kv)
    rec.setdefault(kind, []).append(fields)
bad = []
def same(what, got, want):
    if want is None:
        ok = got == "null"
    elif isinstance(want, bool):
        ok = got == str(int(want))
    elif isinstance(want, int):
        ok = got == str(want)
    elif isinstance(want, str):
        ok = got == want
    else:
        ok = got != "null" and math.isclose(float(got), want, rel_tol=1e-9,
                                            abs_tol=1e-12)
    if not ok:
        bad.append("%s: planner says %s, want %r" % (what, got, want))

plan = json.load(open(tmp + "/plan.json"))
split = rec["split"][0]
same("examples", split["examples"], plan["examples"])
same("makespan_s", split["makespan_s"], plan["makespan_s"])
same("even makespan", split["even_makespan_s"], plan["even_split_makespan_s"])
same("speedup", split["speedup"], plan["speedup_vs_even_split"])
same("heterogeneous", split["heterogeneous"], plan["heterogeneous"])
for i, pm in enumerate(plan["machines"]):
    m, s = rec["machine"][i], rec["share"][i]
    same("name %d" % i, m["name"], pm["name"])
    same("throughput %d" % i, m["throughput"], pm["throughput"])
    same("optimal batch %d" % i, m["optimal_batch"], pm["optimal_batch_size"])
    same("share %d" % i, s["share"], pm["share"])
    same("examples %d" % i, s["examples"], pm["examples"])
    same("finish %d" % i, s["finish_s"], pm["finish_s"])
    same("in split %d" % i, s["in_split"], pm["in_split"])
    same("straggler %d" % i, s["straggler"], pm["straggler"])

for i, path in enumerate(profiles):
    prof = json.load(open(path))
    m = rec["machine"][i]
    same("gflops %d" % i, m["gflops"], prof["gflops"])
    same("gflops per core %d" % i, m["gflops_per_core"], prof["gflops_per_core"])
    for dt, d in ((prof.get("gemm") or {}).get("dtypes") or {}).items():
        if d.get("best_gflops_all_threads") is not None:
            same("%s %d" % (dt, i), m.get(dt, "absent"),
                 d["best_gflops_all_threads"])
            same("%s per core %d" % (dt, i), m.get(dt + "_per_core", "absent"),
                 d["best_gflops_1_thread"])
        elif dt in m:
            bad.append("%s %d: planner has a figure the profile lacks" % (dt, i))
    mem = ((prof.get("machine") or {}).get("memory") or {}).get("available_bytes")
    same("memory %d" % i, m["memory_bytes"],
         float(mem) if mem else prof["memory_gb"] * 1e9)
    c = json.load(open("%s/peak%d.json" % (tmp, i)))["curves"][0]
    pc = [r for r in rec.get("curve", []) if r["i"] == str(i)]
    if not pc:
        bad.append("curve %d: the planner printed none" % i)
        continue
    pc = pc[0]
    same("peak batch %d" % i, pc["peak_batch"], c["peak_batch_size"])
    same("peak %d" % i, pc["peak"], c["peak_examples_per_s"])
    same("knee %d" % i, pc["knee_batch"], c["knee_batch_size"])
    same("optimal %d" % i, pc["optimal_batch"], c["optimal_batch_size"])
    same("shape %d" % i, pc["shape"], c["shape"])
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
then
  ok
else
  cat "$TMP/compare.log"
  bad "the planner's numbers differ from calibrate plan / calibrate peak"
fi

# -- a bad profile: one line, naming the file, nothing printed ----------
printf '{"schema": "calibrate-profile/1", "gflops": "fast"}\n' \
  >"$TMP/bad.json"
expect_usage "a bad profile is one line and exit 2" \
  "$PLANNER" "$TMP/bad.json"
check "the line names the file" grep -q "bad.json" "$TMP/err"
expect_usage "a missing profile is one line and exit 2" \
  "$PLANNER" "$TMP/absent.json"
expect_usage "no profile is one line and exit 2" "$PLANNER"
expect_usage "a bad --examples is one line and exit 2" \
  "$PLANNER" --examples many "$SRC/tests/data/profile_a.json"

finish
