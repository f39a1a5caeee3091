/* AVX512_VNNI int8 dot-product loop: vpdpbusd, u8 × s8 into int32
 * (compiled with -mavx512f -mavx512vnni).  The loop is in fma_body.h. */
#include <immintrin.h>

#include "fma_body.h"

#define SET_BYTES(a) _mm512_set1_epi32((int)(a))

CAL_FMA_LOOP(cal_dp_int8_avx512, CAL_REP16, uint32_t, int32_t, __m512i,
             __m512i, 16, SET_BYTES, _mm512_set1_epi32, _mm512_dpbusd_epi32,
             _mm512_storeu_si512)
