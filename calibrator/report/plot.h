/* gnuplot charts of one or more profiles (`calibrate plot`, `calibrate
 * --plots DIR`).
 *
 * For each chart a self-contained gnuplot script NAME.gp (a generated
 * header setting variables, then the template plots/NAME.gp) and its data
 * NAME.dat are written into the output directory, then gnuplot runs there
 * (fork + execvp, no shell) to draw NAME.png or NAME.svg.  A user can edit
 * and re-run a script with `cd DIR && gnuplot NAME.gp`.  Charts (the table
 * is in charts.c, file writing and gnuplot in gnuplot.c):
 *   batch_sweep  prefill and decode throughput vs batch size (log2 x),
 *                peak and knee marked, and latency vs batch size
 *   gemm         GFLOPS vs GEMM size (cube root of m·n·k) per dtype and
 *                threads, intervals, measured peaks
 *   scaling      GFLOPS vs threads against ideal; parallel efficiency
 *   bandwidth    GB/s vs working set per core, cache sizes (reported)
 *                and drops (measured) marked
 *   roofline     a roof per dtype with its ridge (int8 in GOPS),
 *                kernels by family
 *   attention    GFLOPS and fraction of GEMM per shape
 *   peak         measured compute peak as a share of the theoretical,
 *                a bar per machine and thread count side by side
 * One palette (gnuplot.c) for all: Okabe-Ito colours; the colour says
 * what a series is, the marker what ran it on which machine, the dash
 * the machine, and no two series of a chart share colour and marker
 * (charts_style.c).  A figure a chart cannot place is left out and
 * counted in a note and in the title.
 * A chart whose section no profile has is skipped with a note.  Profiles
 * and trees passed in are borrowed and never modified. */
#ifndef CAL_PLOT_H
#define CAL_PLOT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "profile.h"
#include "reporter.h"
#include "view.h"

#define CAL_PLOT_DEFAULT_DIR "calibrate-plots"

typedef struct cal_plot_opts {
  const char *dir;       /* output directory, created when missing */
  const char *format;    /* "png" or "svg" */
  const char *templates; /* template directory; NULL: $CALIBRATE_PLOTS_DIR,
                            else plots/ of the data directory (cal_paths.h) */
  int script_only;       /* write .gp and .dat only; never run gnuplot */
  FILE *notes;           /* notes (skipped charts, files written); NULL */
} cal_plot_opts_t;

/* Draw the charts of n loaded profiles.  Returns 0, or:
 *   CAL_ENOTFOUND  gnuplot is not installed (scripts and data are written;
 *                  err says how to install it)
 *   CAL_ESYS       gnuplot failed on a script
 *   CAL_EIO        a file could not be written or a template read
 *   CAL_EINVAL     bad format or n == 0
 *   CAL_ENOMEM
 * with one line in err. */
int cal_plot_run(const cal_profile_t *const *profiles, size_t n,
                 const cal_plot_opts_t *opts, char *err, size_t errlen);

/* cal_plot_run on typed views of profiles (borrowed); paths[i] names
 * view i in the scripts. */
int cal_plot_views(const cal_profile_view_t *const *views,
                   const char *const *paths, size_t n,
                   const cal_plot_opts_t *opts, char *err, size_t errlen);

/* Load the profiles at paths[0..n-1] and draw their charts into dir (NULL:
 * CAL_PLOT_DEFAULT_DIR) in format "png" or "svg" (NULL: png).  Reads the
 * profiles only: a missing gnuplot never touches them.  Notes go to
 * stderr.  Same returns as cal_plot_run, plus cal_profile_load's. */
int cal_plot_profiles(const char *const *paths, size_t n, const char *dir,
                      const char *format, char *err, size_t errlen);

/* Draw the charts of one profile tree already in memory, as
 * cal_plot_profiles does for a file: name is the path the scripts name it
 * by (NULL: none), dir and format as there, notes to stderr.  Same
 * returns as cal_plot_run; CAL_EINVAL when root is NULL. */
int cal_plot_tree(const json_t *root, const char *name, const char *dir,
                  const char *format, char *err, size_t errlen);

/* The chart reporters (reporter.h), "png" and "svg": their data is a
 * cal_plot_in_t, their notes go to the stream they are given (NULL:
 * none), and they return as cal_plot_run. */
typedef struct cal_plot_in {
  const cal_profile_t *const *profiles; /* n loaded profiles */
  size_t n;
  const cal_plot_opts_t *opts; /* dir, templates, script_only; the format
                                  and notes are the reporter's */
} cal_plot_in_t;

extern const cal_reporter_t cal_plot_reporters[];
extern const size_t cal_plot_nreporters;

#endif
