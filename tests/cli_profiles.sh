#!/bin/sh
# The installed program on the committed profiles (tests/data): exit code
# and output of each case.
# usage: cli_profiles.sh CALIBRATE SOURCE_DIR WORKDIR CASE
#   plan_split        calibrate plan splits 1000 examples 73.62% / 26.38%
#   plot_script_only  calibrate plot --script-only writes the gnuplot
#                     scripts (roofline.gp among them) into a directory
#                     whose name has a space
CAL=$1 SRC=$2 WORK=$3 CASE=$4
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$WORK"
DATA=$SRC/tests/data

case $CASE in
plan_split)
  if expect_exit 0 "plan" "$CAL" plan "$DATA/profile_a.json" \
    "$DATA/profile_b.json" --examples 1000; then
    grep -q '^machine_a .* 73\.62% ' "$TMP/out" && ok ||
      bad "plan: machine_a's share is not 73.62%"
    grep -q '^machine_b .* 26\.38% ' "$TMP/out" && ok ||
      bad "plan: machine_b's share is not 26.38%"
  fi
  ;;
plot_script_only)
  out="$TMP/cli plots"
  CALIBRATE_PLOTS_DIR=$SRC/plots
  export CALIBRATE_PLOTS_DIR
  if expect_exit 0 "plot --script-only" "$CAL" plot --script-only -o "$out" \
    "$DATA/profile_a.json"; then
    grep -q "^wrote .*roofline\.gp\$" "$TMP/out" "$TMP/err" && ok ||
      bad "plot: no 'wrote .../roofline.gp'"
    [ -s "$out/roofline.gp" ] && ok || bad "plot: $out/roofline.gp missing"
    # every script it says it wrote is there, and nothing else was claimed
    n=0
    for gp in "$out"/*.gp; do
      [ -s "$gp" ] || continue
      n=$((n + 1))
      grep -q -x "wrote $gp" "$TMP/out" "$TMP/err" && ok ||
        bad "plot: $gp exists but was not reported"
    done
    [ "$(grep -c '^wrote .*\.gp$' "$TMP/err" "$TMP/out" |
      awk -F: '{ s += $NF } END { print s }')" -eq "$n" ] && ok ||
      bad "plot: $n .gp files written, a different number reported"
  fi
  ;;
*)
  echo "unknown case $CASE"
  exit 99
  ;;
esac
finish
