/* calibrate plot PROFILE...: parse the options, load the profiles, draw
 * their charts (report/plot.c), map errors to exit codes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subcommands.h"
#include "cal_err.h"
#include "cal_exit.h"
#include "cal_paths.h"
#include "cli.h"
#include "opt_table.h"
#include "plot.h"

#define CMD "plot"

static int output_opt(void *obj, const cal_opt_t *row, const char *val,
                      const char *cmd) {
  if (!*val || strcmp(val, "-") == 0)
    return cal_usage(cmd, "-o needs a directory: the charts are several "
                          "files");
  return -1;
}

static const cal_opt_choice_t formats[] = {{"png", 0}, {"svg", 0},
                                           {NULL, 0}};

#define OFF(field) offsetof(cal_plot_opts_t, field)

static const cal_opt_t plot_rows[] = {
    {.type = CAL_OPT_STRING, .name = "output", .letter = 'o', .arg = "DIR",
     .off = OFF(dir), .set = output_opt,
     .help = "where to write (default " CAL_PLOT_DEFAULT_DIR "; a\n"
             "directory of files, so not '-')"},
    {.type = CAL_OPT_STRING, .name = "format", .arg = "png|svg",
     .off = OFF(format), .choices = formats,
     .bad = "--format must be png or svg: %s",
     .help = "image format (default png)"},
    {.type = CAL_OPT_FLAG, .name = "script-only", .off = OFF(script_only),
     .help = "write scripts and data, do not run gnuplot"},
    {.type = CAL_OPT_STRING, .name = "templates", .arg = "DIR",
     .off = OFF(templates),
     .help = "gnuplot templates (default $CALIBRATE_PLOTS_DIR,\n"
             "else plots/ of the data directory:\n"
             "$CALIBRATE_DATA_DIR or share/calibrate)"},
    CAL_OPT_LAST("this text"),
};

static const cal_opt_cmd_t plot_opts = {
    CMD,
    "Usage: calibrate plot PROFILE... [-o DIR] [--format png|svg] "
    "[--script-only] [--templates DIR]\n"
    "\n"
    "Draw gnuplot charts of one or more profiles (several overlay):\n"
    "batch sweep (prefill, decode, latency), GEMM GFLOPS vs size, thread\n"
    "scaling and efficiency, bandwidth vs working set per core, roofline,\n"
    "attention per shape, compute peak vs theoretical.  Scripts (.gp) and\n"
    "data (.dat) are kept in DIR beside the images so they can be edited\n"
    "and re-run.  One self-contained HTML page: calibrate report.\n"
    "\n",
    {{plot_rows, 21, CAL_OPT_FLAT}},
    "\n"
    "Exit status:\n"
    "  0  success\n" CAL_HELP_EXIT_COMMON,
};

/* Options into o; -1 when parsing is done and profiles follow at *first,
 * else the exit code to return now. */
static int parse(int argc, char **argv, cal_plot_opts_t *o, int *first) {
  int rc;
  if ((rc = cal_opt_parse(&plot_opts, o, argc, argv, first)) >= 0)
    return rc;
  if (*first >= argc)
    return cal_usage(CMD, "give at least one profile");
  const char *env = getenv("CALIBRATE_PLOTS_DIR");
  char dir[4096], err[256];
  if (!o->templates && !(env && *env) &&
      cal_data_path(CAL_DATA_PLOTS, dir, sizeof dir, err, sizeof err) < 0)
    return cal_usage(CMD, "%s", err);
  return -1;
}

int cal_cmd_plot(int argc, char **argv) {
  cal_plot_opts_t o = {.dir = CAL_PLOT_DEFAULT_DIR, .format = "png",
                       .notes = stderr};
  int first, rc = parse(argc, argv, &o, &first);
  if (rc >= 0)
    return rc;
  size_t n = (size_t)(argc - first);
  cal_profile_t **p = calloc(n, sizeof *p);
  char err[512];
  rc = CAL_EXIT_OK;
  if (!p)
    return cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
  for (size_t i = 0; i < n; i++)
    if (cal_profile_load(argv[first + (int)i], &p[i], err, sizeof err) < 0) {
      rc = cal_usage(CMD, "%s", err);
      goto out;
    }
  /* --format png|svg names the chart reporter */
  const cal_reporter_t *charts =
      cal_reporter_find(cal_plot_reporters, cal_plot_nreporters, o.format);
  cal_plot_in_t in = {.profiles = (const cal_profile_t *const *)p, .n = n,
                      .opts = &o};
  int r = charts->render(&in, charts->variant, o.notes, err, sizeof err);
  if (r < 0)
    /* a missing gnuplot is the user's to install (the hint says how) */
    rc = cal_fail(CMD, r == CAL_EIO || r == CAL_EINVAL || r == CAL_ENOTFOUND
                           ? CAL_EXIT_USAGE : CAL_EXIT_INTERNAL,
                  "%s", err);
out:
  for (size_t i = 0; i < n; i++)
    cal_profile_free(p[i]);
  free(p);
  return rc;
}
