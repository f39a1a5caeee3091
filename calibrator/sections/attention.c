/* The attention section: the fused kernels, fp32 and bf16, on a set of
 * shapes (prefill and decode, short and long, D = 64 and 128, GQA), at one
 * pinned thread and all threads, against the reference and the run's GEMM
 * of the same dtype (fp32 GEMM for the fp32 kernel, bf16 GEMM for the
 * bf16 one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "engine.h"
#include "cal_err.h"
#include "results.h"
#include "run.h"

/* A shape of the list and whether the reference is timed on it too. */
typedef struct attn_case {
  cal_attn_shape_t s;
  int with_ref;
} attn_case_t;

/* Default shapes.  The long causal prefill (N = 2048, D = 128) is the one
 * the reference is timed on; decode (N_q = 1) is memory-bound. */
static const attn_case_t default_cases[] = {
    {{1, 8, 8, 512, 512, 64, 1}, 0},      /* short causal prefill, MHA */
    {{1, 4, 2, 2048, 2048, 128, 1}, 1},   /* long causal prefill, GQA */
    {{2, 8, 8, 256, 256, 128, 0}, 0},     /* non-causal (encoder-style) */
    {{1, 32, 8, 1, 4096, 128, 1}, 0},     /* decode, GQA, KV cache 4096 */
    {{4, 16, 16, 1, 2048, 64, 1}, 0},     /* decode, MHA, D = 64 */
};
/* quick: no reference (it alone would take three seconds) */
static const attn_case_t quick_cases[] = {
    {{1, 8, 8, 256, 256, 64, 1}, 0},
    {{1, 4, 2, 1024, 1024, 128, 1}, 0},
    {{1, 32, 8, 1, 4096, 128, 1}, 0},
};

#define ATTN_MAX_CASES (sizeof default_cases / sizeof default_cases[0])
#define ATTN_MAX_JOBS (3 * ATTN_MAX_CASES)

/* The points of one thread count: the fused kernels on every shape that
 * fits (fp32 first, its ids those of the fp32-only section before), then
 * the reference on the shapes that ask for it. */
typedef struct attn_jobs {
  const cal_kernel_t *k[ATTN_MAX_JOBS];
  cal_params_t p[ATTN_MAX_JOBS];
  size_t case_of[ATTN_MAX_JOBS];
  size_t n, nfused;
} attn_jobs_t;

static void params_of(const cal_run_t *r, const cal_attn_shape_t *s,
                      int threads, cal_params_t *p) {
  *p = (cal_params_t){.threads = threads, .seed = r->opt->seed + 77,
                      .variant = r->opt->attn.variant};
  cal_attn_shape_to_params(s, p);
}

/* The run's shapes into cases (ATTN_MAX_CASES of room); returns how many. */
static size_t cases_of(const cal_opts_t *o, attn_case_t *cases) {
  if (o->attn.custom) {
    cal_attn_shape_from_params(&o->attn.shape, &cases[0].s);
    cases[0].with_ref = o->attn.with_ref;
    return 1;
  }
  if (o->quick) {
    memcpy(cases, quick_cases, sizeof quick_cases);
    return sizeof quick_cases / sizeof quick_cases[0];
  }
  memcpy(cases, default_cases, sizeof default_cases);
  /* --ci tracks the fused kernel on one prefill and one decode shape; the
   * slow reference is only the baseline of a speed-up and would take a
   * quarter of the run */
  if (o->ci) {
    cases[0].with_ref = 0;
    cases[1] = default_cases[3];
    return 2;
  }
  return ATTN_MAX_CASES;
}

/* The jobs at `threads`: a shape that does not fit is skipped with a
 * message (once per kernel, as it comes). */
static void plan_jobs(const cal_run_t *r, const attn_case_t *cases, size_t n,
                      int threads, attn_jobs_t *jb) {
  static const char *const fused[2] = {"attn_fused", "attn_fused_bf16"};
  size_t refs[ATTN_MAX_CASES], nref = 0;
  unsigned dts = r->opt->attn.dtypes ? r->opt->attn.dtypes
                                     : CAL_ATTN_DT_FP32 | CAL_ATTN_DT_BF16;
  jb->n = 0;
  for (int dt = 0; dt < 2; dt++)
    for (size_t i = 0; i < n; i++)
      for (int k = 0; k < 1 + (dt == 0 && cases[i].with_ref); k++) {
      cal_params_t p;
      char why[256];
      params_of(r, &cases[i].s, threads, &p);
      if (!(dts & (1u << dt)) ||
          cal_attn_check_shape(&p, r->opt->hcfg.mem_avail_bytes, why,
                               sizeof why) < 0) {
        if (dts & (1u << dt)) {
          cal_progress_done(r);
          fprintf(stderr, "calibrate: attention shape skipped: %s\n", why);
        }
        continue;
      }
      if (k) {
        refs[nref++] = i;
        continue;
      }
      jb->k[jb->n] = cal_kernel_find(fused[dt]);
      jb->p[jb->n] = p;
      jb->case_of[jb->n++] = i;
    }
  jb->nfused = jb->n;
  for (size_t i = 0; i < nref; i++) {
    jb->k[jb->n] = cal_kernel_find("attn_ref");
    params_of(r, &cases[refs[i]].s, threads, &jb->p[jb->n]);
    jb->case_of[jb->n++] = refs[i];
  }
}

/* The GEMM of a dtype (bf16 or fp32) at a thread count: the best of the
 * run's gemm section, or measured here (n = 1024, the default engine's
 * kernel) when the section did not measure it.  gflops stays 0 when
 * neither could (a CPU without bf16 products). */
static int gemm_reference(cal_run_t *r, int t, int bf16,
                          cal_attn_gemm_ref_t *ref) {
  const cal_gemm_result_t *gm = cal_results_get(r->res, CAL_SEC_ID_GEMM);
  const cal_gemm_best_t *b =
      cal_gemm_best(gm, bf16 ? CAL_DTYPE_BF16 : CAL_DTYPE_FP32, t > 1);
  ref->threads = t;
  ref->bf16 = bf16;
  if (b && b->gflops > 0) {
    ref->gflops = b->gflops;
    ref->source = bf16 ? "best bf16 GEMM of this run's gemm section"
                       : "best fp32 GEMM of this run's gemm section";
    return 0;
  }
  const char *kname = !bf16 ? "sgemm"
                      : cal_engine_default(1) == CAL_ENGINE_ONEDNN
                          ? "onednn_bf16gemm"
                          : "sbgemm";
  cal_params_t p = {.m = 1024, .n = 1024, .k = 1024, .threads = t,
                    .seed = r->opt->seed, .variant = -1};
  cal_point_t pt;
  cal_progress(r, "attention: %s GEMM reference, %d thread%s",
               bf16 ? "bf16" : "fp32", t, t > 1 ? "s" : "");
  int rc = cal_run_point(r, NULL, cal_kernel_find(kname), &p, &pt);
  if (rc < 0)
    return rc;
  ref->gflops = pt.status == CAL_POINT_OK ? pt.gflops_sum.median : 0;
  ref->source = bf16 ? "bf16 GEMM n=1024 (the default engine) measured by "
                       "the attention section"
                     : "fp32 GEMM n=1024 measured by the attention section";
  cal_point_free(&pt);
  return 0;
}

static void point_id(const cal_attn_point_t *ap, int threads, char *id,
                     size_t len) {
  const cal_attn_shape_t *s = &ap->shape;
  snprintf(id, len, "attention/%s/b%lldh%lldkv%lld/q%lldk%lld/d%lld/%s/t%d",
           ap->reference ? "reference" : ap->bf16 ? "bf16/fused" : "fused",
           (long long)s->batch,
           (long long)s->heads, (long long)s->kv_heads, (long long)s->nq,
           (long long)s->nk, (long long)s->head_dim,
           s->causal ? "causal" : "full", threads);
}

/* Move the measured points of one thread count into the result (pts[]
 * end up empty): ids, ratio to the GEMM reference of their dtype g[bf16],
 * and on each fp32 fused point its speed-up over the reference of the
 * same shape. */
static void keep_points(cal_attention_result_t *res, const attn_case_t *cases,
                        const attn_jobs_t *jb, cal_point_t *pts, int threads,
                        const double g[2]) {
  size_t base = res->npoints;
  for (size_t j = 0; j < jb->n; j++) {
    cal_attn_point_t *ap = &res->points[res->npoints++];
    memset(ap, 0, sizeof *ap);
    ap->shape = cases[jb->case_of[j]].s;
    ap->reference = j >= jb->nfused;
    ap->bf16 = jb->k[j]->dtype == CAL_DTYPE_BF16;
    ap->fused = -1;
    ap->pt = pts[j];
    memset(&pts[j], 0, sizeof pts[j]);
    point_id(ap, threads, ap->id, sizeof ap->id);
    double gf = ap->pt.gflops_sum.median;
    if (ap->pt.status == CAL_POINT_OK && g[ap->bf16] > 0)
      ap->ratio_to_gemm = gf / g[ap->bf16];
    for (size_t f = 0; ap->reference && f < jb->nfused; f++)
      if (jb->case_of[f] == jb->case_of[j] &&
          jb->k[f]->dtype == CAL_DTYPE_FP32)
        ap->fused = (int64_t)(base + f);
    if (ap->fused < 0 || ap->pt.status != CAL_POINT_OK || gf <= 0)
      continue;
    cal_attn_point_t *fp = &res->points[ap->fused];
    if (fp->pt.status == CAL_POINT_OK)
      fp->speedup_vs_reference = fp->pt.gflops_sum.median / gf;
  }
}

/* Every shape at one thread count: the GEMM references (of the dtypes
 * measured), the fused kernels' shapes, then the reference kernel with at
 * most 3 samples (it is the baseline of a speed-up, not a figure to
 * track, and slow). */
static int run_threads(cal_run_t *r, const attn_case_t *cases, size_t n,
                       int t, cal_attention_result_t *res) {
  attn_jobs_t jb;
  cal_point_t pts[ATTN_MAX_JOBS];
  double g[2] = {0, 0};
  char what[64];
  int rc = 0;
  memset(pts, 0, sizeof pts);
  plan_jobs(r, cases, n, t, &jb);
  for (int bf16 = 0; bf16 < 2; bf16++) {
    int used = 0;
    for (size_t j = 0; j < jb.n; j++)
      used |= (jb.k[j]->dtype == CAL_DTYPE_BF16) == bf16;
    cal_attn_gemm_ref_t *ref = &res->gemm_ref[res->ngemm_ref];
    if (!used)
      continue;
    if ((rc = gemm_reference(r, t, bf16, ref)) < 0)
      goto out;
    g[bf16] = ref->gflops;
    res->ngemm_ref++;
  }
  snprintf(what, sizeof what, "attention, %d thread%s", t, t > 1 ? "s" : "");
  if ((rc = cal_run_points(r, NULL, 0, jb.k, jb.p, jb.nfused, pts, what)) < 0)
    goto out;
  cal_harness_cfg_t h = r->opt->hcfg;
  if (h.samples > 3)
    h.samples = 3;
  if ((rc = cal_run_points(r, &h, 0, jb.k + jb.nfused, jb.p + jb.nfused,
                           jb.n - jb.nfused, pts + jb.nfused, what)) < 0)
    goto out;
  keep_points(res, cases, &jb, pts, t, g);
out:
  for (size_t j = 0; j < ATTN_MAX_JOBS; j++)
    cal_point_free(&pts[j]);
  return rc;
}

int cal_attention_measure(cal_run_t *r) {
  attn_case_t cases[ATTN_MAX_CASES];
  size_t n = cases_of(r->opt, cases);
  int tcounts[2] = {1, r->opt->threads};
  int nt = r->opt->threads > 1 ? 2 : 1, rc = 0;
  cal_attention_result_t *res = calloc(1, sizeof *res);
  if (!res || !(res->points = calloc((size_t)nt * 3 * n, sizeof *res->points))) {
    rc = CAL_ENOMEM;
    goto out;
  }
  res->cap = (size_t)nt * 3 * n;
  for (int ti = 0; ti < nt; ti++)
    if ((rc = run_threads(r, cases, n, tcounts[ti], res)) < 0)
      goto out;
  r->res->sec[CAL_SEC_ID_ATTENTION] = res;
  res = NULL;
out:
  cal_attention_drop(res);
  return rc;
}

CAL_PT_RESULT_DROP(cal_attention_drop, cal_attention_result_t)
