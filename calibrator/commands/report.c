/* calibrate report PROFILE... -o FILE: one self-contained HTML page of the
 * profiles (report/html.c), written through the one writer. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_exit.h"
#include "cli.h"
#include "html.h"
#include "profile.h"
#include "subcommands.h"

#define CMD "report"

static const char usage[] =
    "Usage: calibrate report PROFILE... -o FILE [--threshold T] "
    "[--templates DIR]\n"
    "\n"
    "Write one self-contained HTML page of one or more profiles: the\n"
    "machine, the headline figures, the tables, every chart (inline SVG\n"
    "drawn by gnuplot), the quality notes, and with two or more profiles\n"
    "the comparison of each against the first.  The page refers to nothing\n"
    "outside itself (no scripts, fonts, images or network), so it can be\n"
    "attached to a CI run or mailed.  Needs gnuplot (gnuplot-nox).\n"
    "\n"
    "  -o, --output FILE  where to write atomically ('-': standard output);\n"
    "                     required\n"
    "  --threshold T      comparison: change that matters (default 5%)\n"
    "  --templates DIR    gnuplot templates (default $CALIBRATE_PLOTS_DIR or\n"
    "                     the plots/ directory of the build)\n"
    "  -h, --help         this text\n"
    "  -V, --version      show the version\n"
    "\n"
    "Exit status:\n"
    "  0  success\n" CAL_HELP_EXIT_COMMON
    "     (gnuplot missing is 2: the message says how to install it)\n";

enum { OPT_TEMPLATES = 256, OPT_THRESHOLD };

static const struct option long_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"templates", required_argument, NULL, OPT_TEMPLATES},
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

int cal_cmd_report(int argc, char **argv) {
  const char *out = NULL;
  cal_html_opts_t o = {0};
  char err[512];
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":o:hV", long_opts, NULL)) != -1) {
    switch (c) {
    case 'o':
      if (!*optarg)
        return cal_usage(CMD, "-o needs a file name");
      out = optarg;
      break;
    case OPT_TEMPLATES: o.templates = optarg; break;
    case OPT_THRESHOLD:
      if (cal_parse_fraction(optarg, &o.threshold) < 0)
        return cal_usage(CMD, "--threshold %s: give \"5%%\" or \"0.05\"",
                         optarg);
      break;
    case 'h': fputs(usage, stdout); return CAL_EXIT_OK;
    case 'V': return cal_print_version();
    default: return cal_cmd_getopt_error(CMD, c, argv);
    }
  }
  if (optind >= argc)
    return cal_usage(CMD, "give at least one profile");
  if (!out)
    return cal_usage(CMD, "give the output file with -o FILE ('-': stdout)");
  char why[256];
  if (cal_check_writable(out, why, sizeof why) < 0)
    return cal_usage(CMD, "cannot write %s: %s", out, why);
  size_t n = (size_t)(argc - optind);
  cal_profile_t **p = calloc(n, sizeof *p);
  char *html = NULL;
  size_t len = 0;
  int rc = CAL_EXIT_INTERNAL;
  if (!p) {
    cal_fail(CMD, rc, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    if (cal_profile_load(argv[optind + (int)i], &p[i], err, sizeof err) < 0) {
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
    fprintf(stderr, "wrote %s (%zu bytes)\n", out, len);
  rc = CAL_EXIT_OK;
out:
  for (size_t i = 0; p && i < n; i++)
    cal_profile_free(p[i]);
  free(p);
  free(html);
  return rc;
}
