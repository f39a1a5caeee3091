/* Where the program finds its data (chart templates, the profile schema)
 * and where a default run writes its profile.
 *
 * One lookup, in this order:
 *   1. $CALIBRATE_DATA_DIR (laid out like an installed share/calibrate/);
 *   2. an uninstalled build: the build writes a marker file,
 *      CAL_PATHS_MARKER, next to its binaries holding the source tree's
 *      path, and the data are read from that tree;
 *   3. an installed binary: <dir of /proc/self/exe>/CAL_DATA_FROM_BIN, the
 *      way from the install's BINDIR to DATADIR/calibrate the build sets
 *      ("../share/calibrate" by default; absolute when either is).
 * Returned strings belong to this module (static storage, computed once);
 * do not free them. */
#ifndef CAL_PATHS_H
#define CAL_PATHS_H

#include <stddef.h>

#define CAL_PATHS_MARKER "calibrate-source-dir"

/* What is looked up. */
typedef enum {
  CAL_DATA_PLOTS,  /* gnuplot templates: plots/ (source and installed) */
  CAL_DATA_SCHEMA, /* profile schema: results/schema/ in the source tree,
                      schema/ when installed */
} cal_data_t;

/* The data directory (see above), or NULL when none was found. */
const char *cal_data_dir(void);
/* The source tree of an uninstalled build, or NULL when installed (or
 * when $CALIBRATE_DATA_DIR is set: the data come from there). */
const char *cal_source_dir(void);
/* The directory holding one kind of data: 0, or CAL_ENOTFOUND with a
 * reason in err when no data directory was found. */
int cal_data_path(cal_data_t what, char *out, size_t len, char *err,
                  size_t errlen);
/* Where a default run writes its profile: $CALIBRATE_RESULTS_DIR, else the
 * source tree's results/ for an uninstalled build, else "." (the current
 * directory): an installed binary never writes into a source tree. */
const char *cal_results_default_dir(void);

#endif
