#!/bin/sh
# The library's man3 pages as built (check_man3.sh): every public function
# of include/calibrate/calibrate.h has one.  And the check can fail: a
# function added to a copy of the header without a page, a group page
# missing under its one-line pages, a page for a function the header does
# not have.
# usage: man3_pages.sh SOURCE_DIR MAN3_DIR WORK_DIR
SRC=$1 MAN3=$2
. "$SRC/tests/e2e_lib.sh"
e2e_setup "$3"
CHECK="sh $SRC/tests/check_man3.sh"
HDR=$SRC/include/calibrate/calibrate.h

expect_exit 0 "check_man3 on the built pages" $CHECK "$HDR" "$MAN3" ||
  cat "$TMP/out"

sed 's/^\(CALIBRATE_API int cal_version_number(void);\)$/\1\
CALIBRATE_API int cal_version_extra(void);/' "$HDR" >"$TMP/extra.h"
grep -q cal_version_extra "$TMP/extra.h" || bad "could not add a function to the copy"
expect_match 1 "cal_version_extra has no man3 page" $CHECK "$TMP/extra.h" "$MAN3"

cp -R "$MAN3" "$TMP/nogroup"
rm -f "$TMP/nogroup/cal_worksplit_compute.3"
expect_match 1 "cal_worksplit_compute.3, which is missing" \
  $CHECK "$HDR" "$TMP/nogroup"

grep -v 'cal_batchcurve_point(' "$HDR" >"$TMP/fewer.h"
expect_match 1 "documents cal_batchcurve_point, which the header" \
  $CHECK "$TMP/fewer.h" "$MAN3"
finish
