#!/bin/sh
# The build's oneDNN look-up (cmake/calibrate_dnnl.cmake): a oneDNN 3.x,
# whose API the oneDNN engine cannot build against, is refused at
# configure time with one message naming the version and what is needed
# (not a compile error later); a 2.x is accepted; none at all says how to
# install it.  Stand-in package configs, no compiler.
# usage: onednn_version.sh CMAKE SOURCE_DIR WORK_DIR
CMAKE=$1 SRC=$2
. "$SRC/tests/e2e_lib.sh"
e2e_setup "$3"
PROBE=$SRC/tests/onednn/probe

probe() { # BUILD_DIR CMAKE_ARGS...: configure the probe, output flattened
  _dir=$1
  shift
  "$CMAKE" -S "$PROBE" -B "$TMP/$_dir" -DCAL_SRC="$SRC" "$@" \
    >"$TMP/$_dir.log" 2>&1
  _rc=$?
  tr '\n' ' ' <"$TMP/$_dir.log" | tr -s ' ' >"$TMP/out"
  return $_rc
}

if probe v3 -Ddnnl_DIR="$SRC/tests/onednn/dnnl-3"; then
  bad "oneDNN 3.1.0 accepted"
else
  grep -q "oneDNN 3.1.0 .* cannot build calibrate's oneDNN engine, which uses the 2.x matmul API" "$TMP/out" &&
    ok || { bad "oneDNN 3.x: no clear message"; cat "$TMP/v3.log"; }
  [ "$(grep -c 'CMake Error' "$TMP/v3.log")" -eq 1 ] && ok ||
    { bad "oneDNN 3.x: not one error"; cat "$TMP/v3.log"; }
fi
if probe v2 -Ddnnl_DIR="$SRC/tests/onednn/dnnl-2"; then
  grep -q "oneDNN 2.7.3 accepted" "$TMP/out" && ok || bad "oneDNN 2.7.3: $(cat "$TMP/out")"
else
  bad "oneDNN 2.7.3 refused"; cat "$TMP/v2.log"
fi
if probe none -DCMAKE_DISABLE_FIND_PACKAGE_dnnl=ON; then
  bad "no oneDNN accepted"
else
  grep -q "oneDNN 2.x not found.*apt-get install libdnnl-dev" "$TMP/out" && ok ||
    { bad "no oneDNN: no install hint"; cat "$TMP/none.log"; }
fi
finish
