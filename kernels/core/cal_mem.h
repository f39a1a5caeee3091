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
/* fill with uniform values in [lo, hi) */
void cal_fill_f32(float *x, size_t n, float lo, float hi, cal_rng_t *r);
void cal_fill_f64(double *x, size_t n, double lo, double hi, cal_rng_t *r);

#endif
