/* `calibrate export --format bmf|gab|gab-smaller PROFILE`: parse the
 * options, load the profile, build the export (analysis/export.c) and
 * write it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "subcommands.h"
#include "cal_err.h"
#include "cal_exit.h"
#include "export.h"
#include "opt_table.h"
#include "profile.h"

#define CMD "export"

/* The formats: kind -1 is BMF, else cal_export_gab's `bigger`. */
static const cal_opt_choice_t formats[] = {
    {"bmf", -1}, {"gab", 1}, {"gab-smaller", 0}, {NULL, 0}};

typedef struct export_args {
  const char *format, *out_path;
} export_args_t;

#define OFF(field) offsetof(export_args_t, field)

static const cal_opt_t export_rows[] = {
    {.type = CAL_OPT_TEXT,
     .help = "  bmf          Bencher Metric Format: {point id: {metric: {value,\n"
             "               lower_value, upper_value}}}, median and its CI\n"
             "  gab          github-action-benchmark, tool customBiggerIsBetter:\n"
             "               the points where higher is better\n"
             "  gab-smaller  github-action-benchmark, tool "
             "customSmallerIsBetter:\n"
             "               the points where lower is better (times)\n"},
    /* checked after the parse: a missing --format is an error too */
    {.type = CAL_OPT_STRING, .name = "format", .letter = 'f', .arg = "F",
     .off = OFF(format), .choices = formats,
     .bad = "--format %s: use --format bmf, gab or gab-smaller"},
    {.type = CAL_OPT_STRING, .name = "output", .letter = 'o', .arg = "FILE",
     .off = OFF(out_path), .def = "-",
     .help = "write there atomically ('-' or no -o:\nstandard output)"},
    CAL_OPT_LAST("show this help"),
};

static const cal_opt_cmd_t export_opts = {
    CMD,
    "Usage: calibrate export --format bmf|gab|gab-smaller PROFILE.json "
    "[-o FILE]\n\n"
    "Write a profile's points for continuous-benchmarking services:\n",
    {{export_rows, 15, 0}},
    "\nExit status:\n"
    "  0  success\n" CAL_HELP_EXIT_COMMON,
};

/* The kind of a --format value; -2 when none was given, -3 unknown. */
static int format_kind(const char *format) {
  if (!format)
    return -2;
  for (const cal_opt_choice_t *f = formats; f->name; f++)
    if (strcmp(format, f->name) == 0)
      return f->value;
  return -3;
}

int cal_cmd_export(int argc, char **argv) {
  export_args_t args = {NULL, NULL};
  int first, code;
  cal_profile_t *p = NULL;
  json_t *out = NULL;

  cal_opt_defaults(&export_opts, &args);
  if ((code = cal_opt_parse(&export_opts, &args, argc, argv, &first)) >= 0)
    return code;
  code = CAL_EXIT_USAGE;
  const char *format = args.format, *out_path = args.out_path;
  int kind = format_kind(format);
  if (kind < -1)
    return cal_usage(CMD, "%s%s: use --format bmf, gab or gab-smaller",
                     format ? "--format " : "no --format given",
                     format ? format : "");
  if (argc - first != 1)
    return cal_usage(CMD, "need one profile");
  if (!(p = cal_cmd_load_profile(CMD, argv[first])))
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
                     "(use --format %s)", argv[first],
                     kind ? "higher-is-better" : "lower-is-better", format,
                     kind ? "gab-smaller" : "gab");
    goto out;
  }
  if (kind < 0 && json_object_size(out) == 0) { /* the same for BMF */
    code = cal_usage(CMD, "%s holds no figure: nothing to export as bmf",
                     argv[first]);
    goto out;
  }
  code = cal_cmd_write_json(CMD, out, out_path);
out:
  json_decref(out);
  cal_profile_free(p);
  return code;
}
