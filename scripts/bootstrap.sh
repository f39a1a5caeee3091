#!/usr/bin/env bash
# Set up a fresh Debian/Ubuntu machine for calibrate and use it.
#
#   scripts/bootstrap.sh run [calibrate options]   install, build (Release), run
#                                                  calibrate --sweep-batch
#   scripts/bootstrap.sh build                     install and build only
#   scripts/bootstrap.sh test                      install, build normal and
#                                                  ASan+UBSan, run every test,
#                                                  fuzz each parser for 30 s
#
# Installs only the packages that are missing (apt-get; sudo when not root).
set -euo pipefail

cd "$(dirname "$0")/.."
mode=${1:-}
[ $# -gt 0 ] && shift

packages=(build-essential cmake pkg-config libopenblas-openmp-dev libdnnl-dev
          ocl-icd-opencl-dev libhwloc-dev libcpuid-dev libjansson-dev
          libcmocka-dev gnuplot-nox python3 python3-jsonschema util-linux
          clang libfuzzer-14-dev libomp-dev libopenmpi-dev openmpi-bin
          chromium help2man man-db groff-base bash-completion)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  echo "bootstrap: installing ${missing[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
}

jobs=$(nproc 2>/dev/null || echo 2)

build() { # build DIR [cmake args]
  local dir=$1; shift
  cmake -S . -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

case "$mode" in
  run)
    install_missing
    build build -DCMAKE_BUILD_TYPE=Release
    exec ./build/calibrator/calibrate --sweep-batch "$@"
    ;;
  build)
    install_missing
    build build -DCMAKE_BUILD_TYPE=Release
    ;;
  test)
    install_missing
    build build -DCMAKE_BUILD_TYPE=Release
    (cd build && ctest --output-on-failure)
    build build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCALIBRATE_SANITIZE=ON
    # the A/A timing test (label timing) judges the speed of optimised
    # code; under the sanitizers it would only time the sanitizer.  The
    # install test (label install) checks the installed tree, which the
    # normal build has just done; under the sanitizers it adds 20 s
    (cd build-asan && ctest --output-on-failure -LE 'timing|install')
    # the parsers under libFuzzer (clang), 30 s a target from the seeds
    build build-fuzz -DCMAKE_C_COMPILER=clang -DCALIBRATE_FUZZ=ON \
      -DCALIBRATE_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
    tests/fuzz/run.sh build-fuzz 30
    ;;
  *)
    echo "usage: scripts/bootstrap.sh run [calibrate options] | build | test" >&2
    exit 2
    ;;
esac
