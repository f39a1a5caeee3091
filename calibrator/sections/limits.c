/* The machine's limits: FMA peak per dtype (with the clock and the
 * theoretical peak), memory bandwidth per cache level and its staircase,
 * and the roofline that places every measured kernel against them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "clock.h"
#include "limits_json.h"
#include "roofline.h"
#include "run.h"
#include "worksets.h"

static const char *const peak_kernels[] = {"fma_f64", "fma_f32", "dp_bf16",
                                           "dp_int8"};

int cal_section_peak(cal_run_t *r) {
  cal_progress_section(r, CAL_SEC_PEAK);
  int rc, variant;
  if ((rc = cal_variant_best(&variant)) < 0)
    variant = CAL_VARIANT_SCALAR;
  /* the clock under vector load, on one pinned thread */
  if (r->thr)
    cal_threads_use(r->thr, 1);
  cal_progress(r, "peak: clock under vector load");
  r->have_clock = cal_clock_measure(CAL_VARIANT_AUTO, r->quick ? 0.002 : 0.005,
                                    &r->clock) == 0;
  r->have_model =
      r->have_clock && cal_theory_init(&r->model, variant, cal_isa_features(),
                                           r->clock.ghz, r->hw.usable_cores) == 0;
  size_t nk = sizeof peak_kernels / sizeof peak_kernels[0];
  int tcounts[2] = {1, r->threads}, nt = r->threads > 1 ? 2 : 1;
  const cal_kernel_t *ks[8];
  cal_params_t ps[8];
  size_t n = 0;
  for (int ti = 0; ti < nt; ti++)
    for (size_t i = 0; i < nk; i++) {
      /* quick: the ML dot products at one thread only */
      if (r->quick && ti > 0 && i >= 2)
        continue;
      ks[n] = cal_kernel_find(peak_kernels[i]);
      ps[n] = (cal_params_t){.threads = tcounts[ti], .seed = r->seed,
                             .variant = CAL_VARIANT_AUTO};
      n++;
    }
  r->peak_pts = calloc(n, sizeof *r->peak_pts);
  if (!r->peak_pts)
    return CAL_ENOMEM;
  /* register-resident loops: no memory, no warm-up of caches; 20 ms
   * samples are already a million timer ticks */
  cal_harness_cfg_t keep = r->hcfg;
  if (r->hcfg.min_sample_s > 0.02)
    r->hcfg.min_sample_s = 0.02;
  if (r->hcfg.warmup_s > 0.02)
    r->hcfg.warmup_s = 0.02;
  rc = cal_run_points(r, ks, ps, n, r->peak_pts, "peak");
  r->hcfg = keep;
  if (rc < 0)
    return rc;
  r->npeak = n;
  json_t *sec = cal_compute_peak_json(r->peak_pts, n,
                                      r->have_clock ? &r->clock : NULL,
                                      r->have_model ? &r->model : NULL);
  if (!sec)
    return CAL_ENOMEM;
  json_object_set_new(r->root, "peak", sec);
  return 0;
}

/* Cache sizes of the machine's data caches from hwinfo. */
static void cache_sizes(const cal_hwinfo_t *hw, cal_cache_sizes_t *c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < hw->ncaches; i++) {
    const cal_cache_info_t *ci = &hw->caches[i];
    if (strcmp(ci->type, "instruction") == 0)
      continue;
    if (ci->level == 1) {
      c->l1d = (int64_t)ci->size_bytes;
      c->l1_shared_by = ci->cores_sharing;
    } else if (ci->level == 2) {
      c->l2 = (int64_t)ci->size_bytes;
      c->l2_shared_by = ci->cores_sharing;
    } else if (ci->level == 3) {
      c->l3 = (int64_t)ci->size_bytes;
      c->l3_shared_by = ci->cores_sharing;
    }
  }
}

int cal_section_bandwidth(cal_run_t *r) {
  cal_progress_section(r, CAL_SEC_BANDWIDTH);
  cal_cache_sizes_t cs;
  cache_sizes(&r->hw, &cs);
  int tcounts[2] = {1, r->threads}, nt = r->threads > 1 ? 2 : 1;
  /* per level: read and triad at 1 and all threads, copy at memory; then
   * the staircase (read, 1 thread) */
  int64_t stair[96];
  int64_t llc = cs.l3 ? cs.l3 : cs.l2 ? cs.l2 : cs.l1d;
  int64_t top = llc > 0 ? 4 * llc : 256 << 20;
  /* the staircase stops once past most LLCs (the memory level points
   * keep STREAM's 4x rule); its largest arrays cost the most to set up */
  if (top > (r->quick ? 64 << 20 : 256 << 20))
    top = r->quick ? 64 << 20 : 256 << 20;
  int nstair = cal_staircase(4096, top, r->quick ? 1 : 2, stair, 96);
  if (nstair < 0)
    nstair = 0;
  size_t cap = 2 * (3 * CAL_WS_MAX_LEVELS) + (size_t)nstair;
  const cal_kernel_t **ks = calloc(cap, sizeof *ks);
  cal_params_t *ps = calloc(cap, sizeof *ps);
  r->bw_levels = calloc(cap, sizeof *r->bw_levels);
  r->bw_pts = calloc(cap, sizeof *r->bw_pts);
  int rc = 0;
  if (!ks || !ps || !r->bw_levels || !r->bw_pts) {
    rc = CAL_ENOMEM;
    goto out;
  }
  size_t n = 0;
  for (int ti = 0; ti < nt; ti++) {
    cal_workset_t ws[CAL_WS_MAX_LEVELS];
    size_t nws = 0;
    if (cal_bandwidth_worksets(&cs, tcounts[ti], 4.0, 0, ws, &nws) < 0)
      continue; /* no cache information: only the staircase */
    for (size_t l = 0; l < nws; l++) {
      /* full: triad and read in the caches; at memory (whose arrays take
       * the longest to set up) triad at one thread, triad, read and copy
       * at all threads; quick: triad,
       * and memory (whose arrays take the longest to set up) only at all
       * threads */
      static const char *const names[] = {"stream_triad", "stream_read",
                                          "stream_copy"};
      int mem = strcmp(ws[l].level, "memory") == 0;
      int nkern = r->quick ? 1 : !mem ? 2 : ti == nt - 1 ? 3 : 1;
      if (r->quick && mem && ti == 0 && nt > 1)
        continue;
      for (int k = 0; k < nkern; k++) {
        ks[n] = cal_kernel_find(names[k]);
        ps[n] = (cal_params_t){.bytes = ws[l].bytes, .threads = tcounts[ti],
                               .seed = r->seed, .variant = CAL_VARIANT_AUTO};
        r->bw_levels[n++] = ws[l].level;
      }
    }
  }
  for (int i = 0; i < nstair; i++) {
    ks[n] = cal_kernel_find("stream_read");
    ps[n] = (cal_params_t){.bytes = stair[i], .threads = 1, .seed = r->seed,
                           .variant = CAL_VARIANT_AUTO};
    r->bw_levels[n++] = NULL;
  }
  /* the staircase is for the picture: fewer, shorter samples */
  size_t nlevels = n - (size_t)nstair;
  if ((rc = cal_run_points(r, ks, ps, nlevels, r->bw_pts, "bandwidth")) < 0)
    goto out;
  cal_harness_cfg_t keep = r->hcfg;
  int keep_rounds = r->rounds;
  r->hcfg.samples = 3;
  r->hcfg.min_sample_s = r->quick ? 0.002 : 0.005;
  r->hcfg.warmup_s = 0.0;
  r->rounds = 1;
  int unstable = r->unstable;
  rc = cal_run_points(r, ks + nlevels, ps + nlevels, (size_t)nstair,
                      r->bw_pts + nlevels, "bandwidth staircase");
  r->unstable = unstable; /* three quick samples are not a verdict */
  r->hcfg = keep;
  r->rounds = keep_rounds;
  if (rc < 0)
    goto out;
  r->nbw = n;
  json_t *sec = cal_bandwidth_section_json(r->bw_pts, r->bw_levels, n);
  if (!sec) {
    rc = CAL_ENOMEM;
    goto out;
  }
  json_t *caches = json_array();
  for (int i = 0; i < r->hw.ncaches; i++) {
    const cal_cache_info_t *c = &r->hw.caches[i];
    if (strcmp(c->type, "instruction") != 0)
      json_array_append_new(caches, json_pack("{s:i, s:I, s:i}", "level", c->level,
                                              "size_bytes", (json_int_t)c->size_bytes,
                                              "cores_sharing", c->cores_sharing));
  }
  json_object_set_new(sec, "caches", caches);
  json_object_set_new(r->root, "bandwidth", sec);
out:
  free(ks);
  free(ps);
  return rc;
}

/* A point shell for the roofline from a profile point with its analytic
 * work: kernel, dtype, threads, flops and bytes per run, median GFLOPS. */
typedef struct {
  cal_point_t pt;
  double g;
} shell_t;

static int add_shells(json_t *points, int threads, shell_t *out, size_t *n,
                      size_t cap) {
  size_t i;
  json_t *p;
  json_array_foreach(points, i, p) {
    const char *kn = json_string_value(json_object_get(p, "kernel"));
    const cal_kernel_t *k = kn ? cal_kernel_find(kn) : NULL;
    const char *st = json_string_value(json_object_get(p, "status"));
    if (!k || !st || strcmp(st, "ok") || *n >= cap ||
        json_integer_value(json_object_get(p, "threads")) != threads ||
        !json_is_number(json_object_get(p, "gflops")) ||
        !json_is_number(json_object_get(p, "flops_per_run")) ||
        !json_is_number(json_object_get(p, "bytes_per_run")))
      continue;
    shell_t *s = &out[(*n)++];
    memset(s, 0, sizeof *s);
    s->pt.kernel = k;
    s->pt.status = CAL_POINT_OK;
    s->pt.params.threads = threads;
    s->pt.flops = json_number_value(json_object_get(p, "flops_per_run"));
    s->pt.bytes = json_number_value(json_object_get(p, "bytes_per_run"));
    s->g = json_number_value(json_object_get(p, "gflops"));
    s->pt.gflops = &s->g;
    s->pt.gflops_sum.median = s->g;
    const char *v = json_string_value(json_object_get(p, "variant"));
    snprintf(s->pt.variant, sizeof s->pt.variant, "%s", v ? v : "default");
  }
  return 0;
}

int cal_section_roofline(cal_run_t *r) {
  cal_progress_section(r, CAL_SEC_ROOFLINE);
  if (!r->npeak || !r->nbw)
    return 0; /* nothing to draw ceilings from */
  cal_roofline_t roof;
  int rc = cal_roofline_from_points(r->peak_pts, r->npeak, r->bw_pts,
                                    r->bw_levels, r->nbw, r->threads, &roof);
  if (rc < 0)
    return rc;
  /* every measured kernel at all threads: GEMM sizes, attention shapes,
   * layer batches */
  size_t cap = 512, n = 0;
  shell_t *sh = calloc(cap, sizeof *sh);
  if (!sh)
    return CAL_ENOMEM;
  add_shells(json_object_get(json_object_get(r->root, "gemm"), "points"),
             r->threads, sh, &n, cap);
  add_shells(json_object_get(json_object_get(r->root, "attention"), "points"),
             r->threads, sh, &n, cap);
  const char *mode;
  json_t *m;
  json_object_foreach(json_object_get(json_object_get(r->root, "batch_sweep"), "modes"),
                      mode, m)
    add_shells(json_object_get(m, "points"), r->threads, sh, &n, cap);
  cal_point_t *pts = calloc(n ? n : 1, sizeof *pts);
  if (!pts) {
    free(sh);
    return CAL_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    pts[i] = sh[i].pt;
    pts[i].gflops = &sh[i].g;
  }
  json_t *sec = cal_roofline_section_json(&roof, r->have_model ? &r->model : NULL,
                                          pts, n, "memory");
  free(pts);
  free(sh);
  if (!sec)
    return CAL_ENOMEM;
  /* efficiencies the profile states */
  json_t *eff = json_object();
  double peak32 = 0, peak64 = 0;
  for (size_t i = 0; i < r->npeak; i++) {
    const cal_point_t *p = &r->peak_pts[i];
    if (p->status != CAL_POINT_OK || p->params.threads != r->threads)
      continue;
    if (strcmp(p->kernel->name, "fma_f32") == 0) peak32 = p->gflops_sum.median;
    if (strcmp(p->kernel->name, "fma_f64") == 0) peak64 = p->gflops_sum.median;
  }
  if (peak32 > 0 && r->sgemm_best[1] > 0)
    json_object_set_new(eff, "gemm_fp32_of_measured_peak",
                        json_real(r->sgemm_best[1] / peak32));
  if (r->have_model) {
    double t32 = cal_theory_gflops(&r->model, CAL_DT_FP32);
    double t64 = cal_theory_gflops(&r->model, CAL_DT_FP64);
    if (t32 > 0 && peak32 > 0)
      json_object_set_new(eff, "measured_peak_fp32_of_theoretical", json_real(peak32 / t32));
    if (t64 > 0 && peak64 > 0)
      json_object_set_new(eff, "measured_peak_fp64_of_theoretical", json_real(peak64 / t64));
  }
  json_t *at = json_object_get(json_object_get(r->root, "attention"), "points");
  size_t i;
  json_t *p;
  double best_ratio = 0;
  json_array_foreach(at, i, p) {
    json_t *ratio = json_object_get(p, "ratio_to_gemm");
    if (json_is_number(ratio) && json_number_value(ratio) > best_ratio &&
        json_integer_value(json_object_get(p, "threads")) == r->threads &&
        strcmp(json_string_value(json_object_get(p, "kernel")), "attn_fused") == 0)
      best_ratio = json_number_value(ratio);
  }
  if (best_ratio > 0)
    json_object_set_new(eff, "attention_of_gemm_best", json_real(best_ratio));
  json_object_set_new(sec, "efficiencies", eff);
  json_object_set_new(r->root, "roofline", sec);
  return 0;
}
