/* bfloat16: the top 16 bits of an IEEE fp32 (8-bit exponent, 7-bit
 * mantissa).  Conversions between the two, shared by every kernel that
 * stores bf16. */
#ifndef CAL_BF16_H
#define CAL_BF16_H

#include <stdint.h>
#include <string.h>

/* fp32 → bf16, round to nearest even (NaN stays NaN). */
static inline uint16_t cal_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN stays NaN */
    return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
  return (uint16_t)(u >> 16);
}

/* bf16 → fp32, exact. */
static inline float cal_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* f rounded to the nearest bf16, as fp32. */
static inline float cal_bf16_round(float f) {
  return cal_bf16_to_f32(cal_f32_to_bf16(f));
}

/* in[0..n) rounded to bf16 into out, on the OpenMP team (cal_bf16.c). */
void cal_f32_to_bf16_n(const float *in, uint16_t *out, int64_t n);
/* The same on the calling thread in AVX-512 (F/BW/VL/DQ; call only where
 * cal_variant_supported(CAL_VARIANT_AVX512)). */
void cal_f32_to_bf16_avx512(const float *in, uint16_t *out, int64_t n);

#endif
