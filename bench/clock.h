/* The core clock under load, from a timed dependent chain of known latency.
 *
 * A chain of integer adds, each waiting for the one before, retires one add
 * per cycle on every x86 core, so adds / seconds = cycles / second.  The
 * avx2 and avx512 variants interleave independent vector FMAs (half the
 * FMA ports' capacity) with the chain, so the clock is read while the vector
 * units are busy (a core may lower its clock under wide vector load).
 * Runs on the calling thread: pin it first (cal_threads_use(t, 1)).
 * APERF/MPERF are not read: they need root (msr) and are usually absent in
 * virtual machines. */
#ifndef CAL_CLOCK_H
#define CAL_CLOCK_H

#include <stddef.h>

#define CAL_CLOCK_SAMPLES 9

typedef struct cal_clock {
  double ghz;                 /* the fastest sample: interruptions only
                               * slow a sample down */
  double samples_ghz[CAL_CLOCK_SAMPLES];
  size_t n;
  int variant;                /* the variant that ran (cal_isa_variant_t) */
  const char *method;         /* static text naming the chain used */
} cal_clock_t;

/* Measure: a short warm-up, then CAL_CLOCK_SAMPLES samples of about
 * sample_s seconds each (0: 5 ms).  variant CAL_VARIANT_AUTO takes the best
 * one; CAL_EUNSUPP when the CPU lacks the one asked for. */
int cal_clock_measure(int variant, double sample_s, cal_clock_t *out);

/* The same, reduced to the figure and the method (static text). */
int cal_measure_clock_ghz(int variant, double *ghz, const char **method);

/* GHz from a chain of `adds` dependent adds of `latency_cycles` each that
 * took `seconds`; 0 when the inputs make no sense. */
double cal_clock_ghz_from_chain(double adds, double latency_cycles,
                                double seconds);

#endif
