/* Memory-bandwidth kernels stream_read, stream_copy and stream_triad
 * (kernels/peak/stream.c), and the per-ISA loop bodies behind them.
 *
 * params.bytes is the working set: the total size of every array the kernel
 * touches (read: a; copy: a, b; triad: a, b, c), split evenly, each array
 * n = bytes / (8 · arrays) doubles rounded down to whole 64-byte lines.
 * Threads (params.threads) each take one contiguous block of every array,
 * the same block they first touched in setup.  One run makes
 * cal_stream_passes() passes over the arrays (enough to move 64 MiB, so a
 * working set inside L1 is not swamped by the cost of starting threads);
 * bytes() and flops() count every pass.  params.n > 0 sets the passes
 * instead (tests use 1).
 *
 * Bytes counted follow the STREAM convention: 8 bytes per array element
 * read or written (read 8n, copy 16n, triad 24n).  With ordinary stores
 * the CPU also reads every written line before writing it (write-allocate),
 * so the traffic really moved is copy 24n and triad 32n; both figures are
 * given by cal_stream_traffic(). */
#ifndef CAL_STREAM_H
#define CAL_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

/* Traffic of one run of stream kernel `name` for params p: *counted by the
 * STREAM convention (what kernel->bytes() returns) and *actual including
 * write-allocate reads.  CAL_EINVAL for another kernel name. */
int cal_stream_traffic(const char *name, const cal_params_t *p,
                       double *counted, double *actual);

/* Passes over the arrays in one run (0 for another kernel name). */
int64_t cal_stream_passes(const char *name, const cal_params_t *p);

/* Elements per array for params p (0 when the working set is too small). */
size_t cal_stream_elems(const char *name, const cal_params_t *p);

/* For tests only: change one element of the last output so that verify()
 * must fail (state from a stream kernel's setup()). */
void cal_stream_test_corrupt(void *state);

/* Loop bodies, one set per ISA (stream_body.h compiled three times), each
 * making `passes` passes over n elements; read returns the sum of all. */
#define CAL_STREAM_DECLARE(sfx)                                              \
  double cal_stream_read_##sfx(const double *a, size_t n, int64_t passes);   \
  void cal_stream_copy_##sfx(double *b, const double *a, size_t n,           \
                             int64_t passes);                                \
  void cal_stream_triad_##sfx(double *a, const double *b, const double *c,   \
                              double s, size_t n, int64_t passes);
CAL_STREAM_DECLARE(scalar)
CAL_STREAM_DECLARE(avx2)
CAL_STREAM_DECLARE(avx512)

#endif
