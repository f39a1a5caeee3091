/* The batch sweep's samples as throughput, the analysis of its curve,
 * and freeing its result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_sweep.h"
#include "cal_err.h"
#include "timer.h"

int cal_sweep_point_headline(const cal_batch_point_t *bp) {
  return cal_curve_point_usable(bp->status == CAL_POINT_OK, bp->mem.swapped,
                                bp->measured && bp->pt.not_parallel[0]);
}

/* The points so far as the curve analysis reads them (samples borrowed)
 * and the analysis options; free() the array.  NULL when out of memory.
 * Anything but a measured point counts as skipped. */
cal_curve_point_t *cal_sweep_curve_of(const sweep_t *s, cal_curve_opts_t *po) {
  const cal_batch_mode_t *m = s->m;
  cal_curve_opts_default(po);
  po->tolerance = s->r->opt->sweep.tolerance;
  po->policy = (cal_curve_policy_t)s->r->opt->sweep.policy;
  po->ci_level = s->r->opt->hcfg.ci_level;
  cal_curve_point_t *cp = calloc(m->npoints ? m->npoints : 1, sizeof *cp);
  for (size_t j = 0; cp && j < m->npoints; j++) {
    const cal_batch_point_t *bp = &m->points[j];
    cp[j].batch_size = bp->batch;
    /* a point that swapped or whose threads did not run side by side is
     * never the peak, the knee or the optimum */
    cp[j].status = cal_sweep_point_headline(bp) ? CAL_POINT_OK
                                                : CAL_POINT_SKIPPED;
    cp[j].samples = bp->examples_per_s;
    cp[j].n = bp->n;
  }
  return cp;
}

/* The threads of a train point's other part (the LM head's, dpo's
 * reference forward, grpo's generation) into its layers' point: their CPU
 * and wall time added (the point's cpu_time_ratio is the whole step's),
 * and the part's verdict when its threads did not run side by side. */
static void parts_threads(cal_point_t *pt, const cal_point_t *part,
                          const char *what) {
  if (!part)
    return;
  pt->cpu_s += part->cpu_s;
  pt->wall_s += part->wall_s;
  if (!pt->not_parallel[0] && part->not_parallel[0])
    snprintf(pt->not_parallel, sizeof pt->not_parallel, "%s: %.120s", what,
             part->not_parallel);
}

/* Take the harness point *pt into bp (pt is emptied in every case): a
 * measured point keeps it with its examples/s and tokens/s samples, any
 * other keeps only its status and reason.  CAL_ENOMEM. */
int cal_sweep_point_take(const sweep_t *s, cal_batch_point_t *bp, cal_point_t *pt,
                      const cal_point_t *head, const cal_point_t *ref) {
  double *tok = NULL;
  int rc = 0;
  bp->status = pt->status;
  if (!CAL_POINT_HAS_SAMPLES(pt)) {
    snprintf(bp->reason, sizeof bp->reason, "%s", pt->reason);
    goto out;
  }
  /* tokens an example runs: decode one, inference its prompt and the
   * tokens it generates, dpo its pair's two sequences, prefill and train
   * seq */
  double seq = (double)s->r->opt->sweep.seq;
  double lq = s->decode  ? 1.0
              : s->infer ? seq + (double)s->res->gen_len
              : s->dpo   ? 2.0 * seq
              : s->grpo  ? (double)s->res->group * (seq + (double)s->res->gen_len)
                         : seq;
  double b = (double)bp->batch, level = s->r->opt->hcfg.ci_level;
  size_t n = pt->m.n;
  /* train: sample j of the model's step is layers × the layer's sample j
   * plus the LM head's sample j (dpo: and the reference's; as many as
   * all have) */
  const cal_measurement_t *hm = s->train && head ? &head->m : NULL;
  const cal_measurement_t *rm = s->ref && hm && ref ? &ref->m : NULL;
  double L = s->train ? (double)s->res->layers /
                           (double)(pt->params.layers > 1 ? pt->params.layers : 1)
                     : 1.0;
  bp->layers_measured = pt->params.layers > 1 ? pt->params.layers : 1;
  if (hm && hm->n < n)
    n = hm->n;
  if (rm && rm->n < n)
    n = rm->n;
  bp->examples_per_s = calloc(n ? n : 1, sizeof *bp->examples_per_s);
  tok = calloc(n ? n : 1, sizeof *tok);
  if (!bp->examples_per_s || !tok) {
    rc = CAL_ENOMEM;
    goto out;
  }
  bp->n = n;
  for (size_t j = 0; j < n; j++) {
    double step = L * pt->m.samples_s[j] + (hm ? hm->samples_s[j] : 0.0) +
                  (rm ? rm->samples_s[j] : 0.0);
    bp->examples_per_s[j] = b / step;
    tok[j] = b * lq / step;
  }
  cal_summarize(bp->examples_per_s, n, level, &bp->examples);
  parts_threads(pt, hm ? head : NULL, "LM head");
  parts_threads(pt, rm ? ref : NULL, s->grpo ? "generation" : "reference forward");
  cal_summarize(tok, n, level, &bp->tokens);
  if (hm) {
    bp->layer_ms = pt->m.time.median * 1e3;
    bp->head_ms = hm->time.median * 1e3;
    bp->step_ms = b / bp->examples.median * 1e3;
    bp->step_flops = L * pt->flops + head->flops + (rm ? ref->flops : 0.0);
    *(s->grpo ? &bp->gen_ms : &bp->ref_ms) = rm ? rm->time.median * 1e3 : 0.0;
    bp->step_gflops = bp->step_flops / (bp->step_ms * 1e-3) * 1e-9;
    bp->head_gflops = head->flops / hm->time.median * 1e-9;
    bp->step_gemm_fraction = bp->step_gflops / s->res->gemm_gflops;
    bp->head_gemm_fraction = bp->head_gflops / s->res->gemm_gflops;
    /* its parts' timed runs held the kept parts beside them */
    bp->step_peak_rss = fmax(pt->step_peak_rss, head->step_peak_rss);
    if (rm)
      bp->step_peak_rss = fmax(bp->step_peak_rss, ref->step_peak_rss);
  }
  if (s->decode && pt->m.time.median > 0) {
    bp->read_gbps = bp->read_bytes / pt->m.time.median * 1e-9;
    if (s->mem_read_gbps > 0)
      bp->bw_efficiency = bp->read_gbps / s->mem_read_gbps;
    /* bw_beside: once the read after the points is in (batch_sweep.c) */
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

/* Peak, knee, shape and advice of the measured curve; batch-1 latency. */
int cal_sweep_analyze(sweep_t *s) {
  const cal_sweep_opts_t *o = &s->r->opt->sweep;
  cal_batch_mode_t *m = s->m;
  cal_curve_opts_t po;
  cal_curve_point_t *cp = cal_sweep_curve_of(s, &po);
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
    if (m->points[j].measured && (!m->layers_measured ||
                                  m->points[j].layers_measured < m->layers_measured))
      m->layers_measured = m->points[j].layers_measured;
  for (size_t j = 0; j < m->npoints; j++)
    if (m->points[j].batch == 1 && cal_sweep_point_headline(&m->points[j]))
      m->latency_ms_batch_1 = s->train ? m->points[j].step_ms
                                       : m->points[j].pt.m.time.median * 1e3;
  m->time_s = cal_now() - s->t0;
  return 0;
}

int cal_batch_open_ended(const cal_batch_mode_t *m) {
  /* the ends past which no larger batch could run here */
  static const char *const walls[] = {CAL_STOP_MEMORY, CAL_STOP_SWAPPED,
                                      CAL_STOP_VERIFY};
  const cal_curve_result_t *c = m->curve;
  if (!c || c->peak_batch_size < 1 ||
      (c->shape != CAL_SHAPE_SINGLE && c->shape != CAL_SHAPE_RISING))
    return 0;
  for (size_t i = 0; i < sizeof walls / sizeof *walls; i++)
    if (m->stop && strcmp(m->stop, walls[i]) == 0)
      return 0;
  return 1;
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
  for (int m = 0; m < CAL_BATCH_NMODES; m++)
    mode_free(&res->modes[m]);
  free(res);
}
