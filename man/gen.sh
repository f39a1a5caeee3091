#!/bin/sh
# Generate the man pages from the program's own --help and --version texts
# (help2man), so a page cannot drift from the option it documents:
# calibrate(1) from `calibrate --help`, and calibrate-CMD(1) from
# `calibrate CMD --help` for every command `calibrate --help` lists.
# usage: gen.sh CALIBRATE OUTDIR INCLUDE.h2m
set -eu
CAL=$1
OUT=$2
INC=$3
H2M=${HELP2MAN:-help2man}
LC_ALL=C
export LC_ALL

ver=$("$CAL" --version | sed -n '1s/^calibrate \([^ ]*\).*/\1/p')
commands=$("$CAL" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p')
[ -n "$ver" ] && [ -n "$commands" ] || {
  echo "gen.sh: cannot read the version or the commands from $CAL" >&2
  exit 1
}

rm -rf "$OUT"
mkdir -p "$OUT"
# SEE ALSO: every page names the others
see="$OUT/see-also.h2m"
{
  echo "[SEE ALSO]"
  printf '.BR calibrate (1)'
  for c in $commands; do printf ',\n.BR calibrate\\-%s (1)' "$c"; done
  echo
} >"$see"

"$H2M" --no-info --section=1 --include="$INC" --include="$see" \
  --name="measure what a machine can do for ML work" \
  --output="$OUT/calibrate.1" "$CAL"
for c in $commands; do
  summary=$("$CAL" --help | sed -n "s/^  $c  *//p")
  "$H2M" --no-info --section=1 --include="$INC" --include="$see" \
    --version-string="calibrate-$c $ver" --help-option="$c --help" \
    --name="$summary" --output="$OUT/calibrate-$c.1" "$CAL"
done
rm -f "$see"
