#!/bin/sh
# `cmake --install` to a temporary prefix gives a working tool (issue 17):
# the binary, its data (chart templates, profile schema) under
# share/calibrate, man pages for every command and for every function of
# the library's header (check_man3.sh), all rendering without warnings
# (man-db required: scripts/bootstrap.sh test installs it), bash and zsh
# completions, calibrate.pc and the CMake package beside it (its version
# file; the example planner built with find_package(calibrate) from the
# moved prefix).  The installed binary, run from another directory with
# none of the data variables set, finds its data beside itself (also after
# the prefix is moved), writes its default profile to the current
# directory and nothing into the source tree, and draws the charts of a
# reference profile.  The build loses nothing.
# usage: e2e_install.sh CMAKE BUILD_DIR SOURCE_DIR WORK_DIR
CMAKE=$1
BUILD=$2
SRC=$3
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$4"
# functional checks (--allow-busy): a lock of our own, so that the test
# does not queue behind measuring runs of other tests or users
export CALIBRATE_LOCK="$TMP/lock"
unset CALIBRATE_DATA_DIR CALIBRATE_PLOTS_DIR CALIBRATE_RESULTS_DIR
REF=$SRC/tests/data/kvm-xeon-2core-avx512.json

listing() { (cd "$1" && find . -path ./Testing -prune -o -path ./tests/e2e_install -prune -o -print | sort); }

listing "$BUILD" >"$TMP/build.before"
ls -A "$SRC/results" >"$TMP/results.before"
PREFIX=$(mktemp -d "$TMP/prefix.XXXXXX") || exit 99
if ! "$CMAKE" --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" 2>&1; then
  bad "cmake --install failed"; cat "$TMP/install.log"; finish; exit 1
fi
ok
# nothing of the build removed (install adds install_manifest.txt)
listing "$BUILD" >"$TMP/build.after"
missing=$(comm -23 "$TMP/build.before" "$TMP/build.after")
[ -z "$missing" ] && ok || bad "the install removed from the build: $missing"

CAL=$PREFIX/bin/calibrate
DATA=$PREFIX/share/calibrate
[ -x "$CAL" ] && ok || bad "no bin/calibrate"
[ ! -e "$PREFIX/bin/calibrate-source-dir" ] && ok ||
  bad "the uninstalled build's marker was installed"
for gp in "$SRC"/plots/*.gp; do
  cmp -s "$gp" "$DATA/plots/${gp##*/}" && ok || bad "share/calibrate/plots/${gp##*/} missing"
done
[ -s "$DATA/schema/calibrate-profile-1.schema.json" ] && ok ||
  bad "share/calibrate/schema/calibrate-profile-1.schema.json missing"
[ -s "$PREFIX/share/doc/calibrate/LICENSE" ] && ok || bad "LICENSE not installed"
[ -s "$PREFIX/share/bash-completion/completions/calibrate" ] && ok ||
  bad "bash completion not installed"
[ -s "$PREFIX/share/zsh/vendor-completions/_calibrate" ] && ok ||
  bad "zsh completion not installed"
# the completions parse, and bash's completes commands and options
BC=/usr/share/bash-completion/bash_completion
if [ -r "$BC" ] && command -v bash >/dev/null 2>&1; then
  got=$(PATH=$PREFIX/bin:$PATH bash -c '. "$1"; . "$2"
    COMP_WORDS=(calibrate pl); COMP_CWORD=1; COMP_LINE="calibrate pl"
    COMP_POINT=${#COMP_LINE}; _calibrate; echo "${COMPREPLY[*]}"
    COMP_WORDS=(calibrate plan --model-p); COMP_CWORD=2
    COMP_LINE="calibrate plan --model-p"; COMP_POINT=${#COMP_LINE}
    _calibrate; echo "${COMPREPLY[*]}"' sh "$BC" \
    "$PREFIX/share/bash-completion/completions/calibrate" 2>&1)
  [ "$got" = "plan plot
--model-params" ] && ok || bad "bash completion: got '$got'"
else
  echo "bash-completion is not installed: the bash completion not run"
fi
if command -v zsh >/dev/null 2>&1; then
  zsh -n "$PREFIX/share/zsh/vendor-completions/_calibrate" && ok ||
    bad "the zsh completion does not parse"
fi

# man pages: calibrate(1) and one per command --help lists, no warnings
MAN1=$PREFIX/share/man/man1
if command -v man >/dev/null 2>&1; then
  for c in "" $("$CAL" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p'); do
    page=$MAN1/calibrate${c:+-$c}.1
    if [ ! -s "$page" ]; then
      bad "man page ${page##*/} not installed"
      continue
    fi
    w=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    [ -z "$w" ] && ok || bad "man -l ${page##*/} warns: $w"
    # generated from this program's --help: every option of it is there
    for opt in $("$CAL" $c --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
      MANWIDTH=200 man -l "$page" 2>/dev/null | grep -q -- "$opt" ||
        { bad "${page##*/} does not mention $opt"; break; }
    done
  done
else
  # scripts/bootstrap.sh installs it: a missing man is a setup to fix,
  # not a pass with the pages unchecked
  bad "man (man-db) is not installed: the man pages cannot be rendered (apt-get install man-db)"
fi

# man3: every public function of the installed header has its page
if sh "$SRC/tests/check_man3.sh" "$PREFIX/include/calibrate/calibrate.h" \
     "$PREFIX/share/man/man3" >"$TMP/man3.log" 2>&1; then
  ok
else
  bad "installed man3 pages: $(grep FAIL "$TMP/man3.log" | head -3)"
fi
# and man finds a function's page through its group's (.so)
if command -v man >/dev/null 2>&1; then
  MANPATH=$PREFIX/share/man MANWIDTH=200 man cal_machine_free 2>/dev/null |
    grep -q 'void cal_machine_free(cal_machine_t \*m);' && ok ||
    bad "man cal_machine_free does not show its page"
fi

# the CMake package beside calibrate.pc; its version file takes requests
# of the installed major version up to the installed version
CFG=$PREFIX/lib/cmake/calibrate
for f in calibrateConfig.cmake calibrateConfigVersion.cmake calibrateTargets.cmake; do
  [ -s "$CFG/$f" ] && ok || bad "lib/cmake/calibrate/$f not installed"
done
[ -s "$PREFIX/lib/pkgconfig/calibrate.pc" ] && ok || bad "calibrate.pc not installed"
ver=$("$CAL" --version | sed -n '1s/^calibrate \([0-9]*\)\.\([0-9]*\)\..*/\1 \2/p')
set -- $ver
major=${1:-0} minor=${2:-0}
printf 'include("%s")\nmessage("${PACKAGE_VERSION_COMPATIBLE}")\n' \
  "$CFG/calibrateConfigVersion.cmake" >"$TMP/version.cmake"
compatible() { # REQUESTED MAJOR: TRUE or FALSE
  "$CMAKE" -DPACKAGE_FIND_VERSION="$1" -DPACKAGE_FIND_VERSION_MAJOR="$2" \
    -P "$TMP/version.cmake" 2>&1
}
[ "$(compatible "$major.$minor" "$major")" = TRUE ] && ok ||
  bad "the version file refuses $major.$minor"
[ "$(compatible "$((major + 1)).0" "$((major + 1))")" = FALSE ] && ok ||
  bad "the version file accepts $((major + 1)).0"
[ "$(compatible "$major.$((minor + 1))" "$major")" = FALSE ] && ok ||
  bad "the version file accepts $major.$((minor + 1)), newer than installed"

# run it from elsewhere, as a user would
RUN=$TMP/elsewhere
mkdir -p "$RUN"
cd "$RUN" || exit 99
expect_exit 0 "installed --version" "$CAL" --version &&
  { grep -q BSD-3-Clause "$TMP/out" && ok || bad "--version names no licence"; }
# --allow-busy: this checks where the profile goes, not the figures, and
# a busy machine (exit 5) must not fail it; one short section shows it
if expect_exit 0 "installed calibrate --quick" "$CAL" --quick --sections peak --allow-busy; then
  n=$(ls "$RUN"/*.json 2>/dev/null | wc -l)
  [ "$n" -eq 1 ] && ok || bad "--quick wrote $n profiles in the current directory"
fi
ls -A "$SRC/results" >"$TMP/results.after"
cmp -s "$TMP/results.before" "$TMP/results.after" && ok ||
  bad "the installed binary wrote into the source tree's results/"

# charts of a reference profile, templates from share/calibrate
plot_args="--script-only"
if command -v gnuplot >/dev/null 2>&1; then
  plot_args=
else
  echo "gnuplot is not installed: scripts only"
fi
if expect_exit 0 "installed plot" "$CAL" plot "$REF" -o "$TMP/charts" $plot_args; then
  [ -s "$TMP/charts/roofline.gp" ] && ok || bad "plot: no roofline.gp"
  [ -n "$plot_args" ] || { [ -s "$TMP/charts/roofline.png" ] && ok || bad "plot: no roofline.png"; }
fi
# the data follow the binary: the prefix moved, charts still drawn
mv "$PREFIX" "$PREFIX.moved"
expect_exit 0 "plot from a moved prefix" "$PREFIX.moved/bin/calibrate" plot "$REF" \
  -o "$TMP/charts2" --script-only
# a CMake consumer of the moved prefix: the example planner built with
# find_package(calibrate) and calibrate::calibrate, run on the installed
# library
MOVED=$PREFIX.moved
if command -v cc >/dev/null 2>&1; then
  if "$CMAKE" -S "$SRC/examples/planner" -B "$TMP/planner" \
       -DCMAKE_PREFIX_PATH="$MOVED" >"$TMP/planner.log" 2>&1 &&
     "$CMAKE" --build "$TMP/planner" >>"$TMP/planner.log" 2>&1; then
    ok
    if expect_exit 0 "the planner built with find_package(calibrate)" \
         "$TMP/planner/planner" --examples 100 "$REF"; then
      grep -q '^machine i=0 ' "$TMP/out" && ok || bad "the planner printed no machine"
    fi
    ldd "$TMP/planner/planner" | grep -q "$MOVED/lib/libcalibrate.so" && ok ||
      bad "the planner is not linked to the installed libcalibrate"
  else
    bad "examples/planner does not build with find_package(calibrate)"
    tail -20 "$TMP/planner.log"
  fi
else
  echo "no C compiler: the CMake consumer not built"
fi
# and CALIBRATE_DATA_DIR overrides where they are
expect_usage "plot with CALIBRATE_DATA_DIR=/nonexistent" \
  env CALIBRATE_DATA_DIR=/nonexistent "$PREFIX.moved/bin/calibrate" plot "$REF" \
  -o "$TMP/charts3" --script-only
finish
