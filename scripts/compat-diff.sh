#!/bin/sh
# Behaviour diff of two builds of calibrate: the same few hundred cases
# (every command's --help and --version, every flag with good and bad
# values, compare/export/plan/peak/plot/report over good and broken
# inputs, a few short measuring runs) run with both binaries, in the same
# directory layout, and every difference of exit code, stdout, stderr and
# files written reported, one line per case.  Exit 1 if any case differs.
#
# usage: scripts/compat-diff.sh OLD_BIN NEW_BIN OUTDIR
#   OLD_BIN, NEW_BIN  build/calibrator/calibrate of two build trees (each
#                     finds its source tree by the marker beside it)
#   OUTDIR            scratch directory; diffs in OUTDIR/diffs (a later
#                     call with the same OLD_BIN reuses the old side's
#                     results of the cases it ran)
# environment:
#   COMPAT_FILTER=RE   only the cases whose id matches the extended regex RE
#   COMPAT_NO_MEASURE=1  leave out the measuring runs (about 20 s each)
#   COMPAT_TIMEOUT=S   per-case limit (default 120 s)
#   PYTHON=python3
set -u
[ $# -eq 3 ] || { sed -n '9,19p' "$0"; exit 2; }
OLD=$1 NEW=$2 OUT=$3
PY=${PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
for b in "$OLD" "$NEW"; do
  [ -x "$b" ] || { echo "compat-diff: $b is not an executable" >&2; exit 2; }
done
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
rm -rf "${OUT:?}/work" "${OUT:?}/bin" "${OUT:?}/diffs"

# The inputs come from the OLD binary's source tree (both runs read them).
src_of() {
  m=$(dirname "$1")/calibrate-source-dir
  [ -f "$m" ] && head -n 1 "$m" || echo ""
}
OLD_SRC=$(src_of "$OLD")
[ -n "$OLD_SRC" ] || OLD_SRC=$(cd "$HERE/.." && pwd)
"$PY" "$HERE/compat_cases.py" gen "$OUT/data" "$OUT/cases.all" "$OLD_SRC" ||
  exit 2
if [ -n "${COMPAT_FILTER:-}" ]; then
  awk -F '\t' -v re="$COMPAT_FILTER" '$1 ~ re' "$OUT/cases.all"
else
  cat "$OUT/cases.all"
fi | if [ -n "${COMPAT_NO_MEASURE:-}" ]; then
  awk -F '\t' '$2 != "measure"'
else
  cat
fi >"$OUT/cases.tsv"

# Everything both runs share: locale, time zone, a lock of our own (so a
# measuring case queues behind no one else's run), no data directory
# override, results (if any) into the work directory.
export LC_ALL=C TZ=UTC CALIBRATE_LOCK="$OUT/lock"
export CALIBRATE_RESULTS_DIR="$OUT/work"
unset CALIBRATE_DATA_DIR CALIBRATE_PLOTS_DIR CALIBRATE_GEMM_ENGINE \
  CALIBRATE_ISA CALIBRATE_KEEP_BLAS_CORETYPE CALIBRATE_FLEET_FAIL_RANK \
  CALIBRATE_FLEET_DIE_RANK CALIBRATE_FLEET_HANG_RANK CALIBRATE_FLEET_HANG_AT \
  2>/dev/null

run_side() { # SIDE BIN
  side=$1 bin=$2
  dir=$OUT/$side
  mkdir -p "$dir/cases"
  # the binary and its marker at one path for both sides, so paths the
  # binary prints of itself are the same
  rm -rf "${OUT:?}/bin"
  mkdir -p "$OUT/bin"
  cp "$bin" "$OUT/bin/calibrate"
  m=$(dirname "$bin")/calibrate-source-dir
  [ -f "$m" ] && cp "$m" "$OUT/bin/"
  SRC=$(src_of "$bin")
  git=$("$OUT/bin/calibrate" --version 2>/dev/null |
    sed -n '1s/.*(\(.*\)).*/\1/p')
  printf '{"bin": "%s", "src": "%s", "git": "%s"}\n' "$bin" "$SRC" "$git" \
    >"$dir/meta.json"
  n=0 kept=0
  while IFS="$(printf '\t')" read -r id _kind cmd; do
    n=$((n + 1))
    c=$dir/cases/$id
    if [ "$side" = old ] && [ -f "$c/rc" ] && [ -f "$c/cmd" ] &&
      [ "$(cat "$c/cmd")" = "$cmd" ]; then
      kept=$((kept + 1))
      continue
    fi
    rm -rf "$c"
    mkdir -p "$c"
    printf '%s\n' "$cmd" >"$c/cmd"
    rm -rf "$OUT/work"
    mkdir -p "$OUT/work"
    ln -s ../data "$OUT/work/in"
    (cd "$OUT/work" && CAL="$OUT/bin/calibrate" SRC=$SRC \
      timeout "${COMPAT_TIMEOUT:-120}" sh -c "$cmd" \
      >"$c/stdout" 2>"$c/stderr" </dev/null)
    echo $? >"$c/rc"
    rm -f "$OUT/work/in"
    mv "$OUT/work" "$c/files"
    [ $((n % 200)) -eq 0 ] && echo "compat-diff: $side: $n cases" >&2
  done <"$OUT/cases.tsv"
  echo "compat-diff: $side: $n cases ($kept kept from an earlier call)" >&2
}

# The old side's cases are kept between calls for the same binary (run one
# baseline against several new builds in one OUTDIR): OUTDIR/old/key
# names the binary, each case's cmd file its command.
key_of() { # BIN
  echo "$(sha256sum <"$1" | cut -c1-16) $(src_of "$1")"
}
key=$(key_of "$OLD")
if ! [ -f "$OUT/old/key" ] || [ "$(cat "$OUT/old/key")" != "$key" ]; then
  rm -rf "${OUT:?}/old"
fi
mkdir -p "$OUT/old"
echo "$key" >"$OUT/old/key"
run_side old "$OLD"
rm -rf "${OUT:?}/new"
run_side new "$NEW"
rm -rf "${OUT:?}/bin"
"$PY" "$HERE/compat_cases.py" diff "$OUT"
