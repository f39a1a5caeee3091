/* Fused attention, AVX-512F variant (compiled with -mavx512f -mavx512dq
 * -mavx512bw -mavx512vl -mfma; run only when the CPU has them). */
#include "vec_ps512.h"

#define QB 8
#define NVS 2
#define KT 64
#define SFX _avx512

#include "attention_fused_impl.h"
