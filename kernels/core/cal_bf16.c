/* The bulk fp32 -> bf16 rounding of cal_bf16.h. */
#include "cal_bf16.h"

void cal_f32_to_bf16_n(const float *in, uint16_t *out, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++)
    out[i] = cal_f32_to_bf16(in[i]);
}
