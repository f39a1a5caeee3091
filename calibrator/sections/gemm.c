/* GEMM size sweeps (one pinned thread and all usable threads, per dtype)
 * and the thread-scaling curve. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "run.h"
#include "timer.h"

/* Square sizes tried in order; the sweep stops at a plateau, the time
 * budget or the memory limit, whichever comes first. */
static const int64_t gemm_sizes[] = {128,  256,  384,  512,  768,  1024, 1536,
                                     2048, 3072, 4096, 6144, 8192, 12288};
#define NSIZES (sizeof gemm_sizes / sizeof gemm_sizes[0])
/* a size counts as better only when it beats the best so far by this */
#define GEMM_GAIN 0.02
/* stop after this many sizes in a row that were not better... */
#define GEMM_PATIENCE 3
/* ...but not below this size: small sizes are dominated by overheads and
 * their noise can look like a plateau */
#define GEMM_MIN_PLATEAU_N 1024

static const char *const gemm_kernels[] = {"sgemm", "dgemm", "sbgemm"};

/* Seconds a point of one run lasting run_s will take in the harness. */
static double point_cost(const cal_harness_cfg_t *h, double run_s) {
  double per_sample = run_s > h->min_sample_s ? run_s : h->min_sample_s;
  return h->warmup_s + 2 * run_s + (h->samples + 2) * per_sample;
}

/* The JSON of a square GEMM point: id "gemm/<dtype>/NxNxN/t<threads>"
 * plus suffix (e.g. "/confirm"), and m, n, k.  NULL when out of memory. */
static json_t *gemm_point_json(const cal_point_t *pt, int64_t n, int threads,
                               const char *suffix, char *id, size_t idlen) {
  snprintf(id, idlen, "gemm/%s/%lldx%lldx%lld/t%d%s", pt->kernel->dtype,
           (long long)n, (long long)n, (long long)n, threads, suffix);
  json_t *o = cal_point_json(pt, id, "gflops");
  if (o) {
    json_object_set_new(o, "m", json_integer(n));
    json_object_set_new(o, "n", json_integer(n));
    json_object_set_new(o, "k", json_integer(n));
  }
  return o;
}

typedef struct {
  const char *stop;
  int64_t best_n;
  double best_gflops;
  char best_id[128];
} sweep_result_t;

static int sweep(cal_run_t *r, const cal_kernel_t *k, int threads,
                 double budget, json_t *points, sweep_result_t *res) {
  double t0 = cal_now(), last_run_s = 0, lead = 0, best_low = 0;
  int64_t last_n = 0;
  int since_best = 0;
  memset(res, 0, sizeof *res);
  res->stop = "largest size reached";
  for (size_t i = 0; i < NSIZES; i++) {
    int64_t n = gemm_sizes[i];
    if (last_n) {
      double ratio = (double)n / (double)last_n;
      double est = point_cost(&r->hcfg, last_run_s * ratio * ratio * ratio);
      if (cal_now() - t0 + est > budget) {
        res->stop = "time budget";
        break;
      }
    }
    cal_params_t p = {.m = n, .n = n, .k = n, .threads = threads,
                      .seed = r->seed + (uint64_t)n,
                      .variant = -1};
    cal_progress(r, "gemm %s %lld^3, %d thread%s", k->dtype, (long long)n,
                 threads, threads > 1 ? "s" : "");
    cal_point_t pt;
    int rc = cal_run_point(r, k, &p, &pt);
    if (rc < 0)
      return rc;
    char id[112];
    json_t *o = gemm_point_json(&pt, n, threads, "", id, sizeof id);
    if (!o) {
      cal_point_free(&pt);
      return CAL_ENOMEM;
    }
    json_array_append_new(points, o);
    int status = pt.status;
    double g = status == CAL_POINT_OK ? pt.gflops_sum.median : 0;
    double lo = status == CAL_POINT_OK ? pt.gflops_sum.ci_low : 0;
    last_run_s = status == CAL_POINT_OK ? pt.m.time.median : 0;
    cal_point_free(&pt);
    if (status == CAL_POINT_SKIPPED) {
      res->stop = "memory limit";
      break;
    }
    if (status == CAL_POINT_FAILED) {
      res->stop = "verification failed";
      break;
    }
    last_n = n;
    /* the plateau is judged on medians ... */
    if (g > lead * (1.0 + GEMM_GAIN) || lead == 0) {
      since_best = 0;
    } else if (++since_best >= GEMM_PATIENCE && n >= GEMM_MIN_PLATEAU_N) {
      res->stop = "plateau";
    }
    if (g > lead)
      lead = g;
    /* ... the best size on the lower end of the median's CI, so that one
     * lucky point with a wide spread does not win */
    if (lo > best_low) {
      best_low = lo;
      res->best_gflops = g;
      res->best_n = n;
      snprintf(res->best_id, sizeof res->best_id, "%s", id);
    }
    if (since_best >= GEMM_PATIENCE && n >= GEMM_MIN_PLATEAU_N)
      break;
  }
  return 0;
}

/* The best size of a sweep is picked among several noisy measurements,
 * which biases its figure upward (the winner's curse), and on a shared
 * machine one measurement can fall in a slow or a fast spell.  Measure
 * that size once more, later, and report the median of both measurements'
 * samples as the sweep's figure. */
static int confirm(cal_run_t *r, const cal_kernel_t *k, int threads,
                   json_t *points, sweep_result_t *res) {
  int64_t n = res->best_n;
  cal_params_t p = {.m = n, .n = n, .k = n, .threads = threads,
                    .seed = r->seed + (uint64_t)n + 1, .variant = -1};
  cal_progress(r, "gemm %s %lld^3, %d thread%s: confirming the best size",
               k->dtype, (long long)n, threads, threads > 1 ? "s" : "");
  cal_point_t pt;
  int rc = cal_run_point(r, k, &p, &pt);
  if (rc < 0)
    return rc;
  char id[112];
  json_t *o = gemm_point_json(&pt, n, threads, "/confirm", id, sizeof id);
  if (!o) {
    cal_point_free(&pt);
    return CAL_ENOMEM;
  }
  json_object_set_new(o, "confirms", json_string(res->best_id));
  if (pt.status == CAL_POINT_OK) {
    /* pool with the sweep's samples of the same size */
    json_t *first = NULL, *q;
    size_t i;
    json_array_foreach(points, i, q) {
      const char *qid = json_string_value(json_object_get(q, "id"));
      if (qid && strcmp(qid, res->best_id) == 0)
        first = json_object_get(q, "samples_gflops");
    }
    size_t n1 = json_array_size(first), n2 = pt.m.n;
    double *all = malloc((n1 + n2) * sizeof *all);
    if (!all) {
      json_decref(o);
      cal_point_free(&pt);
      return CAL_ENOMEM;
    }
    for (i = 0; i < n1; i++)
      all[i] = json_number_value(json_array_get(first, i));
    memcpy(all + n1, pt.gflops, n2 * sizeof *all);
    res->best_gflops = cal_median(all, n1 + n2);
    free(all);
    json_object_set_new(o, "pooled_gflops", json_real(res->best_gflops));
    snprintf(res->best_id, sizeof res->best_id, "%s", id);
  }
  json_array_append_new(points, o);
  cal_point_free(&pt);
  return 0;
}

/* GEMM sizes of a --ci run: fixed, so two runs measure the same points */
static const int64_t ci_sizes[] = {256, 1024, 2048};
#define NCI (sizeof ci_sizes / sizeof ci_sizes[0])

static int fixed_sizes(cal_run_t *r, const cal_kernel_t *k, int threads,
                       json_t *points, sweep_result_t *res) {
  const cal_kernel_t *ks[NCI];
  cal_params_t ps[NCI];
  cal_point_t pts[NCI];
  memset(res, 0, sizeof *res);
  res->stop = "fixed sizes (--ci)";
  for (size_t i = 0; i < NCI; i++) {
    ks[i] = k;
    ps[i] = (cal_params_t){.m = ci_sizes[i], .n = ci_sizes[i], .k = ci_sizes[i],
                           .threads = threads, .seed = r->seed + (uint64_t)ci_sizes[i],
                           .variant = -1};
  }
  char what[64];
  snprintf(what, sizeof what, "gemm %s, %d thread%s", k->dtype, threads,
           threads > 1 ? "s" : "");
  int rc = cal_run_points(r, ks, ps, NCI, pts, what);
  for (size_t i = 0; rc == 0 && i < NCI; i++) {
    int64_t n = ci_sizes[i];
    char id[112];
    json_t *o = gemm_point_json(&pts[i], n, threads, "", id, sizeof id);
    if (!o) {
      rc = CAL_ENOMEM;
      break;
    }
    json_array_append_new(points, o);
    if (pts[i].status == CAL_POINT_OK && pts[i].gflops_sum.median > res->best_gflops) {
      res->best_gflops = pts[i].gflops_sum.median;
      res->best_n = n;
      snprintf(res->best_id, sizeof res->best_id, "%s", id);
    }
  }
  for (size_t i = 0; i < NCI; i++)
    cal_point_free(&pts[i]);
  return rc;
}

int cal_section_gemm(cal_run_t *r) {
  cal_progress_section(r, CAL_SEC_GEMM);
  json_t *sec = json_pack("{s:o, s:o, s:o}", "dtypes", json_object(), "sweeps",
                          json_array(), "points", json_array());
  if (!sec)
    return CAL_ENOMEM;
  json_object_set_new(r->root, "gemm", sec);
  json_t *dtypes = json_object_get(sec, "dtypes");
  json_t *sweeps = json_object_get(sec, "sweeps");
  json_t *points = json_object_get(sec, "points");
  json_object_set_new(sec, "operation",
                      json_string("C = A*B, row-major, square, beta = 0"));

  /* count the sweeps that will run to split the budget evenly */
  const int nthreads_runs = r->threads > 1 ? 2 : 1;
  int nsweeps = 0;
  for (size_t i = 0; i < 3; i++) {
    const cal_kernel_t *k = cal_kernel_find(gemm_kernels[i]);
    const char *why = NULL;
    cal_params_t probe = {.m = 1, .n = 1, .k = 1};
    if (k && (!k->supported || k->supported(&probe, &why) == 0))
      nsweeps += nthreads_runs;
  }
  double each = cal_run_budget(r, CAL_SEC_GEMM) / (nsweeps ? nsweeps : 1);

  for (size_t i = 0; i < 3; i++) {
    const cal_kernel_t *k = cal_kernel_find(gemm_kernels[i]);
    if (!k)
      continue;
    const char *why = NULL;
    cal_params_t probe = {.m = 1, .n = 1, .k = 1};
    if (k->supported && k->supported(&probe, &why) < 0) {
      json_object_set_new(dtypes, k->dtype,
                          json_pack("{s:s, s:s, s:s}", "kernel", k->name,
                                    "status", "unsupported", "reason", why));
      continue;
    }
    json_t *d = json_pack("{s:s, s:s}", "kernel", k->name, "status", "measured");
    json_object_set_new(dtypes, k->dtype, d);
    for (int t = 0; t < nthreads_runs; t++) {
      int threads = t == 0 ? 1 : r->threads;
      sweep_result_t res;
      int rc = r->ci ? fixed_sizes(r, k, threads, points, &res)
                     : sweep(r, k, threads, each, points, &res);
      if (rc < 0)
        return rc;
      double sweep_best = res.best_gflops;
      if (!r->ci && res.best_n > 0 && (rc = confirm(r, k, threads, points, &res)) < 0)
        return rc;
      json_array_append_new(
          sweeps, json_pack("{s:s, s:s, s:i, s:s, s:I, s:f, s:s}", "kernel",
                            k->name, "dtype", k->dtype, "threads", threads,
                            "stop_reason", res.stop, "best_n",
                            (json_int_t)res.best_n, "best_gflops",
                            res.best_gflops, "best_id", res.best_id));
      json_object_set_new(json_array_get(sweeps, json_array_size(sweeps) - 1),
                          "best_gflops_in_sweep", json_real(sweep_best));
      json_object_set_new(d, t == 0 ? "best_gflops_1_thread" : "best_gflops_all_threads",
                          res.best_gflops > 0 ? json_real(res.best_gflops) : json_null());
      if (t == 0 && nthreads_runs == 1)
        json_object_set_new(d, "best_gflops_all_threads",
                            res.best_gflops > 0 ? json_real(res.best_gflops) : json_null());
      if (strcmp(k->name, "sgemm") == 0) {
        r->sgemm_best[t] = res.best_gflops;
        r->sgemm_best_n[t] = res.best_n;
        if (nthreads_runs == 1) {
          r->sgemm_best[1] = res.best_gflops;
          r->sgemm_best_n[1] = res.best_n;
        }
      }
    }
  }
  return 0;
}

/* Thread counts for the scaling curve: every count up to 16, then powers
 * of two and the full count. */
static int next_threads(int t, int max) {
  if (t < 16)
    return t + 1;
  return t * 2 < max ? t * 2 : (t == max ? max + 1 : max);
}

int cal_section_scaling(cal_run_t *r) {
  cal_progress_section(r, CAL_SEC_SCALING);
  /* the all-thread best size, capped so a one-thread fp64 run stays near
   * a quarter second: past 2048 the curve is flat and only costs time */
  int64_t n = r->sgemm_best_n[1] ? r->sgemm_best_n[1] : 1024;
  if (n > 2048)
    n = 2048;
  json_t *sec = json_pack("{s:I, s:o}", "n", (json_int_t)n, "points", json_array());
  if (!sec)
    return CAL_ENOMEM;
  json_object_set_new(r->root, "scaling", sec);
  json_t *points = json_object_get(sec, "points");
  static const char *const names[] = {"sgemm", "dgemm"};
  for (size_t i = 0; i < 2; i++) {
    const cal_kernel_t *k = cal_kernel_find(names[i]);
    double g1 = 0;
    for (int t = 1; t <= r->threads; t = next_threads(t, r->threads)) {
      cal_params_t p = {.m = n, .n = n, .k = n, .threads = t,
                        .seed = r->seed + 7, .variant = -1};
      cal_progress(r, "scaling %s %lld^3, %d thread%s", k->dtype, (long long)n,
                   t, t > 1 ? "s" : "");
      cal_point_t pt;
      int rc = cal_run_point(r, k, &p, &pt);
      if (rc < 0)
        return rc;
      char id[96];
      snprintf(id, sizeof id, "scaling/%s/%lld/t%d", k->dtype, (long long)n, t);
      json_t *o = cal_point_json(&pt, id, "gflops");
      if (!o) {
        cal_point_free(&pt);
        return CAL_ENOMEM;
      }
      json_object_set_new(o, "n", json_integer(n));
      if (pt.status == CAL_POINT_OK) {
        double g = pt.gflops_sum.median;
        if (t == 1)
          g1 = g;
        if (g1 > 0) {
          json_object_set_new(o, "speedup", json_real(g / g1));
          json_object_set_new(o, "efficiency", json_real(g / (g1 * t)));
        }
        json_object_set_new(o, "gflops_per_thread", json_real(g / t));
      }
      json_array_append_new(points, o);
      cal_point_free(&pt);
    }
  }
  return 0;
}
