/* The batch sweep: throughput versus batch size of the model-shaped layer,
 * prefill and decode, and of the model's training step (train: one layer's
 * step and the LM head's measured, the model's step built of them), with
 * noise-aware peak detection.  Leaves a
 * cal_batch_result_t (results.h); profile/batch_json.c writes its profile
 * object and report/table_batch.c its part of the table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "curve.h"
#include "engine.h"
#include "layer.h"
#include "layer_train.h"
#include "lm_head.h"
#include "results.h"
#include "run.h"
#include "timer.h"

/* the default list: powers of two from 1 to this, then extended while the
 * throughput still rises */
#define SWEEP_DEFAULT_MAX 32
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

/* One mode's sweep in progress. */
typedef struct sweep {
  cal_run_t *r;
  const cal_kernel_t *k;
  int decode;
  int train;                /* the training step (layer and LM head) */
  const cal_batch_result_t *res;
  cal_batch_mode_t *m;      /* the result being filled */
  int64_t *list;            /* batches to measure (owned), room for cap */
  size_t nlist, cap;
  double t0, budget, mem_budget;
  double mem_read_gbps;     /* the run's memory read bandwidth; NAN: none */
  cal_engine_t engine;      /* the products' engine (cal_params_t.engine) */
  const cal_kernel_t *head; /* train: the LM head's step */
} sweep_t;

static double mem_budget(const cal_run_t *r) {
  const cal_sweep_opts_t *o = &r->opt->sweep;
  return o->memory_budget > 0 ? o->memory_budget : r->opt->hcfg.mem_avail_bytes;
}

static void shape_for(const sweep_t *s, int decode, int64_t batch,
                      cal_params_t *p) {
  const cal_run_t *r = s->r;
  const cal_sweep_opts_t *o = &r->opt->sweep;
  memset(p, 0, sizeof *p);
  p->hidden = o->hidden;
  p->heads = o->heads;
  p->kv_heads = o->kv_heads;
  p->ffn = o->ffn;
  p->seq = o->seq;
  p->batch = batch;
  p->decode = decode;
  p->threads = r->opt->threads;
  p->seed = r->opt->seed + 1000;
  p->variant = -1;
  p->engine = s->engine;
  if (s->train) {
    /* the whole stack where --layers asked for it and it fits the memory
     * budget; else one layer, its figures scaled */
    cal_layer_shape_t sh;
    cal_layer_shape_from_params(p, &sh);
    sh.bf16 = s->k->dtype == CAL_DTYPE_BF16;
    int64_t L = s->res->layers;
    p->layers = o->layers_given && L > 1 &&
                        cal_train_stack_mem_bytes(&sh, (int)L) <= s->mem_budget
                    ? L
                    : 1;
  }
}

/* The layer shape of a point of this sweep (its dtype the kernel's). */
static void layer_shape(const sweep_t *sw, const cal_params_t *p,
                        cal_layer_shape_t *s) {
  cal_layer_shape_from_params(p, s);
  s->bf16 = sw->k->dtype == CAL_DTYPE_BF16;
}

/* The LM head's kernel point beside a train point p. */
static void head_params(const sweep_t *sw, const cal_params_t *p,
                        cal_params_t *hp) {
  memset(hp, 0, sizeof *hp);
  hp->hidden = p->hidden;
  hp->seq = p->seq;
  hp->batch = p->batch;
  hp->n = sw->res->vocab;
  hp->threads = p->threads;
  hp->seed = p->seed;
  hp->variant = -1;
}

/* What a point needs to run: train runs the layers' step, then the LM
 * head's, one after the other. */
static double mem_of(const sweep_t *sw, const cal_params_t *p) {
  cal_layer_shape_t s;
  layer_shape(sw, p, &s);
  if (!sw->train)
    return cal_layer_mem_bytes(&s);
  double layer = cal_train_stack_mem_bytes(&s, (int)(p->layers > 1 ? p->layers : 1));
  double head = cal_lm_head_mem_bytes(p->batch * p->seq, p->hidden,
                                      sw->res->vocab,
                                      sw->head->dtype == CAL_DTYPE_BF16);
  return layer > head ? layer : head;
}

/* The model's activations at batch b (bytes): each layer keeps what the
 * measured step keeps (cal_train_saved_bytes); with checkpointing each
 * layer keeps its input rows and one layer's are recomputed at a time.
 * The LM head adds its rows and a chunk of logits either way. */
static void model_memory(const sweep_t *sw, const cal_layer_shape_t *s,
                         cal_batch_point_t *bp) {
  const cal_batch_result_t *res = sw->res;
  double t = (double)s->batch * (double)s->seq, L = (double)res->layers;
  double per = cal_train_saved_bytes(s);
  double v = (double)res->vocab, c = v < CAL_LM_HEAD_CHUNK ? v : CAL_LM_HEAD_CHUNK;
  double head = 4.0 * t * ((double)s->hidden + c);
  bp->act_layer_bytes = per;
  bp->act_bytes = L * per + head;
  bp->act_ckpt_bytes = L * 4.0 * t * (double)s->hidden + per + head;
  bp->model_bytes = res->model_state_bytes + bp->act_bytes;
  bp->model_fits = bp->model_bytes <= sw->mem_budget;
}

/* Estimated seconds of one point whose run takes run_s. */
static double point_cost(const cal_harness_cfg_t *h, double run_s) {
  double per_sample = run_s > h->min_sample_s ? run_s : h->min_sample_s;
  return h->warmup_s + 3 * run_s + (h->samples + 2) * per_sample;
}

/* The points so far as the curve analysis reads them (samples borrowed)
 * and the analysis options; free() the array.  NULL when out of memory.
 * Anything but a measured point counts as skipped. */
static cal_curve_point_t *curve_of(const sweep_t *s, cal_curve_opts_t *po) {
  const cal_batch_mode_t *m = s->m;
  cal_curve_opts_default(po);
  po->tolerance = s->r->opt->sweep.tolerance;
  po->policy = (cal_curve_policy_t)s->r->opt->sweep.policy;
  po->ci_level = s->r->opt->hcfg.ci_level;
  cal_curve_point_t *cp = calloc(m->npoints ? m->npoints : 1, sizeof *cp);
  for (size_t j = 0; cp && j < m->npoints; j++) {
    const cal_batch_point_t *bp = &m->points[j];
    cp[j].batch_size = bp->batch;
    cp[j].status = bp->status == CAL_POINT_OK ? CAL_POINT_OK : CAL_POINT_SKIPPED;
    cp[j].samples = bp->examples_per_s;
    cp[j].n = bp->n;
  }
  return cp;
}

/* The next point of the mode, skipped until measured. */
static cal_batch_point_t *point_add(sweep_t *s, int64_t b) {
  const cal_sweep_opts_t *o = &s->r->opt->sweep;
  cal_batch_point_t *bp = &s->m->points[s->m->npoints++];
  cal_params_t p;
  shape_for(s, s->decode, b, &p);
  cal_layer_shape_t shape;
  layer_shape(s, &p, &shape);
  /* fp32 points keep the ids they had before there was a bf16 layer */
  snprintf(bp->id, sizeof bp->id, "batch_sweep/%s/%s%s/h%lld/s%lld/b%lld",
           s->m->name, shape.bf16 ? "bf16/" : "", o->preset,
           (long long)o->hidden, (long long)o->seq, (long long)b);
  bp->batch = b;
  bp->memory_bytes = mem_of(s, &p);
  if (s->train)
    model_memory(s, &shape, bp);
  bp->status = CAL_POINT_SKIPPED;
  bp->matrix_path = cal_layer_matrix_path(&shape);
  bp->read_bytes = s->decode ? cal_layer_read_bytes(&shape) : 0.0;
  bp->bw_efficiency = NAN;
  return bp;
}

static void point_skip(cal_batch_point_t *bp, const char *why) {
  bp->status = CAL_POINT_SKIPPED;
  snprintf(bp->reason, sizeof bp->reason, "%s", why);
}

static void point_over_budget(const sweep_t *s, cal_batch_point_t *bp) {
  bp->status = CAL_POINT_SKIPPED;
  snprintf(bp->reason, sizeof bp->reason,
           "needs %.0f MiB, more than the %.0f MiB memory budget",
           bp->memory_bytes / 1048576.0, s->mem_budget / 1048576.0);
}

/* Take the harness point *pt into bp (pt is emptied in every case): a
 * measured point keeps it with its examples/s and tokens/s samples, any
 * other keeps only its status and reason.  CAL_ENOMEM. */
static int point_take(const sweep_t *s, cal_batch_point_t *bp, cal_point_t *pt,
                      const cal_point_t *head) {
  double *tok = NULL;
  int rc = 0;
  bp->status = pt->status;
  if (!CAL_POINT_HAS_SAMPLES(pt)) {
    snprintf(bp->reason, sizeof bp->reason, "%s", pt->reason);
    goto out;
  }
  double lq = s->decode ? 1.0 : (double)s->r->opt->sweep.seq;
  double b = (double)bp->batch, level = s->r->opt->hcfg.ci_level;
  size_t n = pt->m.n;
  /* train: sample j of the model's step is layers × the layer's sample j
   * plus the LM head's sample j (as many as both have) */
  const cal_measurement_t *hm = s->train && head ? &head->m : NULL;
  double L = s->train ? (double)s->res->layers /
                           (double)(pt->params.layers > 1 ? pt->params.layers : 1)
                     : 1.0;
  bp->layers_measured = pt->params.layers > 1 ? pt->params.layers : 1;
  if (hm && hm->n < n)
    n = hm->n;
  bp->examples_per_s = calloc(n ? n : 1, sizeof *bp->examples_per_s);
  tok = calloc(n ? n : 1, sizeof *tok);
  if (!bp->examples_per_s || !tok) {
    rc = CAL_ENOMEM;
    goto out;
  }
  bp->n = n;
  for (size_t j = 0; j < n; j++) {
    double step = L * pt->m.samples_s[j] + (hm ? hm->samples_s[j] : 0.0);
    bp->examples_per_s[j] = b / step;
    tok[j] = b * lq / step;
  }
  cal_summarize(bp->examples_per_s, n, level, &bp->examples);
  cal_summarize(tok, n, level, &bp->tokens);
  if (hm) {
    bp->layer_ms = pt->m.time.median * 1e3;
    bp->head_ms = hm->time.median * 1e3;
    bp->step_ms = b / bp->examples.median * 1e3;
    bp->step_flops = L * pt->flops + head->flops;
    bp->step_gflops = bp->step_flops / (bp->step_ms * 1e-3) * 1e-9;
  }
  if (s->decode && pt->m.time.median > 0) {
    bp->read_gbps = bp->read_bytes / pt->m.time.median * 1e-9;
    if (s->mem_read_gbps > 0)
      bp->bw_efficiency = bp->read_gbps / s->mem_read_gbps;
  }
  bp->pt = *pt;
  bp->measured = 1;
  if (pt->status == CAL_POINT_CONTAMINATED)
    snprintf(bp->reason, sizeof bp->reason, "%s", pt->reason);
  memset(pt, 0, sizeof *pt);
out:
  free(tok);
  cal_point_free(pt);
  return rc;
}

/* The batches to measure: the user's list or the default, with room to
 * extend; and the mode's point array for all of them. */
static int batch_list(sweep_t *s) {
  const cal_sweep_opts_t *o = &s->r->opt->sweep;
  int64_t *d = NULL;
  size_t n = 0;
  int rc = 0;
  if (o->batches) {
    if (!(d = malloc(o->nbatches * sizeof *d)))
      return CAL_ENOMEM;
    memcpy(d, o->batches, o->nbatches * sizeof *d);
    n = o->nbatches;
  } else if ((rc = cal_batches_default(SWEEP_DEFAULT_MAX, &d, &n)) < 0) {
    return rc;
  }
  s->cap = n + 64;
  if (!(s->list = realloc(d, s->cap * sizeof *d))) {
    free(d);
    return CAL_ENOMEM;
  }
  s->nlist = n;
  s->m->points = calloc(s->cap, sizeof *s->m->points);
  return s->m->points ? 0 : CAL_ENOMEM;
}

/* Check the layer once at batch 1 before anything is timed.  Returns 0
 * (mode measured), 1 when the mode failed or was skipped (status and
 * reason set), or an internal error. */
static int verify_layer(sweep_t *s) {
  cal_run_t *r = s->r;
  cal_batch_mode_t *m = s->m;
  const cal_kernel_t *k = s->k;
  cal_params_t p;
  cal_progress(r, "batch sweep %s: verifying the layer", m->name);
  shape_for(s, s->decode, 1, &p);
  if (r->ctx->thr)
    cal_threads_use(r->ctx->thr, r->opt->threads);
  void *st = NULL;
  const char *why = NULL;
  char over[160];
  if (mem_of(s, &p) > s->mem_budget) {
    /* the check runs a batch-1 layer: it is held to the budget too */
    snprintf(over, sizeof over, "needs %.0f MiB at batch 1, more than the "
             "%.0f MiB memory budget", mem_of(s, &p) / 1048576.0,
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
    shape_for(s, s->decode, s->list[i], &ps[nj]);
    if (mem_of(s, &ps[nj]) <= s->mem_budget) {
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
    cal_batch_point_t *bp = point_add(s, s->list[i]);
    if (j < nj && at[j] == i) {
      if ((rc = point_take(s, bp, &cps[j++], NULL)) < 0)
        goto out;
    } else {
      point_over_budget(s, bp);
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
  cal_curve_point_t *cp = curve_of(s, &po);
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
    head_params(s, p, &hp);
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
  rc = point_take(s, bp, &pt, CAL_POINT_HAS_SAMPLES(&hpt) ? &hpt : NULL);
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
    cal_batch_point_t *bp = point_add(s, b);
    if (blocked) {
      point_skip(bp, m->stop);
      continue;
    }
    if (bp->memory_bytes > s->mem_budget) {
      point_over_budget(s, bp);
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
                      : point_cost(&r->opt->hcfg, est);
    if (last_batch && cal_now() - s->t0 + cost > s->budget) {
      m->stop = "time budget";
      point_skip(bp, m->stop);
      blocked = 1;
      continue;
    }
    cal_progress(r, "batch sweep %s: batch %lld", m->name, (long long)b);
    cal_params_t p;
    cal_point_t pt;
    shape_for(s, s->decode, b, &p);
    wall0 = cal_now();
    if (s->train) {
      if ((rc = train_point(s, bp, &p)) < 0)
        return rc;
    } else if ((rc = s->decode && b <= SWEEP_BOTH_PATHS_MAX
                         ? both_paths(s, bp, &p, &pt)
                         : cal_run_point(r, NULL, s->k, &p, &pt)) < 0 ||
               (rc = point_take(s, bp, &pt, NULL)) < 0) {
      return rc;
    }
    if (bp->status == CAL_POINT_FAILED) {
      m->stop = "verification failed";
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

/* Peak, knee, shape and advice of the measured curve; batch-1 latency. */
static int analyze(sweep_t *s) {
  const cal_sweep_opts_t *o = &s->r->opt->sweep;
  cal_batch_mode_t *m = s->m;
  cal_curve_opts_t po;
  cal_curve_point_t *cp = curve_of(s, &po);
  if (!cp)
    return CAL_ENOMEM;
  int rc = cal_curve_analyze(cp, m->npoints, &po, &m->curve);
  free(cp);
  if (rc < 0)
    return rc;
  if (o->target_effective_batch > 0 &&
      cal_curve_recommend(m->curve, o->target_effective_batch, &m->rec) == 0)
    m->have_rec = 1;
  for (size_t j = 0; j < m->npoints; j++)
    if (m->points[j].batch == 1 && m->points[j].status == CAL_POINT_OK)
      m->latency_ms_batch_1 = s->train ? m->points[j].step_ms
                                       : m->points[j].pt.m.time.median * 1e3;
  m->time_s = cal_now() - s->t0;
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
               NULL, 0, 0, cal_now(), budget, mem_budget(r),
               res->mem_read_gbps, res->engine, res->head};
  m->name = modes[mi];
  m->stop = "end of the batch list";
  m->latency_ms_batch_1 = NAN;
  int rc = batch_list(&s);
  /* train: its points' verification is the check (a separate step at
   * batch 1 would cost the time of a point of a real preset) */
  if (rc == 0 && s.train)
    m->status = "measured";
  else if (rc == 0)
    rc = verify_layer(&s);
  if (rc == 0)
    rc = r->opt->rounds > 1 && !s.train ? sweep_ci(&s) : sweep_sequential(&s);
  if (rc == 0)
    rc = analyze(&s);
  free(s.list);
  return rc < 0 ? rc : 0;
}

static void mode_free(cal_batch_mode_t *m) {
  for (size_t i = 0; m->points && i < m->npoints; i++) {
    free(m->points[i].examples_per_s);
    if (m->points[i].measured)
      cal_point_free(&m->points[i].pt);
  }
  free(m->points);
  cal_curve_result_free(m->curve);
}

void cal_batch_drop(void *result) {
  cal_batch_result_t *res = result;
  if (!res)
    return;
  for (int m = 0; m < 3; m++)
    mode_free(&res->modes[m]);
  free(res);
}

/* The engine of the layer's products: the GEMM section's best verified
 * engine for the layer's dtype at the sweep's threads, when it ran. */
static void layer_engine(const cal_run_t *r, cal_batch_result_t *res) {
  const cal_gemm_result_t *g = cal_results_get(r->res, CAL_SEC_ID_GEMM);
  const cal_gemm_best_t *b = g ? cal_gemm_best(g, res->dtype, 1) : NULL;
  if (b && b->kernel && b->kernel->engine != CAL_ENGINE_BUILTIN) {
    res->engine = b->kernel->engine;
    snprintf(res->engine_why, sizeof res->engine_why,
             "the GEMM section's best verified %s engine on all threads (%s, "
             "%.0f %s)", cal_kdtype_name(res->dtype), b->kernel->name, b->gflops,
             res->dtype == CAL_DTYPE_INT8 ? "GOPS" : "GFLOPS");
    return;
  }
  res->engine = cal_engine_default(res->dtype == CAL_DTYPE_BF16);
  snprintf(res->engine_why, sizeof res->engine_why,
           "no GEMM figure for %s in this run: the layer's default (oneDNN "
           "for bf16 where it runs natively, else OpenBLAS)", cal_kdtype_name(res->dtype));
}

/* The LM head's kernel: the layer's dtype where its products can run as
 * the layer's do (bf16 on oneDNN only: where the layer's bf16 products
 * run on OpenBLAS's sbgemm, or oneDNN has no native bf16, the fp32 head),
 * and why. */
static void head_kernel(cal_batch_result_t *res) {
  const cal_kernel_t *k16 = cal_kernel_find("lm_head_train_bf16");
  const char *why = NULL;
  res->head = cal_kernel_find("lm_head_train");
  if (res->dtype != CAL_DTYPE_BF16) {
    snprintf(res->head_why, sizeof res->head_why,
             "fp32, as the layers (OpenBLAS sgemm)");
  } else if (res->engine != CAL_ENGINE_ONEDNN) {
    snprintf(res->head_why, sizeof res->head_why,
             "fp32 (OpenBLAS sgemm): the layers' bf16 products run on %s, "
             "the bf16 head on oneDNN only", cal_engine_name(res->engine));
  } else if (k16->supported(NULL, &why) < 0) {
    snprintf(res->head_why, sizeof res->head_why,
             "fp32 (OpenBLAS sgemm): oneDNN cannot run bf16 here (%s)", why);
  } else {
    res->head = k16;
    snprintf(res->head_why, sizeof res->head_why,
             "bf16 mixed precision on oneDNN, as the layers' products");
  }
}

/* The whole model's parameters and training state: the layers, the
 * embedding and the LM head (counted as two matrices, as in an untied
 * model) and the final norm; per parameter an fp32 master, gradient and
 * two moments, and in bf16 a bf16 copy. */
static void model_state(const cal_sweep_opts_t *o, cal_batch_result_t *res) {
  cal_layer_shape_t s = {o->hidden, o->heads, o->kv_heads, o->ffn, o->seq, 1,
                         0, 0};
  res->layers = o->layers > 0 ? o->layers : 1;
  res->vocab = o->vocab > 1 ? o->vocab : 2;
  double layer = cal_layer_weight_bytes(&s) / 4.0; /* fp32: 4 bytes each */
  res->model_params = (double)res->layers * layer +
                      2.0 * (double)res->vocab * (double)o->hidden +
                      (double)o->hidden;
  res->model_state_bytes =
      res->model_params * (16.0 + (res->dtype == CAL_DTYPE_BF16 ? 2.0 : 0.0));
}

int cal_batch_measure(cal_run_t *r) {
  const cal_sweep_opts_t *o = &r->opt->sweep;
  double start = cal_now();
  int rc = 0;
  cal_batch_result_t *res = calloc(1, sizeof *res);
  if (!res)
    return CAL_ENOMEM;
  res->dtype = o->dtype && cal_kdtype_parse(o->dtype) == CAL_DTYPE_BF16 ? CAL_DTYPE_BF16
                                                                     : CAL_DTYPE_FP32;
  layer_engine(r, res);
  head_kernel(res);
  cal_layer_shape_t shape = {o->hidden, o->heads, o->kv_heads, o->ffn, o->seq,
                             1, 0, res->dtype == CAL_DTYPE_BF16};
  res->weights_bytes = cal_layer_weight_bytes(&shape);
  res->memory_budget_bytes = mem_budget(r);
  res->time_budget_s = cal_run_budget(r, CAL_SEC_ID_BATCH);
  res->top_mode = -1;
  res->mem_read_threads = r->opt->threads;
  res->mem_read_gbps = cal_bandwidth_memory_read(
      cal_results_get(r->res, CAL_SEC_ID_BANDWIDTH), res->mem_read_threads,
      res->mem_read_why, sizeof res->mem_read_why);
  model_state(o, res);
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
