/* AVX-512 register-resident loops (compiled with -mavx512f): 16 chains of
 * zmm.  The loops themselves are in fma_body.h. */
#include <immintrin.h>

#include "fma_body.h"

CAL_FMA_LOOP(cal_fma_f64_avx512, CAL_REP16, double, double, __m512d, __m512d,
             8, _mm512_set1_pd, _mm512_set1_pd, _mm512_fmadd_pd,
             _mm512_storeu_pd)
CAL_FMA_LOOP(cal_fma_f32_avx512, CAL_REP16, float, float, __m512, __m512, 16,
             _mm512_set1_ps, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps)

CAL_CLOCK_CHAIN(cal_clock_chain_avx512, __m512d, "v", _mm512_setzero_pd,
                _mm512_set1_pd, _mm512_add_pd, _mm512_reduce_add_pd)
