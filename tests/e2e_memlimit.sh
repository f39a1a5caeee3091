#!/bin/sh
# Memory limits a run must live within (issue 49).  Under an address-space
# limit (RLIMIT_AS, as `prlimit --as` or `ulimit -v` set it) the memory
# budget counts the room left, so that points which would not fit are
# skipped with the reason and the training stack is scaled, never
# attempted: no hang in an allocator at the limit, no crash, and a lack of
# memory never reported as a wrong answer (exit 3).  The optimised build
# only: a sanitizer maps terabytes of shadow, which no such limit allows.
# usage: e2e_memlimit.sh CALIBRATE
# covers: calibrator/run/hwinfo.c
set -u
CAL=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# limited AS CMD...: run CMD under an address-space limit of AS bytes, 150 s
# at most; its exit code in $rc
limited() {
  as=$1
  shift
  timeout 150 prlimit --as="$as" "$@" >out.txt 2>err.txt
  rc=$?
}

# the status of mode $2's point at batch $3 in profile $1, and its reason
point() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
m = p["batch_sweep"]["modes"][sys.argv[2]]
if m.get("status") == "skipped":  # the whole mode, with its reason
    print("skipped", m.get("reason", ""))
for x in m.get("points", []):
    if x["batch_size"] == int(sys.argv[3]):
        print(x["status"], x.get("reason", ""), x.get("layers_measured", ""))
PY
}

G=1073741824
sweep="run --quick --sweep-batch --sections batch --preset qwen2-0.5b --no-extend --allow-busy"

# decode's model (1 GB of bf16 weights) under 1 GiB: skipped for memory
# with the reason (the mode or its point), not a crash (it was a double
# free) and not a hang
# shellcheck disable=SC2086
limited $G "$CAL" $sweep --mode decode --batches 1 -o d.json
if [ "$rc" -ne 0 ]; then
  bad "decode under 1 GiB: exit $rc, not 0"; cat err.txt
else
  case $(point d.json decode 1) in
    skipped*memory*) echo "ok: decode under 1 GiB: $(point d.json decode 1)" ;;
    *) bad "decode under 1 GiB: batch 1 is '$(point d.json decode 1)', not skipped for memory" ;;
  esac
fi

# decode 1 and 8 under 1.5 GiB: done (it hung past 120 s in the allocator)
# shellcheck disable=SC2086
limited $((G * 3 / 2)) "$CAL" $sweep --mode decode --batches 1,8 -o d2.json
[ "$rc" -eq 0 ] && echo "ok: decode 1,8 under 1.5 GiB: exit 0" ||
  { bad "decode 1,8 under 1.5 GiB: exit $rc, not 0"; cat err.txt; }

# prefill 1 and 8 under 1.5 GiB: never "failed verification: out of memory"
# shellcheck disable=SC2086
limited $((G * 3 / 2)) "$CAL" $sweep --mode prefill --batches 1,8 -o p.json
if [ "$rc" -ne 0 ] || grep -q "failed verification" err.txt; then
  bad "prefill 1,8 under 1.5 GiB: exit $rc"; cat err.txt
else
  echo "ok: prefill 1,8 under 1.5 GiB: exit 0"
fi

# train under 4 GiB: measured on a stack scaled to the layers that fit
# (it was skipped for memory, and the headline left empty)
# shellcheck disable=SC2086
limited $((G * 4)) "$CAL" $sweep --mode train --batches 1 -o t.json
if [ "$rc" -ne 0 ]; then
  bad "train under 4 GiB: exit $rc, not 0"; cat err.txt
else
  set -- $(point t.json train 1)
  if [ "${1:-}" = ok ] && [ "${2:-24}" -lt 24 ]; then
    echo "ok: train under 4 GiB: batch 1 measured on $2 of 24 layers"
  else
    bad "train under 4 GiB: batch 1 is '$*', not measured on fewer layers"
  fi
fi

[ "$fails" -eq 0 ] && echo "all memory-limit checks passed" && exit 0
echo "$fails memory-limit check(s) failed"
exit 1
