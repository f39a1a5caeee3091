/* The data-parallel step of a plan over a fleet's all-reduce curve: which
 * figure each machine computes at, the step with and without overlap, the
 * gradient accumulation, and its arithmetic line by line. */
#include "plan_step.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

const char *cal_step_src_name(cal_step_src_t s) {
  static const char *const names[] = {"train", "train_curve", "inference",
                                      "unknown"};
  return names[s];
}

cal_step_src_t cal_step_source(const cal_plan_machine_t *m) {
  if (m->mode && strcmp(m->mode, "train") == 0)
    return CAL_STEP_TRAIN;
  if (m->train_throughput > 0 && isfinite(m->train_throughput))
    return CAL_STEP_TRAIN_CURVE;
  return m->mode ? CAL_STEP_INFERENCE : CAL_STEP_UNKNOWN;
}

/* Append one line of the step's arithmetic. */
static void net_line(cal_plan_network_t *nw, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void net_line(cal_plan_network_t *nw, const char *fmt, ...) {
  va_list ap;
  if (nw->narith == CAL_PLAN_NET_LINES)
    return;
  va_start(ap, fmt);
  vsnprintf(nw->arith[nw->narith++], sizeof nw->arith[0], fmt, ap);
  va_end(ap);
}

/* What one machine's figure measured, for the line naming each. */
static void source_words(const cal_plan_machine_t *m, cal_step_src_t src,
                         char *what, size_t len) {
  if (src == CAL_STEP_TRAIN)
    snprintf(what, len, "train");
  else if (src == CAL_STEP_TRAIN_CURVE)
    snprintf(what, len, "its train curve at batch %lld, not the %s figure",
             (long long)m->train_batch, m->mode ? m->mode : "top-level");
  else if (src == CAL_STEP_INFERENCE)
    snprintf(what, len, "%s: inference", m->mode);
  else
    snprintf(what, len, "a curve, mode not recorded");
}

/* The step's compute rests on what each machine's figure measured: the
 * compute note (NULL when every figure is a training step's) and one
 * line of arithmetic naming each figure's source. */
static const char *compute_sources(cal_plan_network_t *nw) {
  char line[512];
  size_t at = (size_t)snprintf(line, sizeof line,
                               "throughput per machine (examples/s):");
  int inference = 0, unknown = 0;
  for (size_t k = 0; k < nw->nmachines; k++) {
    const cal_plan_step_machine_t *s = &nw->machines[k];
    inference |= s->from == CAL_STEP_INFERENCE;
    unknown |= s->from == CAL_STEP_UNKNOWN;
    char what[160];
    source_words(s->m, s->from, what, sizeof what);
    if (at < sizeof line)
      at += (size_t)snprintf(line + at, sizeof line - at, "%s %s %.4g (%s)",
                             k ? "," : "", s->m->name, s->throughput, what);
  }
  net_line(nw, "%s", line);
  if (inference)
    return "the compute time uses inference throughput (a forward pass, "
           "batch_source.mode other than train) where a machine has no "
           "train curve: a training step also runs the backward pass and "
           "the optimizer, so the compute time is too short and the "
           "all-reduce's share too large (measure with --sweep-batch --mode "
           "train)";
  if (unknown)
    return "the compute time uses the throughput of measured curves whose "
           "mode is not recorded: it is a training step's only if the curve "
           "measured one";
  return NULL;
}

/* The arithmetic of the step, line by line, with the compute note. */
static void step_lines(cal_plan_network_t *nw) {
  const cal_plan_net_t *net = nw->net;
  const cal_net_step_t *st = &nw->st;
  const double ar = nw->allreduce_s;
  net_line(nw, "gradients: %.4g trainable parameters x %g bytes (%s) = "
           "%.4g bytes", nw->trainable_params, nw->bytes_per_gradient,
           cal_dtype_name(nw->dtype), nw->gradient_bytes);
  net_line(nw, "all-reduce of %.4g bytes: %.4g s, %s the measured curve (%d "
           "ranks on %d host%s); bus bandwidth %.3g GB/s", nw->gradient_bytes,
           ar, nw->extrapolated ? "extrapolated past the largest size of"
                                : "interpolated on",
           net->ranks, net->hosts, net->hosts == 1 ? "" : "s",
           nw->busbw_gbps);
  nw->compute_note = compute_sources(nw);
  net_line(nw, "step of G = %.0f examples (%s), split by throughput: "
           "compute = G / sum(throughput) = %.0f / %.4g = %.4g s%s",
           nw->global_batch, nw->global_batch_from, nw->global_batch,
           st->sum_throughput, st->compute_s,
           nw->compute_note ? " (see the note on the throughput)" : "");
  net_line(nw, "no overlap: step = compute + all-reduce = %.4g + %.4g = %.4g "
           "s (%.1f%% all-reduce), %.4g examples/s", st->compute_s, ar,
           st->step_s, 100 * st->allreduce_fraction, st->fleet_throughput);
  net_line(nw, "with overlap (an upper bound: all communication hidden "
           "behind compute): step = max(%.4g, %.4g) = %.4g s, %.4g examples/s",
           st->compute_s, ar, st->step_overlap_s,
           st->fleet_throughput_overlap);
  net_line(nw, "fastest machine alone (%s): G / %.4g = %.4g s a step, no "
           "all-reduce", nw->fastest->name, st->fastest_throughput,
           st->alone_s);
  if (st->crossover_accum)
    net_line(nw, "k accumulation steps: k x %.4g + %.4g < k x %.4g from k = "
             "%lld (the crossover)", st->compute_s, ar, st->alone_s,
             (long long)st->crossover_accum);
  net_line(nw, "all-reduce <= %.0f%% of a step: k >= %.4g x %.2g / (%.2g x "
           "%.4g), k = %lld", 100 * CAL_NET_AR_FRACTION, ar,
           1 - CAL_NET_AR_FRACTION, CAL_NET_AR_FRACTION, st->compute_s,
           (long long)st->amortise_accum);
}

/* Each machine of the split at its step throughput into nw->machines and
 * thr (0: not in the split); the global batch G and where it comes
 * from. */
static void step_machines(const cal_plan_opts_t *o, const cal_plan_t *p,
                          cal_plan_network_t *nw, double *thr) {
  double sum_b = 0, best = 0;
  for (size_t k = 0; k < p->nmachines; k++) {
    const cal_plan_machine_t *m = p->machines[k].m;
    if (!p->machines[k].in_split)
      continue;
    cal_step_src_t src = cal_step_source(m);
    int curve = src == CAL_STEP_TRAIN_CURVE;
    thr[k] = curve ? m->train_throughput : m->throughput;
    int64_t ob = curve ? m->train_batch : m->optimal_batch;
    sum_b += ob > 0 ? (double)ob : 1;
    if (!nw->fastest || thr[k] > best) {
      nw->fastest = m;
      best = thr[k];
    }
    nw->machines[nw->nmachines++] =
        (cal_plan_step_machine_t){.m = m, .throughput = thr[k], .from = src};
  }
  nw->global_batch_from = "the sum of the machines' optimal batches";
  nw->global_batch = sum_b;
  if (o->work.unit == CAL_WORK_STEPS && o->work.global_batch) {
    nw->global_batch = (double)o->work.global_batch;
    nw->global_batch_from = "--global-batch";
  } else if (o->target > 0) {
    nw->global_batch = (double)o->target;
    nw->global_batch_from = "--target-effective-batch";
  }
}

static const char *verdict_of(const cal_net_step_t *st) {
  if (!st->slower_than_fastest)
    return "data parallelism over the fleet is faster than the fastest "
           "machine alone";
  return st->crossover_accum
             ? "data parallelism over the fleet is slower than the fastest "
               "machine alone without gradient accumulation"
             : "data parallelism over the fleet is slower than the fastest "
               "machine alone at any accumulation";
}

int cal_plan_step(const cal_plan_opts_t *o, const cal_plan_t *p,
                  const cal_mem_need_t *base, cal_plan_network_t **out,
                  char *err, size_t errlen) {
  const cal_plan_net_t *net = o->net;
  const size_t n = p->nmachines ? p->nmachines : 1;
  cal_plan_network_t *nw = calloc(1, sizeof *nw);
  double *thr = calloc(n, sizeof *thr);
  int rc = CAL_ENOMEM;
  *out = NULL;
  if (!nw || !thr || !(nw->machines = calloc(n, sizeof *nw->machines))) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  nw->net = net;
  /* the gradients all-reduced are those the memory model holds: fp32
   * (as DDP reduces autocast's fp32 gradients, and Megatron accumulates
   * and reduces bf16 training's in fp32 by default) */
  nw->dtype = CAL_DT_FP32;
  nw->trainable_params = base->trainable_params;
  nw->bytes_per_gradient = cal_dtype_bytes(CAL_DT_FP32);
  nw->gradient_bytes = base->gradients_bytes;
  step_machines(o, p, nw, thr);
  if (cal_net_allreduce_s(&net->curve, nw->gradient_bytes, &nw->allreduce_s,
                          &nw->extrapolated) < 0 ||
      cal_net_step(thr, p->nmachines, nw->global_batch, nw->allreduce_s,
                   CAL_NET_AR_FRACTION, &nw->st) < 0) {
    snprintf(err, errlen, "%s: no usable all-reduce curve or machine for "
             "the network estimate", net->source);
    rc = CAL_EINVAL;
    goto out;
  }
  for (size_t k = 0; k < nw->nmachines; k++)
    nw->machines[k].examples_per_step = nw->global_batch *
                                        nw->machines[k].throughput /
                                        nw->st.sum_throughput;
  int r = net->ranks > 1 ? net->ranks : 2;
  nw->busbw_gbps = nw->gradient_bytes / nw->allreduce_s / 1e9 * 2.0 * (r - 1) / r;
  nw->note = net->intra_host ? "the curve was measured between ranks of one "
                               "host (sharing its CPUs), not between hosts"
                             : NULL;
  nw->verdict = verdict_of(&nw->st);
  step_lines(nw);
  *out = nw;
  nw = NULL;
  rc = 0;
out:
  if (nw)
    free(nw->machines);
  free(nw);
  free(thr);
  return rc;
}
