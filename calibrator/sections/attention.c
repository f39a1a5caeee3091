/* The attention section: the fused kernel on a set of shapes (prefill and
 * decode, short and long, D = 64 and 128, GQA), at one pinned thread and
 * all threads, against the reference and the run's fp32 GEMM. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cal_err.h"
#include "run.h"

typedef struct {
  int64_t b, h, hkv, nq, nk, d;
  int causal;
  int with_ref; /* also time the reference on this shape */
} attn_shape_t;

/* Default shapes.  The long causal prefill (N = 2048, D = 128) is the one
 * the reference is timed on; decode (N_q = 1) is memory-bound. */
static const attn_shape_t default_shapes[] = {
    {1, 8, 8, 512, 512, 64, 1, 0},      /* short causal prefill, MHA */
    {1, 4, 2, 2048, 2048, 128, 1, 1},   /* long causal prefill, GQA */
    {2, 8, 8, 256, 256, 128, 0, 0},     /* non-causal (encoder-style) */
    {1, 32, 8, 1, 4096, 128, 1, 0},     /* decode, GQA, KV cache 4096 */
    {4, 16, 16, 1, 2048, 64, 1, 0},     /* decode, MHA, D = 64 */
};
/* quick: no reference (it alone would take three seconds) */
static const attn_shape_t quick_shapes[] = {
    {1, 8, 8, 256, 256, 64, 1, 0},
    {1, 4, 2, 1024, 1024, 128, 1, 0},
    {1, 32, 8, 1, 4096, 128, 1, 0},
};

static void params_of(const cal_run_t *r, const attn_shape_t *s, int threads,
                      cal_params_t *p) {
  memset(p, 0, sizeof *p);
  p->batch = s->b;
  p->heads = s->h;
  p->kv_heads = s->hkv;
  p->nq = s->nq;
  p->nk = s->nk;
  p->head_dim = s->d;
  p->causal = s->causal;
  p->threads = threads;
  p->seed = r->seed + 77;
  p->variant = r->attn_variant;
}

/* fp32 GEMM GFLOPS at a thread count from the GEMM section, or measured
 * here (n = 1024) when the section did not run. */
static int gemm_reference(cal_run_t *r, int t, double *g, const char **src) {
  int idx = t == 1 ? 0 : 1;
  if (r->sgemm_best[idx] > 0) {
    *g = r->sgemm_best[idx];
    *src = "best fp32 GEMM of this run's gemm section";
    return 0;
  }
  cal_params_t p = {.m = 1024, .n = 1024, .k = 1024, .threads = t,
                    .seed = r->seed, .variant = -1};
  cal_point_t pt;
  cal_progress(r, "attention: fp32 GEMM reference, %d thread%s", t, t > 1 ? "s" : "");
  int rc = cal_run_point(r, cal_kernel_find("sgemm"), &p, &pt);
  if (rc < 0)
    return rc;
  *g = pt.status == CAL_POINT_OK ? pt.gflops_sum.median : 0;
  *src = "fp32 GEMM n=1024 measured by the attention section";
  r->sgemm_best[idx] = *g;
  r->sgemm_best_n[idx] = 1024;
  cal_point_free(&pt);
  return 0;
}

static json_t *shape_json(const attn_shape_t *s) {
  return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:s}", "batch",
                   (json_int_t)s->b, "heads", (json_int_t)s->h, "kv_heads",
                   (json_int_t)s->hkv, "nq", (json_int_t)s->nq, "nk",
                   (json_int_t)s->nk, "head_dim", (json_int_t)s->d, "causal",
                   s->causal, "mode", s->nq == 1 && s->nk > 1 ? "decode" : "prefill");
}

static int run_shapes(cal_run_t *r, const attn_shape_t *shapes, size_t n,
                      json_t *sec) {
  json_t *points = json_object_get(sec, "points");
  json_t *gref = json_object_get(sec, "gemm_reference");
  int tcounts[2] = {1, r->threads};
  int nt = r->threads > 1 ? 2 : 1;
  int rc = 0;
  /* every (shape, kernel) job at one thread count, fused then reference */
  const cal_kernel_t **ks = calloc(2 * n, sizeof *ks);
  cal_params_t *ps = calloc(2 * n, sizeof *ps);
  size_t *shape_of = calloc(2 * n, sizeof *shape_of);
  cal_point_t *pts = calloc(2 * n, sizeof *pts);
  if (!ks || !ps || !shape_of || !pts) {
    rc = CAL_ENOMEM;
    goto out;
  }
  for (int ti = 0; ti < nt; ti++) {
    int t = tcounts[ti];
    double g = 0;
    const char *src = "";
    if ((rc = gemm_reference(r, t, &g, &src)) < 0)
      goto out;
    char key[32];
    snprintf(key, sizeof key, "t%d", t);
    json_object_set_new(gref, key, json_pack("{s:f, s:s}", "gflops", g, "source", src));
    size_t nj = 0;
    for (size_t i = 0; i < n; i++) {
      const attn_shape_t *s = &shapes[i];
      for (int k = 0; k < 1 + s->with_ref; k++) {
        params_of(r, s, t, &ps[nj]);
        char why[256];
        if (cal_attn_check_shape(&ps[nj], r->hcfg.mem_avail_bytes, why,
                                 sizeof why) < 0) {
          cal_progress_done(r);
          fprintf(stderr, "calibrate: attention shape skipped: %s\n", why);
          continue;
        }
        ks[nj] = cal_kernel_find(k ? "attn_ref" : "attn_fused");
        shape_of[nj++] = i;
      }
    }
    char what[64];
    snprintf(what, sizeof what, "attention, %d thread%s", t, t > 1 ? "s" : "");
    /* the fused kernel's shapes, then the reference with 3 samples: it is
     * the baseline of a speed-up, not a figure to track, and slow */
    size_t nfused = 0;
    for (size_t j = 0; j < nj; j++)
      if (strcmp(ks[j]->name, "attn_ref") != 0) {
        const cal_kernel_t *tk = ks[j];
        cal_params_t tp = ps[j];
        size_t ts = shape_of[j];
        memmove(ks + nfused + 1, ks + nfused, (j - nfused) * sizeof *ks);
        memmove(ps + nfused + 1, ps + nfused, (j - nfused) * sizeof *ps);
        memmove(shape_of + nfused + 1, shape_of + nfused, (j - nfused) * sizeof *shape_of);
        ks[nfused] = tk;
        ps[nfused] = tp;
        shape_of[nfused++] = ts;
      }
    if ((rc = cal_run_points(r, ks, ps, nfused, pts, what)) < 0)
      goto out;
    cal_harness_cfg_t keep = r->hcfg;
    if (r->hcfg.samples > 3)
      r->hcfg.samples = 3;
    rc = cal_run_points(r, ks + nfused, ps + nfused, nj - nfused, pts + nfused, what);
    r->hcfg = keep;
    if (rc < 0)
      goto out;
    json_t **fused_of = calloc(n, sizeof *fused_of); /* borrowed, by shape */
    if (!fused_of) {
      rc = CAL_ENOMEM;
      goto out;
    }
    for (size_t j = 0; j < nj; j++) {
      const attn_shape_t *s = &shapes[shape_of[j]];
      int ref = strcmp(ks[j]->name, "attn_ref") == 0;
      char id[160];
      snprintf(id, sizeof id, "attention/%s/b%lldh%lldkv%lld/q%lldk%lld/d%lld/%s/t%d",
               ref ? "reference" : "fused", (long long)s->b, (long long)s->h,
               (long long)s->hkv, (long long)s->nq, (long long)s->nk,
               (long long)s->d, s->causal ? "causal" : "full", t);
      json_t *o = cal_point_json(&pts[j], id, "gflops");
      if (!o) {
        rc = CAL_ENOMEM;
        goto out;
      }
      json_t *sj = shape_json(s);
      json_object_update(o, sj);
      json_decref(sj);
      if (pts[j].status == CAL_POINT_OK) {
        double gf = pts[j].gflops_sum.median;
        if (g > 0)
          json_object_set_new(o, "ratio_to_gemm", json_real(gf / g));
        json_t *fj = fused_of[shape_of[j]];
        if (!ref) {
          fused_of[shape_of[j]] = o;
        } else if (gf > 0 && fj) {
          double fg = json_number_value(json_object_get(fj, "gflops"));
          json_object_set_new(fj, "speedup_vs_reference", json_real(fg / gf));
        }
      }
      json_array_append_new(points, o);
    }
    free(fused_of);
    for (size_t j = 0; j < nj; j++)
      cal_point_free(&pts[j]);
  }
out:
  if (pts)
    for (size_t j = 0; j < 2 * n; j++)
      cal_point_free(&pts[j]);
  free(ks);
  free(ps);
  free(shape_of);
  free(pts);
  return rc;
}

int cal_section_attention(cal_run_t *r) {
  cal_progress_section(r, CAL_SEC_ATTENTION);
  json_t *sec = json_pack("{s:s, s:o, s:o}", "flops_note",
                          "4*B*H*D*sum over queries of keys attended (exact for "
                          "causal); bytes: Q, K, V read and O written once",
                          "gemm_reference", json_object(), "points", json_array());
  if (!sec)
    return CAL_ENOMEM;
  json_object_set_new(r->root, "attention", sec);
  if (r->attn_custom) {
    attn_shape_t s = {r->attn.batch, r->attn.heads, r->attn.kv_heads,
                      r->attn.nq, r->attn.nk, r->attn.head_dim, r->attn.causal,
                      r->attn_with_ref};
    return run_shapes(r, &s, 1, sec);
  }
  if (r->quick)
    return run_shapes(r, quick_shapes, sizeof quick_shapes / sizeof quick_shapes[0], sec);
  if (r->ci) {
    /* --ci tracks the fused kernel; the slow reference is only the
     * baseline of a speed-up and would take a quarter of the run */
    attn_shape_t s[sizeof default_shapes / sizeof default_shapes[0]];
    memcpy(s, default_shapes, sizeof s);
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
      s[i].with_ref = 0;
    return run_shapes(r, s, sizeof s / sizeof s[0], sec);
  }
  return run_shapes(r, default_shapes,
                    sizeof default_shapes / sizeof default_shapes[0], sec);
}
