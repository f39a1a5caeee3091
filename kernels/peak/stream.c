/* STREAM-style bandwidth kernels: read (sum), copy, triad.  See stream.h
 * for the working-set and byte-counting conventions.
 *
 * Inputs hold small integers (a[i] = i mod 8 + 1, c[i] = i mod 5, scalar 3), so
 * every sum and triad is exact in any order and verify() checks each
 * element (and the read kernel's total) against the closed form. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "cal_isa.h"
#include "cal_mem.h"
#include "kernel.h"
#include "stream.h"

/* the portable loops: baseline flags */
#define CAL_STREAM_SFX scalar
#define CAL_STREAM_ACC 16
#include "stream_body.h"

#ifndef CAL_HAVE_X86_SIMD
/* no x86 SIMD files in this build: the variants are never supported, these
 * only satisfy the linker */
double cal_stream_read_avx2(const double *a, size_t n, int64_t k) { return cal_stream_read_scalar(a, n, k); }
void cal_stream_copy_avx2(double *b, const double *a, size_t n, int64_t k) { cal_stream_copy_scalar(b, a, n, k); }
void cal_stream_triad_avx2(double *a, const double *b, const double *c, double s, size_t n, int64_t k) { cal_stream_triad_scalar(a, b, c, s, n, k); }
double cal_stream_read_avx512(const double *a, size_t n, int64_t k) { return cal_stream_read_scalar(a, n, k); }
void cal_stream_copy_avx512(double *b, const double *a, size_t n, int64_t k) { cal_stream_copy_scalar(b, a, n, k); }
void cal_stream_triad_avx512(double *a, const double *b, const double *c, double s, size_t n, int64_t k) { cal_stream_triad_scalar(a, b, c, s, n, k); }
#endif

typedef enum { ST_READ, ST_COPY, ST_TRIAD } stream_op_t;

#define TRIAD_SCALAR 3.0
#define LINE_DOUBLES 8
#define MAX_THREADS 256
/* A run makes enough passes over a small working set to move at least this
 * many (counted) bytes, so that entering the parallel region costs < 1%
 * even when the arrays sit in L1. */
#define MIN_RUN_BYTES (64.0 * 1024 * 1024)

static const struct {
  const char *name;
  int arrays;      /* arrays touched */
  int written;     /* arrays written (each costs a write-allocate read) */
} ops[] = {
    [ST_READ] = {"stream_read", 1, 0},
    [ST_COPY] = {"stream_copy", 2, 1},
    [ST_TRIAD] = {"stream_triad", 3, 1},
};

typedef struct {
  stream_op_t op;
  int variant;
  int threads;
  size_t n;
  int64_t passes;      /* passes over the arrays per run */
  double *a, *b, *c;
  double sums[MAX_THREADS * 8]; /* per-thread partial sums of read, 64 B apart */
  double total;        /* read: sum of the last run */
} stream_state_t;

static double val_a(size_t i) { return (double)((i & 7) + 1); }
static double val_c(size_t i) { return (double)(i % 5); }

static size_t elems(stream_op_t op, const cal_params_t *p) {
  if (p->bytes <= 0)
    return 0;
  size_t n = (size_t)p->bytes / (8u * (size_t)ops[op].arrays);
  return n - n % LINE_DOUBLES;
}

static int op_of(const char *name, stream_op_t *op) {
  for (int i = 0; i < 3; i++)
    if (strcmp(name, ops[i].name) == 0) {
      *op = (stream_op_t)i;
      return 0;
    }
  return CAL_EINVAL;
}

static int64_t passes(stream_op_t op, const cal_params_t *p) {
  if (p->n > 0)
    return p->n;
  double once = 8.0 * (double)elems(op, p) * ops[op].arrays;
  if (!(once > 0))
    return 1;
  double k = ceil(MIN_RUN_BYTES / once);
  return k > 1 ? (int64_t)k : 1;
}

size_t cal_stream_elems(const char *name, const cal_params_t *p) {
  stream_op_t op;
  return op_of(name, &op) < 0 ? 0 : elems(op, p);
}

int cal_stream_traffic(const char *name, const cal_params_t *p,
                       double *counted, double *actual) {
  stream_op_t op;
  if (op_of(name, &op) < 0)
    return CAL_EINVAL;
  double n = (double)elems(op, p) * (double)passes(op, p);
  *counted = 8.0 * n * ops[op].arrays;
  *actual = 8.0 * n * (ops[op].arrays + ops[op].written);
  return 0;
}

int64_t cal_stream_passes(const char *name, const cal_params_t *p) {
  stream_op_t op;
  return op_of(name, &op) < 0 ? 0 : passes(op, p);
}

static double op_bytes(stream_op_t op, const cal_params_t *p) {
  return 8.0 * (double)elems(op, p) * ops[op].arrays * (double)passes(op, p);
}
static double read_bytes(const cal_params_t *p) { return op_bytes(ST_READ, p); }
static double copy_bytes(const cal_params_t *p) { return op_bytes(ST_COPY, p); }
static double triad_bytes(const cal_params_t *p) { return op_bytes(ST_TRIAD, p); }

static double read_flops(const cal_params_t *p) {
  return (double)elems(ST_READ, p) * (double)passes(ST_READ, p);
}
static double copy_flops(const cal_params_t *p) { return 0.0; }
static double triad_flops(const cal_params_t *p) {
  return 2.0 * (double)elems(ST_TRIAD, p) * (double)passes(ST_TRIAD, p);
}

static double stream_mem(const cal_params_t *p) {
  return (double)sizeof(stream_state_t) + (double)(p->bytes > 0 ? p->bytes : 0);
}

static int stream_supported(const cal_params_t *p, const char **why) {
  int v, rc = cal_variant_resolve(p->variant, &v);
  if (rc < 0)
    *why = rc == CAL_EUNSUPP ? "the CPU lacks the requested SIMD variant"
                             : "unknown SIMD variant";
  return rc;
}

static void stream_teardown(void *state) {
  stream_state_t *s = state;
  if (s)
    cal_free_each(s->a, s->b, s->c, s);
}

/* thread t's block [*lo, *hi): whole lines, the last thread takes the rest */
static void block(size_t n, int threads, int t, size_t *lo, size_t *hi) {
  size_t lines = n / LINE_DOUBLES, per = lines / (size_t)threads;
  size_t extra = lines % (size_t)threads, ut = (size_t)t;
  *lo = (ut * per + (ut < extra ? ut : extra)) * LINE_DOUBLES;
  *hi = *lo + (per + (ut < extra ? 1 : 0)) * LINE_DOUBLES;
}

static int stream_setup_op(stream_op_t op, const cal_params_t *p, void **state) {
  int v, rc;
  if ((rc = cal_variant_resolve(p->variant, &v)) < 0)
    return rc;
  size_t n = elems(op, p);
  int threads = p->threads > 0 ? p->threads : 1;
  if (n < LINE_DOUBLES || threads > MAX_THREADS || p->threads < 0)
    return CAL_EINVAL;
  stream_state_t *s = cal_alloc(sizeof *s);
  if (!s)
    return CAL_ENOMEM;
  *s = (stream_state_t){.op = op, .variant = v, .threads = threads, .n = n,
                        .passes = passes(op, p)};
  s->a = cal_alloc(n * sizeof(double));
  if (ops[op].arrays > 1)
    s->b = cal_alloc(n * sizeof(double));
  if (ops[op].arrays > 2)
    s->c = cal_alloc(n * sizeof(double));
  if (!s->a || (ops[op].arrays > 1 && !s->b) || (ops[op].arrays > 2 && !s->c)) {
    stream_teardown(s);
    return CAL_ENOMEM;
  }
  /* first touch by the thread that will use each block (NUMA placement);
   * outputs are poisoned with NaN so a run that writes nothing fails */
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num();
    size_t lo, hi;
    block(n, threads, t, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
      switch (op) {
      case ST_READ: s->a[i] = val_a(i); break;
      case ST_COPY: s->a[i] = val_a(i); s->b[i] = NAN; break;
      case ST_TRIAD: s->a[i] = NAN; s->b[i] = val_a(i); s->c[i] = val_c(i); break;
      }
    }
  }
  s->total = NAN;
  *state = s;
  return 0;
}

static int read_setup(const cal_params_t *p, void **st) { return stream_setup_op(ST_READ, p, st); }
static int copy_setup(const cal_params_t *p, void **st) { return stream_setup_op(ST_COPY, p, st); }
static int triad_setup(const cal_params_t *p, void **st) { return stream_setup_op(ST_TRIAD, p, st); }

static void run_block(stream_state_t *s, int t) {
  size_t lo, hi;
  block(s->n, s->threads, t, &lo, &hi);
  size_t m = hi - lo;
  int64_t k = s->passes;
  int v = s->variant;
  switch (s->op) {
  case ST_READ:
    s->sums[t * 8] =
        v == CAL_VARIANT_AVX512 ? cal_stream_read_avx512(s->a + lo, m, k)
        : v == CAL_VARIANT_AVX2 ? cal_stream_read_avx2(s->a + lo, m, k)
                                : cal_stream_read_scalar(s->a + lo, m, k);
    break;
  case ST_COPY:
    if (v == CAL_VARIANT_AVX512)
      cal_stream_copy_avx512(s->b + lo, s->a + lo, m, k);
    else if (v == CAL_VARIANT_AVX2)
      cal_stream_copy_avx2(s->b + lo, s->a + lo, m, k);
    else
      cal_stream_copy_scalar(s->b + lo, s->a + lo, m, k);
    break;
  case ST_TRIAD:
    if (v == CAL_VARIANT_AVX512)
      cal_stream_triad_avx512(s->a + lo, s->b + lo, s->c + lo, TRIAD_SCALAR, m, k);
    else if (v == CAL_VARIANT_AVX2)
      cal_stream_triad_avx2(s->a + lo, s->b + lo, s->c + lo, TRIAD_SCALAR, m, k);
    else
      cal_stream_triad_scalar(s->a + lo, s->b + lo, s->c + lo, TRIAD_SCALAR, m, k);
    break;
  }
}

static int stream_run(void *state) {
  stream_state_t *s = state;
  for (int t = 0; t < s->threads; t++)
    s->sums[t * 8] = NAN;
#pragma omp parallel num_threads(s->threads)
  {
    int t = omp_get_thread_num();
    if (t < s->threads)
      run_block(s, t);
  }
  if (s->op == ST_READ) {
    double total = 0.0;
    for (int t = 0; t < s->threads; t++)
      total += s->sums[t * 8];
    s->total = total;
  }
  return 0;
}

/* sum of (i mod 8) + 1 for i in [0, n): whole cycles of 1..8 add 36
 * (no element is zero, so a read that skips one is caught) */
static double read_expected(size_t n) {
  size_t r = n % 8;
  return 36.0 * (double)(n / 8) + (double)(r * (r + 1) / 2);
}

static int stream_verify(void *state) {
  const stream_state_t *s = state;
  switch (s->op) {
  case ST_READ:
    return s->total == (double)s->passes * read_expected(s->n) ? 0
                                                                : CAL_EVERIFY;
  case ST_COPY:
    for (size_t i = 0; i < s->n; i++)
      if (!(s->b[i] == val_a(i)))
        return CAL_EVERIFY;
    return 0;
  case ST_TRIAD:
    for (size_t i = 0; i < s->n; i++)
      if (!(s->a[i] == val_a(i) + TRIAD_SCALAR * val_c(i)))
        return CAL_EVERIFY;
    return 0;
  }
  return CAL_EVERIFY;
}

void cal_stream_test_corrupt(void *state) {
  stream_state_t *s = state;
  switch (s->op) {
  case ST_READ: s->total += 1.0; break;
  case ST_COPY: s->b[s->n / 2] += 1.0; break;
  case ST_TRIAD: s->a[s->n - 1] += 1.0; break;
  }
}

static const char *stream_variant_name(const void *state) {
  return cal_variant_name(((const stream_state_t *)state)->variant);
}

/* One table entry per operation: the <op>_* functions above. */
#define STREAM_KERNEL(op)                                                    \
  const cal_kernel_t cal_kernel_stream_##op = {                              \
      .name = "stream_" #op, .family = CAL_FAMILY_STREAM, .dtype = CAL_DTYPE_FP64,            \
      .flops = op##_flops, .bytes = op##_bytes, .mem_bytes = stream_mem,     \
      .supported = stream_supported, .setup = op##_setup, .run = stream_run, \
      .verify = stream_verify, .teardown = stream_teardown,                  \
      .variant_name = stream_variant_name,                                   \
  };

STREAM_KERNEL(read)
STREAM_KERNEL(copy)
STREAM_KERNEL(triad)
