#!/bin/sh
# The bad-input catalogue of issue 14, one row per case: every bad input
# ends with exit 2 and one line on stderr, no temporary file is left
# behind, nothing is replaced that should not be, and nothing hangs.
# usage: e2e_bad_input.sh CALIBRATE PYTHON3 SOURCE_DIR WORKDIR
CAL=$1 PY=$2 SRC=$3 WORK=$4
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$WORK"
DATA=$SRC/tests/data
A=$DATA/profile_a.json B=$DATA/profile_b.json
CALIBRATE_PLOTS_DIR=$SRC/plots
export CALIBRATE_PLOTS_DIR
cd "$TMP" || exit 99

# No run may leave a temporary file anywhere under the scratch directory.
no_tmp() {
  _left=$(find "$TMP" -name '*.tmp.*' | head -3)
  [ -z "$_left" ] && ok || { bad "$1: left $_left"; find "$TMP" -name '*.tmp.*' -delete; }
}

# row CODE DESC CMD...: exit CODE (one stderr line when 2), within 20 s.
row() {
  _code=$1 _d=$2
  shift 2
  if [ "$_code" -eq 2 ]; then
    expect_usage "$_d" timeout 20 "$@" && echo "ok: [2] $_d"
  else
    expect_exit "$_code" "$_d" timeout 20 "$@" && echo "ok: [$_code] $_d"
  fi
  no_tmp "$_d"
}

# ---- malformed profiles: refused by every reader ----
mkdir -p v
"$PY" - "$A" v <<'EOF' || { echo "cannot make profile variants"; exit 99; }
import copy, json, sys
base = json.load(open(sys.argv[1]))
out = sys.argv[2]
pts = lambda d: d["batch_sweep"]["modes"]["prefill"]["points"]
def var(name, f):
    d = copy.deepcopy(base)
    f(d)
    json.dump(d, open(f"{out}/{name}.json", "w"))
def top(k, v):
    return lambda d: d.__setitem__(k, v)
def pt(k, v, i=0):
    return lambda d: pts(d)[i].__setitem__(k, v)
def st(k, v, i=0):
    return lambda d: pts(d)[i]["stats"].__setitem__(k, v)
cases = {
    "neg_gflops": top("gflops", -1.0),
    "neg_gflops_per_core": top("gflops_per_core", -3.0),
    "neg_memory_gb": top("memory_gb", -24.0),
    "neg_throughput": top("throughput", -776.0),
    "neg_latency": top("latency_ms", -2.0),
    "optimal_neg": top("optimal_batch_size", -5),
    "optimal_zero": top("optimal_batch_size", 0),
    "optimal_string": top("optimal_batch_size", "32"),
    "optimal_huge": top("optimal_batch_size", 2**63 - 1),
    "batch_neg": pt("batch_size", -1),
    "batch_zero": pt("batch_size", 0),
    "batch_string": pt("batch_size", "1"),
    "batch_huge": pt("batch_size", 2**63 - 1),
    "batch_real": pt("batch_size", 1.5),
    "points_object": lambda d: d["batch_sweep"]["modes"]["prefill"].__setitem__("points", {"a": 1}),
    "modes_array": lambda d: d["batch_sweep"].__setitem__("modes", [1, 2]),
    "stats_ci_inverted": lambda d: (st("ci_low", 1e7)(d), st("ci_high", -1)(d)),
    "stats_median": st("median", 55.0),
    "stats_min": st("min", 1.0),
    "stats_n": st("n", 7),
    "figure_not_median": pt("examples_per_s", 55.0),
    "sample_negative": lambda d: pts(d)[0]["samples_examples_per_s"].__setitem__(0, -1.0),
    "sample_string": lambda d: pts(d)[0]["samples_examples_per_s"].__setitem__(0, "196"),
    "duplicate_id": lambda d: pts(d)[1].__setitem__("id", pts(d)[0]["id"]),
    "status_bogus": pt("status", "great"),
    "gemm_string": top("gemm", "fast"),
}
for name, f in cases.items():
    var(name, f)
EOF
for f in v/*.json; do
  row 2 "export $f" "$CAL" export --format bmf "$f"
  row 2 "plan $f" "$CAL" plan "$f" "$B" --examples 100
  row 2 "plot $f" "$CAL" plot --script-only -o "charts-$(basename "$f")" "$f"
  [ ! -e "charts-$(basename "$f")" ] && ok || bad "plot $f made its directory"
done

# ---- what is not a profile ----
mkfifo fifo.json
row 2 "profile is a directory" "$CAL" export --format bmf "$TMP"
grep -q "directory" "$TMP/err" && ok || bad "directory: message does not say so"
row 2 "profile is a FIFO without writer" "$CAL" plan fifo.json
row 2 "profile is /dev/zero" "$CAL" plot --script-only -o z /dev/zero

# ---- a profile with no figure (a --partial one before any section) ----
"$PY" - "$A" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ["batch_sweep", "gemm", "scaling", "bandwidth", "roofline"]:
    d.pop(k, None)
for k in ["gflops", "gflops_per_core", "optimal_batch_size", "throughput",
          "latency_ms"]:
    d[k] = None
json.dump(d, open("empty.json", "w"))
EOF
row 2 "export bmf of a profile with no figure" "$CAL" export --format bmf empty.json
row 2 "export gab of a profile with no figure" "$CAL" export --format gab empty.json

# ---- plan: counts ----
row 2 "plan --examples 2^64-1" "$CAL" plan "$A" "$B" --examples 18446744073709551615
row 2 "plan --examples 2^63-1" "$CAL" plan "$A" "$B" --examples 9223372036854775807
row 2 "plan --examples 2^53+1" "$CAL" plan "$A" "$B" --examples 9007199254740993
row 0 "plan --examples 2^53" "$CAL" plan "$A" "$B" --examples 9007199254740992
grep -q -- ' -[0-9]' "$TMP/out" && bad "plan 2^53: a negative count" || ok

# ---- -o: special files, symlinks, FIFOs, failed writes ----
row 0 "export -o /dev/null" "$CAL" export --format bmf -o /dev/null "$A"
[ -c /dev/null ] && ok || bad "/dev/null is no longer a device"
row 0 "compare -o /dev/null" "$CAL" compare "$A" "$A" -o /dev/null
[ -c /dev/null ] && ok || bad "/dev/null is no longer a device"
row 0 "plan --format json -o /dev/stdout" "$CAL" plan "$A" "$B" --format json -o /dev/stdout
grep -q '"schema": "calibrate-plan/1"' "$TMP/out" && ok || bad "plan -o /dev/stdout: not on stdout"
echo old >target.json
ln -s target.json link.json
row 0 "export -o symlink" "$CAL" export --format bmf -o link.json "$A"
[ -L link.json ] && grep -q lower_value target.json && ok || bad "export -o link: link replaced or target not written"
mkfifo out.fifo
row 2 "export -o FIFO without reader" "$CAL" export --format bmf -o out.fifo "$A"
row 2 "plan -o FIFO without reader" "$CAL" plan "$A" "$B" -o out.fifo
[ -p out.fifo ] && ok || bad "out.fifo is no longer a FIFO"
echo "old table" >plan.md
row 2 "plan md -o over the file-size limit" sh -c 'ulimit -f 1; exec "$@"' sh \
  "$CAL" plan "$A" "$B" --format md --examples 1000 --target-effective-batch 64 \
  --model-params 7e9 -o plan.md
grep -qx "old table" plan.md && ok || bad "plan md: the old file was not kept"
echo "{}" >bmf.json
row 2 "export -o over the file-size limit" sh -c 'ulimit -f 1; exec "$@"' sh \
  "$CAL" export --format bmf -o bmf.json "$A"
grep -qx "{}" bmf.json && ok || bad "export: the old file was not kept"

# ---- plot: templates, planted links, quoting ----
row 2 "plot --templates /nonexistent" "$CAL" plot --script-only --templates /nonexistent -o tpl "$A"
[ ! -e tpl ] && ok || bad "plot --templates: files left in tpl"
mkdir shared
echo precious >victim
for n in gemm.dat gemm.png scaling.gp; do ln -s ../victim "shared/$n"; done
row 0 "plot over planted links" "$CAL" plot -o shared "$A"
grep -qx precious victim && ok || bad "plot followed a planted link"
"$PY" - "$A" <<'EOF' || bad "cannot make the quoting profile"
import json, sys
d = json.load(open(sys.argv[1]))
d["device_name"] = "'quoted'' ''name `x` @y"
json.dump(d, open("name\\", "w"))
EOF
row 0 "plot: quotes in the name, backslash ending the path" "$CAL" plot -o quoting 'name\' "$B"
[ -s quoting/batch_sweep.png ] && ok || bad "plot quoting: no image"

# ---- peak: CSV input ----
printf 'batch_size,throughput\r1,5\r2,7\n' >cr.csv
row 2 "peak: lone CR" "$CAL" peak cr.csv
row 2 "peak /dev/zero" "$CAL" peak /dev/zero
"$PY" -c "print('batch_size,throughput'); print('1,' + '5' * 200000)" >long.csv
row 2 "peak: line over the limit" "$CAL" peak long.csv
mkfifo in.fifo
row 2 "peak: FIFO without writer" "$CAL" peak in.fifo
row 2 "peak: read error on stdin" sh -c 'exec "$@" <"$0"' "$TMP" "$CAL" peak -

# ---- flags ----
for v in 1 100T 99999999999999999999999T; do
  row 2 "--memory-budget $v" "$CAL" --sweep-batch --memory-budget "$v" -o x.json
done
row 2 "--batches 1-1000000000*2" "$CAL" --sweep-batch --batches '1-1000000000*2' -o x.json
row 2 "peak-flops --sweep-batch" "$CAL" peak-flops --sweep-batch -o x.json
row 2 "--dtype fp16" "$CAL" --sweep-batch --dtype fp16 -o x.json
# a LoRA rank above the adapted matrices' smallest dimension (hidden, or
# ffn where smaller)
row 2 "--lora-rank 129 --hidden 128" "$CAL" --sweep-batch --lora-rank 129 --hidden 128 --heads 2 --kv-heads 2 -o x.json
grep -q "129 .*hidden size 128" err && ok || bad "--lora-rank 129: $(cat err)"
row 2 "--lora-rank 129 --ffn 128" "$CAL" --sweep-batch --lora-rank 129 --hidden 256 --heads 2 --kv-heads 2 --ffn 128 -o x.json
# --gen-len and --group only where a workload reads them (their defaults
# never refused)
row 2 "--workload sft --group 8" "$CAL" --workload sft --group 8 -o x.json
row 2 "--workload dpo --group 8" "$CAL" --group 8 --workload dpo -o x.json
row 2 "--workload inference --group 8" "$CAL" --workload inference --group 8 -o x.json
row 2 "--workload sft --gen-len 8" "$CAL" --workload sft --gen-len 8 -o x.json
row 2 "--workload dpo --gen-len 8" "$CAL" --gen-len 8 --workload dpo -o x.json
row 2 "--sweep-batch --gen-len 8" "$CAL" --sweep-batch --gen-len 8 -o x.json
grep -q "workload inference or grpo" err && ok || bad "--gen-len: the workloads are not named: $(cat err)"
# one --workload a run, never the last one silently
row 2 "--workload sft --workload dpo" "$CAL" --workload sft --workload dpo -o x.json
# a listed batch above a given --max-batch
row 2 "--batches 8 --max-batch 4" "$CAL" --sweep-batch --batches 8 --max-batch 4 -o x.json
row 2 "--max-batch 4 --batches 1,2,8" "$CAL" --sweep-batch --max-batch 4 --batches 1,2,8 -o x.json
# the target effective batch: at most a batch size (2^30)
row 2 "--target-effective-batch 2^63-1" "$CAL" --sweep-batch --target-effective-batch 9223372036854775807 -o x.json
row 2 "plan --target-effective-batch 2^63-1" "$CAL" plan "$A" "$B" --examples 100 --target-effective-batch 9223372036854775807
row 2 "plan --target-effective-batch 2^30+1" "$CAL" plan "$A" "$B" --examples 100 --target-effective-batch 1073741825
grep -q "1073741824" err && ok || bad "plan --target-effective-batch: no maximum said: $(cat err)"
[ ! -e x.json ] && ok || bad "a refused run wrote x.json"

# ---- the lock: a file it did not create is never rewritten ----
echo precious >lk.precious
chmod 600 lk.precious
: >lk.empty
chmod 640 lk.empty
ln lk.empty lk.hard
mkdir lk.dir
ln -s lk.precious lk.sym
for f in lk.precious lk.hard lk.dir lk.sym; do
  row 2 "CALIBRATE_LOCK=$f" env CALIBRATE_LOCK="$TMP/$f" "$CAL" peak-flops --quick --no-wait -o x.json
done
grep -qx precious lk.precious && [ "$(stat -c %a lk.precious)" = 600 ] && ok ||
  bad "the lock rewrote or chmodded a file it did not create"
[ ! -s lk.empty ] && [ "$(stat -c %a lk.empty)" = 640 ] && ok ||
  bad "the lock wrote through a hard link"
echo 123 >lk.pid
if command -v flock >/dev/null; then
  flock lk.pid sleep 3 &
  sleep 0.5
  row 5 "CALIBRATE_LOCK holding a pid, held elsewhere" env CALIBRATE_LOCK="$TMP/lk.pid" "$CAL" peak-flops --quick --no-wait -o x.json
  wait
fi
[ ! -e x.json ] && ok || bad "a refused run wrote x.json"

# ---- an OpenMP runtime held below the team: refused, never a hang ----
if [ "$(nproc)" -gt 1 ]; then
  for e in OMP_THREAD_LIMIT=1 OMP_MAX_ACTIVE_LEVELS=0; do
    row 2 "$e --sections gemm" env "$e" CALIBRATE_LOCK="$TMP/lk.omp" "$CAL" --quick --sections gemm --allow-busy -o x.json
    row 2 "$e peak-flops" env "$e" CALIBRATE_LOCK="$TMP/lk.omp" "$CAL" peak-flops --quick --allow-busy -o x.json
    # only threads above the limit are refused: --threads 1 fits it
    row 0 "$e --threads 1" env "$e" CALIBRATE_LOCK="$TMP/lk.omp" "$CAL" --threads 1 --quick --sections peak --allow-busy -o omp1.json
  done
  [ ! -e x.json ] && ok || bad "a refused run wrote x.json"
fi

# ---- plan: sums and times that are not numbers ----
printf 'batch_size,throughput,machine\n1,1e308,a\n1,1e308,b\n' >inf.csv
printf 'batch_size,throughput,machine\n1,1e-320,a\n' >den.csv
row 2 "plan: sum of 1e308s, 2^53 examples" "$CAL" plan inf.csv --examples 9007199254740992
row 2 "plan: sum of 1e308s" "$CAL" plan inf.csv --examples 1000
row 2 "plan: throughput 1e-320" "$CAL" plan den.csv --examples 1000

# ---- curves at scale: linear, never a minute ----
"$PY" -c "
print('batch_size,throughput,machine')
for i in range(100000): print(f'1,{5 + i % 7},m{i}')" >names.csv
row 0 "peak: 100,000 machine names" "$CAL" peak names.csv -o names.out
row 0 "plan: 100,000 machines" "$CAL" plan names.csv --examples 1000 -o plan.out
"$PY" -c "
print('batch_size,throughput')
for i in range(200000): print(f'8,{5 + i % 7}')" >onebatch.csv
row 0 "peak: 200,000 rows of one batch" "$CAL" peak onebatch.csv -o one.out

# ---- environment: an unknown CALIBRATE_ISA is a usage error ----
row 2 "CALIBRATE_ISA=garbage attention" env CALIBRATE_ISA=garbage "$CAL" attention --quick --allow-busy -o x.json
row 2 "CALIBRATE_ISA=garbage --sweep-batch" env CALIBRATE_ISA=garbage "$CAL" --quick --sweep-batch --allow-busy -o x.json
row 2 "CALIBRATE_ISA=garbage info" env CALIBRATE_ISA=garbage "$CAL" info
# a lock file in a directory that does not exist: the user's path, exit 2
row 2 "CALIBRATE_LOCK in no directory" env CALIBRATE_LOCK="$TMP/no/such/dir/x.lock" "$CAL" --quick --allow-busy -o lk.json
# the results directory a file: said so (it was "does not exist")
: >afile
row 2 "CALIBRATE_RESULTS_DIR is a file" env CALIBRATE_RESULTS_DIR="$TMP/afile" "$CAL" --quick --allow-busy
grep -q "is a file, not a directory" err && ok || bad "CALIBRATE_RESULTS_DIR a file: $(cat err)"
[ ! -e x.json ] && ok || bad "a refused run wrote x.json"

# ---- gnuplot that misbehaves: no image, or no end ----
row 4 "plot: gnuplot draws nothing" env CALIBRATE_GNUPLOT=true "$CAL" plot -o gp.true "$A"
# a script that cannot run (its interpreter missing; not executable): said
# so, not "gnuplot not found"
printf '#!/no/such/interpreter\n' >gp-bad.sh
chmod +x gp-bad.sh
printf '#!/bin/sh\nexit 0\n' >gp-noexec.sh
for gp in gp-bad.sh gp-noexec.sh; do
  env CALIBRATE_GNUPLOT="$TMP/$gp" "$CAL" plot -o "gp.$gp" "$A" >out 2>err
  grep -q "cannot run CALIBRATE_GNUPLOT=" err && ! grep -q "not found" err && ok ||
    bad "plot with CALIBRATE_GNUPLOT=$gp: $(cat err)"
done
[ ! -e gp.true/batch_sweep.png ] && ok || bad "plot kept an empty image"
printf '#!/bin/sh\nexec sleep 60\n' >gp-hang.sh
chmod +x gp-hang.sh
row 4 "plot: gnuplot hangs" env CALIBRATE_GNUPLOT_TIMEOUT=1 CALIBRATE_GNUPLOT="$TMP/gp-hang.sh" "$CAL" plot -o gp.hang "$A"
row 4 "report: gnuplot hangs" env CALIBRATE_GNUPLOT_TIMEOUT=1 CALIBRATE_GNUPLOT="$TMP/gp-hang.sh" "$CAL" report -o gp.html "$A"
[ ! -e gp.html ] && ok || bad "report wrote gp.html with no chart"

# ---- echoed input never acts on the terminal: escaped, one line ----
# clean FILE...: no control byte but newline and tab, no C1 code and no
# bidi or line control reached the files
clean() {
  "$PY" - "$@" <<'EOF'
import re, sys
bad = re.compile(rb'[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xd8\x9c|'
                 rb'\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]')
sys.exit(1 if any(bad.search(open(f, 'rb').read()) for f in sys.argv[1:]) else 0)
EOF
}
# ESC, CR, LF and U+202E in a profile's schema, names and a point id
"$PY" - "$A" <<'EOF' || bad "cannot make the hostile-string profiles"
import json, sys
d = json.load(open(sys.argv[1]))
evil = "\x1b[31m\r\n\u202eevil"
json.dump(dict(d, schema=evil), open("evil_schema.json", "w"))
d["device_name"] = "box" + evil
d["batch_sweep"]["modes"]["prefill"]["points"][0]["id"] = "id" + evil
json.dump(d, open("evil_names.json", "w"))
with open("evil.csv", "w") as f:
    f.write("batch_size,throughput,machine\n")
    for b in (1, 2, 4):
        f.write(f'{b},{b * 10},m\x1b[31m\u202eevil\n{b},{b * 9},plain\n')
EOF
row 2 "export: hostile schema" "$CAL" export --format bmf evil_schema.json
clean err && grep -q '\\x1b\[31m\\x0d\\x0a\\u202eevil' err && ok ||
  bad "export: the schema was not escaped: $(cat err)"
for f in table md json; do
  row 0 "compare --format $f: hostile names" "$CAL" compare --format "$f" evil_names.json evil_names.json
  clean out err && ok || bad "compare --format $f: raw control characters in the output"
done
row 0 "plan: hostile names" "$CAL" plan evil_names.json "$B" --examples 100
clean out err && ok || bad "plan: raw control characters in the output"
# a profile's strings are one line each: the name's newline does not
# start a row of its own
grep -q '^box\\x1b\[31m\\x0d\\x0a\\u202eevil  *[0-9]' out && ok ||
  bad "plan: the hostile name is not one row: $(cat out)"
row 0 "plot: hostile names" "$CAL" plot --script-only -o "$(printf 'evil\033[31m')" evil_names.json
clean out err && grep -q 'evil\\x1b\[31m/' err && ok || bad "plot: raw control characters in its notes"
row 0 "export: hostile names" "$CAL" export --format bmf evil_names.json
clean out && ok || bad "export: raw control characters in the output"
for f in table json; do
  row 0 "peak --format $f: hostile machine names" "$CAL" peak --format "$f" evil.csv
  clean out err && ok || bad "peak --format $f: raw control characters in the output"
done
"$PY" -c "import json; assert json.load(open('out'))['curves'][0]['machine'] == 'm\x1b[31m\u202eevil'" &&
  ok || bad "peak --format json: the machine name does not read back as it was"
bidi=$(printf '\342\200\256')
row 2 "a flag value with ESC, CR, LF" "$CAL" plan "$A" "$B" --examples "$(printf '\033[31m\r\n7')"
clean err && ok || bad "plan --examples: raw control characters on stderr"
row 2 "a --format with OSC and bidi" "$CAL" export --format "$(printf '\033]0;x\007')$bidi" "$A"
clean err && ok || bad "export --format: raw control characters on stderr"
row 2 "a file name with ESC and LF" "$CAL" export --format bmf "$(printf 'no\033[2J\nsuch')$bidi.json"
clean err && ok || bad "a file name: raw control characters on stderr"
mkdir "lk$bidi.d"
row 2 "CALIBRATE_LOCK naming a directory with bidi" env CALIBRATE_LOCK="$TMP/lk$bidi.d" "$CAL" peak-flops --quick --no-wait -o x.json
clean err && ok || bad "the lock's name: raw control characters on stderr"

# ---- fleet profiles whose hosts are not objects: invalid, not memory ----
for c in host_null host_string profile_string profile_number; do
  "$PY" - "$SRC/tests/compat-data/fleet.json" "$c" <<'EOF' || bad "cannot make fleet $c"
import json, sys
d = json.load(open(sys.argv[1]))
c = sys.argv[2]
h = d["hosts"]
if c == "host_null": h[0] = None
elif c == "host_string": h[0] = "host"
elif c == "profile_string": h[0]["profile"] = "profile.json"
else: h[0]["profile"] = 7
json.dump(d, open(f"fleet_{c}.json", "w"))
EOF
  row 2 "plan: fleet $c" "$CAL" plan "fleet_$c.json" --examples 100
  grep -q "out of memory" err && bad "plan: fleet $c said out of memory" || ok
done
# a host listed twice: refused (it was taken as two machines)
"$PY" - "$SRC/tests/compat-data/fleet.json" <<'EOF' || bad "cannot make fleet_dup"
import json, sys
d = json.load(open(sys.argv[1]))
d["hosts"].append(d["hosts"][0])
json.dump(d, open("fleet_dup.json", "w"))
EOF
row 2 "plan: fleet with a host twice" "$CAL" plan fleet_dup.json --examples 100
grep -q "lists each host once" err && ok || bad "plan: duplicated host: $(cat err)"

# ---- output names as long as a name can be: the temporary name fits ----
for n in 245 255; do
  long=$("$PY" -c "print('o' * $n)")
  row 0 "export -o a $n-byte name" "$CAL" export --format bmf -o "$long" "$A"
  [ -s "$long" ] && ok || bad "export -o a $n-byte name: not written"
  row 0 "plan -o a $n-byte name" "$CAL" plan "$A" "$B" --examples 100 -o "$long"
  rm -f "$long"
done

# ---- report ended by a signal: no chart directory, no gnuplot left ----
# (started with the signals' default actions: a background job of sh
# ignores SIGINT)
printf '#!/bin/sh\necho $$ >"%s/gp.pid"\nexec sleep 60\n' "$TMP" >gp-hang-pid.sh
chmod +x gp-hang-pid.sh
mkdir rt
for sig in INT TERM HUP; do
  rm -f gp.pid
  TMPDIR="$TMP/rt" CALIBRATE_GNUPLOT_TIMEOUT=30 CALIBRATE_GNUPLOT="$TMP/gp-hang-pid.sh" \
    "$PY" -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$CAL" report -o sig.html "$A" >out 2>err &
  pid=$!
  for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s gp.pid ] && break; sleep 0.5; done
  kill -"$sig" "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" -gt 128 ] && ok || bad "report SIG$sig: exit $rc"
  [ -z "$(ls -A rt)" ] && ok || bad "report SIG$sig left $(ls -A rt)"
  [ ! -e sig.html ] && ok || bad "report SIG$sig wrote sig.html"
  sleep 0.2
  gp=$(cat gp.pid 2>/dev/null)
  [ -n "$gp" ] && ! grep -qv ') Z ' "/proc/$gp/stat" 2>/dev/null && ok ||
    bad "report SIG$sig: gnuplot was not started or is still running"
done

# ---- big inputs: linear in time, bounded in memory ----
# big CODE SECS MIB DESC CMD...: exit CODE within SECS seconds (far more
# than the linear path needs: not a timing, a check that nothing is
# quadratic), its resident memory at most MIB MiB
big() {
  _code=$1 _secs=$2 _mib=$3 _d=$4
  shift 4
  "$PY" - "$_code" "$_secs" "$_mib" "$@" <<'EOF' && ok && echo "ok: [$_code] $_d" || bad "$_d"
import resource, subprocess, sys
code, secs, mib = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
try:
    with open("out", "wb") as o, open("err", "wb") as e:
        rc = subprocess.run(sys.argv[4:], stdout=o, stderr=e, timeout=secs).returncode
except subprocess.TimeoutExpired:
    sys.exit(f"no end within {secs:.0f} s")
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
if rc != code:
    sys.exit(f"exit {rc}, expected {code}: " + open("err").read()[-300:])
if peak > mib:
    sys.exit(f"{peak} MiB resident, expected at most {mib}")
EOF
  no_tmp "$_d"
}
"$PY" -c "
print('batch_size,throughput')
for i in range(200000): print(f'{i + 1},{5 + i % 7}')" >batches.csv
big 0 60 600 "peak --format json: 200,000 batch sizes" "$CAL" peak --format json batches.csv -o batches.json
"$PY" -c "import json; d = json.load(open('batches.json')); assert len(d['curves'][0]['points']) == 200000" &&
  ok || bad "peak --format json: not the 200,000 points"
"$PY" - "$A" <<'EOF' || bad "cannot make the profile of 100,000 GEMM points"
import copy, json, sys
d = json.load(open(sys.argv[1]))
p0 = d["gemm"]["points"][0]
pts = []
for i in range(100000):
    p = dict(p0, id=f"gemm/fp32/{256 + i}x256x256/t2", m=256 + i)
    pts.append(p)
d["gemm"]["points"] = pts
json.dump(d, open("gemm100k.json", "w"))
EOF
big 0 60 8000 "compare: 100,000 GEMM points against themselves" "$CAL" compare gemm100k.json gemm100k.json -o /dev/null

# ---- --partial: a signal after the last section still ends with 128+N ----
# the table is held on a full pipe after the profile is written; SIGTERM
# arrives there, then the pipe is drained
rm -f tbl.fifo late.json
mkfifo tbl.fifo
exec 7<>tbl.fifo
head -c 65536 /dev/zero >&7
CALIBRATE_LOCK="$TMP/lk.late" "$CAL" peak-flops --quick --partial --allow-busy -o late.json >tbl.fifo 2>err &
pid=$!
for _ in $(seq 1 600); do [ -s late.json ] && break; sleep 0.1; done
sleep 0.5
kill -TERM "$pid"
sleep 0.3
head -c 65536 <&7 >/dev/null
# the reader holds the FIFO's write end too (fd 7 is read-write), so it
# never sees an end of file: it is stopped once calibrate has ended
timeout 10 cat <&7 >/dev/null &
drain=$!
wait "$pid"
rc=$?
kill "$drain" 2>/dev/null
wait "$drain"
exec 7<&-
if [ "$rc" -eq 5 ]; then
  echo "skip: --partial late signal: the machine was busy (exit 5)"
else
  [ "$rc" -eq 143 ] && ok || bad "--partial, SIGTERM after the last section: exit $rc, expected 143"
  grep -q "after every section finished" err && ok || bad "--partial late signal: no line says so"
fi

finish
