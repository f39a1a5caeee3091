/* AVX512_BF16 dot-product loop: vdpbf16ps, bf16 pairs into fp32
 * (compiled with -mavx512f -mavx512bf16).  The loop is in fma_body.h. */
#include <immintrin.h>

#include "fma_body.h"

#define SET_BF16_PAIRS(a) ((__m512bh)_mm512_set1_epi32((int)(a)))

CAL_FMA_LOOP(cal_dp_bf16_avx512, CAL_REP16, uint32_t, float, __m512, __m512bh,
             16, SET_BF16_PAIRS, _mm512_set1_ps, _mm512_dpbf16_ps,
             _mm512_storeu_ps)
