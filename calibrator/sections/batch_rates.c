/* The train modes' rates against the same run's ceilings: the GEMM the
 * step's products run on (the points' gemm fractions) and the memory's
 * triad, which the AdamW pass, measured here once, is held against. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "batch_sweep.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "train_vec.h"

/* the AdamW point's working set: this many times the last-level cache,
 * at least ADAMW_MIN_BYTES, at most ADAMW_MAX_BYTES and a quarter of the
 * memory budget */
#define ADAMW_LLC_TIMES 4.0
#define ADAMW_MIN_BYTES (256.0 * 1048576.0)
#define ADAMW_MAX_BYTES (2048.0 * 1048576.0)

void cal_sweep_gemm_ref(const cal_run_t *r, cal_batch_result_t *res) {
  const cal_gemm_result_t *g = cal_results_get(r->res, CAL_SEC_ID_GEMM);
  const cal_gemm_best_t *b = g ? cal_gemm_best(g, res->dtype, 1) : NULL;
  res->gemm_gflops = b && b->kernel && b->gflops > 0 ? b->gflops : NAN;
  if (!g)
    snprintf(res->gemm_why, sizeof res->gemm_why,
             "the gemm section did not run");
  else if (isnan(res->gemm_gflops))
    snprintf(res->gemm_why, sizeof res->gemm_why,
             "the gemm section has no verified %s figure on all threads",
             cal_kdtype_name(res->dtype));
}

/* The AdamW kernel's parameters: elements for the working set above. */
static void adamw_params(const cal_run_t *r, int bf16, cal_params_t *p) {
  double bytes = ADAMW_LLC_TIMES * cal_sweep_llc_bytes(r);
  if (bytes < ADAMW_MIN_BYTES)
    bytes = ADAMW_MIN_BYTES;
  double per = cal_adamw_bytes(bf16), budget = cal_sweep_mem_budget(r) / 4.0;
  if (bytes > ADAMW_MAX_BYTES)
    bytes = ADAMW_MAX_BYTES;
  if (budget > 0 && bytes > budget)
    bytes = budget;
  *p = (cal_params_t){.threads = r->opt->threads, .seed = r->opt->seed,
                      .variant = CAL_VARIANT_AUTO};
  p->n = (int64_t)(bytes / per) / 16 * 16;
}

int cal_sweep_adamw(cal_run_t *r, cal_batch_result_t *res) {
  int bf16 = res->dtype == CAL_DTYPE_BF16;
  const cal_kernel_t *k = cal_kernel_find(bf16 ? "adamw_bf16" : "adamw");
  res->adamw_kernel = k ? k->name : NULL;
  res->adamw_s = res->adamw_gbps = res->adamw_triad_fraction = NAN;
  res->triad_gbps = cal_bandwidth_memory(
      cal_results_get(r->res, CAL_SEC_ID_BANDWIDTH), "stream_triad",
      r->opt->threads, res->adamw_why, sizeof res->adamw_why);
  if (!k)
    return 0;
  cal_params_t p;
  adamw_params(r, bf16, &p);
  res->adamw_elems = p.n;
  res->adamw_bytes = k->bytes(&p);
  if (p.n < 16) {
    snprintf(res->adamw_why, sizeof res->adamw_why,
             "the memory budget holds no AdamW working set");
    return 0;
  }
  cal_point_t pt;
  memset(&pt, 0, sizeof pt);
  int rc = cal_run_point(r, NULL, k, &p, &pt);
  if (rc == 0 && pt.status == CAL_POINT_OK && pt.m.time.median > 0) {
    res->adamw_s = pt.m.time.median;
    snprintf(res->adamw_variant, sizeof res->adamw_variant, "%s", pt.variant);
    res->adamw_gbps = res->adamw_bytes / res->adamw_s * 1e-9;
    if (!isnan(res->triad_gbps))
      res->adamw_triad_fraction = res->adamw_gbps / res->triad_gbps;
  } else if (rc == 0) {
    snprintf(res->adamw_why, sizeof res->adamw_why, "%s not measured: %.200s",
             k->name, pt.reason);
  }
  cal_point_free(&pt);
  return rc < 0 ? rc : 0;
}
