/* The layer's small-batch GEMV, AVX-512F variant (compiled with
 * -mavx512f -mfma; run only when the CPU has them), fp32 and bf16
 * weights. */
#include <immintrin.h>

#include "layer_gemv.h"

typedef __m512 vec_t;
#define VW 16
#define V_SET1(x) _mm512_set1_ps(x)
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_STORE(p, v) _mm512_storeu_ps((p), (v))
#define V_ADD(a, b) _mm512_add_ps((a), (b))
#define V_MUL(a, b) _mm512_mul_ps((a), (b))
#define V_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))

#define W_T float
#define V_LOADW(p) V_LOAD(p)
#define W_F(w) (w)
#define GEMV cal_gemv_avx512
#include "layer_gemv_impl.h"

/* bf16 weights: widened to fp32 (a bf16 is the top half of an fp32) */
#define W_T uint16_t
#define V_LOADW(p) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define W_F(w) cal_bf16_to_f32(w)
#define GEMV cal_gemv_bf16_avx512
#include "layer_gemv_impl.h"

/* packed fp32 weights (layer_gemv_packed_impl.h): 32 registers hold the
 * sums of eight rows of two blocks, or of one or two rows of four */
#define PK_TB 8
#define PK_NBK(nb) ((nb) <= 2 ? 4 : 2)
#define PK_FN cal_gemv_packed_avx512
#include "layer_gemv_packed_impl.h"
