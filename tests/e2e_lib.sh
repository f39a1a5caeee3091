# Shared helpers for the end-to-end shell tests (sourced; POSIX sh, so the
# scripts ctest runs with `sh` can use it as well as the bash ones).
#
#   e2e_setup [DIR]   scratch directory $TMP: DIR emptied and kept (ctest
#                     passes one under the build tree), else a fresh
#                     temporary one removed on exit
#   e2e_measure_setup [DIR]  e2e_setup, and for the tests that run
#                     measuring commands: a lock of their own
#                     (CALIBRATE_LOCK, so that they do not queue behind
#                     measuring runs of other tests or users) and $SCHEMA,
#                     the profile's JSON Schema under $SRC
#   ok / bad MSG      count a check that passed / failed (MSG printed)
#   check DESC CMD... run CMD; ok when it succeeds, else bad DESC
#   expect_exit CODE DESC CMD...      stdout to $TMP/out, stderr to
#                     $TMP/err; ok when it exits CODE.  Returns 0 only then.
#   expect_usage DESC CMD...          exit 2 and exactly one stderr line
#                     (returns 0 only then)
#   expect_match CODE PATTERN CMD...  exit CODE and PATTERN (grep) in its
#                     stdout or stderr (an empty PATTERN checks only CODE)
#   finish            print the tally; status 0 only when nothing failed
#   others_load [S]   cores other processes kept busy over S seconds (1),
#                     from /proc/stat, e.g. "0.03"; call it while the test
#                     itself runs nothing: the evidence a timing check
#                     skips on when the machine is busy
#   machine_quiet [S] status 0 when others_load is below a quarter core
set -u
fails=0
checks=0
TMP=

e2e_setup() {
  if [ $# -gt 0 ]; then
    TMP=$1
    rm -rf "$TMP" && mkdir -p "$TMP" || { echo "cannot create $TMP"; exit 99; }
  else
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/calibrate-e2e.XXXXXX") || exit 99
    trap 'rm -rf "$TMP"' EXIT
  fi
}

e2e_measure_setup() {
  e2e_setup "$@"
  CALIBRATE_LOCK="$TMP/lock"
  export CALIBRATE_LOCK
  SCHEMA="$SRC/results/schema/calibrate-profile-1.schema.json"
}

ok() { checks=$((checks + 1)); }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL: $*"; }

check() {
  _desc=$1
  shift
  if "$@"; then ok; else bad "$_desc"; fi
}

expect_exit() {
  _want=$1 _desc=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  _rc=$?
  if [ "$_rc" -ne "$_want" ]; then
    bad "$_desc: exit $_rc, expected $_want"
    tail -5 "$TMP/err"
    return 1
  fi
  ok
}

expect_usage() {
  _desc=$1
  shift
  "$@" >"$TMP/out" 2>"$TMP/err"
  _rc=$?
  _lines=$(wc -l <"$TMP/err")
  if [ "$_rc" -ne 2 ]; then
    bad "$_desc: exit $_rc, expected 2"; cat "$TMP/err"
    return 1
  elif [ "$_lines" -ne 1 ]; then
    bad "$_desc: $_lines lines on stderr, expected 1"; cat "$TMP/err"
    return 1
  fi
  ok
}

expect_match() {
  _want=$1 _pat=$2
  shift 2
  expect_exit "$_want" "'$*'" "$@" || return 1
  if [ -n "$_pat" ] && ! grep -q -e "$_pat" "$TMP/out" "$TMP/err"; then
    bad "'$*' output lacks '$_pat'"
    cat "$TMP/out" "$TMP/err"
    return 1
  fi
  echo "ok: [$_want] $*"
}

_cpu_ticks() { # busy and total jiffies of all CPUs
  awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i;
                 print t - $5 - $6, t }' /proc/stat
}

others_load() {
  set -- $(_cpu_ticks) "${1:-1}"
  _b0=$1 _t0=$2
  sleep "$3"
  set -- $(_cpu_ticks)
  awk -v b="$(($1 - _b0))" -v t="$(($2 - _t0))" -v n="$(nproc --all)" \
    'BEGIN { printf "%.2f\n", (t > 0 ? n * b / t : 0) }'
}

machine_quiet() {
  _load=$(others_load "${1:-1}")
  awk -v l="$_load" 'BEGIN { exit !(l < 0.25) }'
}

finish() {
  echo "$((checks - fails)) passed, $fails failed"
  [ "$fails" -eq 0 ]
}
