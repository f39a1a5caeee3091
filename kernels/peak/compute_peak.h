/* Register-resident peak kernels: the per-ISA loops behind the fma_f64,
 * fma_f32, dp_bf16, dp_int8 and fma_fp16 table entries
 * (kernels/peak/compute_peak.c), and the
 * dependent chains behind the clock measurement (bench/clock.c).
 *
 * Every loop runs CAL_FMA_CHAINS independent accumulator chains of full
 * vectors for `iters` steps; each step updates every chain once:
 *   fp:   x = x * one + c          (one = 1, c = 1: x grows by exactly 1)
 *   bf16: x += a0*b0 + a1*b1       (vdpbf16ps, pairs chosen to add exactly 1)
 *   int8: x += sum of 4 u8*s8      (vpdpbusd, all ones: adds exactly 4)
 *   fp16: x = x * one + c          (vfmadd231ph, in rounds: see below)
 * The chains start at x0[i] = i and the final lanes of chain i are written to
 * out[i*lanes ...], so a caller knows the exact answer.  `one` and `c` come in
 * as arguments so the compiler cannot fold the multiply away.  No memory is
 * touched inside the loops. */
#ifndef CAL_COMPUTE_PEAK_H
#define CAL_COMPUTE_PEAK_H

#include <stdint.h>

/* Chains per thread: covers 2 FMA ports × 4-cycle latency twice over on
 * AVX-512 (32 registers); the AVX2 and scalar loops use 12 (16 registers). */
#define CAL_FMA_CHAINS_512 16
#define CAL_FMA_CHAINS_256 12
#define CAL_FMA_CHAINS_SCALAR 12
/* Largest output a loop writes: chains × lanes of 32-bit elements (the
 * fp16 loop's 32 lanes of fp32 totals). */
#define CAL_FMA_OUT_MAX (CAL_FMA_CHAINS_512 * 32)

/* AVX-512 (fma_avx512.c, -mavx512f) */
void cal_fma_f64_avx512(int64_t iters, double one, double c, double *out);
void cal_fma_f32_avx512(int64_t iters, float one, float c, float *out);
/* AVX2 + FMA3 (fma_avx2.c) */
void cal_fma_f64_avx2(int64_t iters, double one, double c, double *out);
void cal_fma_f32_avx2(int64_t iters, float one, float c, float *out);
/* portable C (fma_peak.c): a separate multiply and add per step */
void cal_fma_f64_scalar(int64_t iters, double one, double c, double *out);
void cal_fma_f32_scalar(int64_t iters, float one, float c, float *out);
/* AVX512_BF16 (fma_bf16.c): each step adds a·b over (a0,a1)·(b0,b1) where
 * the bf16 bit patterns a, b are packed as (hi << 16 | lo) */
void cal_dp_bf16_avx512(int64_t iters, uint32_t a, uint32_t b, float *out);
/* AVX512_VNNI (fma_vnni.c, zmm) and AVX-VNNI (ymm): u8 bytes of `a` times
 * s8 bytes of `b`, four per 32-bit lane */
void cal_dp_int8_avx512(int64_t iters, uint32_t a, uint32_t b, int32_t *out);
void cal_dp_int8_avxvnni(int64_t iters, uint32_t a, uint32_t b, int32_t *out);
/* AVX512_FP16 (fma_fp16.c, 32 fp16 lanes): fp16 counts exactly only to
 * 2048, so the chains restart at x0[i] = i every CAL_FP16_ROUND steps and
 * each round's lanes are added into fp32 totals; lane l of chain i ends as
 * out[i*32 + l] = ceil(iters / CAL_FP16_ROUND) * i + iters. */
#define CAL_FP16_ROUND 1024
void cal_fma_f16_avx512(int64_t iters, float one, float c, float *out);

/* For tests only: change one lane of a state's last result so that
 * verify() must fail (state from the fma_* / dp_* kernels' setup()). */
void cal_fma_test_corrupt(void *state);

/* Dependent chains for the clock (clock_chain.c and the vector files):
 * `iters` × CAL_CLOCK_CHAIN_LEN integer adds, each depending on the one
 * before (latency 1 cycle on every x86 core; a C fallback elsewhere).
 * Returns the final value so nothing is optimised away. */
#define CAL_CLOCK_CHAIN_LEN 64
uint64_t cal_clock_chain_scalar(int64_t iters, uint64_t x);
/* The same integer chain with independent vector FMAs interleaved (half
 * the chain's cycles worth of FMA-port work), so the clock is read while
 * the vector units are loaded. */
uint64_t cal_clock_chain_avx512(int64_t iters, uint64_t x);
uint64_t cal_clock_chain_avx2(int64_t iters, uint64_t x);

#endif
