# Shared helpers for the end-to-end CLI tests (sourced).
# CAL: the calibrate executable; SRC: the source tree.
set -u
fails=0
checks=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/calibrate-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

ok() { checks=$((checks + 1)); }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL: $*"; }

# expect_usage DESC CMD...: exit 2 with exactly one line on stderr
expect_usage() {
  local desc=$1; shift
  "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$TMP/err")
  if [ "$rc" -ne 2 ]; then
    bad "$desc: exit $rc, expected 2"; cat "$TMP/err"
  elif [ "$lines" -ne 1 ]; then
    bad "$desc: $lines lines on stderr, expected 1"; cat "$TMP/err"
  else
    ok
  fi
}

# expect_exit CODE DESC CMD...
expect_exit() {
  local want=$1 desc=$2; shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    bad "$desc: exit $rc, expected $want"; tail -5 "$TMP/err"
  else
    ok
  fi
}

finish() {
  echo "$((checks - fails)) passed, $fails failed"
  [ "$fails" -eq 0 ]
}
