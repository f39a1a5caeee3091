/* Memory bandwidth: stream kernels inside each cache level and at memory,
 * at one thread and all threads, and a working-set staircase for the
 * picture. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bandwidth.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "results.h"
#include "run.h"
#include "worksets.h"

void cal_bandwidth_drop(void *result) {
  cal_bandwidth_result_t *res = result;
  if (!res)
    return;
  cal_points_free(res->points, res->npoints);
  free(res->levels);
  free(res);
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

/* The working sets of the staircase (read, 1 thread) into stair[96]:
 * from 4 KiB to 4x the last level, but no further than most LLCs (the
 * memory level points keep STREAM's 4x rule); its largest arrays cost the
 * most to set up. */
static int staircase(const cal_run_t *r, const cal_cache_sizes_t *cs,
                     int64_t *stair) {
  int quick = r->opt->quick;
  int64_t llc = cs->l3 ? cs->l3 : cs->l2 ? cs->l2 : cs->l1d;
  int64_t top = llc > 0 ? 4 * llc : 128 << 20;
  if (top > (quick ? 64 << 20 : 128 << 20))
    top = quick ? 64 << 20 : 128 << 20;
  if (r->opt->ci) /* --ci: the level points only; the staircase is a picture */
    return 0;
  int nstair = cal_staircase(4096, top, quick ? 1 : 2, stair, 96);
  return nstair < 0 ? 0 : nstair;
}

/* The largest memory working set: STREAM's 4x the last level, but at
 * most 512 MiB (256 MiB --ci).  A VM may report a socket's whole shared L3
 * (hundreds of MiB) while the drop to memory speed comes far earlier; 4x
 * that costs seconds a point to set up and measures nothing new.  A point
 * made smaller says so (capped). */
static int64_t memory_cap(const cal_opts_t *o) {
  /* --ci compares runs, it is not the machine's STREAM figure: 256 MiB */
  return o->ci ? INT64_C(256) << 20 : INT64_C(512) << 20;
}

/* The level points: per level, read and triad at 1 and all threads, copy
 * at memory.  Appends to ks/ps/levels from *n. */
static void level_points(const cal_run_t *r, const cal_cache_sizes_t *cs,
                         const cal_kernel_t **ks, cal_params_t *ps,
                         const char **levels, size_t *n) {
  const cal_opts_t *o = r->opt;
  int tcounts[2] = {1, o->threads}, nt = o->threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nt; ti++) {
    cal_workset_t ws[CAL_WS_MAX_LEVELS];
    size_t nws = 0;
    if (cal_bandwidth_worksets(cs, tcounts[ti], 4.0, memory_cap(o), ws,
                               &nws) < 0)
      continue; /* no cache information: only the staircase */
    for (size_t l = 0; l < nws; l++) {
      /* full: triad and read in the caches; at memory (whose arrays take
       * the longest to set up) triad at one thread, triad, read and copy
       * at all threads; quick: triad, and memory only at all threads with
       * read as well (the batch sweep's decode points are held against
       * it) */
      static const char *const names[] = {"stream_triad", "stream_read",
                                          "stream_copy"};
      int mem = strcmp(ws[l].level, "memory") == 0;
      int nkern = o->quick ? (mem ? 2 : 1) : !mem ? 2 : ti == nt - 1 ? 3 : 1;
      if (o->quick && mem && ti == 0 && nt > 1)
        continue;
      for (int k = 0; k < nkern; k++) {
        /* --ci: read in L2 at one thread and from memory at all threads
         * (the decode points' efficiency needs the latter) */
        if (o->ci && (k != 1 || (mem ? ti != nt - 1
                                     : ti != 0 || strcmp(ws[l].level, "L2"))))
          continue;
        ks[*n] = cal_kernel_find(names[k]);
        ps[*n] = (cal_params_t){.bytes = ws[l].bytes, .threads = tcounts[ti],
                                .seed = o->seed, .variant = CAL_VARIANT_AUTO};
        levels[(*n)++] = ws[l].level;
      }
    }
  }
}

/* The staircase is for the picture: fewer, shorter samples, one round,
 * and its instability is no verdict on the machine. */
static int measure_staircase(cal_run_t *r, const cal_kernel_t **ks,
                             const cal_params_t *ps, size_t n,
                             cal_point_t *out) {
  cal_harness_cfg_t h = r->opt->hcfg;
  h.samples = 3;
  h.min_sample_s = r->opt->quick ? 0.002 : 0.005;
  h.warmup_s = 0.0;
  int unstable = r->res->quality.unstable;
  int rc = cal_run_points(r, &h, 1, ks, ps, n, out, "bandwidth staircase");
  r->res->quality.unstable = unstable; /* three quick samples are not a verdict */
  return rc;
}

int cal_bandwidth_measure(cal_run_t *r) {
  cal_cache_sizes_t cs;
  cache_sizes(&r->ctx->hw, &cs);
  int64_t stair[96];
  int nstair = staircase(r, &cs, stair);
  size_t cap = 2 * (3 * CAL_WS_MAX_LEVELS) + (size_t)nstair, n = 0;
  const cal_kernel_t **ks = calloc(cap, sizeof *ks);
  cal_params_t *ps = calloc(cap, sizeof *ps);
  cal_bandwidth_result_t *res = calloc(1, sizeof *res);
  int rc = CAL_ENOMEM;
  if (!ks || !ps || !res || !(res->levels = calloc(cap, sizeof *res->levels)) ||
      !(res->points = calloc(cap, sizeof *res->points)))
    goto out;
  res->npoints = cap; /* every point zeroed, so drop may free them all */
  level_points(r, &cs, ks, ps, res->levels, &n);
  size_t nlevels = n;
  for (int i = 0; i < nstair; i++) {
    ks[n] = cal_kernel_find("stream_read");
    ps[n] = (cal_params_t){.bytes = stair[i], .threads = 1, .seed = r->opt->seed,
                           .variant = CAL_VARIANT_AUTO};
    res->levels[n++] = NULL;
  }
  cal_harness_cfg_t h;
  cal_bandwidth_harness(r, &h);
  if ((rc = cal_run_points(r, &h, 0, ks, ps, nlevels, res->points,
                           "bandwidth")) < 0 ||
      (rc = measure_staircase(r, ks + nlevels, ps + nlevels, (size_t)nstair,
                              res->points + nlevels)) < 0)
    goto out;
  res->npoints = n;
  r->res->sec[CAL_SEC_ID_BANDWIDTH] = res;
  res = NULL;
out:
  cal_bandwidth_drop(res);
  free(ks);
  free(ps);
  return rc;
}

void cal_bandwidth_harness(const cal_run_t *r, cal_harness_cfg_t *h) {
  *h = r->opt->hcfg;
  if (h->min_sample_s > 0.02)
    h->min_sample_s = 0.02;
  if (h->warmup_s > 0.05)
    h->warmup_s = 0.05;
}

const cal_point_t *cal_bandwidth_memory_point(const cal_bandwidth_result_t *bw,
                                              const char *kernel, int threads) {
  for (size_t i = 0; bw && i < bw->npoints; i++) {
    const cal_point_t *pt = &bw->points[i];
    int pt_threads = pt->params.threads > 0 ? pt->params.threads : 1;
    if (bw->levels && bw->levels[i] && !strcmp(bw->levels[i], "memory") &&
        pt->kernel && !strcmp(pt->kernel->name, kernel) && pt_threads == threads)
      return pt;
  }
  return NULL;
}

double cal_bandwidth_memory(const cal_bandwidth_result_t *bw,
                            const char *kernel, int threads, char *why,
                            size_t len) {
  const char *s = threads == 1 ? "" : "s";
  const cal_point_t *pt = cal_bandwidth_memory_point(bw, kernel, threads);
  if (!bw)
    snprintf(why, len, "the bandwidth section did not run");
  else if (!pt)
    snprintf(why, len, "the bandwidth section has no %s point at "
             "memory on %d thread%s", kernel, threads, s);
  else if (pt->status == CAL_POINT_OK && pt->gbps_sum.median > 0)
    return pt->gbps_sum.median;
  else
    snprintf(why, len, "the bandwidth section's %s point at memory "
             "on %d thread%s was not measured: %s", kernel, threads, s,
             pt->reason);
  return NAN;
}

double cal_bandwidth_memory_read(const cal_bandwidth_result_t *bw, int threads,
                                 char *why, size_t len) {
  return cal_bandwidth_memory(bw, "stream_read", threads, why, len);
}
