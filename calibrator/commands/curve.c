#include "curve_cmd.h"
#include "profile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cal_err.h"
#include "commands.h"
#include "curve_csv.h"

#define PROG "calibrate peak"

static const char usage_text[] =
    "usage: calibrate peak FILE.csv [options]\n"
    "\n"
    "Find the peak, the knee and the shape of throughput-versus-batch-size\n"
    "curves.  FILE is CSV with a header naming batch_size and throughput\n"
    "(examples/s; aliases throughput_ex_per_s, examples_per_s), optionally\n"
    "machine (one curve per machine) and status (ok|skipped|failed).  Rows\n"
    "repeating a (machine, batch_size) are samples of one point.  '#' lines\n"
    "are comments.  FILE \"-\" reads standard input.\n"
    "\n"
    "options:\n"
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
    "                               standard output\n"
    "  -h, --help                   this text\n"
    "\n"
    "Shapes: rising (still rising at the largest batch: sweep further),\n"
    "plateau (flat within the tolerance past the peak), peaked (drops by\n"
    "more than the tolerance past the peak), single (one point).\n"
    "Exit status: 0 ok, 2 bad option or malformed input.\n";

typedef struct peak_args {
  const char *file;
  const char *output;
  int json;
  cal_curve_opts_t opts;
  int64_t target; /* 0: none */
} peak_args_t;

static int usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, PROG ": ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see calibrate peak --help)\n");
  va_end(ap);
  return CAL_EXIT_USAGE;
}

static int parse_percent(const char *s, double *frac) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno)
    return CAL_EINVAL;
  if (*end == '%')
    end++;
  if (*end != '\0' || !(v >= 0 && v < 100))
    return CAL_EINVAL;
  *frac = v / 100.0;
  return 0;
}

static int parse_batch(const char *s, int64_t *out) {
  int64_t v = 0;
  if (!*s)
    return CAL_EINVAL;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return CAL_EINVAL;
    v = v * 10 + (*p - '0');
    if (v > CAL_BATCH_MAX)
      return CAL_EINVAL;
  }
  if (v < 1)
    return CAL_EINVAL;
  *out = v;
  return 0;
}

/* Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, peak_args_t *a) {
  memset(a, 0, sizeof *a);
  cal_curve_opts_default(&a->opts);
  int only_files = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (a->file)
        return usage_error("more than one input file ('%s', then '%s')",
                           a->file, arg);
      a->file = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      only_files = 1;
      continue;
    }
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      fputs(usage_text, stdout);
      return CAL_EXIT_OK;
    }
    /* --name=value or --name value, -o value */
    char name[64];
    const char *val = NULL;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (len >= sizeof name)
      return usage_error("unknown option %s", arg);
    memcpy(name, arg, len);
    name[len] = '\0';
    int known = strcmp(name, "--format") == 0 ||
                strcmp(name, "--tolerance") == 0 ||
                strcmp(name, "--optimize") == 0 ||
                strcmp(name, "--target-effective-batch") == 0 ||
                strcmp(name, "--output") == 0 || strcmp(name, "-o") == 0;
    if (!known)
      return usage_error("unknown option %s", name);
    if (eq)
      val = eq + 1;
    else if (i + 1 < argc)
      val = argv[++i];
    else
      return usage_error("%s needs a value", name);

    if (strcmp(name, "--format") == 0) {
      if (strcmp(val, "json") == 0)
        a->json = 1;
      else if (strcmp(val, "table") == 0)
        a->json = 0;
      else
        return usage_error("--format must be table or json, not '%s'", val);
    } else if (strcmp(name, "--tolerance") == 0) {
      if (parse_percent(val, &a->opts.tolerance) < 0)
        return usage_error("--tolerance must be a percentage from 0 to "
                           "below 100 such as 3%%, not '%s'", val);
    } else if (strcmp(name, "--optimize") == 0) {
      if (cal_curve_policy_parse(val, &a->opts.policy) < 0)
        return usage_error("--optimize must be throughput or knee, not "
                           "'%s'", val);
    } else if (strcmp(name, "--target-effective-batch") == 0) {
      if (parse_batch(val, &a->target) < 0)
        return usage_error("--target-effective-batch must be a positive "
                           "integer up to 1073741824, not '%s'", val);
    } else {
      if (!*val)
        return usage_error("%s needs a file name", name);
      a->output = val;
    }
  }
  if (!a->file)
    return usage_error("no input file given");
  return -1;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

static json_t *num_or_null(double v) {
  return isfinite(v) ? json_real(v) : json_null();
}

static json_t *int_or_null(int64_t v) {
  return v > 0 ? json_integer((json_int_t)v) : json_null();
}

static json_t *point_json(const cal_curve_row_t *p) {
  json_t *o = json_object();
  if (!o)
    return NULL;
  json_object_set_new(o, "batch_size", json_integer((json_int_t)p->batch_size));
  json_object_set_new(o, "status",
                      json_string(p->status == CAL_POINT_OK ? "ok" : "skipped"));
  if (p->status != CAL_POINT_OK)
    return o;
  json_t *samples = json_array();
  for (size_t i = 0; samples && i < p->n; i++)
    json_array_append_new(samples, json_real(p->samples[i]));
  const cal_summary_t *s = &p->stats;
  json_object_set_new(o, "examples_per_s", json_real(s->median));
  json_object_set_new(o, "samples_examples_per_s", samples);
  json_object_set_new(
      o, "stats",
      json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "n",
                (json_int_t)s->n, "median", s->median, "mean", s->mean, "min",
                s->min, "max", s->max, "stddev", s->stddev, "mad", s->mad, "cv",
                s->cv, "ci_low", s->ci_low, "ci_high", s->ci_high, "ci_level",
                s->ci_level));
  json_object_set_new(o, "pct_of_peak", num_or_null(p->pct_of_peak));
  json_object_set_new(o, "tied_with_peak", json_boolean(p->tied));
  return o;
}

json_t *cal_curve_json(const char *machine, const cal_curve_result_t *r,
                            const cal_curve_rec_t *rec) {
  json_t *c = json_object();
  json_t *pts = json_array();
  json_t *tied = json_array();
  if (!c || !pts || !tied)
    goto fail;
  for (size_t i = 0; i < r->n; i++) {
    json_t *p = point_json(&r->points[i]);
    if (!p || json_array_append_new(pts, p) < 0)
      goto fail;
  }
  for (size_t i = 0; i < r->n_tied; i++)
    json_array_append_new(tied, json_integer((json_int_t)r->tied_batch_sizes[i]));
  int have = r->n_ok > 0;
  json_object_set_new(c, "machine", machine ? json_string(machine) : json_null());
  json_object_set_new(c, "points", pts);
  pts = NULL;
  json_object_set_new(c, "peak_batch_size", int_or_null(r->peak_batch_size));
  json_object_set_new(c, "peak_examples_per_s",
                      have ? json_real(r->peak_median) : json_null());
  json_object_set_new(c, "knee_batch_size", int_or_null(r->knee_batch_size));
  json_object_set_new(c, "optimal_batch_size",
                      int_or_null(r->optimal_batch_size));
  json_object_set_new(c, "optimize",
                      json_string(cal_curve_policy_name(r->policy)));
  json_object_set_new(c, "tolerance_pct", json_real(r->tolerance * 100.0));
  json_object_set_new(c, "shape", json_string(cal_curve_shape_name(r->shape)));
  json_object_set_new(c, "rise_pct", num_or_null(r->rise_pct));
  json_object_set_new(c, "degradation_pct", num_or_null(r->degradation_pct));
  json_object_set_new(c, "worst_drop_pct", num_or_null(r->worst_drop_pct));
  json_object_set_new(c, "worst_batch_size", int_or_null(r->worst_batch_size));
  json_object_set_new(c, "tied_batch_sizes", tied);
  tied = NULL;
  if (rec)
    json_object_set_new(
        c, "recommendation",
        json_pack("{s:I, s:o, s:o, s:o, s:b, s:s}", "target_effective_batch",
                  (json_int_t)rec->target_effective_batch, "batch_size",
                  int_or_null(rec->batch_size), "accumulation_steps",
                  int_or_null(rec->accumulation_steps), "effective_batch",
                  int_or_null(rec->effective_batch), "exact", rec->exact,
                  "note", rec->note));
  else
    json_object_set_new(c, "recommendation", json_null());
  return c;
fail:
  json_decref(c);
  json_decref(pts);
  json_decref(tied);
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Table                                                               */

#define BAR_CELLS 24

/* A bar of pct/100 * BAR_CELLS cells in eighths; pad: fill to BAR_CELLS. */
static void put_bar(FILE *f, double pct, int pad) {
  static const char *const eighths[] = {"",   "▏", "▎", "▍",
                                        "▌", "▋", "▊", "▉"};
  if (!isfinite(pct) || pct < 0)
    pct = 0;
  if (pct > 100)
    pct = 100;
  int units = (int)lround(pct / 100.0 * BAR_CELLS * 8);
  int cells = 0;
  for (; units >= 8; units -= 8, cells++)
    fputs("█", f);
  if (units > 0) {
    fputs(eighths[units], f);
    cells++;
  }
  for (; pad && cells < BAR_CELLS; cells++)
    fputc(' ', f);
}

static void fmt_ci(char *buf, size_t len, const cal_curve_row_t *p) {
  if (p->status != CAL_POINT_OK || p->n < 2)
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "[%.1f, %.1f] %.0f%%", p->stats.ci_low,
             p->stats.ci_high, p->stats.ci_level * 100.0);
}

static void print_curve(FILE *f, const char *label, const cal_curve_result_t *r,
                        const cal_curve_rec_t *rec) {
  int wb = 5, wm = 11, wn = 1, wc = 14;
  char buf[128];
  for (size_t i = 0; i < r->n; i++) {
    const cal_curve_row_t *p = &r->points[i];
    int w = snprintf(buf, sizeof buf, "%lld", (long long)p->batch_size);
    wb = w > wb ? w : wb;
    if (p->status != CAL_POINT_OK)
      continue;
    w = snprintf(buf, sizeof buf, "%.1f", p->stats.median);
    wm = w > wm ? w : wm;
    w = snprintf(buf, sizeof buf, "%zu", p->n);
    wn = w > wn ? w : wn;
    fmt_ci(buf, sizeof buf, p);
    w = (int)strlen(buf);
    wc = w > wc ? w : wc;
  }
  fprintf(f, "%s: %zu point%s, %s\n", label, r->n, r->n == 1 ? "" : "s",
          cal_curve_shape_name(r->shape));
  fprintf(f, "  %*s  %*s  %*s  %-*s  %6s\n", wb, "batch", wm, "median ex/s",
          wn, "n", wc, "CI of median", "%peak");
  for (size_t i = 0; i < r->n; i++) {
    const cal_curve_row_t *p = &r->points[i];
    if (p->status != CAL_POINT_OK) {
      fprintf(f, "  %*lld  %*s\n", wb, (long long)p->batch_size, wm,
              "skipped");
      continue;
    }
    fmt_ci(buf, sizeof buf, p);
    fprintf(f, "  %*lld  %*.1f  %*zu  %-*s  %5.1f%%  ", wb,
            (long long)p->batch_size, wm, p->stats.median, wn, p->n, wc, buf,
            p->pct_of_peak);
    char marks[96] = "";
    size_t ml = 0;
    if (p->is_peak)
      ml += (size_t)snprintf(marks + ml, sizeof marks - ml, "◀ peak");
    else if (p->tied)
      ml += (size_t)snprintf(marks + ml, sizeof marks - ml, "≈ tied with peak");
    if (p->is_knee)
      ml += (size_t)snprintf(marks + ml, sizeof marks - ml, "%sknee",
                             ml ? ", " : "");
    if (p->is_optimal && !(p->is_peak && r->policy == CAL_OPTIMIZE_THROUGHPUT))
      snprintf(marks + ml, sizeof marks - ml, "%soptimal", ml ? ", " : "");
    put_bar(f, p->pct_of_peak, marks[0] != '\0');
    if (marks[0])
      fprintf(f, "  %s", marks);
    fputc('\n', f);
  }

  if (r->shape == CAL_SHAPE_EMPTY) {
    fprintf(f, "  shape:     empty: no point was measured\n\n");
    return;
  }
  fprintf(f, "  peak:      batch %lld, %.1f examples/s\n",
          (long long)r->peak_batch_size, r->peak_median);
  fprintf(f, "  tied:      ");
  if (r->n_tied <= 1) {
    fprintf(f, "none (no other point's CI overlaps the peak's)\n");
  } else {
    for (size_t i = 0; i < r->n_tied; i++)
      fprintf(f, "%s%lld", i ? ", " : "", (long long)r->tied_batch_sizes[i]);
    fprintf(f, " (CIs overlap the peak's: indistinguishable)\n");
  }
  fprintf(f, "  knee:      batch %lld (smallest batch within %g%% of the "
             "peak)\n",
          (long long)r->knee_batch_size, r->tolerance * 100.0);
  fprintf(f, "  optimal:   batch %lld (optimize %s)\n",
          (long long)r->optimal_batch_size, cal_curve_policy_name(r->policy));

  const cal_curve_row_t *last = NULL, *prev = NULL;
  for (size_t i = 0; i < r->n; i++)
    if (r->points[i].status == CAL_POINT_OK) {
      prev = last;
      last = &r->points[i];
    }
  fprintf(f, "  shape:     %s: ", cal_curve_shape_name(r->shape));
  switch (r->shape) {
  case CAL_SHAPE_SINGLE:
    fprintf(f, "one point measured, nothing to compare it with\n");
    break;
  case CAL_SHAPE_RISING:
    fprintf(f, "%+.1f%% from batch %lld to batch %lld; try larger batches\n",
            r->rise_pct, (long long)prev->batch_size,
            (long long)last->batch_size);
    break;
  case CAL_SHAPE_PLATEAU:
    if (last->is_peak)
      fprintf(f, "%+.1f%% from batch %lld to batch %lld (within %g%% or "
                 "noise)\n",
              r->rise_pct, (long long)prev->batch_size,
              (long long)last->batch_size, r->tolerance * 100.0);
    else
      fprintf(f, "past the peak within %g%% or noise (batch %lld: %.1f%% "
                 "below the peak)\n",
              r->tolerance * 100.0, (long long)last->batch_size,
              r->degradation_pct);
    break;
  case CAL_SHAPE_PEAKED:
    fprintf(f, "degradation %.1f%% at batch %lld (worst %.1f%% at batch "
               "%lld)\n",
            r->degradation_pct, (long long)last->batch_size,
            r->worst_drop_pct, (long long)r->worst_batch_size);
    break;
  default:
    fputc('\n', f);
    break;
  }
  if (!rec)
    fprintf(f, "  recommend: batch %lld (--target-effective-batch N plans "
               "gradient accumulation)\n",
            (long long)r->optimal_batch_size);
  else if (rec->batch_size == 0)
    fprintf(f, "  recommend: none for effective batch %lld: %s\n",
            (long long)rec->target_effective_batch, rec->note);
  else
    fprintf(f, "  recommend: effective batch %lld = batch %lld x %lld "
               "accumulation step%s (%s)\n",
            (long long)rec->effective_batch, (long long)rec->batch_size,
            (long long)rec->accumulation_steps,
            rec->accumulation_steps == 1 ? "" : "s", rec->note);
  fputc('\n', f);
}

/* ------------------------------------------------------------------ */
/* Output                                                              */

/* Write buf to path atomically ("-": standard output), saying why not on
 * stderr.  CAL_EIO. */
static int write_atomic(const char *path, const char *buf, size_t len) {
  char err[512];
  int rc = cal_write_atomic(path, buf, len, err, sizeof err);
  if (rc < 0)
    fprintf(stderr, PROG ": %s\n", err);
  return rc;
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
  json_t *root = NULL;
  char *text = NULL;
  size_t text_len = 0;
  FILE *mem = NULL;
  int rc = cal_curves_load(a.file, &set, err, sizeof err);
  if (rc < 0) {
    fprintf(stderr, PROG ": %s\n", err);
    code = rc == CAL_ENOMEM ? CAL_EXIT_INTERNAL : CAL_EXIT_USAGE;
    goto out;
  }
  code = CAL_EXIT_INTERNAL;
  res = calloc(set->n, sizeof *res);
  recs = calloc(set->n, sizeof *recs);
  if (!res || !recs)
    goto nomem;
  const char *src = strcmp(a.file, "-") == 0 ? "<stdin>" : a.file;
  for (size_t i = 0; i < set->n; i++) {
    const cal_curve_t *c = &set->curves[i];
    rc = cal_curve_analyze(c->points, c->n, &a.opts, &res[i]);
    if (rc < 0) { /* the reader already validated every value */
      fprintf(stderr, PROG ": %s: %s: %s\n", src,
              c->machine ? c->machine : "curve", cal_strerror(rc));
      code = rc == CAL_ENOMEM ? CAL_EXIT_INTERNAL : CAL_EXIT_USAGE;
      goto out;
    }
    if (a.target && cal_curve_recommend(res[i], a.target, &recs[i]) < 0)
      goto nomem;
  }

  if (a.json) {
    root = json_pack("{s:s, s:s, s:f, s:s, s:[]}", "schema", CAL_CURVE_SCHEMA,
                     "source", src, "tolerance_pct", a.opts.tolerance * 100.0,
                     "optimize", cal_curve_policy_name(a.opts.policy), "curves");
    if (!root)
      goto nomem;
    json_t *curves = json_object_get(root, "curves");
    for (size_t i = 0; i < set->n; i++) {
      json_t *c = cal_curve_json(set->curves[i].machine, res[i],
                                      a.target ? &recs[i] : NULL);
      if (!c || json_array_append_new(curves, c) < 0)
        goto nomem;
    }
    text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    if (!text)
      goto nomem;
    size_t n = strlen(text);
    char *t = realloc(text, n + 2);
    if (!t)
      goto nomem;
    text = t;
    text[n] = '\n';
    text[n + 1] = '\0';
    text_len = n + 1;
  } else {
    mem = open_memstream(&text, &text_len);
    if (!mem)
      goto nomem;
    for (size_t i = 0; i < set->n; i++)
      print_curve(mem, set->curves[i].machine ? set->curves[i].machine : src,
                  res[i], a.target ? &recs[i] : NULL);
    if (fclose(mem) != 0) {
      mem = NULL;
      goto nomem;
    }
    mem = NULL;
  }
  code = write_atomic(a.output ? a.output : "-", text, text_len) < 0
             ? CAL_EXIT_USAGE
             : CAL_EXIT_OK;
  goto out;
nomem:
  fprintf(stderr, PROG ": out of memory\n");
  code = CAL_EXIT_INTERNAL;
out:
  if (mem)
    fclose(mem);
  free(text);
  json_decref(root);
  for (size_t i = 0; res && set && i < set->n; i++)
    cal_curve_result_free(res[i]);
  free(res);
  free(recs);
  cal_curve_set_free(set);
  return code;
}
