#!/bin/sh
# Make a reference profile again: build the committed tree (refused when it
# has uncommitted changes: the profile names the commit it was made from),
# measure a full run on this machine, and check the result against the
# schema and the writer (tests/check_reference.py, the ctest test
# reference_current).  Run it on a quiet machine: a busy one makes the run
# exit 5 and nothing is written.
#
# usage: scripts/make-reference.sh NAME [BUILD_DIR]
#   NAME       the file under results/reference/, e.g. kvm-epyc-zen4-2core
#   BUILD_DIR  a Release build directory (default: build-reference)
# Then add or update the machine's row in results/reference/README.md and
# commit the profile.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 NAME [BUILD_DIR]" >&2; exit 2; }
NAME=${1%.json}
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${2:-$SRC/build-reference}
OUT=$SRC/results/reference/$NAME.json
cd "$SRC"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "$0: the tree has uncommitted changes; commit or stash them first" >&2
  exit 1
fi
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j"$(nproc)" >/dev/null
CAL=$BUILD/calibrator/calibrate
"$CAL" --version
case $("$CAL" --version) in
*-dirty*) echo "$0: the build is of a dirty tree; reconfigure $BUILD" >&2; exit 1 ;;
esac
TMPOUT=$(mktemp "${TMPDIR:-/tmp}/reference.XXXXXX.json")
trap 'rm -f "$TMPOUT"' EXIT
"$CAL" --sweep-batch --target-effective-batch 32 -o "$TMPOUT"
python3 "$SRC/tests/check_reference.py" \
  "$SRC/results/schema/calibrate-profile-1.schema.json" \
  "$SRC/tests/validate_profile.py" "$TMPOUT"
cp "$TMPOUT" "$OUT"
echo "written: $OUT (now update results/reference/README.md and commit it)"
