/* The stream loops, compiled once per ISA: the including file defines
 * CAL_STREAM_SFX (scalar, avx2, avx512) and CAL_STREAM_ACC, the number of
 * independent partial sums of the read loop (enough vectors in flight to
 * hide the add latency: e.g. 8 vectors of 8 doubles for AVX-512).  The
 * compiler vectorizes with the file's flags; no fast-math is needed, since
 * each partial sum is added in order. */
#include <stddef.h>
#include <stdint.h>

#include "stream.h"

#define CAL_SPASTE2_(a, b) a##_##b
#define CAL_SPASTE_(a, b) CAL_SPASTE2_(a, b)
#define CAL_SFN(name) CAL_SPASTE_(name, CAL_STREAM_SFX)

double CAL_SFN(cal_stream_read)(const double *a, size_t n, int64_t passes) {
  double acc[CAL_STREAM_ACC] = {0};
  double s = 0.0;
  size_t body = n - n % CAL_STREAM_ACC;
  for (int64_t k = 0; k < passes; k++) {
    for (size_t i = 0; i < body; i += CAL_STREAM_ACC)
      for (size_t j = 0; j < CAL_STREAM_ACC; j++)
        acc[j] += a[i + j];
    for (size_t i = body; i < n; i++)
      s += a[i];
  }
  for (size_t j = 0; j < CAL_STREAM_ACC; j++)
    s += acc[j];
  return s;
}

void CAL_SFN(cal_stream_copy)(double *restrict b, const double *restrict a,
                              size_t n, int64_t passes) {
  for (int64_t k = 0; k < passes; k++) {
    for (size_t i = 0; i < n; i++)
      b[i] = a[i];
    /* each pass must really happen: tell the compiler b is read */
    __asm__ volatile("" : : "r"(b) : "memory");
  }
}

void CAL_SFN(cal_stream_triad)(double *restrict a, const double *restrict b,
                               const double *restrict c, double s, size_t n,
                               int64_t passes) {
  for (int64_t k = 0; k < passes; k++) {
    for (size_t i = 0; i < n; i++)
      a[i] = b[i] + s * c[i];
    __asm__ volatile("" : : "r"(a) : "memory");
  }
}
