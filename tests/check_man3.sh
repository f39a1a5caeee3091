#!/bin/sh
# Every public function of the library's header has a man3 page, and every
# function a page names is public: NAME.3 for each function declared with
# CALIBRATE_API, either its group's page or a one-line `.so man3/PAGE.3`
# to one that exists, whose NAME line lists the function and whose
# SYNOPSIS declares it; libcalibrate.3 for the whole; every page renders
# without warnings (man -l --warnings, where man-db is installed).
# usage: check_man3.sh HEADER MAN3_DIR      exit 0 when all hold, else 1
HDR=$1 DIR=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

funcs=$(sed -n 's/^CALIBRATE_API .*[ *]\(cal_[a-z0-9_]*\)(.*/\1/p' "$HDR" | sort -u)
[ -n "$funcs" ] || { echo "FAIL: no CALIBRATE_API function in $HDR"; exit 1; }
[ -s "$DIR/libcalibrate.3" ] || fail "no libcalibrate.3 in $DIR"

for f in $funcs; do
  page=$DIR/$f.3
  if [ ! -s "$page" ]; then
    fail "$f has no man3 page ($f.3)"
    continue
  fi
  target=$(sed -n '1s/^\.so man3\/\([^ ]*\)$/\1/p' "$page")
  if [ -n "$target" ]; then
    page=$DIR/$target
    [ -s "$page" ] || { fail "$f.3 includes $target, which is missing"; continue; }
  fi
  grep -Eq "^([a-z0-9_]+, )*$f(,| \\\\-)" "$page" ||
    fail "${page##*/} does not name $f in its NAME line"
  grep -Fq "$f(" "$page" || fail "${page##*/} does not declare $f()"
done

# nothing documented that the header does not declare
for page in "$DIR"/*.3; do
  head -1 "$page" | grep -q '^\.so ' && continue
  for n in $(sed -n 's/^\(cal_[a-z0-9_, ]*\) \\-.*/\1/p' "$page" | tr -d ,); do
    echo "$funcs" | grep -qx "$n" ||
      fail "${page##*/} documents $n, which the header does not declare"
  done
  if command -v man >/dev/null 2>&1; then
    w=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    [ -z "$w" ] || fail "man -l ${page##*/} warns: $w"
  fi
done
command -v man >/dev/null 2>&1 ||
  echo "man (man-db) is not installed: the pages were not rendered"
[ "$fails" -eq 0 ] && echo "man3: $(echo "$funcs" | wc -l) functions, all documented"
[ "$fails" -eq 0 ]
