/* The network's share of a data-parallel step (plan_net.h). */
#include "plan_net.h"

#include <math.h>
#include <string.h>

#include "cal_err.h"

int cal_net_allreduce_s(const cal_net_curve_t *c, double bytes, double *t,
                        int *extrapolated) {
  *extrapolated = 0;
  if (!c || c->n == 0 || !(bytes >= 0))
    return CAL_EINVAL;
  for (size_t i = 0; i < c->n; i++)
    if (!(c->bytes[i] > 0 && c->time_s[i] > 0) ||
        (i && !(c->bytes[i] > c->bytes[i - 1])))
      return CAL_EINVAL;
  size_t last = c->n - 1;
  if (bytes <= c->bytes[0]) {
    *t = c->time_s[0];
    return 0;
  }
  if (bytes >= c->bytes[last]) {
    *t = c->time_s[last] * bytes / c->bytes[last];
    *extrapolated = bytes > c->bytes[last];
    return 0;
  }
  size_t k = 1;
  while (c->bytes[k] < bytes)
    k++;
  double x0 = log(c->bytes[k - 1]), x1 = log(c->bytes[k]);
  double y0 = log(c->time_s[k - 1]), y1 = log(c->time_s[k]);
  *t = exp(y0 + (y1 - y0) * (log(bytes) - x0) / (x1 - x0));
  return 0;
}

int cal_net_step(const double *thr, size_t n, double global_batch,
                 double allreduce_s, double fraction, cal_net_step_t *out) {
  memset(out, 0, sizeof *out);
  if (!(global_batch > 0) || !(allreduce_s >= 0) || !(fraction > 0) ||
      !(fraction < 1))
    return CAL_EINVAL;
  size_t usable = 0;
  for (size_t i = 0; i < n; i++)
    if (thr[i] > 0 && isfinite(thr[i])) {
      usable++;
      out->sum_throughput += thr[i];
      if (thr[i] > out->fastest_throughput)
        out->fastest_throughput = thr[i];
    }
  if (!usable)
    return CAL_EINVAL;
  double G = global_batch, c = G / out->sum_throughput, a = allreduce_s;
  out->compute_s = c;
  out->allreduce_s = a;
  out->step_s = c + a;
  out->step_overlap_s = c > a ? c : a;
  out->fleet_throughput = G / out->step_s;
  out->fleet_throughput_overlap = G / out->step_overlap_s;
  out->alone_s = G / out->fastest_throughput;
  out->slower_than_fastest = out->step_s > out->alone_s;
  out->slower_overlap = out->step_overlap_s > out->alone_s;
  out->allreduce_fraction = a / out->step_s;
  /* k x c + a < k x alone_s: k > a / (alone_s - c) */
  double gain = out->alone_s - c;
  if (usable > 1 && gain > 0) {
    double k = floor(a / gain) + 1;
    out->crossover_accum = k <= CAL_NET_MAX_ACCUM ? (int64_t)k : 0;
  }
  /* a / (k c + a) <= f: k >= a (1 - f) / (f c) */
  double k = ceil(a * (1 - fraction) / (fraction * c) - 1e-9);
  if (k < 1)
    k = 1;
  out->amortise_accum = k <= CAL_NET_MAX_ACCUM ? (int64_t)k : CAL_NET_MAX_ACCUM;
  out->accum = out->amortise_accum > out->crossover_accum ? out->amortise_accum
                                                          : out->crossover_accum;
  out->accum_step_s = (double)out->accum * c + a;
  out->accum_throughput = (double)out->accum * G / out->accum_step_s;
  return 0;
}
