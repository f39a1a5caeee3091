#!/bin/sh
# The report page rendered by a headless browser (Debian's chromium): it
# loads and paints without network.  Skips (exit 77) with the reason where
# chromium is absent.  No pixel comparison: the PNG is kept in WORKDIR as
# report.png for a person to look at.
# usage: e2e_report_screenshot.sh CALIBRATE SOURCE_DIR WORKDIR
CAL=$1 SRC=$2 WORK=$3
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$WORK"
BROWSER=
for b in chromium chromium-browser; do
  command -v "$b" >/dev/null 2>&1 && BROWSER=$b && break
done
if [ -z "$BROWSER" ]; then
  echo "SKIP: chromium is not installed (apt-get install chromium)"
  exit 77
fi
CALIBRATE_PLOTS_DIR=$SRC/plots
export CALIBRATE_PLOTS_DIR
REF=$SRC/tests/data/kvm-xeon-2core-avx512.json
if expect_exit 0 "report" "$CAL" report "$REF" "$REF" -o "$TMP/report.html"; then
  # its own profile directory, so no user profile or lock is touched
  timeout 90 "$BROWSER" --headless --no-sandbox --disable-gpu \
    --user-data-dir="$TMP/chromium" --screenshot="$TMP/report.png" \
    --window-size=1280,4000 "file://$TMP/report.html" \
    >"$TMP/browser.log" 2>&1
  [ -s "$TMP/report.png" ] && ok ||
    bad "no screenshot: $(tail -3 "$TMP/browser.log")"
  head -c 8 "$TMP/report.png" | od -An -c | grep -q 'P   N   G' && ok ||
    bad "report.png is not a PNG"
  size=$(wc -c <"$TMP/report.png")
  # a blank page compresses to a few kB
  [ "$size" -gt 50000 ] && ok || bad "report.png is only $size bytes"
fi
finish
