/* The layer's small-batch GEMV, AVX2+FMA variant (compiled with -mavx2
 * -mfma; run only when the CPU has them), fp32 and bf16 weights. */
#include <immintrin.h>

#include "layer_gemv.h"

typedef __m256 vec_t;
#define VW 8
#define V_SET1(x) _mm256_set1_ps(x)
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_storeu_ps((p), (v))
#define V_ADD(a, b) _mm256_add_ps((a), (b))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))

#define W_T float
#define V_LOADW(p) V_LOAD(p)
#define W_F(w) (w)
#define GEMV cal_gemv_avx2
#include "layer_gemv_impl.h"

/* bf16 weights: widened to fp32 (a bf16 is the top half of an fp32) */
#define W_T uint16_t
#define V_LOADW(p) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define W_F(w) cal_bf16_to_f32(w)
#define GEMV cal_gemv_bf16_avx2
#include "layer_gemv_impl.h"

/* packed fp32 weights (layer_gemv_packed_impl.h): 16 registers hold the
 * sums of up to six rows of a block (two vectors each), or of one or two
 * rows of four or two blocks */
#define PK_TB 6
#define PK_NBK(nb) ((nb) == 1 ? 4 : (nb) == 2 ? 2 : 1)
#define PK_FN cal_gemv_packed_avx2
#include "layer_gemv_packed_impl.h"
