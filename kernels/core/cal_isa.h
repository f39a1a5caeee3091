/* Run-time choice of SIMD variants, by CPU feature bits (never model names).
 *
 * cal_isa_features() reads the CPU once (libcpuid on x86) and caches it.
 * CALIBRATE_ISA=scalar|avx2|avx512 in the environment caps the variant that
 * kernels choose (forcing one the CPU lacks is refused by the kernels). */
#ifndef CAL_ISA_H
#define CAL_ISA_H

#include <stdint.h>

enum {
  CAL_ISA_SSE42 = 1u << 0,
  CAL_ISA_AVX = 1u << 1,
  CAL_ISA_AVX2 = 1u << 2,
  CAL_ISA_FMA3 = 1u << 3,
  CAL_ISA_AVX512F = 1u << 4,
  CAL_ISA_AVX512BW = 1u << 5,
  CAL_ISA_AVX512VL = 1u << 6,
  CAL_ISA_AVX512DQ = 1u << 7,
  CAL_ISA_AVX512BF16 = 1u << 8,
  CAL_ISA_AVX512VNNI = 1u << 9,
  CAL_ISA_AVXVNNI = 1u << 10,
  CAL_ISA_AMX_TILE = 1u << 11,
  CAL_ISA_AMX_BF16 = 1u << 12,
  CAL_ISA_AMX_INT8 = 1u << 13,
  CAL_ISA_AVX512FP16 = 1u << 14,
  CAL_ISA_NEON = 1u << 15,
  CAL_ISA_SVE = 1u << 16,
};

/* Feature bits of this CPU (cached after the first call). */
uint32_t cal_isa_features(void);

/* A SIMD variant of a kernel.  Higher is wider. */
typedef enum {
  CAL_VARIANT_AUTO = -1,
  CAL_VARIANT_SCALAR = 0,
  CAL_VARIANT_AVX2 = 1,   /* AVX2 + FMA3 */
  CAL_VARIANT_AVX512 = 2, /* AVX-512 F (+ BW/VL/DQ where a kernel says) */
  CAL_VARIANT_COUNT
} cal_isa_variant_t;

/* "scalar", "avx2", "avx512"; static storage. */
const char *cal_variant_name(int variant);
/* Parse a name; CAL_EINVAL when unknown. */
int cal_variant_parse(const char *name, int *variant);
/* Whether the CPU can run a variant. */
int cal_variant_supported(int variant);
/* The best variant the CPU runs, capped by CALIBRATE_ISA when set.
 * Returns CAL_EINVAL when CALIBRATE_ISA names an unknown variant and
 * CAL_EUNSUPP when it names one the CPU lacks. */
int cal_variant_best(int *variant);
/* Resolve a requested variant (CAL_VARIANT_AUTO → best); CAL_EUNSUPP when
 * the CPU lacks it. */
int cal_variant_resolve(int requested, int *variant);

#endif
