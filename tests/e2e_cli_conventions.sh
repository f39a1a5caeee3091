#!/bin/sh
# One CLI convention for every command (issue 17), one table row each:
# --help (exit 0, an "Exit status:" list, --version in it), --version
# (exit 0, the version and the licence), a bad flag (exit 2, exactly one
# line "calibrate CMD: ... (see 'calibrate CMD --help')", nothing on
# stdout), -o - (standard output, no file named '-'; or refused with
# one line where the command writes a directory), and for a command that
# reads files, a missing input (exit 2, the same one line, naming it).  Everything runs under
# LC_ALL=C and must print ASCII only.  The rows must be exactly the
# commands `calibrate --help` lists, so a new command needs its row.
# usage: e2e_cli_conventions.sh CALIBRATE SOURCE_DIR WORK_DIR
CAL=$1
SRC=$2
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$3"
# functional checks (--allow-busy): a lock of our own, so that the test
# does not queue behind measuring runs of other tests or users
export CALIBRATE_LOCK="$TMP/lock"
LC_ALL=C
export LC_ALL
DATA=$SRC/tests/data
REF=$SRC/tests/data/kvm-xeon-2core-avx512.json

# command | arguments of a short run writing to '-o -' | what -o - does:
#   stdout (exit 0, output on stdout), none (the command writes no file),
#   refused (exit 2, one line: the command writes several files)
#   | arguments naming an input file that does not exist (empty: the
#   command reads no file)
# The measuring rows use --quick shapes and --allow-busy (this checks the
# options, not the figures); run and fleet measure the peak section, the
# shortest (1.5 s under the sanitizers; bandwidth 5 s).
MISSING=$TMP/no-such-input
TABLE="run|--quick --sections peak --allow-busy|stdout|
info||stdout|
attention|--quick --batch 1 --heads 1 --seq 64 --head-dim 64 --allow-busy|stdout|
peak-flops|--quick --allow-busy|stdout|
bandwidth|--quick --allow-busy|stdout|
curve|$DATA/seed_curves.csv|stdout|$MISSING.csv
compare|$DATA/profile_a.json $DATA/profile_a.json|stdout|$DATA/profile_a.json $MISSING.json
export|--format bmf $DATA/profile_a.json|stdout|--format bmf $MISSING.json
plan|$DATA/profile_a.json $DATA/profile_b.json --examples 100|stdout|$DATA/profile_a.json $MISSING.json --examples 100
plot|$DATA/profile_a.json --script-only|refused|$MISSING.json --script-only -o $TMP/missing-plots
report|$REF|stdout|$MISSING.json -o $TMP/missing.html
fleet|--quick --sections peak --allow-busy --p2p-max 64K --allreduce-max 64K|stdout|"

ascii_only() { # FILE DESC
  if LC_ALL=C grep -q '[^[:print:][:space:]]' "$1"; then
    bad "$2: non-ASCII output under LC_ALL=C: $(LC_ALL=C grep -m1 -n '[^[:print:][:space:]]' "$1")"
  else
    ok
  fi
}

one_line() { # CMD DESC: exit 2, one stderr line in the house style
  _lines=$(wc -l <"$TMP/err")
  [ "$_lines" -eq 1 ] && ok || { bad "$2: $_lines lines on stderr"; cat "$TMP/err"; }
  grep -q "^calibrate $1: .* (see 'calibrate $1 --help')\$" "$TMP/err" && ok ||
    bad "$2: not \"calibrate $1: ... (see 'calibrate $1 --help')\": $(cat "$TMP/err")"
  [ ! -s "$TMP/out" ] && ok || bad "$2: wrote to stdout"
}

# the rows are exactly the commands the program lists
listed=$("$CAL" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p' | sort)
rows=$(printf '%s\n' "$TABLE" | cut -d'|' -f1 | sort)
[ "$listed" = "$rows" ] && ok ||
  bad "the table's commands ($(echo $rows)) are not those of calibrate --help ($(echo $listed))"

# the program itself
expect_exit 0 "--version" "$CAL" --version &&
  grep -q '^calibrate [0-9][0-9.]* ' "$TMP/out" && grep -q 'BSD-3-Clause' "$TMP/out" && ok ||
  bad "calibrate --version: no version and licence"
expect_exit 0 "--help" "$CAL" --help && grep -q '^Exit status' "$TMP/out" && ok ||
  bad "calibrate --help: no exit status list"
ascii_only "$TMP/out" "calibrate --help"
expect_exit 2 "unknown command" "$CAL" no-such-command &&
  [ "$(wc -l <"$TMP/err")" -eq 1 ] && ok || bad "unknown command: not one line"

# -o - is run from here, to see that no file named '-' appears
RUNDIR=$TMP/cwd
mkdir -p "$RUNDIR"
cd "$RUNDIR" || exit 99
while IFS='|' read -r cmd args dash missing; do
  # --help
  if expect_exit 0 "$cmd --help" "$CAL" $cmd --help; then
    grep -q '^Usage: calibrate' "$TMP/out" && ok || bad "$cmd --help: no 'Usage: calibrate' line"
    grep -q '^Exit status' "$TMP/out" && ok || bad "$cmd --help: no 'Exit status' list"
    grep -q -- '--version' "$TMP/out" && ok || bad "$cmd --help: --version not listed"
    [ ! -s "$TMP/err" ] && ok || bad "$cmd --help: wrote to stderr"
    ascii_only "$TMP/out" "$cmd --help"
  fi
  # --version
  if expect_exit 0 "$cmd --version" "$CAL" $cmd --version; then
    grep -q '^calibrate [0-9][0-9.]* ' "$TMP/out" && grep -q 'BSD-3-Clause' "$TMP/out" && ok ||
      bad "$cmd --version: no version and licence"
  fi
  # a bad flag
  expect_exit 2 "$cmd --no-such-flag" "$CAL" $cmd --no-such-flag &&
    one_line "$cmd" "$cmd --no-such-flag"
  # -o -
  case $dash in
  stdout)
    if expect_exit 0 "$cmd -o -" "$CAL" $cmd $args -o -; then
      [ -s "$TMP/out" ] && ok || bad "$cmd -o -: nothing on stdout"
      [ ! -e "$RUNDIR/-" ] && ok || bad "$cmd -o -: wrote a file named '-'"
      ascii_only "$TMP/out" "$cmd -o -"
      ascii_only "$TMP/err" "$cmd -o - (stderr)"
    fi
    rm -f "$RUNDIR/-"
    ;;
  refused)
    expect_exit 2 "$cmd -o -" "$CAL" $cmd $args -o - &&
      one_line "$cmd" "$cmd -o -"
    [ ! -e "$RUNDIR/-" ] && ok || bad "$cmd -o -: made '-'"
    ;;
  esac
  # a missing input file
  if [ -n "$missing" ]; then
    expect_exit 2 "$cmd, missing input" "$CAL" $cmd $missing &&
      one_line "$cmd" "$cmd, missing input"
    grep -q -F "$MISSING" "$TMP/err" && ok ||
      bad "$cmd, missing input: the line does not name it: $(cat "$TMP/err")"
  fi
done <<ROWS
$TABLE
ROWS

# without -o, every command that reads files writes to standard output
# (and no file); plot writes several files, so -o names a directory
for row in "curve $DATA/seed_curves.csv" "compare $DATA/profile_a.json $DATA/profile_a.json" \
  "export --format bmf $DATA/profile_a.json" \
  "plan $DATA/profile_a.json --examples 100" "report $REF" "info"; do
  # shellcheck disable=SC2086
  if expect_exit 0 "$row (no -o)" "$CAL" $row; then
    [ -s "$TMP/out" ] && ok || bad "$row: nothing on standard output"
    [ -z "$(ls -A "$RUNDIR")" ] && ok || bad "$row: wrote $(ls -A "$RUNDIR")"
  fi
  rm -rf "${RUNDIR:?}"/*
done

# progress on a terminal: a live line rewritten with "\r\033[K"; under
# TERM=dumb none of that, one line per finished section instead
if command -v script >/dev/null 2>&1; then
  ESC=$(printf '\033')
  TERM=xterm script -qec "'$CAL' peak-flops --quick --allow-busy -o '$TMP/p.json'" \
    "$TMP/tty.log" >/dev/null 2>&1
  grep -q "$ESC\[K" "$TMP/tty.log" && ok ||
    bad "no live progress line on a terminal (TERM=xterm)"
  TERM=dumb script -qec "'$CAL' peak-flops --quick --allow-busy -o '$TMP/p.json'" \
    "$TMP/dumb.log" >/dev/null 2>&1
  grep -q "$ESC" "$TMP/dumb.log" && bad "TERM=dumb: control sequences written" || ok
  grep -q 'peak done' "$TMP/dumb.log" && ok ||
    bad "TERM=dumb: no 'peak done' line: $(cat "$TMP/dumb.log")"
else
  echo "no script(1): the terminal's progress is not checked"
fi

# progress without a terminal: one line per finished section on stderr,
# none with --no-progress
if expect_exit 0 "peak-flops progress" "$CAL" peak-flops --quick --allow-busy -o "$TMP/p.json"; then
  grep -q '^calibrate: \[ *[0-9]*s\] peak done' "$TMP/err" && ok ||
    bad "no 'peak done' progress line on stderr: $(cat "$TMP/err")"
fi
if expect_exit 0 "peak-flops --no-progress" "$CAL" peak-flops --quick --allow-busy --no-progress -o "$TMP/p.json"; then
  grep -q 'done' "$TMP/err" && bad "--no-progress: progress on stderr" || ok
fi

# plan: a model that fits on no machine alone exits 1, the plan written
expect_exit 1 "plan, a model too large for every machine" "$CAL" plan \
  "$DATA/profile_a.json" "$DATA/profile_b.json" --examples 100 \
  --model-params 7e12 --training inference &&
  { [ -s "$TMP/out" ] && ok || bad "plan exit 1: no plan written"; }
# two profiles of one CPU model are named by their files
cp "$REF" "$TMP/host-a.json" && cp "$REF" "$TMP/host-b.json"
if expect_exit 0 "plan of two machines of one model" "$CAL" plan \
  "$TMP/host-a.json" "$TMP/host-b.json" --examples 100; then
  grep -q '^host-a ' "$TMP/out" && grep -q '^host-b ' "$TMP/out" && ok ||
    bad "plan: two machines of one model are not named by their files"
fi
finish
