/* The batch sweep: throughput versus batch size of the model-shaped layer,
 * prefill and decode, and of the model's training step (train: one layer's
 * step and the LM head's measured, the model's step built of them), with
 * noise-aware peak detection.  Leaves a
 * cal_batch_result_t (results.h); profile/batch_json.c writes its profile
 * object and report/table_batch.c its part of the table.  This file
 * measures; batch_plan.c plans the points, batch_curve.c turns samples
 * into throughput and the curve's analysis. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_sweep.h"
#include "cal_err.h"
#include "curve.h"
#include "layer.h"
#include "layer_train.h"
#include "lm_head.h"
#include "results.h"
#include "run.h"
#include "timer.h"

/* decode batches up to this are measured on both paths (the one-team GEMV
 * and the engine's GEMM) and keep the faster: which wins depends on the
 * engine and the dtype (measured on 2 cores: OpenBLAS fp32 loses to the
 * GEMV up to batch 32, oneDNN bf16 wins from batch 16, oneDNN fp32 from 4) */
#define SWEEP_BOTH_PATHS_MAX 32
/* train's own time (it is added to the sweep's, not shared): seconds by
 * default and with --quick, times --budget-scale */
#define SWEEP_TRAIN_S 60.0
#define SWEEP_TRAIN_QUICK_S 15.0
/* train points take at most this many samples, --quick fewer (a step of
 * a real preset lasts seconds; the layers and the LM head are each
 * timed) */
#define SWEEP_TRAIN_SAMPLES 5
#define SWEEP_TRAIN_QUICK_SAMPLES 3

/* Check the layer once at batch 1 before anything is timed.  Returns 0
 * (mode measured), 1 when the mode failed or was skipped (status and
 * reason set), or an internal error. */
static int verify_layer(sweep_t *s) {
  cal_run_t *r = s->r;
  cal_batch_mode_t *m = s->m;
  const cal_kernel_t *k = s->k;
  cal_params_t p;
  cal_progress(r, "batch sweep %s: verifying the layer", m->name);
  cal_sweep_shape(s, s->decode, 1, &p);
  if (r->ctx->thr)
    cal_threads_use(r->ctx->thr, r->opt->threads);
  void *st = NULL;
  const char *why = NULL;
  char over[160];
  if (cal_sweep_mem_of(s, &p) > s->mem_budget) {
    /* the check runs a batch-1 layer: it is held to the budget too */
    snprintf(over, sizeof over, "needs %.0f MiB at batch 1, more than the "
             "%.0f MiB memory budget", cal_sweep_mem_of(s, &p) / 1048576.0,
             s->mem_budget / 1048576.0);
    why = over;
  }
  int rc = why || (k->supported && k->supported(&p, &why) < 0) ? CAL_EUNSUPP : 0;
  if (rc == 0)
    rc = k->setup(&p, &st);
  if (rc == 0)
    rc = k->run(st);
  if (rc == 0)
    rc = k->verify(st);
  k->teardown(st);
  if (rc < 0)
    snprintf(m->reason, sizeof m->reason, "%s at batch 1: %s", k->name,
             why ? why : cal_strerror(rc));
  if (rc == CAL_EVERIFY) {
    r->res->quality.failed++;
    cal_progress_done(r);
    fprintf(stderr, "calibrate: %s failed verification\n", m->reason);
    m->status = "failed";
    return 1;
  }
  if (rc == CAL_ENOMEM || rc == CAL_EUNSUPP) {
    m->status = "skipped";
    return 1;
  }
  if (rc < 0)
    return rc;
  m->status = "measured";
  return 0;
}

/* --ci: the fixed list measured in interleaved rounds; batches over the
 * memory budget are skipped one by one. */
static int sweep_ci(sweep_t *s) {
  size_t n = s->nlist, nj = 0;
  const cal_kernel_t **ks = calloc(n, sizeof *ks);
  cal_params_t *ps = calloc(n, sizeof *ps);
  cal_point_t *cps = calloc(n, sizeof *cps);
  size_t *at = calloc(n, sizeof *at);
  int rc = 0, over = 0;
  if (!ks || !ps || !cps || !at) {
    rc = CAL_ENOMEM;
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    cal_sweep_shape(s, s->decode, s->list[i], &ps[nj]);
    if (cal_sweep_mem_of(s, &ps[nj]) <= s->mem_budget) {
      ks[nj] = s->k;
      at[nj++] = i;
    }
  }
  /* --ci: the layer's setup and double-precision check cost more than its
   * samples, and each round repeats them: one round with every round's
   * samples keeps the run short */
  cal_harness_cfg_t h = s->r->opt->hcfg;
  int rounds = 0;
  if (s->r->opt->ci) {
    h.samples *= s->r->opt->rounds;
    rounds = 1;
  }
  if ((rc = cal_run_points(s->r, &h, rounds, ks, ps, nj, cps, s->m->name)) < 0)
    goto out;
  for (size_t i = 0, j = 0; i < n; i++) {
    cal_batch_point_t *bp = cal_sweep_point_add(s, s->list[i]);
    if (j < nj && at[j] == i) {
      if ((rc = cal_sweep_point_take(s, bp, &cps[j++], NULL)) < 0)
        goto out;
    } else {
      cal_sweep_over_budget(s, bp);
      over = 1;
    }
  }
  s->m->stop = over ? "memory limit" : "fixed batch list (--ci)";
out:
  for (size_t j = 0; cps && j < n; j++)
    cal_point_free(&cps[j]);
  free(ks);
  free(ps);
  free(cps);
  free(at);
  return rc;
}

/* At the end of the list: one batch more (twice the last) while the curve
 * still rises, within --max-batch and the list's room. */
static int extend(sweep_t *s, int64_t b) {
  const cal_sweep_opts_t *o = &s->r->opt->sweep;
  cal_curve_opts_t po;
  cal_curve_point_t *cp = cal_sweep_curve_of(s, &po);
  if (!cp)
    return CAL_ENOMEM;
  int more = cal_sweep_should_extend(cp, s->m->npoints, &po);
  free(cp);
  if (more > 0 && b * 2 <= o->max_batch && s->nlist < s->cap) {
    s->list[s->nlist++] = b * 2;
    s->m->stop = "still rising: extended";
  } else if (more > 0) {
    s->m->stop = b * 2 > o->max_batch ? "largest batch allowed (--max-batch)"
                                      : "extension limit";
  } else if (o->batches == NULL || s->nlist > o->nbatches) {
    s->m->stop = "stopped rising";
  }
  return 0;
}

/* A decode point on both paths, the faster (by median step time) kept in
 * *pt and the other's figures in bp.  A path that fails or is skipped
 * leaves the other. */
static int both_paths(sweep_t *s, cal_batch_point_t *bp, cal_params_t *p,
                      cal_point_t *pt) {
  static const char *const paths[2] = {"gemv", "blas"};
  cal_point_t two[2];
  int rc = 0, i;
  memset(two, 0, sizeof two);
  for (i = 0; i < 2 && rc == 0; i++) {
    p->path = paths[i];
    rc = cal_run_point(s->r, NULL, s->k, p, &two[i]);
  }
  p->path = NULL;
  if (rc < 0) {
    cal_point_free(&two[0]);
    cal_point_free(&two[1]);
    return rc;
  }
  /* a wrong answer on either path is the point's, never hidden */
  int ok0 = two[0].status == CAL_POINT_OK, ok1 = two[1].status == CAL_POINT_OK;
  int keep = two[0].status == CAL_POINT_FAILED ? 0
             : two[1].status == CAL_POINT_FAILED ? 1
             : ok0 && ok1 ? two[1].m.time.median < two[0].m.time.median
             : ok1;
  if (ok0 && ok1) {
    const cal_point_t *o = &two[1 - keep];
    bp->alt_path = paths[1 - keep];
    bp->alt_latency_ms = o->m.time.median * 1e3;
    bp->alt_examples_per_s = (double)bp->batch / o->m.time.median;
  }
  bp->matrix_path = paths[keep];
  *pt = two[keep];
  cal_point_free(&two[1 - keep]);
  return 0;
}

/* A train point: the layer's step, then (when it was measured) the LM
 * head's at the same batch; the point takes both (point_take).  A head
 * that could not be measured or failed is the point's status; a head
 * measured while others held the cores makes the point contaminated. */
static int train_point(sweep_t *s, cal_batch_point_t *bp, cal_params_t *p) {
  cal_harness_cfg_t h = s->r->opt->hcfg;
  int most = s->r->opt->quick ? SWEEP_TRAIN_QUICK_SAMPLES : SWEEP_TRAIN_SAMPLES;
  if (h.samples > most)
    h.samples = most;
  cal_point_t pt, hpt;
  memset(&hpt, 0, sizeof hpt);
  int rc = cal_run_point(s->r, &h, s->k, p, &pt);
  if (rc < 0)
    return rc;
  if (CAL_POINT_HAS_SAMPLES(&pt)) {
    cal_params_t hp;
    cal_sweep_head_params(s, p, &hp);
    if ((rc = cal_run_point(s->r, &h, s->head, &hp, &hpt)) < 0) {
      cal_point_free(&pt);
      return rc;
    }
    if (!CAL_POINT_HAS_SAMPLES(&hpt)) {
      cal_point_free(&pt);
      bp->status = hpt.status;
      snprintf(bp->reason, sizeof bp->reason, "LM head: %.150s", hpt.reason);
      cal_point_free(&hpt);
      return 0;
    }
  }
  if (CAL_POINT_HAS_SAMPLES(&hpt) && hpt.impl[0] &&
      !strstr(s->m->head_impl, hpt.impl)) {
    size_t len = strlen(s->m->head_impl);
    snprintf(s->m->head_impl + len, sizeof s->m->head_impl - len, "%s%s",
             len ? "," : "", hpt.impl);
  }
  rc = cal_sweep_point_take(s, bp, &pt, CAL_POINT_HAS_SAMPLES(&hpt) ? &hpt : NULL);
  if (rc == 0 && bp->measured && hpt.status == CAL_POINT_CONTAMINATED &&
      bp->status == CAL_POINT_OK) {
    bp->status = CAL_POINT_CONTAMINATED;
    snprintf(bp->reason, sizeof bp->reason, "LM head: %.150s", hpt.reason);
  }
  cal_point_free(&hpt);
  return rc;
}

/* One batch after the other until the list ends, memory or time runs out
 * or a point fails; the rest of the list is then skipped. */
static int sweep_sequential(sweep_t *s) {
  cal_run_t *r = s->r;
  cal_batch_mode_t *m = s->m;
  int blocked = 0, rc;
  double last_step = 0, last_wall = 0, wall0 = 0;
  int64_t last_batch = 0;
  for (size_t i = 0; i < s->nlist; i++) {
    int64_t b = s->list[i];
    cal_batch_point_t *bp = cal_sweep_point_add(s, b);
    if (blocked) {
      cal_sweep_point_skip(bp, m->stop);
      continue;
    }
    if (bp->memory_bytes > s->mem_budget) {
      cal_sweep_over_budget(s, bp);
      m->stop = "memory limit";
      blocked = 1;
      continue;
    }
    /* train: where the model's training state fits, the curve ends where
     * its activations no longer do; where even the state does not, the
     * figures are the measured layer scaled, each point saying so */
    if (s->train && !bp->model_fits &&
        s->res->model_state_bytes <= s->mem_budget) {
      snprintf(bp->reason, sizeof bp->reason,
               "the whole model needs %.0f MiB (training state and "
               "activations without checkpointing), more than the %.0f MiB "
               "memory budget", bp->model_bytes / 1048576.0,
               s->mem_budget / 1048576.0);
      m->stop = "memory limit";
      blocked = 1;
      continue;
    }
    /* the next point would take about as long per example as the last */
    double est = last_batch ? last_step * (double)b / (double)last_batch : 0;
    /* train: the last point's whole cost (two setups, the LM head's
     * state, two verifications) scaled, which its step time understates */
    double cost = s->train && last_wall > 0
                      ? last_wall * (double)b / (double)last_batch
                      : cal_sweep_point_cost(&r->opt->hcfg, est);
    if (last_batch && cal_now() - s->t0 + cost > s->budget) {
      m->stop = "time budget";
      cal_sweep_point_skip(bp, m->stop);
      blocked = 1;
      continue;
    }
    cal_progress(r, "batch sweep %s: batch %lld", m->name, (long long)b);
    cal_params_t p;
    cal_point_t pt;
    cal_sweep_shape(s, s->decode, b, &p);
    cal_memuse_begin(&bp->mem);
    wall0 = cal_now();
    if (s->train) {
      if ((rc = train_point(s, bp, &p)) < 0)
        return rc;
    } else if ((rc = s->decode && b <= SWEEP_BOTH_PATHS_MAX
                         ? both_paths(s, bp, &p, &pt)
                         : cal_run_point(r, NULL, s->k, &p, &pt)) < 0 ||
               (rc = cal_sweep_point_take(s, bp, &pt, NULL)) < 0) {
      return rc;
    }
    cal_memuse_end(&bp->mem);
    if (bp->status == CAL_POINT_FAILED) {
      m->stop = "verification failed";
      blocked = 1;
    } else if (bp->mem.swapped) {
      /* larger batches need more: they would swap more */
      m->stop = "the process swapped";
      blocked = 1;
    } else if (bp->status == CAL_POINT_OK) {
      last_step = s->train ? bp->layer_ms * 1e-3 + bp->head_ms * 1e-3
                           : bp->pt.m.time.median;
      last_batch = b;
      last_wall = cal_now() - wall0;
    }
    if (i + 1 == s->nlist && !blocked && r->opt->sweep.extend &&
        (rc = extend(s, b)) < 0)
      return rc;
  }
  return 0;
}

/* Mode mi: 0 prefill, 1 decode, 2 train. */
static int sweep_mode(cal_run_t *r, int mi, double budget,
                      const cal_batch_result_t *res, cal_batch_mode_t *m) {
  static const char *const names[2][3] = {
      {"layer_prefill", "layer_decode", "layer_train"},
      {"layer_prefill_bf16", "layer_decode_bf16", "layer_train_bf16"}};
  static const char *const modes[3] = {"prefill", "decode", "train"};
  int bf16 = res->dtype == CAL_DTYPE_BF16;
  sweep_t s = {r, cal_kernel_find(names[bf16][mi]), mi == 1, mi == 2, res, m,
               NULL, 0, 0, cal_now(), budget, cal_sweep_mem_budget(r),
               res->mem_read_gbps, res->engine, res->head};
  m->name = modes[mi];
  m->stop = "end of the batch list";
  m->latency_ms_batch_1 = NAN;
  int rc = cal_sweep_batch_list(&s);
  /* train: its points' verification is the check (a separate step at
   * batch 1 would cost the time of a point of a real preset) */
  if (rc == 0 && s.train)
    m->status = "measured";
  else if (rc == 0)
    rc = verify_layer(&s);
  if (rc == 0)
    rc = r->opt->rounds > 1 && !s.train ? sweep_ci(&s) : sweep_sequential(&s);
  if (rc == 0)
    rc = cal_sweep_analyze(&s);
  free(s.list);
  return rc < 0 ? rc : 0;
}

int cal_batch_measure(cal_run_t *r) {
  const cal_sweep_opts_t *o = &r->opt->sweep;
  double start = cal_now();
  int rc = 0;
  cal_batch_result_t *res = calloc(1, sizeof *res);
  if (!res)
    return CAL_ENOMEM;
  res->dtype = o->dtype && cal_kdtype_parse(o->dtype) == CAL_DTYPE_BF16
                   ? CAL_DTYPE_BF16 : CAL_DTYPE_FP32;
  cal_sweep_layer_engine(r, res);
  cal_sweep_head_kernel(res);
  cal_layer_shape_t shape = {o->hidden, o->heads, o->kv_heads, o->ffn, o->seq,
                             1, 0, res->dtype == CAL_DTYPE_BF16};
  res->weights_bytes = cal_layer_weight_bytes(&shape);
  res->memory_budget_bytes = cal_sweep_mem_budget(r);
  res->time_budget_s = cal_run_budget(r, CAL_SEC_ID_BATCH);
  res->top_mode = -1;
  res->mem_read_threads = r->opt->threads;
  res->mem_read_gbps = cal_bandwidth_memory_read(
      cal_results_get(r->res, CAL_SEC_ID_BANDWIDTH), res->mem_read_threads,
      res->mem_read_why, sizeof res->mem_read_why);
  cal_sweep_model_state(o, res);
  int nmodes = (o->modes & 1) + ((o->modes >> 1) & 1);
  for (int m = 0; m < 3; m++) {
    if (!(o->modes & (1 << m)))
      continue;
    /* prefill gets its share; decode what is left; train its own time,
     * added to the sweep's */
    double b = m == 0 && nmodes == 2 ? res->time_budget_s * 0.5 : res->time_budget_s;
    if (m == 1 && nmodes == 2)
      b = res->time_budget_s - (cal_now() - start);
    if (m == 2)
      b = (r->opt->quick ? SWEEP_TRAIN_QUICK_S : SWEEP_TRAIN_S) *
          (r->opt->budget_scale > 0 ? r->opt->budget_scale : 1.0);
    res->ran[m] = 1;
    if ((rc = sweep_mode(r, m, b > 1.0 ? b : 1.0, res, &res->modes[m])) < 0)
      goto out;
  }
  /* top level: the training step when it has an optimal batch, else the
   * training-like forward mode (prefill), else decode */
  static const int order[3] = {2, 0, 1};
  for (int i = 0; i < 3 && res->top_mode < 0; i++) {
    int m = order[i];
    if (res->ran[m] && res->modes[m].curve &&
        res->modes[m].curve->optimal_batch_size > 0)
      res->top_mode = m;
  }
  r->res->sec[CAL_SEC_ID_BATCH] = res;
  res = NULL;
out:
  cal_batch_drop(res);
  return rc;
}
