/* The GEMM section's plan (which engines measure which dtype) and its
 * choice of each dtype's headline engine. */
#include "gemm_pick.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

static const char *const not_selected =
    "another engine was chosen (--gemm-engine or CALIBRATE_GEMM_ENGINE)";

/* The slots are sized by the enums, a dtype and an engine each: more is a
 * kernel table with two GEMM kernels of one dtype and engine. */
static void table_full(const cal_kernel_t *k) {
  fprintf(stderr, "calibrate: internal error: no GEMM slot for kernel %s "
                  "(two GEMM kernels of one dtype and engine?)\n", k->name);
  abort();
}

/* The dtype's slot, added when new. */
static cal_gemm_dtype_t *dtype_slot(cal_gemm_result_t *g, const cal_kernel_t *k) {
  for (size_t i = 0; i < g->ndtypes; i++)
    if (g->dtypes[i].kdtype == k->dtype)
      return &g->dtypes[i];
  if (g->ndtypes == CAL_GEMM_MAX_DTYPES)
    table_full(k);
  cal_gemm_dtype_t *d = &g->dtypes[g->ndtypes++];
  memset(d, 0, sizeof *d);
  d->kdtype = k->dtype;
  d->dtype = cal_kdtype_name(k->dtype);
  d->metric = k->dtype == CAL_DTYPE_INT8 ? "gops" : "gflops";
  return d;
}

static int supported(const cal_kernel_t *k, const char **why) {
  cal_params_t probe = {.m = 1, .n = 1, .k = 1};
  *why = NULL;
  return !k->supported || k->supported(&probe, why) == 0;
}

/* "openblas: <reason>; onednn: <reason>" for a dtype no engine runs. */
static void why_unsupported(cal_gemm_dtype_t *d) {
  size_t used = 0;
  d->why[0] = '\0';
  for (size_t j = 0; j < d->nengines && used < sizeof d->why; j++) {
    const cal_gemm_engine_t *e = &d->engines[j];
    used += (size_t)snprintf(d->why + used, sizeof d->why - used, "%s%s: %s",
                             j ? "; " : "", cal_kernel_engine(e->kernel),
                             e->why ? e->why : "not supported");
  }
}

void cal_gemm_plan(cal_gemm_result_t *g, const char *choice) {
  const cal_kernel_t *k;
  const int forced = cal_engine_parse(choice); /* -1: "auto" */
  g->engine_choice = choice;
  for (size_t i = 0; (k = cal_kernel_at(i)); i++) {
    if (k->family != CAL_FAMILY_GEMM)
      continue;
    cal_gemm_dtype_t *d = dtype_slot(g, k);
    if (d->nengines == CAL_GEMM_MAX_ENGINES)
      table_full(k);
    cal_gemm_engine_t *e = &d->engines[d->nengines++];
    memset(e, 0, sizeof *e);
    e->kernel = k;
    e->selected = forced < 0 || (int)k->engine == forced;
    if (e->selected)
      e->supported = supported(k, &e->why);
    else
      e->why = not_selected;
    d->supported |= e->supported;
  }
  for (size_t i = 0; i < g->ndtypes; i++)
    if (!g->dtypes[i].supported)
      why_unsupported(&g->dtypes[i]);
}

void cal_gemm_pick(cal_gemm_dtype_t *d) {
  for (int t = 0; t < 2; t++) {
    const cal_gemm_best_t *best = NULL;
    for (size_t j = 0; j < d->nengines; j++) {
      const cal_gemm_engine_t *e = &d->engines[j];
      if (e->failed || !e->best[t].kernel)
        continue;
      /* ties go to the engine listed first */
      if (!best || e->best[t].gflops > best->gflops)
        best = &e->best[t];
    }
    if (best)
      d->best[t] = *best;
    else
      memset(&d->best[t], 0, sizeof d->best[t]);
  }
}

void cal_gemm_pick_fp32(cal_gemm_result_t *g) {
  for (int t = 0; t < 2; t++) {
    const cal_gemm_best_t *b = cal_gemm_best(g, CAL_DTYPE_FP32, t);
    g->sgemm_best[t] = b ? b->gflops : 0;
    g->sgemm_best_n[t] = b ? b->n : 0;
  }
}

const cal_gemm_best_t *cal_gemm_best(const cal_gemm_result_t *g,
                                     cal_kdtype_t dtype, int all_threads) {
  for (size_t i = 0; g && i < g->ndtypes; i++)
    if (g->dtypes[i].kdtype == dtype)
      return g->dtypes[i].best[all_threads ? 1 : 0].kernel
                 ? &g->dtypes[i].best[all_threads ? 1 : 0]
                 : NULL;
  return NULL;
}
