/* `calibrate curve FILE.csv` (also under its former name, `calibrate
 * peak`): parse the options, read the curves
 * (analysis/curve_csv.c), analyse them (bench/curve.c) and write a table
 * (report/curve_render.c) or JSON (profile/curve_json.c). */
#include "subcommands.h"
#include "curve_json.h"
#include "profile.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_esc.h"
#include "cal_out.h"
#include "cli.h"
#include "cal_exit.h"
#include "curve_csv.h"
#include "curve_render.h"
#include "opt_table.h"

/* The name messages use: the one the command was called by. */
#define CMD (a->cmd)

typedef struct peak_args {
  const char *cmd;            /* "curve", or "peak" as called */
  const cal_opt_cmd_t *table; /* the options under that name */
  const char *file;
  const char *output;
  int json;
  cal_curve_opts_t opts;
  int64_t target; /* 0: none */
} peak_args_t;

/* A percentage "3" or "3%" from 0 to below 100, as a fraction. */
static int parse_percent(const char *s, double *frac) {
  size_t len = strlen(s);
  char *num = strndup(s, len && s[len - 1] == '%' ? len - 1 : len);
  double v;
  int rc = CAL_EINVAL;
  if (num && cal_parse_double(num, 0, 100, &v) == 0 && v < 100) {
    *frac = v / 100.0;
    rc = 0;
  }
  free(num);
  return rc;
}

static int tolerance_opt(void *obj, const cal_opt_t *row, const char *val,
                         const char *cmd) {
  return parse_percent(val, &((peak_args_t *)obj)->opts.tolerance) < 0
             ? cal_opt_bad(cmd, row, val) : -1;
}

static int optimize_opt(void *obj, const cal_opt_t *row, const char *val,
                        const char *cmd) {
  return cal_curve_policy_parse(val, &((peak_args_t *)obj)->opts.policy) < 0
             ? cal_opt_bad(cmd, row, val) : -1;
}

static const cal_opt_choice_t formats[] = {{"table", 0}, {"json", 1},
                                           {NULL, 0}};
static const cal_opt_choice_t optimizes[] = {{"throughput", 0}, {"knee", 0},
                                             {NULL, 0}};

#define OFF(field) offsetof(peak_args_t, field)

static const cal_opt_t peak_rows[] = {
    {.type = CAL_OPT_ENUM, .name = "format", .arg = "table|json",
     .choices = formats, .off = OFF(json),
     .bad = "--format must be table or json, not '%s'",
     .help = "output format (default table)"},
    {.type = CAL_OPT_CALL, .name = "tolerance", .arg = "P", .set = tolerance_opt,
     .bad = "--tolerance must be a percentage from 0 to below 100 such as "
            "3%%, not '%s'",
     .help = "percent, e.g. 3 or 3%% (default 3%%): the\n"
             "knee is the smallest batch within P of\n"
             "the peak; drops and rises of P or less\n"
             "count as flat"},
    {.type = CAL_OPT_CALL, .name = "optimize", .arg = "throughput|knee",
     .set = optimize_opt, .choices = optimizes, .bad = "--optimize must be throughput or knee, not "
                                 "'%s'",
     .help = "optimal batch = peak or knee (default\nthroughput)"},
    {.type = CAL_OPT_COUNT, .name = "target-effective-batch", .arg = "N",
     .min = 1, .max = (double)CAL_BATCH_MAX, .off = OFF(target),
     .bad = "--target-effective-batch must be a positive integer up to "
            "1073741824, not '%s'",
     .help = "recommend batch b and accumulation steps\nN / b"},
    {.type = CAL_OPT_STRING, .name = "output", .letter = 'o', .arg = "FILE",
     .off = OFF(output),
     .help = "write there (atomically) instead of\n"
             "standard output ('-': standard output)"},
    CAL_OPT_LAST("this text"),
};

static const cal_opt_cmd_t peak_opts = {
    "curve",
    "Usage: calibrate curve FILE.csv [options]\n"
    "\n"
    "Find the peak, the knee and the shape of throughput-versus-batch-size\n"
    "curves (`calibrate peak`, its former name, is the same command; the\n"
    "compute peak is `calibrate peak-flops`).  FILE is CSV with a header naming batch_size and throughput\n"
    "(examples/s; aliases throughput_ex_per_s, examples_per_s), optionally\n"
    "machine (one curve per machine) and status (ok|skipped|failed).  Rows\n"
    "repeating a (machine, batch_size) are samples of one point.  '#' lines\n"
    "are comments.  FILE \"-\" reads standard input.\n"
    "\n"
    "Options:\n",
    {{peak_rows, 31, CAL_OPT_FLAT}},
    "\n"
    "Shapes: rising (still rising at the largest batch: sweep further),\n"
    "plateau (flat within the tolerance past the peak), peaked (drops by\n"
    "more than the tolerance past the peak), single (one point).\n"
    "\n"
    "Exit status:\n"
    "  0  success\n" CAL_HELP_EXIT_COMMON,
};

/* The option at argv[*i] ("--name=value", "--name value", "-o value");
 * -1 to go on, else the exit code.  Names are exact (no prefixes). */
static int parse_option(int argc, char **argv, int *i, peak_args_t *a) {
  const char *arg = argv[*i];
  char name[64];
  const char *eq = strchr(arg, '=');
  size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
  if (len >= sizeof name)
    return cal_usage(CMD, "unknown option %s", arg);
  memcpy(name, arg, len);
  name[len] = '\0';
  const cal_opt_t *row = cal_opt_find(a->table, name);
  if (!row || !cal_opt_takes_value(row))
    return cal_usage(CMD, "unknown option %s", name);
  const char *val = eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : NULL;
  if (!val)
    return cal_usage(CMD, "%s needs a value", name);
  if (row->off == OFF(output) && !*val)
    return cal_usage(CMD, "%s needs a file name", name);
  return cal_opt_take(a->table, row, a, val, name);
}

/* Returns -1 to go on, else the exit code.  Options and the file may come
 * in any order; "--" ends the options, "-" is standard input. */
static int parse_args(int argc, char **argv, peak_args_t *a,
                      const cal_opt_cmd_t *t) {
  memset(a, 0, sizeof *a);
  a->cmd = t->cmd;
  a->table = t;
  cal_curve_opts_default(&a->opts);
  int only_files = 0, code;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (a->file)
        return cal_usage(CMD, "more than one input file ('%s', then '%s')",
                           a->file, arg);
      a->file = arg;
    } else if (strcmp(arg, "--") == 0) {
      only_files = 1;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0 ||
               strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0 ||
               strcmp(arg, "--complete-values") == 0) {
      return cal_opt_take(t, cal_opt_find(t, arg), a, NULL, arg);
    } else if ((code = parse_option(argc, argv, &i, a)) >= 0) {
      return code;
    }
  }
  if (!a->file)
    return cal_usage(CMD, "no input file given");
  return -1;
}

/* Write buf to path atomically ("-": standard output), saying why not on
 * stderr.  CAL_EIO. */
static int write_atomic(const char *cmd, const char *path, const char *buf,
                        size_t len) {
  char err[512];
  int rc = cal_write_atomic(path, buf, len, err, sizeof err);
  if (rc < 0)
    cal_usage(cmd, "%s", err);
  return rc;
}

/* The JSON document written as it is made, through the one writer:
 * never the whole tree nor its whole text in memory. */
typedef struct json_out {
  cal_out_t o;
  char err[512];
} json_out_t;

static int json_sink(void *ctx, const char *text, size_t len) {
  json_out_t *j = ctx;
  return cal_out_write(&j->o, text, len, j->err, sizeof j->err);
}

/* Write the document to a->output (stdout when none): an exit code. */
static int write_json(const peak_args_t *a, const char *src,
                      const cal_curve_set_t *set, cal_curve_result_t **res,
                      const cal_curve_rec_t *recs) {
  const char **machines = calloc(set->n ? set->n : 1, sizeof *machines);
  json_out_t *j = calloc(1, sizeof *j);
  int rc = CAL_ENOMEM;
  if (machines && j &&
      (rc = cal_out_open(&j->o, a->output ? a->output : "-", 0, j->err,
                         sizeof j->err)) == 0) {
    for (size_t i = 0; i < set->n; i++)
      machines[i] = set->curves[i].machine;
    rc = cal_curve_doc_write(src, &a->opts, machines, res,
                             a->target ? recs : NULL, set->n, json_sink, j);
    if (rc == 0)
      rc = cal_out_commit(&j->o, j->err, sizeof j->err);
    else
      cal_out_abort(&j->o);
  }
  int code = rc == 0             ? CAL_EXIT_OK
             : rc == CAL_ENOMEM ? cal_fail(CMD, CAL_EXIT_INTERNAL,
                                           "out of memory")
                                : cal_usage(CMD, "%s", j->err);
  free(machines);
  free(j);
  return code;
}

/* The tables of every curve as text; NULL when out of memory. */
static char *table_text(const peak_args_t *a, const char *src,
                        const cal_curve_set_t *set, cal_curve_result_t **res,
                        const cal_curve_rec_t *recs, size_t *len) {
  char *text = NULL;
  FILE *mem = open_memstream(&text, len);
  if (!mem)
    return NULL;
  for (size_t i = 0; i < set->n; i++)
    cal_curve_render(mem, set->curves[i].machine ? set->curves[i].machine : src,
                     res[i], a->target ? &recs[i] : NULL);
  if (fclose(mem) != 0) {
    free(text);
    return NULL;
  }
  if (cal_esc_needed(text, *len, CAL_ESC_KEEP_LINES)) { /* machine names */
    char *safe = cal_esc_text(text, *len, CAL_ESC_KEEP_LINES, len);
    free(text);
    text = safe;
  }
  return text;
}

int cal_cmd_curve(int argc, char **argv) {
  /* called as `peak`, the messages and the help's errors say so */
  cal_opt_cmd_t t = peak_opts;
  if (strcmp(argv[0], "peak") == 0)
    t.cmd = "peak";
  peak_args_t a;
  int code = parse_args(argc, argv, &a, &t);
  if (code >= 0)
    return code;

  char err[512];
  cal_curve_set_t *set = NULL;
  cal_curve_result_t **res = NULL;
  cal_curve_rec_t *recs = NULL;
  char *text = NULL;
  size_t text_len = 0;
  int rc = cal_curves_load(a.file, &set, err, sizeof err);
  if (rc < 0) {
    code = cal_fail(a.cmd, rc == CAL_ENOMEM ? CAL_EXIT_INTERNAL : CAL_EXIT_USAGE,
                    "%s", err);
    goto out;
  }
  res = calloc(set->n, sizeof *res);
  recs = calloc(set->n, sizeof *recs);
  if (!res || !recs)
    goto nomem;
  const char *src = strcmp(a.file, "-") == 0 ? "<stdin>" : a.file;
  for (size_t i = 0; i < set->n; i++) {
    const cal_curve_t *c = &set->curves[i];
    rc = cal_curve_analyze(c->points, c->n, &a.opts, &res[i]);
    if (rc < 0) { /* the reader already validated every value */
      code = cal_fail(a.cmd, rc == CAL_ENOMEM ? CAL_EXIT_INTERNAL
                                            : CAL_EXIT_USAGE,
                      "%s: %s: %s", src, c->machine ? c->machine : "curve",
                      cal_strerror(rc));
      goto out;
    }
    if (a.target && cal_curve_recommend(res[i], a.target, &recs[i]) < 0)
      goto nomem;
  }
  if (a.json) {
    code = write_json(&a, src, set, res, recs);
    goto out;
  }
  text = table_text(&a, src, set, res, recs, &text_len);
  if (!text)
    goto nomem;
  code = write_atomic(a.cmd, a.output ? a.output : "-", text, text_len) < 0
             ? CAL_EXIT_USAGE
             : CAL_EXIT_OK;
  goto out;
nomem:
  code = cal_fail(a.cmd, CAL_EXIT_INTERNAL, "out of memory");
out:
  free(text);
  for (size_t i = 0; res && set && i < set->n; i++)
    cal_curve_result_free(res[i]);
  free(res);
  free(recs);
  cal_curve_set_free(set);
  return code;
}
