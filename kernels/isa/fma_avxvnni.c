/* AVX-VNNI int8 dot-product loop: the VEX (ymm) vpdpbusd of CPUs that may
 * lack AVX-512 (compiled with -mavx2 -mavxvnni).  The loop is in
 * fma_body.h. */
#include <immintrin.h>

#include "fma_body.h"

#define SET_BYTES(a) _mm256_set1_epi32((int)(a))
#define STORE_YMM(p, x) _mm256_storeu_si256((void *)(p), x)

CAL_FMA_LOOP(cal_dp_int8_avxvnni, CAL_REP12, uint32_t, int32_t, __m256i,
             __m256i, 8, SET_BYTES, _mm256_set1_epi32, _mm256_dpbusd_avx_epi32,
             STORE_YMM)
