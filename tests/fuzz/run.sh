#!/bin/sh
# Bounded fuzzing: each target of BUILD_DIR (configured with
# -DCALIBRATE_FUZZ=ON) runs from its seeds for its share of SECONDS
# (default 30), as many targets at once as there are usable cores, the
# longest first; new inputs go to a scratch
# corpus, never into the repository.  Prints the executions of each
# target; exits 1 when one crashed, leaked, or timed out (its input is then
# in the scratch directory: add it to corpus/<target>/ once fixed).
# usage: tests/fuzz/run.sh BUILD_DIR [SECONDS]
set -u
build=$1 secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
targets="profile flags csv quote"
jobs=$(nproc 2>/dev/null || echo 1)
for t in $targets; do
  [ -x "$build/tests/fuzz/fuzz_$t" ] || { echo "fuzz: $build/tests/fuzz/fuzz_$t not built" >&2; exit 99; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/calibrate-fuzz.XXXXXX") || exit 99

# target_secs TARGET: its share of SECONDS, from when its coverage stops
# growing (from an empty scratch corpus, 30 s runs on 2 cores): the
# profile reader and the flag parsers still found new paths at 28-30 s
# and get all of it; the CSV reader's last new path came at 17 s, the
# quoting's at 2 s
target_secs() {
  case $1 in
  profile | flags) echo "$secs" ;;
  csv) echo $(((secs * 2 + 2) / 3)) ;;
  quote) echo $(((secs + 5) / 6)) ;;
  esac
}

# fuzz_one TARGET: runs it, leaves its exit code in $scratch/TARGET.rc
fuzz_one() {
  case $1 in
  profile) len=262144 seeds="$src/tests/data $src/results/reference" ;;
  csv) len=65536 seeds="$src/tests/data" ;;
  flags) len=512 seeds= ;;
  quote) len=256 seeds= ;;
  esac
  mkdir -p "$scratch/$1"
  # shellcheck disable=SC2086 # seeds is a list of directories
  "$build/tests/fuzz/fuzz_$1" -max_total_time="$(target_secs "$1")" -timeout=10 \
    -rss_limit_mb=2048 -max_len="$len" -print_final_stats=1 \
    -artifact_prefix="$scratch/$1/" "$scratch/$1" "$here/corpus/$1" $seeds \
    >"$scratch/$1.log" 2>&1
  echo $? >"$scratch/$1.rc"
}

# a core each: a target never shares one, so each gets its seconds
running=0
for t in $targets; do
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait
    running=0
  fi
done
wait

status=0
for t in $targets; do
  rc=$(cat "$scratch/$t.rc" 2>/dev/null || echo 99)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$t.log")
  if [ "$rc" -eq 0 ]; then
    echo "fuzz_$t: ${runs:-?} executions in $(target_secs "$t") s, no crash"
  else
    status=1
    echo "fuzz_$t: FAILED after ${runs:-?} executions (exit $rc); input and log in $scratch"
    grep -E "ERROR|SUMMARY|==[0-9]+==" "$scratch/$t.log" | head -5
  fi
done
[ "$status" -eq 0 ] && rm -rf "$scratch"
exit "$status"
