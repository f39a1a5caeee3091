/* libcalibrate's public API (include/calibrate/calibrate.h): a thin layer
 * over the code the program runs, compiled once into cal_libcode:
 * profile loading and validation (profile.c), batch-curve analysis
 * (curve.c) and the split of `calibrate plan` (plan_math.c).  Only the
 * functions marked CALIBRATE_API leave the shared library. */
#include "calibrate/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "curve.h"
#include "plan_math.h"
#include "profile.h"
#include "view.h"

/* The public statuses are the internal codes under other names. */
_Static_assert((int)CAL_FAIL_NOMEM == (int)CAL_ENOMEM, "status NOMEM");
_Static_assert((int)CAL_FAIL_INVAL == (int)CAL_EINVAL, "status INVAL");
_Static_assert((int)CAL_FAIL_IO == (int)CAL_EIO, "status IO");
_Static_assert((int)CAL_FAIL_PARSE == (int)CAL_EPARSE, "status PARSE");
_Static_assert((int)CAL_FAIL_SCHEMA == (int)CAL_ESCHEMA, "status SCHEMA");
_Static_assert((int)CAL_FAIL_NOTFOUND == (int)CAL_ENOTFOUND, "status NOTFOUND");

#define STR_(x) #x
#define STR(x) STR_(x)

struct cal_machine {
  cal_profile_t *prof;
};

struct cal_batchcurve {
  cal_curve_result_t *res;
};

struct cal_worksplit {
  size_t n;
  cal_split_entry_t *ent;
  cal_split_t sp;
};

const char *cal_status_message(int status) {
  return status == 0 ? "success" : cal_strerror(status);
}

int cal_version_number(void) { return CALIBRATE_VERSION_NUMBER; }

const char *cal_version_string(void) {
  return STR(CALIBRATE_VERSION_MAJOR) "." STR(CALIBRATE_VERSION_MINOR) "." STR(
      CALIBRATE_VERSION_PATCH);
}

/* ---- profiles ---------------------------------------------------------- */

/* err may be NULL: the loader always has somewhere to write. */
static int load_done(int rc, cal_profile_t *p, cal_machine_t **out,
                     const char *why, char *err, size_t errlen) {
  if (rc == 0) {
    cal_machine_t *m = malloc(sizeof *m);
    if (!m) {
      cal_profile_free(p);
      why = "out of memory";
      rc = CAL_ENOMEM;
    } else {
      m->prof = p;
      *out = m;
      return 0;
    }
  }
  if (err && errlen)
    snprintf(err, errlen, "%s", why);
  return rc;
}

/* The handle cleared and the arguments there: 0, else CAL_EINVAL said
 * ("no WHAT or no handle given"). */
static int load_start(const void *in, cal_machine_t **out, const char *what,
                      char *err, size_t errlen) {
  char why[64];
  if (out)
    *out = NULL;
  if (in && out)
    return 0;
  snprintf(why, sizeof why, "no %s or no handle given", what);
  return load_done(CAL_EINVAL, NULL, out, why, err, errlen);
}

int cal_machine_load(const char *path, cal_machine_t **out, char *err,
                     size_t errlen) {
  char why[512] = "";
  cal_profile_t *p = NULL;
  int rc = load_start(path, out, "path", err, errlen);
  if (rc < 0)
    return rc;
  rc = cal_profile_load(path, &p, why, sizeof why);
  return load_done(rc, p, out, why, err, errlen);
}

int cal_machine_parse(const char *text, size_t len, const char *name,
                      cal_machine_t **out, char *err, size_t errlen) {
  char why[512] = "";
  cal_profile_t *p = NULL;
  int rc = load_start(text, out, "text", err, errlen);
  if (rc < 0)
    return rc;
  rc = cal_profile_parse(text, len, name ? name : "<memory>", &p, why,
                         sizeof why);
  return load_done(rc, p, out, why, err, errlen);
}

void cal_machine_free(cal_machine_t *m) {
  if (!m)
    return;
  cal_profile_free(m->prof);
  free(m);
}

const char *cal_machine_path(const cal_machine_t *m) {
  return m ? m->prof->path : "";
}

/* The profile's view; built at load, so NULL only if memory ran out
 * then (the callers answer CAL_ENOMEM). */
static const cal_profile_view_t *view_of(const cal_machine_t *m) {
  return cal_profile_view(m->prof);
}

const char *cal_machine_name(const cal_machine_t *m) {
  if (!m)
    return "";
  const cal_profile_view_t *v = view_of(m);
  const char *s = v ? v->device_name : NULL;
  return s && *s ? s : m->prof->path;
}

/* A positive finite number, else NaN. */
static double figure(const cal_vnum_t *n) {
  return n && isfinite(n->v) && n->v > 0 ? n->v : NAN;
}

int cal_machine_gflops(const cal_machine_t *m, const char *dtype,
                       double *all_cores, double *per_core) {
  if (!m)
    return CAL_EINVAL;
  const cal_profile_view_t *v = view_of(m);
  if (!v)
    return CAL_ENOMEM;
  double all, one;
  if (!dtype) {
    all = figure(&v->gflops);
    one = figure(&v->gflops_per_core);
  } else {
    const cal_vgemm_dtype_t *d = cal_vgemm_dtype(&v->gemm, dtype);
    all = figure(d ? &d->best_gflops_all_threads : NULL);
    one = figure(d ? &d->best_gflops_1_thread : NULL);
  }
  if (all_cores)
    *all_cores = all;
  if (per_core)
    *per_core = one;
  return isnan(all) && isnan(one) ? CAL_ENOTFOUND : 0;
}

int cal_machine_throughput(const cal_machine_t *m, int64_t *batch,
                           double *examples_per_s) {
  if (!m)
    return CAL_EINVAL;
  const cal_profile_view_t *v = view_of(m);
  if (!v)
    return CAL_ENOMEM;
  int64_t bs = v->optimal_batch_size.is_int ? v->optimal_batch_size.i : 0;
  double thr = figure(&v->throughput);
  if (batch)
    *batch = bs;
  if (examples_per_s)
    *examples_per_s = thr;
  return bs == 0 && isnan(thr) ? CAL_ENOTFOUND : 0;
}

int cal_machine_memory(const cal_machine_t *m, double *bytes) {
  if (!m)
    return CAL_EINVAL;
  const cal_profile_view_t *pv = view_of(m);
  if (!pv)
    return CAL_ENOMEM;
  double v = figure(&pv->machine.memory.available_bytes);
  if (isnan(v))
    v = figure(&pv->memory_gb) * 1e9;
  if (bytes)
    *bytes = v;
  return isnan(v) ? CAL_ENOTFOUND : 0;
}

int cal_memory_need(double params, const char *dtype, const char *training,
                    int64_t batch, double act_per_example, double lora_params,
                    cal_memory_need_t *out) {
  cal_dtype_t d;
  cal_training_t t;
  if (!out)
    return CAL_EINVAL;
  memset(out, 0, sizeof *out);
  if (!dtype || !training || cal_dtype_parse(dtype, &d) < 0 ||
      cal_training_parse(training, &t) < 0)
    return CAL_EINVAL;
  cal_mem_assume_t a;
  cal_mem_assume_default(t, &a);
  a.activation_fraction = 0; /* never assumed: given, or left out */
  a.activation_bytes_per_example = act_per_example;
  a.lora_params = lora_params;
  cal_mem_need_t m;
  int rc = cal_plan_memory(params, d, t, batch, &a, &m);
  if (rc < 0)
    return rc;
  *out = (cal_memory_need_t){m.weights_bytes, m.master_bytes,
                             m.gradients_bytes, m.optimizer_bytes,
                             m.activations_bytes, m.total_bytes};
  return 0;
}

/* ---- batch curves ------------------------------------------------------ */

static int by_batch(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0])
                      : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Rows of (batch, throughput) grouped into points of cal_curve_analyze:
 * pts[] borrows slices of the sorted samples. */
static int analyze_rows(const int64_t *batch, const double *thr,
                        const int *ok, size_t n, const cal_curve_opts_t *o,
                        cal_batchcurve_t **out) {
  int rc = CAL_ENOMEM;
  size_t np = 0;
  double *samp = NULL;
  cal_curve_point_t *pts = NULL;
  int64_t (*keyed)[2] = NULL;
  cal_batchcurve_t *c = NULL;
  if (!(keyed = malloc(n * sizeof *keyed)) ||
      !(samp = malloc(n * sizeof *samp)) || !(pts = calloc(n, sizeof *pts)) ||
      !(c = calloc(1, sizeof *c)))
    goto out;
  for (size_t i = 0; i < n; i++) {
    keyed[i][0] = batch[i];
    keyed[i][1] = (int64_t)i;
  }
  /* by batch, then row: samples keep the order they were given in */
  qsort(keyed, n, sizeof *keyed, by_batch);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    cal_curve_point_t *p = &pts[np++];
    p->batch_size = keyed[i][0];
    p->samples = samp + i;
    p->n = 0;
    p->status = CAL_POINT_SKIPPED;
    for (; j < n && keyed[j][0] == keyed[i][0]; j++) {
      size_t r = (size_t)keyed[j][1];
      if (ok && !ok[r])
        continue;
      samp[i + p->n++] = thr[r];
      p->status = CAL_POINT_OK;
    }
    i = j;
  }
  rc = cal_curve_analyze(pts, np, o, &c->res);
out:
  free(keyed);
  free(samp);
  free(pts);
  if (rc < 0) {
    free(c);
    c = NULL;
  }
  *out = c;
  return rc;
}

int cal_batchcurve_analyze(const int64_t *batch_sizes,
                           const double *examples_per_s, size_t n,
                           double tolerance_pct, int pick,
                           cal_batchcurve_t **out) {
  cal_curve_opts_t o;
  if (!out)
    return CAL_EINVAL;
  *out = NULL;
  if (!batch_sizes || !examples_per_s || n == 0 || isnan(tolerance_pct) ||
      tolerance_pct >= 100 || (pick != CAL_PICK_PEAK && pick != CAL_PICK_KNEE))
    return CAL_EINVAL;
  cal_curve_opts_default(&o);
  if (tolerance_pct >= 0)
    o.tolerance = tolerance_pct / 100;
  o.policy = pick == CAL_PICK_KNEE ? CAL_OPTIMIZE_KNEE
                                   : CAL_OPTIMIZE_THROUGHPUT;
  return analyze_rows(batch_sizes, examples_per_s, NULL, n, &o, out);
}

int cal_machine_curve(const cal_machine_t *m, const char *mode,
                      cal_batchcurve_t **out) {
  if (!out)
    return CAL_EINVAL;
  *out = NULL;
  if (!m)
    return CAL_EINVAL;
  const cal_profile_view_t *v = view_of(m);
  if (!v)
    return CAL_ENOMEM;
  const cal_vbatch_sweep_t *sweep = &v->batch_sweep;
  const cal_vbatch_mode_t *md = NULL;
  if (mode) {
    md = cal_vbatch_mode(sweep, mode);
  } else {
    const char *const order[] = {sweep->top_level_mode, "prefill", "decode"};
    for (size_t k = 0; k < 3 && !md; k++)
      md = cal_vbatch_mode(sweep, order[k]);
  }
  const cal_vpoints_t none = {NULL, 0}, *pts = md ? &md->points : &none;
  size_t rows = 0;
  for (size_t i = 0; i < pts->n; i++) {
    const cal_vsamples_t *s = cal_vpoint_samples(pts->p[i], "examples_per_s");
    rows += s && s->n ? s->n : 1;
  }
  if (rows == 0)
    return CAL_ENOTFOUND;

  cal_curve_opts_t o;
  cal_curve_opts_default(&o);
  double tol = sweep->tolerance_pct.v;
  if (isfinite(tol) && tol >= 0 && tol < 100)
    o.tolerance = tol / 100;
  if (cal_curve_policy_parse(sweep->optimize ? sweep->optimize : "",
                             &o.policy) < 0)
    o.policy = CAL_OPTIMIZE_THROUGHPUT;

  int rc = CAL_ENOMEM, n_ok = 0;
  int64_t *b = malloc(rows * sizeof *b);
  double *t = malloc(rows * sizeof *t);
  int *ok = malloc(rows * sizeof *ok);
  size_t r = 0;
  if (!b || !t || !ok)
    goto out;
  for (size_t i = 0; i < pts->n; i++) {
    const cal_vpoint_t *pt = pts->p[i];
    const cal_vsamples_t *s = cal_vpoint_samples(pt, "examples_per_s");
    /* the sweep's own rule (cal_curve_point_usable): no swapped point, no
     * point whose threads did not run side by side */
    int good = cal_curve_point_usable(pt->status && strcmp(pt->status, "ok") == 0,
                                      pt->swapped == 1,
                                      pt->threads_not_parallel != NULL) &&
               s && s->n > 0;
    int64_t batch = pt->batch_size.is_int ? pt->batch_size.i : 0;
    if (!good) {
      b[r] = batch;
      t[r] = 0;
      ok[r++] = 0;
      continue;
    }
    for (size_t k = 0; k < s->n; k++) {
      b[r] = batch;
      t[r] = s->v[k];
      ok[r++] = 1;
      n_ok++;
    }
  }
  rc = n_ok ? analyze_rows(b, t, ok, r, &o, out) : CAL_ENOTFOUND;
  /* a validated profile has well-formed points: anything else is its
   * shape being off, not the caller's argument */
  if (rc == CAL_EINVAL)
    rc = CAL_ESCHEMA;
out:
  free(b);
  free(t);
  free(ok);
  return rc;
}

void cal_batchcurve_free(cal_batchcurve_t *c) {
  if (!c)
    return;
  cal_curve_result_free(c->res);
  free(c);
}

int cal_batchcurve_peak(const cal_batchcurve_t *c, int64_t *batch,
                        double *examples_per_s) {
  if (!c)
    return CAL_EINVAL;
  int empty = c->res->shape == CAL_SHAPE_EMPTY;
  if (batch)
    *batch = empty ? 0 : c->res->peak_batch_size;
  if (examples_per_s)
    *examples_per_s = empty ? NAN : c->res->peak_median;
  return empty ? CAL_ENOTFOUND : 0;
}

int64_t cal_batchcurve_knee(const cal_batchcurve_t *c) {
  return c ? c->res->knee_batch_size : 0;
}

int64_t cal_batchcurve_optimal(const cal_batchcurve_t *c) {
  return c ? c->res->optimal_batch_size : 0;
}

const char *cal_batchcurve_shape(const cal_batchcurve_t *c) {
  return cal_curve_shape_name(c ? c->res->shape : CAL_SHAPE_EMPTY);
}

size_t cal_batchcurve_size(const cal_batchcurve_t *c) {
  return c ? c->res->n : 0;
}

int cal_batchcurve_point(const cal_batchcurve_t *c, size_t i, int64_t *batch,
                         double *median, double *ci_low, double *ci_high) {
  if (!c || i >= c->res->n)
    return CAL_EINVAL;
  const cal_curve_row_t *p = &c->res->points[i];
  int ok = p->status == CAL_POINT_OK;
  if (batch)
    *batch = p->batch_size;
  if (median)
    *median = ok ? p->stats.median : NAN;
  if (ci_low)
    *ci_low = ok ? p->stats.ci_low : NAN;
  if (ci_high)
    *ci_high = ok ? p->stats.ci_high : NAN;
  return ok ? 0 : CAL_ENOTFOUND;
}

/* ---- splits ------------------------------------------------------------ */

int cal_worksplit_compute(const double *throughput, const double *ci_low,
                          const double *ci_high, size_t n, uint64_t examples,
                          cal_worksplit_t **out) {
  if (!out)
    return CAL_EINVAL;
  *out = NULL;
  if (!throughput || n == 0)
    return CAL_EINVAL;
  cal_worksplit_t *s = calloc(1, sizeof *s);
  if (!s || !(s->ent = calloc(n, sizeof *s->ent))) {
    free(s);
    return CAL_ENOMEM;
  }
  s->n = n;
  int rc = cal_plan_split_ci(throughput, ci_low, ci_high, n, examples, s->ent,
                             &s->sp);
  if (rc < 0) {
    cal_worksplit_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

void cal_worksplit_free(cal_worksplit_t *s) {
  if (!s)
    return;
  free(s->ent);
  free(s);
}

int cal_worksplit_machine(const cal_worksplit_t *s, size_t i, int *in_split,
                          double *share, uint64_t *examples, double *finish_s,
                          int *straggler) {
  if (!s || i >= s->n)
    return CAL_EINVAL;
  const cal_split_entry_t *e = &s->ent[i];
  if (in_split)
    *in_split = e->usable;
  if (share)
    *share = e->share;
  if (examples)
    *examples = e->count;
  if (finish_s)
    *finish_s = e->finish_s;
  if (straggler)
    *straggler = e->straggler;
  return 0;
}

double cal_worksplit_makespan_s(const cal_worksplit_t *s) {
  return s ? s->sp.makespan_s : NAN;
}

double cal_worksplit_even_makespan_s(const cal_worksplit_t *s) {
  return s ? s->sp.even_makespan_s : NAN;
}

double cal_worksplit_speedup(const cal_worksplit_t *s) {
  return s ? s->sp.speedup : NAN;
}

int cal_worksplit_heterogeneous(const cal_worksplit_t *s) {
  return s ? s->sp.heterogeneous : 0;
}
