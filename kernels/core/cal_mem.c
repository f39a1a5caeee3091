#include "cal_mem.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* From this size an allocation is placed on 2 MiB boundaries and asked
 * for transparent huge pages (MADV_HUGEPAGE: honoured where THP is
 * "always" or "madvise", ignored where "never"), as PyTorch's CPU
 * allocator asks for its large tensors: a model's state is then faulted
 * in 2 MiB at a time, not 4 KiB (a page fault costs tens of microseconds
 * in some virtual machines: seconds for a model's gigabytes), and its
 * products run with fewer TLB misses. */
#define CAL_HUGE_FROM ((size_t)4 << 20)
#define CAL_HUGE_PAGE ((size_t)2 << 20)

void *cal_alloc(size_t bytes) {
  if (bytes == 0)
    return NULL;
  size_t align = bytes >= CAL_HUGE_FROM ? CAL_HUGE_PAGE : CAL_ALIGN;
  size_t rounded = (bytes + align - 1) / align * align;
  if (rounded < bytes)
    return NULL;
  void *p = aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
  if (p && align == CAL_HUGE_PAGE)
    (void)madvise(p, rounded, MADV_HUGEPAGE); /* advice only */
#endif
  return p;
}

void *cal_zalloc(size_t bytes) {
  void *p = cal_alloc(bytes);
  if (p)
    memset(p, 0, bytes);
  return p;
}

void cal_free(void *p) { free(p); }

void cal_free_list(void *const *ptrs, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(ptrs[i]);
}

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void cal_rng_seed(cal_rng_t *r, uint64_t seed) {
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t cal_rng_next(cal_rng_t *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double cal_rng_uniform(cal_rng_t *r) {
  return (double)(cal_rng_next(r) >> 11) * 0x1.0p-53;
}

static void fill_seq(float *x, size_t n, float lo, float hi, cal_rng_t *r) {
  for (size_t i = 0; i < n; i++)
    x[i] = lo + (hi - lo) * (float)cal_rng_uniform(r);
}

void cal_fill_f32(float *x, size_t n, float lo, float hi, cal_rng_t *r) {
  if (n < CAL_FILL_TEAM_MIN / sizeof *x) {
    fill_seq(x, n, lo, hi, r);
    return;
  }
  cal_fill_f32_part(x, 0, n, lo, hi, cal_rng_next(r));
}

/* block b from the stream seeded base + b: the same values whatever the
 * team's size, and a part's values those of the whole fill */
void cal_fill_f32_part(float *x, size_t off, size_t n, float lo, float hi,
                       uint64_t base) {
  if (n == 0)
    return;
  const size_t b0 = off / CAL_FILL_BLOCK;
  const size_t b1 = (off + n - 1) / CAL_FILL_BLOCK + 1;
#pragma omp parallel for schedule(static) if (n >= CAL_FILL_TEAM_MIN / sizeof *x)
  for (size_t b = b0; b < b1; b++) {
    cal_rng_t rb;
    cal_rng_seed(&rb, base + b);
    size_t i0 = b * CAL_FILL_BLOCK, i1 = i0 + CAL_FILL_BLOCK;
    size_t from = i0 > off ? i0 : off, to = i1 < off + n ? i1 : off + n;
    for (size_t i = i0; i < from; i++) /* the block's draws before it */
      (void)cal_rng_next(&rb);
    fill_seq(x + (from - off), to - from, lo, hi, &rb);
  }
}

void cal_team_share(size_t n, size_t unit, size_t *a, size_t *b) {
  size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
  size_t units = (n + unit - 1) / unit, per = (units + nt - 1) / nt;
  *a = t * per * unit < n ? t * per * unit : n;
  *b = (t + 1) * per * unit < n ? (t + 1) * per * unit : n;
}

void cal_memset_team(void *p, int c, size_t bytes) {
  if (bytes < CAL_FILL_TEAM_MIN) {
    memset(p, c, bytes);
    return;
  }
#pragma omp parallel
  {
    size_t a, b;
    cal_team_share(bytes, 64, &a, &b);
    if (b > a)
      memset((char *)p + a, c, b - a);
  }
}

void cal_fill_f64(double *x, size_t n, double lo, double hi, cal_rng_t *r) {
  for (size_t i = 0; i < n; i++)
    x[i] = lo + (hi - lo) * cal_rng_uniform(r);
}
