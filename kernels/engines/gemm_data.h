/* What every GEMM kernel shares, whichever engine runs it: the operation
 * C[m×n] = A[m×k]·B[k×n] (row-major, beta = 0), its inputs filled from the
 * seed, its work and traffic, and the verification of C.
 *
 * Verification samples 68 entries of C (the four corners, then random
 * ones) and compares each with a double-precision dot product of the same,
 * already rounded inputs: within (4·√k + 8)·u·Σ|a·b| for floating-point
 * dtypes (u the unit roundoff of the accumulation: fp32 for fp32 and bf16
 * inputs, fp64 for fp64), exactly for int8. */
#ifndef CAL_GEMM_DATA_H
#define CAL_GEMM_DATA_H

#include <stdint.h>

#include "cal_bf16.h"
#include "kernel.h"

typedef enum {
  CAL_GEMM_F32,  /* fp32 × fp32 → fp32 */
  CAL_GEMM_F64,  /* fp64 × fp64 → fp64 */
  CAL_GEMM_BF16, /* bf16 × bf16 → fp32 (fp32 accumulation) */
  CAL_GEMM_U8S8, /* u8 × s8 → s32 */
} cal_gemm_dt_t;

/* A kernel state that starts with this struct can be checked and
 * corrupted by the functions below. */
typedef struct cal_gemm_data {
  cal_gemm_dt_t dt;
  int64_t m, n, k;
  void *a, *b, *c; /* 64-byte aligned, owned */
  uint64_t seed;
} cal_gemm_data_t;

/* 2·m·n·k: floating-point operations, or integer multiply-adds counted
 * as two ops for int8. */
double cal_gemm_flops(const cal_params_t *p);
/* Compulsory traffic of one run: A and B read once, C written once. */
double cal_gemm_bytes(const cal_params_t *p, cal_gemm_dt_t dt);

/* Allocate A, B, C for p's shape, fill A and B from p->seed (values in
 * [-1, 1) rounded to the dtype; int8: A in [0, 127], B in [-128, 127],
 * so that no pair of products overflows 16 bits on ISAs without VNNI) and
 * poison C so that a kernel that writes nothing fails verification.
 * CAL_EINVAL for a shape with a dimension < 1, CAL_ENOMEM. */
int cal_gemm_data_init(cal_gemm_data_t *d, const cal_params_t *p,
                       cal_gemm_dt_t dt);
/* Frees A, B, C; accepts a zeroed struct. */
void cal_gemm_data_free(cal_gemm_data_t *d);
/* A new zeroed kernel state of `size` bytes that starts with a
 * cal_gemm_data_t, that data made by cal_gemm_data_init(): 0 and *out,
 * CAL_EINVAL for a bad shape, CAL_ENOMEM (nothing is left allocated).
 * Free it with cal_gemm_state_free(). */
int cal_gemm_state_new(const cal_params_t *p, cal_gemm_dt_t dt, size_t size,
                       void **out);
/* Frees such a state's data and the state; accepts NULL. */
void cal_gemm_state_free(void *state);
/* 0, or CAL_EVERIFY when a sampled entry of C is wrong. */
int cal_gemm_data_verify(const cal_gemm_data_t *d);


/* For tests only: make entry (0, 0) of C wrong, so that verify() must
 * fail; `state` is a GEMM kernel's state (it starts with the data). */
void cal_gemm_test_corrupt(void *state);

#endif
