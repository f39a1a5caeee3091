/* The GEMM section: size sweeps per dtype at one pinned thread and all
 * usable threads, each best size confirmed by a later re-measurement. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_vec.h"
#include "results.h"
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

/* GEMM sizes of a --ci run: fixed, so two runs measure the same points */
static const int64_t ci_sizes[] = {256, 1024, 2048};
#define NCI (sizeof ci_sizes / sizeof ci_sizes[0])

static const char *const gemm_kernels[] = {"sgemm", "dgemm", "sbgemm"};

/* Seconds a point of one run lasting run_s will take in the harness. */
static double point_cost(const cal_harness_cfg_t *h, double run_s) {
  double per_sample = run_s > h->min_sample_s ? run_s : h->min_sample_s;
  return h->warmup_s + 2 * run_s + (h->samples + 2) * per_sample;
}

/* Append a point slot to the result; NULL when out of memory. */
static cal_gemm_point_t *new_point(cal_gemm_result_t *g) {
  if (cal_grow(&g->points, g->npoints, &g->cap, sizeof *g->points, 32) < 0)
    return NULL;
  cal_gemm_point_t *gp = &g->points[g->npoints++];
  memset(gp, 0, sizeof *gp);
  return gp;
}

/* Take a measured square point into the result, id
 * "gemm/<dtype>/NxNxN/t<threads>" plus suffix. */
static cal_gemm_point_t *keep_point(cal_gemm_result_t *g, cal_point_t *pt,
                                    int64_t n, int threads, const char *suffix) {
  cal_gemm_point_t *gp = new_point(g);
  if (!gp) {
    cal_point_free(pt);
    return NULL;
  }
  snprintf(gp->id, sizeof gp->id, "gemm/%s/%lldx%lldx%lld/t%d%s",
           pt->kernel->dtype, (long long)n, (long long)n, (long long)n,
           threads, suffix);
  gp->n = n;
  gp->threads = threads;
  gp->pt = *pt;
  return gp;
}

/* Measure one square size and keep it; *out points at the kept point. */
static int measure_size(cal_run_t *r, cal_gemm_result_t *g,
                        const cal_kernel_t *k, int64_t n, int threads,
                        uint64_t seed, const char *suffix,
                        cal_gemm_point_t **out) {
  cal_params_t p = {.m = n, .n = n, .k = n, .threads = threads, .seed = seed,
                    .variant = -1};
  cal_point_t pt;
  int rc = cal_run_point(r, NULL, k, &p, &pt);
  if (rc < 0)
    return rc;
  return (*out = keep_point(g, &pt, n, threads, suffix)) ? 0 : CAL_ENOMEM;
}

/* The best size so far is judged on the lower end of the median's CI, so
 * that one lucky point with a wide spread does not win. */
static void consider_best(cal_gemm_sweep_t *s, const cal_gemm_point_t *gp,
                          double *best_low) {
  const cal_summary_t *sum = &gp->pt.gflops_sum;
  if (gp->pt.status == CAL_POINT_OK && sum->ci_low > *best_low) {
    *best_low = sum->ci_low;
    s->best_gflops = sum->median;
    s->best_n = gp->n;
    snprintf(s->best_id, sizeof s->best_id, "%s", gp->id);
  }
}

static int sweep(cal_run_t *r, cal_gemm_result_t *g, const cal_kernel_t *k,
                 double budget, cal_gemm_sweep_t *s) {
  double t0 = cal_now(), last_run_s = 0, lead = 0, best_low = 0;
  int64_t last_n = 0;
  int since_best = 0;
  s->stop = "largest size reached";
  for (size_t i = 0; i < NSIZES; i++) {
    int64_t n = gemm_sizes[i];
    if (last_n) {
      double ratio = (double)n / (double)last_n;
      double est = point_cost(&r->opt->hcfg, last_run_s * ratio * ratio * ratio);
      if (cal_now() - t0 + est > budget) {
        s->stop = "time budget";
        break;
      }
    }
    cal_progress(r, "gemm %s %lld^3, %d thread%s", k->dtype, (long long)n,
                 s->threads, s->threads > 1 ? "s" : "");
    cal_gemm_point_t *gp;
    int rc = measure_size(r, g, k, n, s->threads, r->opt->seed + (uint64_t)n,
                          "", &gp);
    if (rc < 0)
      return rc;
    if (gp->pt.status == CAL_POINT_SKIPPED) {
      s->stop = "memory limit";
      break;
    }
    if (gp->pt.status == CAL_POINT_FAILED) {
      s->stop = "verification failed";
      break;
    }
    double med = gp->pt.gflops_sum.median;
    last_run_s = gp->pt.m.time.median;
    last_n = n;
    /* the plateau is judged on medians */
    if (med > lead * (1.0 + GEMM_GAIN) || lead == 0)
      since_best = 0;
    else
      since_best++;
    if (med > lead)
      lead = med;
    consider_best(s, gp, &best_low);
    if (since_best >= GEMM_PATIENCE && n >= GEMM_MIN_PLATEAU_N) {
      s->stop = "plateau";
      break;
    }
  }
  return 0;
}

/* The best size of a sweep is picked among several noisy measurements,
 * which biases its figure upward (the winner's curse), and on a shared
 * machine one measurement can fall in a slow or a fast spell.  Measure
 * that size once more, later, and report the median of both measurements'
 * samples as the sweep's figure. */
static int confirm(cal_run_t *r, cal_gemm_result_t *g, const cal_kernel_t *k,
                   cal_gemm_sweep_t *s) {
  int64_t n = s->best_n;
  cal_progress(r, "gemm %s %lld^3, %d thread%s: confirming the best size",
               k->dtype, (long long)n, s->threads, s->threads > 1 ? "s" : "");
  cal_gemm_point_t *gp;
  int rc = measure_size(r, g, k, n, s->threads, r->opt->seed + (uint64_t)n + 1,
                        "/confirm", &gp);
  if (rc < 0)
    return rc;
  snprintf(gp->confirms, sizeof gp->confirms, "%s", s->best_id);
  if (gp->pt.status != CAL_POINT_OK)
    return 0;
  const cal_gemm_point_t *first = NULL;
  for (size_t i = 0; i + 1 < g->npoints; i++)
    if (strcmp(g->points[i].id, s->best_id) == 0)
      first = &g->points[i];
  size_t n1 = first && first->pt.gflops ? first->pt.m.n : 0, n2 = gp->pt.m.n;
  double *all = malloc((n1 + n2) * sizeof *all);
  if (!all)
    return CAL_ENOMEM;
  if (n1)
    memcpy(all, first->pt.gflops, n1 * sizeof *all);
  memcpy(all + n1, gp->pt.gflops, n2 * sizeof *all);
  s->best_gflops = gp->pooled_gflops = cal_median(all, n1 + n2);
  free(all);
  snprintf(s->best_id, sizeof s->best_id, "%s", gp->id);
  return 0;
}

static int fixed_sizes(cal_run_t *r, cal_gemm_result_t *g,
                       const cal_kernel_t *k, cal_gemm_sweep_t *s) {
  const cal_kernel_t *ks[NCI];
  cal_params_t ps[NCI];
  cal_point_t pts[NCI];
  s->stop = "fixed sizes (--ci)";
  for (size_t i = 0; i < NCI; i++) {
    ks[i] = k;
    ps[i] = (cal_params_t){.m = ci_sizes[i], .n = ci_sizes[i], .k = ci_sizes[i],
                           .threads = s->threads,
                           .seed = r->opt->seed + (uint64_t)ci_sizes[i],
                           .variant = -1};
  }
  char what[64];
  snprintf(what, sizeof what, "gemm %s, %d thread%s", k->dtype, s->threads,
           s->threads > 1 ? "s" : "");
  int rc = cal_run_points(r, NULL, 0, ks, ps, NCI, pts, what);
  size_t i = 0;
  for (; rc == 0 && i < NCI; i++) {
    cal_gemm_point_t *gp = keep_point(g, &pts[i], ci_sizes[i], s->threads, "");
    if (!gp) {
      rc = CAL_ENOMEM;
      i++;
      break;
    }
    if (gp->pt.status == CAL_POINT_OK &&
        gp->pt.gflops_sum.median > s->best_gflops) {
      s->best_gflops = gp->pt.gflops_sum.median;
      s->best_n = gp->n;
      snprintf(s->best_id, sizeof s->best_id, "%s", gp->id);
    }
  }
  for (; i < NCI; i++)
    cal_point_free(&pts[i]);
  return rc;
}

static int supported(const cal_kernel_t *k, const char **why) {
  cal_params_t probe = {.m = 1, .n = 1, .k = 1};
  *why = NULL;
  return !k->supported || k->supported(&probe, why) == 0;
}

/* One dtype's sweeps at one and all threads. */
static int measure_dtype(cal_run_t *r, cal_gemm_result_t *g,
                         cal_gemm_dtype_t *d, int nruns, double each) {
  for (int t = 0; t < nruns; t++) {
    cal_gemm_sweep_t *s = &g->sweeps[g->nsweeps++];
    memset(s, 0, sizeof *s);
    s->kernel = d->kernel;
    s->threads = t == 0 ? 1 : r->opt->threads;
    int rc = r->opt->ci ? fixed_sizes(r, g, d->kernel, s)
                        : sweep(r, g, d->kernel, each, s);
    if (rc < 0)
      return rc;
    s->best_gflops_in_sweep = s->best_gflops;
    if (!r->opt->ci && s->best_n > 0 && (rc = confirm(r, g, d->kernel, s)) < 0)
      return rc;
    d->best_gflops[t] = s->best_gflops;
    if (nruns == 1)
      d->best_gflops[1] = s->best_gflops;
    if (strcmp(d->kernel->name, "sgemm") == 0)
      for (int i = t; i < (nruns == 1 ? 2 : t + 1); i++) {
        g->sgemm_best[i] = s->best_gflops;
        g->sgemm_best_n[i] = s->best_n;
      }
  }
  return 0;
}

int cal_gemm_measure(cal_run_t *r) {
  cal_gemm_result_t *g = calloc(1, sizeof *g);
  if (!g)
    return CAL_ENOMEM;
  r->res->sec[CAL_SEC_ID_GEMM] = g;
  const int nruns = r->opt->threads > 1 ? 2 : 1;
  /* count the sweeps that will run to split the budget evenly */
  int nsweeps = 0;
  for (size_t i = 0; i < sizeof gemm_kernels / sizeof gemm_kernels[0]; i++) {
    const cal_kernel_t *k = cal_kernel_find(gemm_kernels[i]);
    if (!k)
      continue;
    cal_gemm_dtype_t *d = &g->dtypes[g->ndtypes++];
    d->kernel = k;
    d->supported = supported(k, &d->why);
    nsweeps += d->supported ? nruns : 0;
  }
  double each = cal_run_budget(r, CAL_SEC_ID_GEMM) / (nsweeps ? nsweeps : 1);
  for (size_t i = 0; i < g->ndtypes; i++) {
    if (!g->dtypes[i].supported)
      continue;
    int rc = measure_dtype(r, g, &g->dtypes[i], nruns, each);
    if (rc < 0)
      return rc;
  }
  return 0;
}

void cal_gemm_drop(void *result) {
  cal_gemm_result_t *g = result;
  if (!g)
    return;
  for (size_t i = 0; i < g->npoints; i++)
    cal_point_free(&g->points[i].pt);
  free(g->points);
  free(g);
}
