/* calibrate plot PROFILE...: parse the options, load the profiles, draw
 * their charts (report/plot.c), map errors to exit codes. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subcommands.h"
#include "cal_err.h"
#include "cal_exit.h"
#include "cal_paths.h"
#include "cli.h"
#include "plot.h"

#define CMD "plot"

static const char usage[] =
    "Usage: calibrate plot PROFILE... [-o DIR] [--format png|svg] "
    "[--script-only] [--templates DIR]\n"
    "\n"
    "Draw gnuplot charts of one or more profiles (several overlay):\n"
    "batch sweep (prefill, decode, latency), GEMM GFLOPS vs size, thread\n"
    "scaling and efficiency, bandwidth vs working set per core, roofline,\n"
    "attention per shape, compute peak vs theoretical.  Scripts (.gp) and\n"
    "data (.dat) are kept in DIR beside the images so they can be edited\n"
    "and re-run.  One self-contained HTML page: calibrate report.\n"
    "\n"
    "  -o, --output DIR   where to write (default " CAL_PLOT_DEFAULT_DIR "; a\n"
    "                     directory of files, so not '-')\n"
    "  --format png|svg   image format (default png)\n"
    "  --script-only      write scripts and data, do not run gnuplot\n"
    "  --templates DIR    gnuplot templates (default $CALIBRATE_PLOTS_DIR,\n"
    "                     else plots/ of the data directory:\n"
    "                     $CALIBRATE_DATA_DIR or share/calibrate)\n"
    "  -h, --help         this text\n"
    "  -V, --version      show the version\n"
    "\n"
    "Exit status:\n"
    "  0  success\n" CAL_HELP_EXIT_COMMON;

enum { OPT_FORMAT = 256, OPT_SCRIPT_ONLY, OPT_TEMPLATES };

static const struct option long_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"script-only", no_argument, NULL, OPT_SCRIPT_ONLY},
    {"templates", required_argument, NULL, OPT_TEMPLATES},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* Options into o; -1 when parsing is done and profiles follow at optind,
 * else the exit code to return now. */
static int parse(int argc, char **argv, cal_plot_opts_t *o) {
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":o:hV", long_opts, NULL)) != -1) {
    switch (c) {
    case 'o':
      if (!*optarg || strcmp(optarg, "-") == 0)
        return cal_usage(CMD, "-o needs a directory: the charts are several "
                                    "files");
      o->dir = optarg;
      break;
    case OPT_FORMAT:
      if (strcmp(optarg, "png") && strcmp(optarg, "svg"))
        return cal_usage(CMD, "--format must be png or svg: %s", optarg);
      o->format = optarg;
      break;
    case OPT_SCRIPT_ONLY: o->script_only = 1; break;
    case OPT_TEMPLATES: o->templates = optarg; break;
    case 'h': fputs(usage, stdout); return CAL_EXIT_OK;
    case 'V': return cal_print_version();
    default: return cal_bad_option(CMD, c, argv);
    }
  }
  if (optind >= argc)
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
  int rc = parse(argc, argv, &o);
  if (rc >= 0)
    return rc;
  size_t n = (size_t)(argc - optind);
  cal_profile_t **p = calloc(n, sizeof *p);
  char err[512];
  rc = CAL_EXIT_OK;
  if (!p)
    return cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
  for (size_t i = 0; i < n; i++)
    if (cal_profile_load(argv[optind + (int)i], &p[i], err, sizeof err) < 0) {
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
