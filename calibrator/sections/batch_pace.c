/* The batch sweep's pace (see batch_sweep.h): how its points take their
 * samples, run on the mode's kept models, what a point should cost and
 * how much of the mode's share is spent, and the progress line that says
 * so. */
#include <math.h>
#include <stdio.h>

#include "batch_sweep.h"
#include "timer.h"

/* a point (the model's step: from milliseconds to seconds) takes samples
 * until its median's 95% interval is within 1% of it, at least 3 and at
 * most 10 (--quick 5), and stops taking more once its samples have taken
 * 2 s (--quick 1 s): a 4 s step is timed 3 times, a 40 ms one until its
 * interval is tight.  --samples N asks for N exactly. */
#define SWEEP_CI_TARGET 0.01
#define SWEEP_MIN_SAMPLES 3
#define SWEEP_MODEL_SAMPLES 10
#define SWEEP_MODEL_QUICK_SAMPLES 5
#define SWEEP_SAMPLES_S 2.0
#define SWEEP_QUICK_SAMPLES_S 1.0

/* Bytes the state kept in slot i holds (0: none). */
static double kept_bytes(const sweep_t *s, int i) {
  const cal_kept_t *kp = &s->kept[i];
  return kp->state && kp->k->mem_bytes ? kp->k->mem_bytes(&kp->p) : 0.0;
}

/* The plan counts a train point's parts one at a time: the models kept
 * in the other slots go first where they and this part would not fit
 * together. */
int cal_sweep_run_kept(sweep_t *s, int slot, const cal_kernel_t *k,
                       const cal_params_t *p, cal_point_t *pt) {
  double need = k->mem_bytes ? k->mem_bytes(p) : 0.0;
  for (int i = 0; i < 4; i++)
    need += i == slot ? 0.0 : kept_bytes(s, i);
  for (int i = 0; i < 4 && need > s->mem_budget; i++)
    if (i != slot)
      cal_kept_release(&s->kept[i]);
  int rc = cal_run_point_kept(s->r, &s->h, k, p, &s->kept[slot], pt);
  if (rc == 0 && !pt->reused) {
    s->built_s += pt->setup_s;
    s->built_all_s += pt->setup_s;
  }
  return rc;
}

void cal_sweep_samples(sweep_t *s) {
  const cal_opts_t *o = s->r->opt;
  if (o->samples_asked > 0 || o->rounds > 1)
    return;
  s->h.samples = o->quick ? SWEEP_MODEL_QUICK_SAMPLES : SWEEP_MODEL_SAMPLES;
  s->h.ci_target = SWEEP_CI_TARGET;
  s->h.min_samples = SWEEP_MIN_SAMPLES;
  s->h.max_samples_s = o->quick ? SWEEP_QUICK_SAMPLES_S : SWEEP_SAMPLES_S;
}

/* Seconds the timed part of a point whose step takes `step` should take:
 * its warm-up, its samples (by confidence: at least min_samples, at most
 * `samples`, no more once max_samples_s is spent) and one run more (the
 * calibration of a short step, the verification's step of a long one). */
static double timed_s(const cal_harness_cfg_t *h, double step) {
  double one = fmax(step, h->min_sample_s), n = h->samples;
  if (h->ci_target > 0 && h->max_samples_s > 0)
    n = fmin(n, fmax(h->min_samples, ceil(h->max_samples_s / one)));
  return fmax(h->warmup_s, step) + (n + 1.0) * one;
}

/* Seconds the point at batch b should take, from the last measured one
 * (lb, its step, and its wall time less the building of a model: a kept
 * model is re-shaped, not built again): the timed runs scaled by the step
 * (each path's; decode's step as its arithmetic at the run's GEMM rate
 * grows, cal_sweep_step_at) and the rest (re-shaping, verification) as it
 * was.  A training point's step is the sum of its parts (layers, LM head,
 * reference or generation). */
double cal_sweep_next_cost(const sweep_t *s, int64_t b, int64_t lb, double step,
                        double wall) {
  double ratio = (double)b / (double)(lb ? lb : 1), arith = step;
  if (s->decode && s->res->gemm_gflops > 0) {
    cal_params_t p;
    cal_sweep_shape(s, 1, lb, &p);
    arith = s->k->flops(&p) / (s->res->gemm_gflops * 1e9);
  }
  double next = cal_sweep_step_at(step, arith, ratio);
  int paths = s->decode && b <= CAL_SWEEP_BOTH_PATHS_MAX ? 2 : 1;
  int lpaths = s->decode && lb <= CAL_SWEEP_BOTH_PATHS_MAX ? 2 : 1;
  double then = lpaths * timed_s(&s->h, step);
  double now = paths * timed_s(&s->h, next);
  return fmax(wall - then, 0.0) + now;
}

/* Seconds of the mode's budget spent: its time so far, less the building
 * of its models, paid once a mode and not by its points (the budget was
 * drawn for points that each built their model; a kept model's first
 * point would otherwise leave the others no time). */
double cal_sweep_spent(const sweep_t *s) {
  return cal_now() - s->t0 - s->built_all_s;
}

/* How many of the list's first batches the user gave (--batches): those
 * are all measured, whatever the time. */
size_t cal_sweep_given(const sweep_t *s) {
  const cal_sweep_opts_t *o = &s->r->opt->sweep;
  return o->batches ? o->nbatches : 0;
}

/* Seconds the list's points from i on should take, from the last
 * measured point (next_cost); 0 before any was measured. */
static double time_left(const sweep_t *s, size_t i, int64_t lb, double step,
                        double wall) {
  double t = 0;
  for (size_t j = i; lb && j < s->nlist; j++)
    t += cal_sweep_next_cost(s, s->list[j], lb, step, wall);
  return t;
}

/* The progress line: the point, the points left and the time they should
 * take (within the mode's budget, but for a list the user gave); once, when a
 * given list will take longer than the budget, a note saying so. */
void cal_sweep_progress(sweep_t *s, size_t i, int64_t b, int64_t lb, double step,
                     double wall) {
  cal_run_t *r = s->r;
  double left = time_left(s, i, lb, step, wall);
  double room = s->budget - cal_sweep_spent(s);
  if (left > 0 && i < cal_sweep_given(s) && left > room && !s->said_long) {
    s->said_long = 1;
    cal_progress_done(r);
    fprintf(stderr,
            "calibrate: note: the %s batches given should take about %.0f s "
            "more, past the %.0f s left of the mode's share; measuring them "
            "all\n",
            s->m->name, left, fmax(room, 0.0));
  }
  if (i >= cal_sweep_given(s) && left > room)
    left = fmax(room, 0.0);
  if (left > 0)
    cal_progress(r, "batch sweep %s: batch %lld (point %zu of %zu, about "
                 "%.0f s left)", s->m->name, (long long)b, i + 1, s->nlist,
                 left);
  else
    cal_progress(r, "batch sweep %s: batch %lld (point %zu of %zu)",
                 s->m->name, (long long)b, i + 1, s->nlist);
}

