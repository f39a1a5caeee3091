/* calibrate report PROFILE... [-o FILE]: one self-contained HTML page of
 * the profiles (report/html.c), written through the one writer to FILE or
 * standard output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_esc.h"
#include "cal_exit.h"
#include "cli.h"
#include "html.h"
#include "opt_table.h"
#include "profile.h"
#include "subcommands.h"

#define CMD "report"

typedef struct report_args {
  const char *out;
  cal_html_opts_t o;
} report_args_t;

#define OFF(field) offsetof(report_args_t, field)

static const cal_opt_t report_rows[] = {
    {.type = CAL_OPT_STRING, .name = "output", .letter = 'o', .arg = "FILE",
     .off = OFF(out), .set = cal_opt_output_file,
     .help = "write there atomically instead of standard\n"
             "output ('-': standard output)"},
    {.type = CAL_OPT_FRACTION, .name = "threshold", .arg = "T",
     .off = OFF(o.threshold),
     .bad = "--threshold %s: give \"5%%\" or \"0.05\"",
     .help = "comparison: change that matters (default 5%%)"},
    {.type = CAL_OPT_STRING, .name = "templates", .arg = "DIR",
     .off = OFF(o.templates),
     .help = "gnuplot templates (default $CALIBRATE_PLOTS_DIR or\n"
             "the plots/ directory of the build)"},
    CAL_OPT_LAST("this text"),
};

static const cal_opt_cmd_t report_opts = {
    CMD,
    "Usage: calibrate report PROFILE... [-o FILE] [--threshold T] "
    "[--templates DIR]\n"
    "\n"
    "Write one self-contained HTML page of one or more profiles: the\n"
    "machine, the headline figures, the tables, every chart (inline SVG\n"
    "drawn by gnuplot), the quality notes, and with two or more profiles\n"
    "the comparison of each against the first.  The page refers to nothing\n"
    "outside itself (no scripts, fonts, images or network), so it can be\n"
    "attached to a CI run or mailed, and written to standard output\n"
    "unless -o names a file.  Needs gnuplot (gnuplot-nox).\n"
    "\n",
    {{report_rows, 21, CAL_OPT_FLAT}},
    "\n"
    "Exit status:\n"
    "  0  success\n" CAL_HELP_EXIT_COMMON
    "     (gnuplot missing is 2: the message says how to install it)\n",
};

int cal_cmd_report(int argc, char **argv) {
  report_args_t args = {NULL, {0}};
  char err[512];
  int first, rc0;
  if ((rc0 = cal_opt_parse(&report_opts, &args, argc, argv, &first)) >= 0)
    return rc0;
  const char *out = args.out ? args.out : "-";
  cal_html_opts_t o = args.o;
  if (first >= argc)
    return cal_usage(CMD, "give at least one profile");
  char why[256];
  if (cal_check_writable(out, why, sizeof why) < 0)
    return cal_usage(CMD, "cannot write %s: %s", out, why);
  size_t n = (size_t)(argc - first);
  cal_profile_t **p = calloc(n, sizeof *p);
  char *html = NULL;
  size_t len = 0;
  int rc = CAL_EXIT_INTERNAL;
  if (!p) {
    cal_fail(CMD, rc, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    if (cal_profile_load(argv[first + (int)i], &p[i], err, sizeof err) < 0) {
      rc = cal_usage(CMD, "%s", err);
      goto out;
    }
  }
  /* the page is rendered whole, then written atomically */
  const cal_reporter_t *page = cal_reporter_find(
      cal_html_reporters, cal_html_nreporters, "html");
  cal_html_in_t in = {.profiles = (const cal_profile_t *const *)p, .n = n,
                      .opts = &o};
  int r = cal_reporter_render_mem(page, &in, &html, &len, err, sizeof err);
  if (r < 0) {
    rc = cal_fail(CMD, r == CAL_ENOTFOUND || r == CAL_EIO || r == CAL_EINVAL
                           ? CAL_EXIT_USAGE : CAL_EXIT_INTERNAL,
                  "%s", err);
    goto out;
  }
  if (cal_write_atomic(out, html, len, err, sizeof err) < 0) {
    rc = cal_usage(CMD, "%s", err);
    goto out;
  }
  if (strcmp(out, "-") != 0)
    cal_esc_line(stderr, "wrote %s (%zu bytes)", out, len);
  rc = CAL_EXIT_OK;
out:
  for (size_t i = 0; p && i < n; i++)
    cal_profile_free(p[i]);
  free(p);
  free(html);
  return rc;
}
