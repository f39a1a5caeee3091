#include "clock.h"

#include <stdint.h>
#include <string.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "compute_peak.h"
#include "timer.h"

double cal_clock_ghz_from_chain(double adds, double latency_cycles,
                                double seconds) {
  if (!(adds > 0) || !(latency_cycles > 0) || !(seconds > 0))
    return 0.0;
  return adds * latency_cycles / seconds * 1e-9;
}

static uint64_t chain(int variant, int64_t iters, uint64_t x) {
  switch (variant) {
  case CAL_VARIANT_AVX512: return cal_clock_chain_avx512(iters, x);
  case CAL_VARIANT_AVX2: return cal_clock_chain_avx2(iters, x);
  default: return cal_clock_chain_scalar(iters, x);
  }
}

static const char *method_of(int variant) {
  switch (variant) {
  case CAL_VARIANT_AVX512:
    return "dependent integer add chain (1 cycle/add) under AVX-512 FMA load";
  case CAL_VARIANT_AVX2:
    return "dependent integer add chain (1 cycle/add) under AVX2 FMA load";
  default: return "dependent integer add chain (1 cycle/add)";
  }
}

int cal_clock_measure(int variant, double sample_s, cal_clock_t *out) {
  int v, rc;
  memset(out, 0, sizeof *out);
  if ((rc = cal_variant_resolve(variant, &v)) < 0)
    return rc;
  if (!(sample_s > 0))
    sample_s = 0.005;
  double floor_s = 1000.0 * cal_timer_resolution();
  if (sample_s < floor_s)
    sample_s = floor_s;
  /* size the sample: grow the chain until it lasts sample_s (this also
   * warms the core up and wakes the vector units) */
  volatile uint64_t sink = 0;
  int64_t iters = 1024;
  double dt;
  for (;;) {
    double t0 = cal_now();
    sink += chain(v, iters, sink);
    dt = cal_now() - t0;
    if (dt >= sample_s || iters >= (INT64_C(1) << 40))
      break;
    iters *= dt > 0 && sample_s / dt < 8.0 ? 2 : 8;
  }
  for (size_t i = 0; i < CAL_CLOCK_SAMPLES; i++) {
    double t0 = cal_now();
    sink += chain(v, iters, sink);
    dt = cal_now() - t0;
    out->samples_ghz[i] =
        cal_clock_ghz_from_chain((double)iters * CAL_CLOCK_CHAIN_LEN, 1.0, dt);
  }
  out->n = CAL_CLOCK_SAMPLES;
  /* interruptions (preemption, other tenants) only make a sample slower,
   * so the fastest sample is the best estimate of the clock */
  out->ghz = 0.0;
  for (size_t i = 0; i < out->n; i++)
    if (out->samples_ghz[i] > out->ghz)
      out->ghz = out->samples_ghz[i];
  out->variant = v;
  out->method = method_of(v);
  (void)sink;
  return out->ghz > 0 ? 0 : CAL_ESYS;
}

int cal_measure_clock_ghz(int variant, double *ghz, const char **method) {
  cal_clock_t c;
  int rc = cal_clock_measure(variant, 0.0, &c);
  if (rc < 0)
    return rc;
  *ghz = c.ghz;
  if (method)
    *method = c.method;
  return 0;
}
