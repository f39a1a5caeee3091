#!/bin/sh
# The report page of one, two and three profiles rendered by a headless
# browser (Debian's chromium): it loads and paints without network.  Skips
# (exit 77) with the reason where chromium is absent.  No pixel
# comparison: the PNGs are kept in WORKDIR as report-1.png, report-2.png
# and report-3.png (and the charts alone as charts-N.png) for a person to
# look at.
# usage: e2e_report_screenshot.sh CALIBRATE SOURCE_DIR WORKDIR
CAL=$1 SRC=$2 WORK=$3
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$WORK"
BROWSER=
# a browser that cannot say its version is not one (Ubuntu's
# chromium-browser is a shim that asks for the snap)
for b in chromium chromium-browser; do
  command -v "$b" >/dev/null 2>&1 &&
    timeout 30 "$b" --version >/dev/null 2>&1 && BROWSER=$b && break
done
if [ -z "$BROWSER" ]; then
  echo "SKIP: no working chromium (apt-get install chromium; a" \
    "chromium-browser shim that needs the snap does not count)"
  exit 77
fi
PY=$(command -v python3)
if [ -z "$PY" ]; then
  echo "SKIP: python3 is not installed (it writes the third profile)"
  exit 77
fi
CALIBRATE_PLOTS_DIR=$SRC/plots
export CALIBRATE_PLOTS_DIR
ZEN=$SRC/results/reference/kvm-epyc-zen4-2core.json
XEON=$SRC/tests/data/kvm-xeon-2core-avx512.json
"$PY" "$SRC/tests/chart_profiles.py" "$ZEN" "$TMP" ||
  bad "cannot write the third profile"

# shot FILE PNG HEIGHT: FILE painted into PNG, a real image
shot() {
  # its own profile directory, so no user profile or lock is touched
  timeout 90 "$BROWSER" --headless --no-sandbox --disable-gpu \
    --user-data-dir="$TMP/chromium" --screenshot="$2" \
    --window-size=1280,"$3" "file://$1" >"$TMP/browser.log" 2>&1
  [ -s "$2" ] && ok || bad "no screenshot $2: $(tail -3 "$TMP/browser.log")"
  head -c 8 "$2" | od -An -c | grep -q 'P   N   G' && ok ||
    bad "$2 is not a PNG"
  size=$(wc -c <"$2")
  # a blank page compresses to a few kB
  [ "$size" -gt 50000 ] && ok || bad "$2 is only $size bytes"
}

n=0
for set in "$ZEN" "$ZEN $XEON" "$ZEN $XEON $TMP/third.json"; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  if expect_exit 0 "report of $n" "$CAL" report $set -o "$TMP/report-$n.html"
  then
    shot "$TMP/report-$n.html" "$TMP/report-$n.png" 4000
    # the charts alone, from the top of a page
    "$PY" - "$TMP/report-$n.html" "$TMP/charts-$n.html" <<'PY' ||
import sys
s = open(sys.argv[1]).read()
a, b = s.index("<h2>Machine</h2>"), s.index("<h2>Charts</h2>")
open(sys.argv[2], "w").write(s[:a] + s[b:])
PY
      bad "cannot cut the charts out of report-$n.html"
    shot "$TMP/charts-$n.html" "$TMP/charts-$n.png" 6000
  fi
done
finish
