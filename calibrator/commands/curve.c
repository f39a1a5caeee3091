/* `calibrate peak FILE.csv`: parse the options, read the curves
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
#include "cli.h"
#include "cal_exit.h"
#include "curve_csv.h"
#include "curve_render.h"

#define CMD "peak"

static const char usage_text[] =
    "Usage: calibrate peak FILE.csv [options]\n"
    "\n"
    "Find the peak, the knee and the shape of throughput-versus-batch-size\n"
    "curves.  FILE is CSV with a header naming batch_size and throughput\n"
    "(examples/s; aliases throughput_ex_per_s, examples_per_s), optionally\n"
    "machine (one curve per machine) and status (ok|skipped|failed).  Rows\n"
    "repeating a (machine, batch_size) are samples of one point.  '#' lines\n"
    "are comments.  FILE \"-\" reads standard input.\n"
    "\n"
    "Options:\n"
    "  --format table|json          output format (default table)\n"
    "  --tolerance P                percent, e.g. 3 or 3% (default 3%): the\n"
    "                               knee is the smallest batch within P of\n"
    "                               the peak; drops and rises of P or less\n"
    "                               count as flat\n"
    "  --optimize throughput|knee   optimal batch = peak or knee (default\n"
    "                               throughput)\n"
    "  --target-effective-batch N   recommend batch b and accumulation steps\n"
    "                               N / b\n"
    "  -o, --output FILE            write there (atomically) instead of\n"
    "                               standard output ('-': standard output)\n"
    "  -h, --help                   this text\n"
    "  -V, --version                show the version\n"
    "\n"
    "Shapes: rising (still rising at the largest batch: sweep further),\n"
    "plateau (flat within the tolerance past the peak), peaked (drops by\n"
    "more than the tolerance past the peak), single (one point).\n"
    "\n"
    "Exit status:\n"
    "  0  success\n" CAL_HELP_EXIT_COMMON;

typedef struct peak_args {
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

/* A batch size written with digits only, 1 .. CAL_BATCH_MAX. */
static int parse_batch(const char *s, int64_t *out) {
  long v;
  if (*s < '0' || *s > '9' || cal_parse_long(s, 1, CAL_BATCH_MAX, &v) < 0)
    return CAL_EINVAL;
  *out = v;
  return 0;
}

/* The options that take a value: one handler each, returning -1 to go on
 * or the exit code. */
typedef int (*peak_opt_fn)(const char *name, const char *val, peak_args_t *a);

static int opt_format(const char *name, const char *val, peak_args_t *a) {
  if (strcmp(val, "json") == 0)
    a->json = 1;
  else if (strcmp(val, "table") == 0)
    a->json = 0;
  else
    return cal_usage(CMD, "--format must be table or json, not '%s'", val);
  return -1;
}

static int opt_tolerance(const char *name, const char *val, peak_args_t *a) {
  if (parse_percent(val, &a->opts.tolerance) < 0)
    return cal_usage(CMD, "--tolerance must be a percentage from 0 to "
                       "below 100 such as 3%%, not '%s'", val);
  return -1;
}

static int opt_optimize(const char *name, const char *val, peak_args_t *a) {
  if (cal_curve_policy_parse(val, &a->opts.policy) < 0)
    return cal_usage(CMD, "--optimize must be throughput or knee, not "
                       "'%s'", val);
  return -1;
}

static int opt_target(const char *name, const char *val, peak_args_t *a) {
  if (parse_batch(val, &a->target) < 0)
    return cal_usage(CMD, "--target-effective-batch must be a positive "
                       "integer up to 1073741824, not '%s'", val);
  return -1;
}

static int opt_output(const char *name, const char *val, peak_args_t *a) {
  if (!*val)
    return cal_usage(CMD, "%s needs a file name", name);
  a->output = val;
  return -1;
}

static const struct {
  const char *name;
  peak_opt_fn fn;
} peak_opts[] = {
    {"--format", opt_format},
    {"--tolerance", opt_tolerance},
    {"--optimize", opt_optimize},
    {"--target-effective-batch", opt_target},
    {"--output", opt_output},
    {"-o", opt_output},
};

static peak_opt_fn find_option(const char *name) {
  for (size_t k = 0; k < sizeof peak_opts / sizeof peak_opts[0]; k++)
    if (strcmp(name, peak_opts[k].name) == 0)
      return peak_opts[k].fn;
  return NULL;
}

/* The option at argv[*i] ("--name=value", "--name value", "-o value");
 * -1 to go on, else the exit code. */
static int parse_option(int argc, char **argv, int *i, peak_args_t *a) {
  const char *arg = argv[*i];
  char name[64];
  const char *eq = strchr(arg, '=');
  size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
  if (len >= sizeof name)
    return cal_usage(CMD, "unknown option %s", arg);
  memcpy(name, arg, len);
  name[len] = '\0';
  peak_opt_fn fn = find_option(name);
  if (!fn)
    return cal_usage(CMD, "unknown option %s", name);
  if (eq)
    return fn(name, eq + 1, a);
  if (*i + 1 < argc)
    return fn(name, argv[++*i], a);
  return cal_usage(CMD, "%s needs a value", name);
}

/* Returns -1 to go on, else the exit code.  Options and the file may come
 * in any order; "--" ends the options, "-" is standard input. */
static int parse_args(int argc, char **argv, peak_args_t *a) {
  memset(a, 0, sizeof *a);
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
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      fputs(usage_text, stdout);
      return CAL_EXIT_OK;
    } else if (strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0) {
      return cal_print_version();
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
static int write_atomic(const char *path, const char *buf, size_t len) {
  char err[512];
  int rc = cal_write_atomic(path, buf, len, err, sizeof err);
  if (rc < 0)
    cal_usage(CMD, "%s", err);
  return rc;
}

/* The JSON document as text with a final newline; NULL when out of
 * memory. */
static char *json_text(const peak_args_t *a, const char *src,
                       const cal_curve_set_t *set, cal_curve_result_t **res,
                       const cal_curve_rec_t *recs, size_t *len) {
  const char **machines = calloc(set->n ? set->n : 1, sizeof *machines);
  json_t *root = NULL;
  char *text = NULL;
  if (!machines)
    goto out;
  for (size_t i = 0; i < set->n; i++)
    machines[i] = set->curves[i].machine;
  root = cal_curve_doc_json(src, &a->opts, machines, res,
                            a->target ? recs : NULL, set->n);
  if (!root || !(text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10))))
    goto out;
  size_t n = strlen(text);
  char *t = realloc(text, n + 2);
  if (!t) {
    free(text);
    text = NULL;
    goto out;
  }
  text = t;
  text[n] = '\n';
  text[n + 1] = '\0';
  *len = n + 1;
out:
  free(machines);
  json_decref(root);
  return text;
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
  return text;
}

int cal_cmd_peak(int argc, char **argv) {
  peak_args_t a;
  int code = parse_args(argc, argv, &a);
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
    code = cal_fail(CMD, rc == CAL_ENOMEM ? CAL_EXIT_INTERNAL : CAL_EXIT_USAGE,
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
      code = cal_fail(CMD, rc == CAL_ENOMEM ? CAL_EXIT_INTERNAL
                                            : CAL_EXIT_USAGE,
                      "%s: %s: %s", src, c->machine ? c->machine : "curve",
                      cal_strerror(rc));
      goto out;
    }
    if (a.target && cal_curve_recommend(res[i], a.target, &recs[i]) < 0)
      goto nomem;
  }
  text = a.json ? json_text(&a, src, set, res, recs, &text_len)
                : table_text(&a, src, set, res, recs, &text_len);
  if (!text)
    goto nomem;
  code = write_atomic(a.output ? a.output : "-", text, text_len) < 0
             ? CAL_EXIT_USAGE
             : CAL_EXIT_OK;
  goto out;
nomem:
  code = cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
out:
  free(text);
  for (size_t i = 0; res && set && i < set->n; i++)
    cal_curve_result_free(res[i]);
  free(res);
  free(recs);
  cal_curve_set_free(set);
  return code;
}
