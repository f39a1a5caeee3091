/* `calibrate compare BASE NEW`: parse the options, load both profiles,
 * compare them (analysis/compare.c) and render the report
 * (report/compare_render.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subcommands.h"
#include "cal_err.h"
#include "cli.h"
#include "cal_exit.h"
#include "compare.h"
#include "compare_render.h"
#include "profile.h"

#define CMD "compare"

static void compare_usage(FILE *f) {
  fprintf(f,
          "usage: calibrate compare [options] BASE.json NEW.json\n"
          "Compare two profiles point by point (Mann-Whitney U test on the\n"
          "samples, ratio of medians with a %s confidence interval).\n"
          "  --threshold T   change that matters, \"5%%\" or \"0.05\" (default 5%%)\n"
          "  --alpha A       significance level (default 0.01)\n"
          "  --format F      table (default), md or json\n"
          "  -o FILE         write the report to FILE atomically (default stdout)\n"
          "  --warn-only     report regressions but exit 0\n"
          "  --allow-different-machines  compare profiles of different machines\n"
          "  -h, --help      this help\n"
          "Exit: 0 no regression, 1 a regression, 2 usage or input error.\n",
          "95%");
}

typedef struct compare_args {
  cal_compare_opts_t o;
  cal_report_format_t fmt;
  const char *out_path;
  int warn_only, allow_diff;
} compare_args_t;

static const struct option longopts[] = {
    {"threshold", required_argument, NULL, 't'},
    {"alpha", required_argument, NULL, 'a'},
    {"format", required_argument, NULL, 'f'},
    {"output", required_argument, NULL, 'o'},
    {"warn-only", no_argument, NULL, 'w'},
    {"allow-different-machines", no_argument, NULL, 'M'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char *const format_names[] = {
    [CAL_REPORT_TABLE] = "table", [CAL_REPORT_MD] = "md", [CAL_REPORT_JSON] = "json"};

/* One option; -1 to go on, else the exit code. */
static int compare_option(int c, char **argv, compare_args_t *a) {
  switch (c) {
  case 't':
    if (cal_parse_fraction(optarg, &a->o.threshold) < 0) {
      fprintf(stderr, "calibrate compare: --threshold %s: give a fraction "
                      "like 5%% or 0.05\n", optarg);
      return CAL_EXIT_USAGE;
    }
    return -1;
  case 'a':
    if (cal_parse_fraction(optarg, &a->o.alpha) < 0) {
      fprintf(stderr, "calibrate compare: --alpha %s: give a level in (0, 1) "
                      "like 0.01\n", optarg);
      return CAL_EXIT_USAGE;
    }
    return -1;
  case 'f':
    for (size_t k = 0; k < sizeof format_names / sizeof format_names[0]; k++)
      if (strcmp(optarg, format_names[k]) == 0) {
        a->fmt = (cal_report_format_t)k;
        return -1;
      }
    fprintf(stderr, "calibrate compare: --format %s: use table, md or json\n",
            optarg);
    return CAL_EXIT_USAGE;
  case 'o': a->out_path = optarg; return -1;
  case 'w': a->warn_only = 1; return -1;
  case 'M': a->allow_diff = 1; return -1;
  case 'h': compare_usage(stdout); return CAL_EXIT_OK;
  default: return cal_cmd_getopt_error(CMD, c, argv);
  }
}

/* -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, compare_args_t *a) {
  int c, code;
  *a = (compare_args_t){{0.05, 0.01, 0.95, NULL, NULL}, CAL_REPORT_TABLE, "-",
                        0, 0};
  optind = 0; /* glibc: full re-initialisation, also for repeated calls */
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1)
    if ((code = compare_option(c, argv, a)) >= 0)
      return code;
  if (argc - optind != 2) {
    fprintf(stderr, "calibrate compare: need two profiles, BASE.json NEW.json "
                    "(see --help)\n");
    return CAL_EXIT_USAGE;
  }
  a->o.base_name = argv[optind];
  a->o.new_name = argv[optind + 1];
  return -1;
}

static void stderr_diff(FILE *f, const char *key, const char *x, const char *y) {
  fprintf(f, "  %s: %s in base, %s in new\n", key, x, y);
}

/* Render a table or markdown report and write it: an exit code. */
static int write_text(const json_t *rep, const compare_args_t *a) {
  char *buf = NULL, err[512];
  size_t len = 0;
  int code = CAL_EXIT_INTERNAL;
  FILE *mf = open_memstream(&buf, &len);
  if (!mf) {
    fprintf(stderr, "calibrate compare: out of memory\n");
    goto out;
  }
  int rc = cal_compare_render(rep, a->fmt, mf);
  if (fclose(mf) || rc < 0) {
    fprintf(stderr, "calibrate compare: out of memory rendering the report\n");
    goto out;
  }
  if (cal_write_atomic(a->out_path, buf, len, err, sizeof err) < 0) {
    fprintf(stderr, "calibrate compare: %s\n", err);
    code = CAL_EXIT_USAGE;
    goto out;
  }
  code = CAL_EXIT_OK;
out:
  free(buf);
  return code;
}

int cal_cmd_compare(int argc, char **argv) {
  compare_args_t a;
  cal_profile_t *base = NULL, *newp = NULL;
  json_t *rep = NULL;
  char err[512];
  int code = parse_args(argc, argv, &a);
  if (code >= 0)
    return code;
  code = CAL_EXIT_USAGE;
  if (!(base = cal_cmd_load_profile(CMD, a.o.base_name)) ||
      !(newp = cal_cmd_load_profile(CMD, a.o.new_name)))
    goto out;
  if (cal_compare_profiles(base->root, newp->root, &a.o, &rep, err, sizeof err) < 0) {
    fprintf(stderr, "calibrate compare: %s\n", err);
    goto out;
  }
  json_t *diffs = json_object_get(rep, "machine_differences");
  if (json_array_size(diffs) && !a.allow_diff) {
    fprintf(stderr, "calibrate compare: the profiles come from different "
                    "machines (--allow-different-machines to compare anyway):\n");
    cal_compare_each_diff(stderr, diffs, stderr_diff);
    goto out;
  }
  json_object_set_new(rep, "allow_different_machines", json_boolean(a.allow_diff));
  code = a.fmt == CAL_REPORT_JSON ? cal_cmd_write_json(CMD, rep, a.out_path)
                                  : write_text(rep, &a);
  if (code != CAL_EXIT_OK)
    goto out;
  int regressed = json_is_true(
      json_object_get(json_object_get(rep, "summary"), "regression"));
  if (regressed && a.warn_only)
    fprintf(stderr, "calibrate compare: regressions found; --warn-only, "
                    "exit status 0\n");
  code = regressed && !a.warn_only ? CAL_EXIT_REGRESSION : CAL_EXIT_OK;
out:
  json_decref(rep);
  cal_profile_free(base);
  cal_profile_free(newp);
  return code;
}
