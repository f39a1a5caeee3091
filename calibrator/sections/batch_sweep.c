/* The batch sweep: throughput versus batch size of the model's step,
 * prefill and decode (its forward pass through every layer and the LM
 * head, model.h), and train (the layers' training step and the LM head's
 * measured, the model's step built of them), with noise-aware peak
 * detection.  Leaves a
 * cal_batch_result_t (results.h); profile/batch_json.c writes its profile
 * object and report/table_batch.c its part of the table.  This file
 * measures; batch_plan.c plans the points, batch_curve.c turns samples
 * into throughput and the curve's analysis. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bandwidth.h"
#include "batch_sweep.h"
#include "cal_err.h"
#include "curve.h"
#include "layer.h"
#include "layer_train.h"
#include "lm_head.h"
#include "results.h"
#include "run.h"
#include "timer.h"

/* Whether the mode can run at all: its kernel on this machine, and a
 * batch-1 point within the memory budget.  0 (measured from here on), or 1
 * with the mode skipped and why.  Every point is verified as it is
 * measured (a wrong answer fails the point and stops the curve). */
static int mode_check(sweep_t *s) {
  cal_batch_mode_t *m = s->m;
  const cal_kernel_t *k = s->k;
  cal_params_t p;
  cal_sweep_shape(s, s->decode, 1, &p);
  const char *why = NULL;
  char over[160];
  if (cal_sweep_mem_of(s, &p) > s->mem_budget) {
    snprintf(over, sizeof over, "needs %.0f MiB at batch 1, more than the "
             "%.0f MiB memory budget", cal_sweep_mem_of(s, &p) / 1048576.0,
             s->mem_budget / 1048576.0);
    why = over;
  } else if (k->supported && k->supported(&p, &why) < 0) {
    why = why ? why : "not supported here";
  }
  if (why) {
    snprintf(m->reason, sizeof m->reason, "%s at batch 1: %s", k->name, why);
    m->status = "skipped";
    return 1;
  }
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
   * samples, the points one after the other on the mode's model, keeps the
   * run short */
  if (!s->r->opt->ci) {
    if ((rc = cal_run_points(s->r, &s->h, 0, ks, ps, nj, cps, s->m->name)) < 0)
      goto out;
  } else {
    s->h.samples *= s->r->opt->rounds;
    for (size_t j = 0; j < nj && rc == 0; j++) {
      cal_progress(s->r, "batch sweep %s: batch %lld, point %zu/%zu",
                   s->m->name, (long long)ps[j].batch, j + 1, nj);
      rc = cal_sweep_run_kept(s, s->decode ? CAL_KEPT_BLAS : CAL_KEPT_MAIN,
                              ks[j], &ps[j], &cps[j]);
    }
    if (rc < 0)
      goto out;
  }
  for (size_t i = 0, j = 0; i < n; i++) {
    cal_batch_point_t *bp = cal_sweep_point_add(s, s->list[i]);
    if (j < nj && at[j] == i) {
      if ((rc = cal_sweep_point_take(s, bp, &cps[j++], NULL, NULL)) < 0)
        goto out;
    } else {
      cal_sweep_over_budget(s, bp);
      over = 1;
    }
  }
  s->m->stop = over ? CAL_STOP_MEMORY : "fixed batch list (--ci)";
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
/* Whether the curve so far still rises (cal_sweep_should_extend): 1, 0,
 * or CAL_ENOMEM. */
static int rising(const sweep_t *s) {
  cal_curve_opts_t po;
  cal_curve_point_t *cp = cal_sweep_curve_of(s, &po);
  if (!cp)
    return CAL_ENOMEM;
  int more = cal_sweep_should_extend(cp, s->m->npoints, &po);
  free(cp);
  return more;
}

/* Whether the curve's last three points that can be the peak fell twice
 * in a row (each median below the one before): past its peak on both
 * sides, not a plateau's noise at one point. */
static int fell_twice(const sweep_t *s) {
  double m[3];
  int k = 0;
  for (size_t i = s->m->npoints; i-- > 0 && k < 3;)
    if (cal_sweep_point_headline(&s->m->points[i]))
      m[k++] = s->m->points[i].examples.median;
  return k == 3 && m[0] < m[1] && m[1] < m[2];
}

static int extend(sweep_t *s, int64_t b) {
  const cal_sweep_opts_t *o = &s->r->opt->sweep;
  int more = rising(s);
  if (more == CAL_ENOMEM)
    return more;
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
    rc = cal_sweep_run_kept(s, i ? CAL_KEPT_BLAS : CAL_KEPT_MAIN, s->k, p, &two[i]);
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

/* The part of a train point beside the layers' step (the LM head's, or
 * dpo's reference forward) of kernel k and parameters q into *out, once
 * the layers' point *pt has samples.  1 when the point ends here (the
 * part has no samples: its status and reason are the point's, what was
 * measured freed), 0 to go on, or a harness error. */
static int train_part(sweep_t *s, cal_batch_point_t *bp, cal_point_t *pt,
                      int slot, const cal_kernel_t *k, const cal_params_t *q,
                      const char *what, cal_point_t *out) {
  int rc = cal_sweep_run_kept(s, slot, k, q, out);
  if (rc < 0 || !CAL_POINT_HAS_SAMPLES(out)) {
    if (rc == 0) {
      bp->status = out->status;
      snprintf(bp->reason, sizeof bp->reason, "%s: %.140s", what, out->reason);
    }
    cal_point_free(pt);
    cal_point_free(out);
    return rc < 0 ? rc : 1;
  }
  if (out->status == CAL_POINT_CONTAMINATED && !s->busy_part[0])
    snprintf(s->busy_part, sizeof s->busy_part, "%s: %.140s", what,
             out->reason);
  return 0;
}

/* A train point: the layer's step, then (when it was measured) the LM
 * head's at the same batch, and dpo's reference forward; the point takes
 * them all (point_take).  A part that could not be measured or failed is
 * the point's status; one measured while others held the cores makes the
 * point contaminated. */
static int train_point(sweep_t *s, cal_batch_point_t *bp, cal_params_t *p) {
  cal_point_t pt, hpt, rpt;
  memset(&hpt, 0, sizeof hpt);
  memset(&rpt, 0, sizeof rpt);
  s->busy_part[0] = 0;
  int rc = cal_sweep_run_kept(s, CAL_KEPT_MAIN, s->k, p, &pt);
  if (rc < 0)
    return rc;
  if (CAL_POINT_HAS_SAMPLES(&pt)) {
    cal_params_t hp, rp;
    cal_sweep_head_params(s, p, &hp);
    if ((rc = train_part(s, bp, &pt, CAL_KEPT_HEAD, s->head, &hp, "LM head",
                         &hpt)) != 0)
      return rc < 0 ? rc : 0;
    if (s->ref) {
      cal_sweep_ref_params(s, p, &rp);
      if ((rc = train_part(s, bp, &pt, CAL_KEPT_REF, s->ref, &rp,
                           s->grpo ? "generation" : "reference forward",
                           &rpt)) != 0) {
        cal_point_free(&hpt);
        return rc < 0 ? rc : 0;
      }
    }
  }
  if (CAL_POINT_HAS_SAMPLES(&hpt) && hpt.impl[0] &&
      !strstr(s->m->head_impl, hpt.impl)) {
    size_t len = strlen(s->m->head_impl);
    snprintf(s->m->head_impl + len, sizeof s->m->head_impl - len, "%s%s",
             len ? "," : "", hpt.impl);
  }
  rc = cal_sweep_point_take(s, bp, &pt, CAL_POINT_HAS_SAMPLES(&hpt) ? &hpt : NULL,
                            CAL_POINT_HAS_SAMPLES(&rpt) ? &rpt : NULL);
  if (rc == 0 && bp->measured && s->busy_part[0] &&
      bp->status == CAL_POINT_OK) {
    bp->status = CAL_POINT_CONTAMINATED;
    snprintf(bp->reason, sizeof bp->reason, "%s", s->busy_part);
  }
  cal_point_free(&hpt);
  cal_point_free(&rpt);
  return rc;
}

/* One batch after the other until the list ends, memory or time runs out
 * or a point fails; the rest of the list is then skipped (but for the
 * batches the user gave, which time never skips). */
static int sweep_sequential(sweep_t *s) {
  cal_run_t *r = s->r;
  cal_batch_mode_t *m = s->m;
  int blocked = 0, rc;
  double last_wall = 0, last_step = 0, wall0 = 0;
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
      m->stop = CAL_STOP_MEMORY;
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
      m->stop = CAL_STOP_MEMORY;
      blocked = 1;
      continue;
    }
    double cost = cal_sweep_next_cost(s, b, last_batch, last_step, last_wall);
    /* the budget limits the points the sweep adds, never a list the user
     * gave */
    int given = i < cal_sweep_given(s);
    if (last_batch && !given && cal_sweep_spent(s) + cost > s->budget) {
      m->stop = CAL_STOP_TIME;
      cal_sweep_point_skip(bp, m->stop);
      blocked = 1;
      continue;
    }
    cal_sweep_progress(s, i, b, last_batch, last_step, last_wall);
    cal_params_t p;
    cal_point_t pt;
    cal_sweep_shape(s, s->decode, b, &p);
    if (s->decode && b > CAL_SWEEP_BOTH_PATHS_MAX) {
      /* the GEMV's model is done; the GEMM path named as the points before
       * named it, so that its model is re-shaped, not built again */
      cal_kept_release(&s->kept[CAL_KEPT_MAIN]);
      p.path = "blas";
    }
    cal_memuse_begin(&bp->mem);
    wall0 = cal_now();
    s->built_s = 0;
    if (s->train) {
      if ((rc = train_point(s, bp, &p)) < 0)
        return rc;
    } else if ((rc = s->decode && b <= CAL_SWEEP_BOTH_PATHS_MAX
                         ? both_paths(s, bp, &p, &pt)
                         : cal_sweep_run_kept(s, s->decode ? CAL_KEPT_BLAS : CAL_KEPT_MAIN,
                                    s->k, &p, &pt)) < 0 ||
               (rc = cal_sweep_point_take(s, bp, &pt, NULL, NULL)) < 0) {
      return rc;
    }
    cal_memuse_end(&bp->mem);
    if (bp->status == CAL_POINT_FAILED) {
      m->stop = CAL_STOP_VERIFY;
      blocked = 1;
    } else if (bp->mem.swapped) {
      /* larger batches need more: they would swap more */
      m->stop = CAL_STOP_SWAPPED;
      blocked = 1;
    } else if (bp->status == CAL_POINT_OK) {
      last_batch = b;
      last_wall = cal_now() - wall0 - s->built_s;
      last_step = bp->step_ms > 0 ? bp->step_ms * 1e-3 : bp->pt.m.time.median;
    }
    /* the default list of an expensive mode (prefill, train) ends early
     * once the curve has stopped rising and fallen twice in a row, so that
     * its peak is measured on both sides; decode's cheap points go on (its
     * path changes on the way).  Only a point that can be the peak says
     * whether the curve rose: one whose threads did not run side by side
     * is no evidence either way */
    if (!blocked && i + 1 < s->nlist && !s->decode && !r->opt->sweep.batches &&
        cal_sweep_point_headline(bp)) {
      if ((rc = rising(s)) == CAL_ENOMEM)
        return rc;
      if (rc == 0 && fell_twice(s)) {
        m->stop = "stopped rising: fell twice";
        blocked = 1;
      }
    }
    if (i + 1 == s->nlist && !blocked && r->opt->sweep.extend &&
        (rc = extend(s, b)) < 0)
      return rc;
  }
  return 0;
}

/* Decode: the bandwidth section's memory read measured again, once just
 * before the mode's points and once just after them, so that their share
 * of it is of the same minutes (a VM's memory speed can move by a third
 * between minutes); *gbps is its median.  What could not be measured
 * leaves NAN and why. */
static int read_beside(sweep_t *s, double *gbps) {
  cal_batch_mode_t *m = s->m;
  const cal_point_t *ref = cal_bandwidth_memory_point(
      cal_results_get(s->r->res, CAL_SEC_ID_BANDWIDTH), "stream_read",
      s->res->mem_read_threads);
  *gbps = NAN;
  if (!ref || ref->status != CAL_POINT_OK) {
    snprintf(m->read_beside_why, sizeof m->read_beside_why,
             "the bandwidth section measured no memory read to repeat");
    return 0;
  }
  cal_harness_cfg_t h;
  cal_point_t pt;
  cal_bandwidth_harness(s->r, &h);
  int unstable = s->r->res->quality.unstable;
  int rc = cal_run_point(s->r, &h, ref->kernel, &ref->params, &pt);
  s->r->res->quality.unstable = unstable; /* not a point of the profile */
  if (rc < 0)
    return rc;
  if (pt.status == CAL_POINT_OK && pt.gbps_sum.median > 0)
    *gbps = pt.gbps_sum.median;
  else
    snprintf(m->read_beside_why, sizeof m->read_beside_why,
             "measured again, the memory read was %s: %.120s",
             cal_point_status_name(pt.status), pt.reason);
  cal_point_free(&pt);
  return 0;
}

/* Decode, after its points: the read beside them is the higher of the
 * repeats before and after (one that others slowed reads low, and a share
 * of it high), and each measured point's share of it. */
static void beside_shares(cal_batch_mode_t *m) {
  m->read_beside_gbps = fmax(m->read_before_gbps, m->read_after_gbps);
  for (size_t i = 0; i < m->npoints; i++) {
    cal_batch_point_t *bp = &m->points[i];
    bp->bw_beside = bp->read_gbps > 0 && m->read_beside_gbps > 0
                        ? bp->read_gbps / m->read_beside_gbps
                        : NAN;
  }
}

/* Mode mi: 0 prefill, 1 decode, 2 train, 3 inference, 4 dpo, 5 grpo;
 * *built gets the seconds its models' building took. */
static int sweep_mode(cal_run_t *r, int mi, double budget,
                      const cal_batch_result_t *res, cal_batch_mode_t *m,
                      double *built) {
  static const char *const names[2][CAL_BATCH_NMODES] = {
      {"model_prefill", "model_decode", "layer_train", "model_infer",
       "layer_train", "layer_train"},
      {"model_prefill_bf16", "model_decode_bf16", "layer_train_bf16",
       "model_infer_bf16", "layer_train_bf16", "layer_train_bf16"}};
  static const char *const modes[CAL_BATCH_NMODES] = {
      "prefill", "decode", "train", "inference", "dpo", "grpo"};
  int bf16 = res->dtype == CAL_DTYPE_BF16;
  int train = mi == 2 || mi == 4 || mi == 5;
  sweep_t s = {r, cal_kernel_find(names[bf16][mi]), mi == 1, train, res, m,
               NULL, 0, 0, cal_now(), budget, cal_sweep_mem_budget(r),
               res->mem_read_gbps, res->engine, res->head,
               cal_sweep_llc_bytes(r), r->opt->hcfg, mi == 3, mi == 4,
               mi == 4   ? cal_kernel_find(names[bf16][0])
               : mi == 5 ? cal_kernel_find(names[bf16][3])
                         : NULL,
               "", mi == 5, {{NULL}}, 0, 0, 0};
  cal_sweep_samples(&s);
  m->name = modes[mi];
  m->stop = "end of the batch list";
  m->latency_ms_batch_1 = NAN;
  int rc = cal_sweep_batch_list(&s);
  if (rc == 0)
    rc = mode_check(&s);
  m->read_before_gbps = m->read_after_gbps = m->read_beside_gbps = NAN;
  if (rc == 0 && s.decode)
    rc = read_beside(&s, &m->read_before_gbps);
  if (rc == 0)
    rc = r->opt->rounds > 1 && !s.train ? sweep_ci(&s) : sweep_sequential(&s);
  if (rc == 0 && s.decode) {
    rc = read_beside(&s, &m->read_after_gbps);
    beside_shares(m);
  }
  for (int i = 0; i < 4; i++) /* the mode's models, built once */
    cal_kept_release(&s.kept[i]);
  if (rc == 0)
    rc = cal_sweep_analyze(&s);
  free(s.list);
  *built = s.built_all_s;
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
                             1, 0, res->dtype == CAL_DTYPE_BF16, 0, 0};
  res->weights_bytes = cal_layer_weight_bytes(&shape);
  res->memory_budget_bytes = cal_sweep_mem_budget(r);
  res->time_budget_s = cal_run_budget(r, CAL_SEC_ID_BATCH);
  res->top_mode = -1;
  res->mem_read_threads = r->opt->threads;
  res->mem_read_gbps = cal_bandwidth_memory_read(
      cal_results_get(r->res, CAL_SEC_ID_BANDWIDTH), res->mem_read_threads,
      res->mem_read_why, sizeof res->mem_read_why);
  cal_sweep_model_state(o, res);
  cal_sweep_gemm_ref(r, res);
  /* --workload: its mode, and those --mode named beside it */
  int modes = o->modes & 7;
  if (o->workload) {
    modes = (o->modes_given ? modes : 0) | 1 << o->workload_mode;
    res->workload = o->workload;
    res->gen_len = o->gen_len;
    res->group = o->group;
  }
  /* the models' building is paid once a mode, outside the shares: what
   * the modes before left is the section's time less what their points
   * took */
  double built = 0;
  for (int m = 0; m < CAL_BATCH_NMODES; m++) {
    if (!(modes & (1 << m)))
      continue;
    double b = cal_sweep_mode_budget(res->time_budget_s,
                                     cal_now() - start - built, modes, m);
    double mb = 0;
    res->ran[m] = 1;
    rc = sweep_mode(r, m, b, res, &res->modes[m], &mb);
    built += mb;
    if (rc < 0)
      goto out;
  }
  if ((res->ran[2] || res->ran[4] || res->ran[5]) &&
      (rc = cal_sweep_adamw(r, res)) < 0)
    goto out;
  cal_sweep_top_mode(res, o->workload ? o->workload_mode : -1);
  r->res->sec[CAL_SEC_ID_BATCH] = res;
  res = NULL;
out:
  cal_batch_drop(res);
  return rc;
}
