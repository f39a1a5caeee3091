/* Fused attention, AVX2 + FMA variant (compiled with -mavx2 -mfma; run
 * only when the CPU has them). */
#include "vec_ps256.h"

#define QB 6
#define NVS 2
#define KT 32
#define SFX _avx2

#include "attention_fused_impl.h"
