#!/usr/bin/env bash
# Set up a fresh Debian 12 machine (or container) for calibrate and use it.
#
#   scripts/bootstrap.sh run [calibrate options]   install what measuring
#                                                  needs, build (Release),
#                                                  run calibrate --sweep-batch
#   scripts/bootstrap.sh build                     the same packages, build only
#   scripts/bootstrap.sh fleet                     build, plus Open MPI for
#                                                  `calibrate fleet`
#   scripts/bootstrap.sh test                      add the test tools, build
#                                                  normal and ASan+UBSan, run
#                                                  every test, fuzz each
#                                                  parser for up to 30 s
#   scripts/bootstrap.sh packages MODE             print MODE's packages, one
#                                                  a line; installs nothing
#
# Installs only the packages that are missing (apt-get; sudo when not root).
# `run` and `build` install what building and measuring need and no more:
# no browser, clang, libFuzzer or MPI.  `test` adds the test tools; a
# browser the distribution does not package (chromium) is left out with a
# note, and the screenshot test then skips with the reason.
set -euo pipefail

cd "$(dirname "$0")/.."
mode=${1:-}
[ $# -gt 0 ] && shift

# Building and measuring: the compiler and CMake, the GEMM engines
# (OpenBLAS, oneDNN 2.x with the OpenCL loader its CMake config looks
# for), hwloc, libcpuid, jansson; gnuplot, which `plot` and `report` run;
# help2man, which writes the man pages at build time.
base=(build-essential cmake pkg-config libopenblas-openmp-dev libdnnl-dev
      ocl-icd-opencl-dev libhwloc-dev libcpuid-dev libjansson-dev
      gnuplot-nox help2man util-linux)
# `calibrate fleet` (found at build time; without it the command says so).
mpi=(libopenmpi-dev openmpi-bin)
# The tests: cmocka, the schema and workflow checkers (python3), the man
# pages rendered and the completions loaded, the fleet's network test
# (iproute2), the fuzz build (clang, its OpenMP; libFuzzer of the same
# LLVM is added below), and the report's screenshot (chromium, optional).
tests=(libcmocka-dev python3 python3-jsonschema python3-yaml man-db
       groff-base bash-completion iproute2 clang libomp-dev)
optional=(chromium)

# packages MODE: what MODE installs (the libFuzzer package is named after
# the default clang's version once clang is there).
packages() {
  case "$1" in
    run | build) printf '%s\n' "${base[@]}" ;;
    fleet) printf '%s\n' "${base[@]}" "${mpi[@]}" ;;
    test) printf '%s\n' "${base[@]}" "${mpi[@]}" "${tests[@]}" "${optional[@]}" ;;
    *) return 2 ;;
  esac
}

is_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
updated=0

apt_install() {
  [ $# -eq 0 ] && return 0
  echo "bootstrap: installing $*" >&2
  if [ "$updated" -eq 0 ]; then
    "${sudo_cmd[@]}" apt-get update -qq
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    --no-install-recommends "$@" >/dev/null
}

# install_missing REQUIRED... [-- OPTIONAL...]: optional packages the
# distribution does not offer are reported and left out.
install_missing() {
  local missing=() optional_part=0 p
  for p in "$@"; do
    if [ "$p" = -- ]; then
      optional_part=1
      continue
    fi
    is_installed "$p" && continue
    if [ "$optional_part" -eq 1 ]; then
      if [ "$updated" -eq 0 ]; then
        "${sudo_cmd[@]}" apt-get update -qq
        updated=1
      fi
      if ! apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [^(]'; then
        echo "bootstrap: no $p package here: the tests that need it skip" >&2
        continue
      fi
    fi
    missing+=("$p")
  done
  apt_install "${missing[@]}"
}

# libFuzzer of the default clang's LLVM (Debian 12: libfuzzer-14-dev).
install_libfuzzer() {
  local major
  major=$(clang -dumpversion | cut -d. -f1)
  is_installed "libfuzzer-$major-dev" || apt_install "libfuzzer-$major-dev"
}

jobs=$(nproc 2>/dev/null || echo 2)

build() { # build DIR [cmake args]
  local dir=$1; shift
  cmake -S . -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

case "$mode" in
  packages)
    packages "${1:-}" || {
      echo "usage: scripts/bootstrap.sh packages run|build|fleet|test" >&2
      exit 2
    }
    ;;
  run)
    install_missing "${base[@]}"
    build build -DCMAKE_BUILD_TYPE=Release -DCALIBRATE_BUILD_TESTS=OFF
    exec ./build/calibrator/calibrate --sweep-batch "$@"
    ;;
  build)
    install_missing "${base[@]}"
    build build -DCMAKE_BUILD_TYPE=Release -DCALIBRATE_BUILD_TESTS=OFF
    ;;
  fleet)
    install_missing "${base[@]}" "${mpi[@]}"
    build build -DCMAKE_BUILD_TYPE=Release -DCALIBRATE_BUILD_TESTS=OFF
    ;;
  test)
    install_missing "${base[@]}" "${mpi[@]}" "${tests[@]}" -- "${optional[@]}"
    install_libfuzzer
    # Each test runs where it proves most, once where once is enough.
    # The optimised build: the unit tests, the tests that judge the speed
    # of optimised code (label timing: under the sanitizers they would
    # time the sanitizer), the installed tree (label install) and what a
    # sanitizer cannot run (label optimised: runs under an address-space
    # limit, which a sanitizer's shadow memory does not fit).
    build build -DCMAKE_BUILD_TYPE=Release -DCALIBRATE_BUILD_TESTS=ON
    # (-j: the timing tests run alone, the others side by side,
    # tests/CMakeLists.txt)
    (cd build && ctest --output-on-failure -j"$jobs" -L 'unit|timing|install|optimised')
    # The sanitized build: every other test, the end-to-end ones included,
    # so that the program's whole function is checked once with memory
    # and undefined behaviour watched (about 5 minutes less than running
    # them in both builds).  These check function only and wait (sleeps,
    # pipes, MPI, one another) about a third of the time: one test more
    # than there are cores runs at once, and the fuzz build (clang) runs
    # beside them at the lowest priority, in that idle time (its output
    # in build-fuzz/build.log).  On 2 cores: 226 s for both, against
    # 244 s + 36 s one after the other.
    build build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCALIBRATE_SANITIZE=ON \
      -DCALIBRATE_BUILD_TESTS=ON
    mkdir -p build-fuzz
    (
      renice -n 19 -p "$BASHPID" >/dev/null
      build build-fuzz -DCMAKE_C_COMPILER=clang -DCALIBRATE_FUZZ=ON \
        -DCALIBRATE_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
    ) >build-fuzz/build.log 2>&1 &
    fuzz_build=$!
    (cd build-asan && ctest --output-on-failure -j"$((jobs + 1))" -LE 'timing|install|optimised') \
      || { wait "$fuzz_build"; exit 1; }
    wait "$fuzz_build" || {
      cat build-fuzz/build.log
      echo "bootstrap: the fuzz build failed" >&2
      exit 1
    }
    # the parsers under libFuzzer, up to 30 s a target, from the seeds
    tests/fuzz/run.sh build-fuzz 30
    ;;
  *)
    echo "usage: scripts/bootstrap.sh run [calibrate options] | build | fleet | test | packages MODE" >&2
    exit 2
    ;;
esac
