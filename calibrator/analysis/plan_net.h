/* The network in a data-parallel plan: pure arithmetic, no I/O, no
 * allocation.
 *
 * A data-parallel step of G examples is split over the machines in
 * proportion to their measured throughput t_i (examples/s at the optimal
 * batch), so every machine computes for
 *     compute_s = G / sum(t_i),
 * then the gradients (grad_bytes) are all-reduced, which takes allreduce_s
 * read off the measured all-reduce curve (cal_net_allreduce_s):
 *     step_s         = compute_s + allreduce_s   (no overlap)
 *     step_overlap_s = max(compute_s, allreduce_s) (communication fully
 *                      hidden behind compute: the best overlap can do).
 * The fastest machine alone needs alone_s = G / max(t_i) and no
 * all-reduce; data parallelism is slower when step_s > alone_s.
 * With k gradient-accumulation steps one all-reduce serves k micro-steps:
 *     step_s(k) = k x compute_s + allreduce_s for k x G examples.
 * The fleet beats the fastest machine alone once
 *     k > allreduce_s / (alone_s - compute_s)     (the crossover),
 * and the all-reduce is at most a fraction f of the step once
 *     k >= allreduce_s x (1 - f) / (f x compute_s).
 * The recommended k is the larger of the two (at least 1). */
#ifndef CAL_PLAN_NET_H
#define CAL_PLAN_NET_H

#include <stddef.h>
#include <stdint.h>

/* The measured all-reduce: time per call at each size, sizes ascending. */
typedef struct cal_net_curve {
  const double *bytes;
  const double *time_s;
  size_t n;
} cal_net_curve_t;

/* The all-reduce time of `bytes`: log-log interpolation between the two
 * measured sizes around it; below the smallest, the smallest's time (a
 * latency floor); above the largest, the largest's bandwidth (time
 * scaled by bytes), with *extrapolated set.  CAL_EINVAL when the curve is
 * empty, not ascending, or a time is not positive. */
int cal_net_allreduce_s(const cal_net_curve_t *c, double bytes, double *t,
                        int *extrapolated);

/* The network of a fleet profile as the plan reads it. */
typedef struct cal_plan_net {
  cal_net_curve_t curve;   /* all-reduce time per call by size */
  int ranks, hosts;        /* what the curve was measured over */
  int intra_host;          /* one host: between its ranks, not hosts */
  const char *source;      /* the fleet profile's path */
} cal_plan_net_t;

#define CAL_NET_AR_FRACTION 0.10 /* all-reduce at most 10% of a step */
#define CAL_NET_MAX_ACCUM 4096

typedef struct cal_net_step {
  double sum_throughput, fastest_throughput;
  double compute_s, allreduce_s;
  double step_s, step_overlap_s;
  double fleet_throughput, fleet_throughput_overlap; /* G / step */
  double alone_s;             /* G / fastest */
  int slower_than_fastest;    /* step_s > alone_s */
  int slower_overlap;         /* step_overlap_s > alone_s */
  double allreduce_fraction;  /* allreduce_s / step_s */
  int64_t crossover_accum;    /* smallest k beating the fastest alone; 0:
                                 never (one machine, or not within
                                 CAL_NET_MAX_ACCUM) */
  int64_t amortise_accum;     /* smallest k with the all-reduce <= f */
  int64_t accum;              /* recommended: max of the two, >= 1 */
  double accum_step_s;        /* k x compute_s + allreduce_s */
  double accum_throughput;    /* k x G / accum_step_s */
} cal_net_step_t;

/* The step of G examples over n machines with throughputs thr[] (<= 0 or
 * NaN: left out) and an all-reduce of allreduce_s; fraction f (0 < f <
 * 1) for the amortising k.  CAL_EINVAL when no machine is usable, G <= 0
 * or allreduce_s < 0. */
int cal_net_step(const double *thr, size_t n, double global_batch,
                 double allreduce_s, double fraction, cal_net_step_t *out);

#endif
