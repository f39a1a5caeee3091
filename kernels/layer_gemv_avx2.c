/* The layer's small-batch GEMV, AVX2+FMA variant (compiled with -mavx2
 * -mfma; run only when the CPU has them). */
#include <immintrin.h>

typedef __m256 vec_t;
#define VW 8
#define V_SET1(x) _mm256_set1_ps(x)
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_storeu_ps((p), (v))
#define V_ADD(a, b) _mm256_add_ps((a), (b))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define SFX _avx2

#include "layer_gemv_impl.h"
