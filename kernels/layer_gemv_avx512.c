/* The layer's small-batch GEMV, AVX-512F variant (compiled with
 * -mavx512f -mfma; run only when the CPU has them). */
#include <immintrin.h>

typedef __m512 vec_t;
#define VW 16
#define V_SET1(x) _mm512_set1_ps(x)
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_STORE(p, v) _mm512_storeu_ps((p), (v))
#define V_ADD(a, b) _mm512_add_ps((a), (b))
#define V_MUL(a, b) _mm512_mul_ps((a), (b))
#define V_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define SFX _avx512

#include "layer_gemv_impl.h"
