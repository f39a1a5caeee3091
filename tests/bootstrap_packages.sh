#!/bin/bash
# scripts/bootstrap.sh's package sets, read with its `packages` mode
# (which installs nothing): `run` and `build` install what building and
# measuring need and no more (no browser, clang, libFuzzer, MPI or test
# library); `fleet` adds Open MPI; `test` adds the test tools.  The
# README's two opening commands and .ci/run name modes that exist; the
# example workflows build with `build`.  The script parses (bash -n).
# usage: bootstrap_packages.sh SOURCE_DIR WORK_DIR
SRC=$1
. "$SRC/tests/e2e_lib.sh"
e2e_setup "$2"
BS=$SRC/scripts/bootstrap.sh

check "bootstrap.sh parses (bash -n)" bash -n "$BS"
has() { grep -qx -- "$2" "$TMP/$1.list" && ok || bad "$1 does not install $2"; }
lacks() {
  if grep -Ex -- "$2" "$TMP/$1.list" >"$TMP/hit"; then
    bad "$1 installs $(tr '\n' ' ' <"$TMP/hit")"
  else
    ok
  fi
}
for mode in run build fleet test; do
  if expect_exit 0 "packages $mode" bash "$BS" packages $mode; then
    cp "$TMP/out" "$TMP/$mode.list"
  else
    : >"$TMP/$mode.list"
  fi
done
cmp -s "$TMP/run.list" "$TMP/build.list" && ok ||
  bad "run and build install different packages"
for p in build-essential cmake pkg-config libopenblas-openmp-dev libdnnl-dev \
         ocl-icd-opencl-dev libhwloc-dev libcpuid-dev libjansson-dev gnuplot-nox; do
  has build "$p"
done
test_tools='chromium.*|clang.*|libfuzzer.*|.*openmpi.*|libomp.*|libcmocka.*|python3.*|iproute2|man-db'
lacks build "$test_tools"
has fleet libopenmpi-dev
has fleet openmpi-bin
lacks fleet 'chromium.*|clang.*|libfuzzer.*|libcmocka.*'
for p in $(cat "$TMP/fleet.list") libcmocka-dev python3-jsonschema python3-yaml \
         clang libomp-dev iproute2 chromium man-db; do
  has test "$p"
done
expect_usage "packages of an unknown mode" bash "$BS" packages nosuchmode
expect_usage "an unknown mode" bash "$BS" nosuchmode

# the README's opening commands, .ci/run and the workflows use real modes
opening=$(sed -n '/^```sh$/,/^```$/p' "$SRC/README.md" | sed -n '2,3p')
echo "$opening" | grep -q '^scripts/bootstrap.sh run ' && ok ||
  bad "the README does not open with scripts/bootstrap.sh run"
echo "$opening" | grep -q '^scripts/bootstrap.sh test ' && ok ||
  bad "the README's second command is not scripts/bootstrap.sh test"
grep -q '^exec scripts/bootstrap.sh test$' "$SRC/.ci/run" && ok ||
  bad ".ci/run does not run scripts/bootstrap.sh test"
for wf in "$SRC"/examples/github-actions/*.yml; do
  modes=$(grep -o 'scripts/bootstrap.sh [a-z]*' "$wf" | sort -u | cut -d' ' -f2)
  [ "$modes" = build ] && ok || bad "${wf##*/} runs bootstrap.sh $modes, not build"
done
finish
