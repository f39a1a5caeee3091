/* The stream loops, compiled once per ISA: the including file defines
 * CAL_STREAM_SFX (scalar, avx2, avx512) and CAL_STREAM_ACC, the number of
 * independent partial sums of the read loop (enough vectors in flight to
 * hide the add latency: e.g. 8 vectors of 8 doubles for AVX-512; a
 * multiple of the read's four streams).  The compiler vectorizes with the
 * file's flags; no fast-math is needed, since each partial sum is added in
 * order. */
#include <stddef.h>
#include <stdint.h>

#include "stream.h"

#define CAL_SPASTE2_(a, b) a##_##b
#define CAL_SPASTE_(a, b) CAL_SPASTE2_(a, b)
#define CAL_SFN(name) CAL_SPASTE_(name, CAL_STREAM_SFX)

/* The read loop takes its block as CAL_STREAM_READS contiguous streams
 * read side by side (the last few elements after them alone), each with
 * its own quarter of the partial sums, written out per stream so that
 * the compiler keeps them in vectors: one stream a thread left a VM's
 * memory with too few requests in flight (2 threads of a Zen 3 read
 * 26-32 GB/s from 128 MiB so, 32-38 with four streams in the same
 * process, 1 thread 16 against 23; the caches' rates the same), a read
 * figure below the triad's and under the rate decode's GEMV reads its
 * weights at. */
#define CAL_STREAM_READS 4
#define CAL_STREAM_W (CAL_STREAM_ACC / CAL_STREAM_READS)
double CAL_SFN(cal_stream_read)(const double *a, size_t n, int64_t passes) {
  double a0[CAL_STREAM_W] = {0}, a1[CAL_STREAM_W] = {0};
  double a2[CAL_STREAM_W] = {0}, a3[CAL_STREAM_W] = {0};
  double s = 0.0;
  const size_t per = n / CAL_STREAM_READS / CAL_STREAM_W * CAL_STREAM_W;
  const double *restrict p0 = a, *restrict p1 = a + per;
  const double *restrict p2 = a + 2 * per, *restrict p3 = a + 3 * per;
  for (int64_t k = 0; k < passes; k++) {
    for (size_t i = 0; i < per; i += CAL_STREAM_W) {
      for (size_t j = 0; j < CAL_STREAM_W; j++)
        a0[j] += p0[i + j];
      for (size_t j = 0; j < CAL_STREAM_W; j++)
        a1[j] += p1[i + j];
      for (size_t j = 0; j < CAL_STREAM_W; j++)
        a2[j] += p2[i + j];
      for (size_t j = 0; j < CAL_STREAM_W; j++)
        a3[j] += p3[i + j];
    }
    for (size_t i = CAL_STREAM_READS * per; i < n; i++)
      s += a[i];
  }
  for (size_t j = 0; j < CAL_STREAM_W; j++)
    s += (a0[j] + a1[j]) + (a2[j] + a3[j]);
  return s;
}
#undef CAL_STREAM_W

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
