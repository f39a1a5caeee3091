#!/bin/sh
# Bounded fuzzing: each target of BUILD_DIR (configured with
# -DCALIBRATE_FUZZ=ON) runs SECONDS (default 30) from its seeds; new
# inputs go to a scratch corpus, never into the repository.  Prints the
# executions of each target; exits 1 when one crashed, leaked, or timed
# out (its input is then in the scratch directory: add it to
# corpus/<target>/ once fixed).
# usage: tests/fuzz/run.sh BUILD_DIR [SECONDS]
set -u
build=$1 secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/calibrate-fuzz.XXXXXX") || exit 99
status=0
for t in profile csv flags quote; do
  bin=$build/tests/fuzz/fuzz_$t
  [ -x "$bin" ] || { echo "fuzz: $bin not built" >&2; exit 99; }
  case $t in
  profile) len=262144 seeds="$src/tests/data $src/results/reference" ;;
  csv) len=65536 seeds="$src/tests/data" ;;
  flags) len=512 seeds= ;;
  quote) len=256 seeds= ;;
  esac
  mkdir -p "$scratch/$t"
  # shellcheck disable=SC2086 # seeds is a list of directories
  "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$len" -print_final_stats=1 -artifact_prefix="$scratch/$t/" \
    "$scratch/$t" "$here/corpus/$t" $seeds >"$scratch/$t.log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$t.log")
  if [ "$rc" -eq 0 ]; then
    echo "fuzz_$t: ${runs:-?} executions in ${secs} s, no crash"
  else
    status=1
    echo "fuzz_$t: FAILED after ${runs:-?} executions (exit $rc); input and log in $scratch"
    grep -E "ERROR|SUMMARY|==[0-9]+==" "$scratch/$t.log" | head -5
  fi
done
[ "$status" -eq 0 ] && rm -rf "$scratch"
exit "$status"
