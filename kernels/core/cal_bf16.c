/* The bulk fp32 -> bf16 rounding of cal_bf16.h: AVX-512 where the CPU
 * has it (isa/train_avx512.c), else portable. */
#include "cal_bf16.h"

#include <omp.h>

#include "cal_isa.h"

void cal_f32_to_bf16_n(const float *in, uint16_t *out, int64_t n) {
#ifdef CAL_HAVE_X86_SIMD
  if (cal_variant_supported(CAL_VARIANT_AVX512)) {
#pragma omp parallel
    {
      int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t per = ((n + nt - 1) / nt + 31) / 32 * 32;
      int64_t a = t * per < n ? t * per : n, b = a + per < n ? a + per : n;
      cal_f32_to_bf16_avx512(in + a, out + a, b - a);
    }
    return;
  }
#endif
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++)
    out[i] = cal_f32_to_bf16(in[i]);
}
