/* The GEMM section: every dtype with every engine that offers it (the
 * "gemm" kernels of the kernel table, or only those of the engine
 * --gemm-engine forces) swept over square sizes at one pinned thread and
 * all usable threads (gemm_sweep.c), each sweep's best size confirmed by a
 * later re-measurement; each dtype's headline is its best verified
 * engine's figure (gemm_pick.c).
 *
 * The time budget goes where the curves still rise: every sweep gets an
 * equal share of what is left when it starts, so a sweep that ends early
 * (a plateau, the memory limit) leaves its time to the sweeps after it,
 * and what is left after the last one goes, in equal shares again, to the
 * sweeps the budget stopped, which go on from where they were. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "gemm_pick.h"
#include "gemm_sweep.h"
#include "results.h"
#include "run.h"
#include "timer.h"

/* A sweep of the plan: its engine, its thread count (t: 0 one thread, 1
 * all threads) and where it stands. */
typedef struct {
  cal_gemm_engine_t *e;
  int t;
  cal_gemm_walk_t w;
} slot_t;

/* The sweep's best figure given to its engine (both thread counts when
 * all threads is one). */
static void give_best(const cal_gemm_sweep_t *s, cal_gemm_engine_t *e, int t,
                      int nruns) {
  e->failed |= s->failed;
  for (int i = t; s->best_n > 0 && i < (nruns == 1 ? 2 : t + 1); i++) {
    cal_gemm_best_t *b = &e->best[i];
    b->kernel = s->kernel;
    b->gflops = s->best_gflops;
    b->n = s->best_n;
    snprintf(b->impl, sizeof b->impl, "%s", s->impl);
  }
}

/* Run (or go on with) sweep i for budget_s seconds. */
static int run_sweep(cal_run_t *r, cal_gemm_result_t *g, slot_t *slot,
                     size_t i, double budget_s, int nruns) {
  cal_gemm_sweep_t *s = &g->sweeps[i];
  double t0 = cal_now();
  int rc;
  s->budget_s += budget_s;
  if (r->opt->ci) {
    rc = cal_gemm_fixed(r, g, s);
    s->best_gflops_in_sweep = s->best_gflops;
  } else {
    rc = cal_gemm_walk(r, g, s, &slot->w, budget_s);
  }
  s->time_s += cal_now() - t0;
  if (rc == 0)
    give_best(s, slot->e, slot->t, nruns);
  return rc;
}

/* The plan's sweeps, dtype by dtype, one thread then all threads, the
 * engines of a dtype next to each other so they are measured in the same
 * minutes.  Returns how many. */
static size_t plan_sweeps(cal_run_t *r, cal_gemm_result_t *g, slot_t *slots,
                          int nruns) {
  for (size_t i = 0; i < g->ndtypes; i++)
    for (int t = 0; t < nruns; t++)
      for (size_t j = 0; j < g->dtypes[i].nengines; j++) {
        cal_gemm_engine_t *e = &g->dtypes[i].engines[j];
        if (!e->supported || g->nsweeps == CAL_GEMM_MAX_SWEEPS)
          continue;
        /* --ci: the fp32 and fp64 figures a CI tracks, nothing else */
        if (r->opt->ci && g->dtypes[i].kdtype != CAL_DTYPE_FP32 &&
            g->dtypes[i].kdtype != CAL_DTYPE_FP64)
          continue;
        slots[g->nsweeps] = (slot_t){.e = e, .t = t};
        cal_gemm_sweep_t *s = &g->sweeps[g->nsweeps++];
        memset(s, 0, sizeof *s);
        s->kernel = e->kernel;
        s->threads = t == 0 ? 1 : r->opt->threads;
      }
  return g->nsweeps;
}

int cal_gemm_measure(cal_run_t *r) {
  slot_t slots[CAL_GEMM_MAX_SWEEPS];
  cal_gemm_result_t *g = calloc(1, sizeof *g);
  if (!g)
    return CAL_ENOMEM;
  r->res->sec[CAL_SEC_ID_GEMM] = g;
  cal_gemm_plan(g, r->opt->gemm_engine);
  cal_onednn_info(&g->onednn);
  const int nruns = r->opt->threads > 1 ? 2 : 1;
  size_t n = plan_sweeps(r, g, slots, nruns);
  double deadline = cal_now() + cal_run_budget(r, CAL_SEC_ID_GEMM);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < n; i++)
    rc = run_sweep(r, g, &slots[i], i, fmax(0.0, deadline - cal_now()) / (double)(n - i),
                   nruns);
  /* what is left goes to the sweeps the budget stopped */
  size_t more = 0;
  for (size_t i = 0; i < n; i++)
    more += !r->opt->ci && slots[i].w.more;
  for (size_t i = 0; rc == 0 && i < n && more > 0; i++)
    if (!r->opt->ci && slots[i].w.more)
      rc = run_sweep(r, g, &slots[i], i, fmax(0.0, deadline - cal_now()) / (double)more--,
                     nruns);
  if (rc < 0)
    return rc;
  for (size_t i = 0; i < g->ndtypes; i++)
    cal_gemm_pick(&g->dtypes[i]);
  cal_gemm_pick_fp32(g);
  return 0;
}

CAL_PT_RESULT_DROP(cal_gemm_drop, cal_gemm_result_t)
