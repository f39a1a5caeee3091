/* `calibrate export --format bmf|gab|gab-smaller PROFILE`: parse the
 * options, load the profile, build the export (analysis/export.c) and
 * write it. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "subcommands.h"
#include "cal_err.h"
#include "cal_exit.h"
#include "export.h"
#include "profile.h"

#define CMD "export"

static void export_usage(FILE *f) {
  fprintf(f,
          "Usage: calibrate export --format bmf|gab|gab-smaller PROFILE.json "
          "[-o FILE]\n\n"
          "Write a profile's points for continuous-benchmarking services:\n"
          "  bmf          Bencher Metric Format: {point id: {metric: {value,\n"
          "               lower_value, upper_value}}}, median and its CI\n"
          "  gab          github-action-benchmark, tool customBiggerIsBetter:\n"
          "               the points where higher is better\n"
          "  gab-smaller  github-action-benchmark, tool customSmallerIsBetter:\n"
          "               the points where lower is better (times)\n"
          "  -o, --output FILE  write there atomically ('-' or no -o:\n"
          "               standard output)\n"
          "  -h, --help   show this help\n"
          "  -V, --version  show the version\n\n"
          "Exit status:\n"
          "  0  success\n" CAL_HELP_EXIT_COMMON);
}

/* The formats: kind -1 is BMF, else cal_export_gab's `bigger`. */
static const struct {
  const char *name;
  int kind;
} formats[] = {{"bmf", -1}, {"gab", 1}, {"gab-smaller", 0}};

static const struct option longopts[] = {
    {"format", required_argument, NULL, 'f'},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* The kind of a --format value; -2 when none was given, -3 unknown. */
static int format_kind(const char *format) {
  if (!format)
    return -2;
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (strcmp(format, formats[i].name) == 0)
      return formats[i].kind;
  return -3;
}

int cal_cmd_export(int argc, char **argv) {
  const char *format = NULL, *out_path = "-";
  int c, code = CAL_EXIT_USAGE;
  cal_profile_t *p = NULL;
  json_t *out = NULL;

  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":hVf:o:", longopts, NULL)) != -1) {
    switch (c) {
    case 'f': format = optarg; break;
    case 'o': out_path = optarg; break;
    case 'h': export_usage(stdout); return CAL_EXIT_OK;
    case 'V': return cal_print_version();
    default: return cal_cmd_getopt_error(CMD, c, argv);
    }
  }
  int kind = format_kind(format);
  if (kind < -1)
    return cal_usage(CMD, "%s%s: use --format bmf, gab or gab-smaller",
                     format ? "--format " : "no --format given",
                     format ? format : "");
  if (argc - optind != 1)
    return cal_usage(CMD, "need one profile");
  if (!(p = cal_cmd_load_profile(CMD, argv[optind])))
    goto out;
  code = CAL_EXIT_INTERNAL;
  const cal_profile_view_t *v = cal_profile_view(p);
  out = !v ? NULL : kind < 0 ? cal_export_view_bmf(v) : cal_export_view_gab(v, kind);
  if (!out) {
    cal_fail(CMD, code, "out of memory");
    goto out;
  }
  if (kind >= 0 && json_array_size(out) == 0) {
    /* an empty list would make the tracking job pass while tracking
     * nothing */
    code = cal_usage(CMD, "%s holds no %s figure: nothing to export as %s "
                     "(use --format %s)", argv[optind],
                     kind ? "higher-is-better" : "lower-is-better", format,
                     kind ? "gab-smaller" : "gab");
    goto out;
  }
  code = cal_cmd_write_json(CMD, out, out_path);
out:
  json_decref(out);
  cal_profile_free(p);
  return code;
}
