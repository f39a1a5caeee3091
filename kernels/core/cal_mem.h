/* Aligned allocation (zeroed or not) and release, and deterministic random
 * fill for kernel inputs. */
#ifndef CAL_MEM_H
#define CAL_MEM_H

#include <stddef.h>
#include <stdint.h>

#define CAL_ALIGN 64

/* 64-byte aligned, NULL on failure or size 0; free with cal_free(). */
void *cal_alloc(size_t bytes);
/* As cal_alloc(), the bytes set to zero. */
void *cal_zalloc(size_t bytes);
/* Accepts NULL. */
void cal_free(void *p);
/* cal_free() of each of n pointers (any may be NULL). */
void cal_free_list(void *const *ptrs, size_t n);
/* cal_free() of each argument, in order: cal_free_each(s->a, s->b, s). */
#define cal_free_each(...)                                                   \
  cal_free_list((void *const[]){__VA_ARGS__},                                \
                sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* splitmix64-seeded xoshiro256** generator: same seed, same stream. */
typedef struct { uint64_t s[4]; } cal_rng_t;
void cal_rng_seed(cal_rng_t *r, uint64_t seed);
uint64_t cal_rng_next(cal_rng_t *r);
/* uniform in [0, 1) */
double cal_rng_uniform(cal_rng_t *r);
/* Fills and memsets of at least this many bytes run on the OpenMP team
 * (one thread inside a parallel region): a model's state of gigabytes is
 * then first touched by every thread, which on a 2-vCPU VM faulted its
 * pages in at 3-4 GB/s against 1.6-2 on one.  cal_fill_f32 then fills
 * blocks of CAL_FILL_BLOCK elements each from its own stream, seeded from
 * one draw of r: the same values whatever the team's size, though not
 * those of a smaller fill's stream. */
#define CAL_FILL_TEAM_MIN ((size_t)16 << 20)
#define CAL_FILL_BLOCK ((size_t)1 << 16)
/* fill with uniform values in [lo, hi] (hi only where a draw just below 1
 * rounds to it in fp32) */
void cal_fill_f32(float *x, size_t n, float lo, float hi, cal_rng_t *r);
/* Elements off .. off + n - 1 of a fill of CAL_FILL_TEAM_MIN bytes or
 * more whose one draw from its stream was `base`, into x[0 .. n): what
 * such a cal_fill_f32 wrote there, for filling a large array a part at a
 * time (on the team from CAL_FILL_TEAM_MIN bytes). */
void cal_fill_f32_part(float *x, size_t off, size_t n, float lo, float hi,
                       uint64_t base);
/* Inside a parallel region: the calling thread's share [*a, *b) of n
 * items, contiguous and in whole units of `unit` items (a cache line's),
 * the last thread's shorter (or empty). */
void cal_team_share(size_t n, size_t unit, size_t *a, size_t *b);
/* memset, on the team from CAL_FILL_TEAM_MIN bytes */
void cal_memset_team(void *p, int c, size_t bytes);
void cal_fill_f64(double *x, size_t n, double lo, double hi, cal_rng_t *r);

#endif
