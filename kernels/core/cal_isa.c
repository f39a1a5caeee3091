#include "cal_isa.h"

#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

#if defined(__x86_64__) || defined(__i386__)
#include <libcpuid.h>

/* The ISA bits whose register state the operating system saves (XCR0):
 * YMM for AVX, opmask/ZMM for AVX-512, tile config/data for AMX.  A CPU
 * feature the OS does not enable cannot be used. */
static uint32_t os_enabled(void) {
  uint32_t l1[4] = {1, 0, 0, 0};
  cpu_exec_cpuid_ext(l1);
  if (!(l1[2] & (1u << 27))) /* no OSXSAVE: no XGETBV, no AVX state */
    return CAL_ISA_SSE42;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  uint64_t xcr0 = ((uint64_t)hi << 32) | lo;
  const uint32_t avx = CAL_ISA_AVX | CAL_ISA_AVX2 | CAL_ISA_FMA3 | CAL_ISA_AVXVNNI;
  const uint32_t avx512 = CAL_ISA_AVX512F | CAL_ISA_AVX512BW | CAL_ISA_AVX512VL |
                          CAL_ISA_AVX512DQ | CAL_ISA_AVX512BF16 |
                          CAL_ISA_AVX512VNNI | CAL_ISA_AVX512FP16;
  const uint32_t amx = CAL_ISA_AMX_TILE | CAL_ISA_AMX_BF16 | CAL_ISA_AMX_INT8;
  uint32_t ok = CAL_ISA_SSE42;
  if ((xcr0 & 0x6) == 0x6)
    ok |= avx;
  if ((xcr0 & 0xe6) == 0xe6)
    ok |= avx512;
  if ((xcr0 & 0x60000) == 0x60000)
    ok |= amx;
  return ok;
}

static uint32_t detect(void) {
  struct cpu_raw_data_t raw;
  struct cpu_id_t id;
  if (cpuid_get_raw_data(&raw) < 0 || cpu_identify(&raw, &id) < 0)
    return 0;
  static const struct {
    cpu_feature_t f;
    uint32_t bit;
  } map[] = {
      {CPU_FEATURE_SSE4_2, CAL_ISA_SSE42},
      {CPU_FEATURE_AVX, CAL_ISA_AVX},
      {CPU_FEATURE_AVX2, CAL_ISA_AVX2},
      {CPU_FEATURE_FMA3, CAL_ISA_FMA3},
      {CPU_FEATURE_AVX512F, CAL_ISA_AVX512F},
      {CPU_FEATURE_AVX512BW, CAL_ISA_AVX512BW},
      {CPU_FEATURE_AVX512VL, CAL_ISA_AVX512VL},
      {CPU_FEATURE_AVX512DQ, CAL_ISA_AVX512DQ},
      {CPU_FEATURE_AVX512VNNI, CAL_ISA_AVX512VNNI},
  };
  uint32_t bits = 0;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (id.flags[map[i].f])
      bits |= map[i].bit;
  /* libcpuid 0.6 has no flags for the newer features and misses AVX-512
   * on CPUs it does not know (recent AMD), so read CPUID leaf 7 directly:
   * subleaf 0: EBX[5] AVX2, EBX[16] AVX512F, EBX[17] AVX512DQ, EBX[30]
   * AVX512BW, EBX[31] AVX512VL, ECX[11] AVX512-VNNI, EDX[22] AMX-BF16,
   * EDX[23] AVX512-FP16, EDX[24] AMX-TILE, EDX[25] AMX-INT8; subleaf 1:
   * EAX[4] AVX-VNNI, EAX[5] AVX512-BF16. */
  uint32_t r[4] = {7, 0, 0, 0};
  cpu_exec_cpuid_ext(r);
  static const struct {
    int reg, shift;
    uint32_t bit;
  } leaf7[] = {
      {1, 5, CAL_ISA_AVX2},       {1, 16, CAL_ISA_AVX512F},
      {1, 17, CAL_ISA_AVX512DQ},  {1, 30, CAL_ISA_AVX512BW},
      {1, 31, CAL_ISA_AVX512VL},  {2, 11, CAL_ISA_AVX512VNNI},
      {3, 22, CAL_ISA_AMX_BF16},  {3, 23, CAL_ISA_AVX512FP16},
      {3, 24, CAL_ISA_AMX_TILE},  {3, 25, CAL_ISA_AMX_INT8},
  };
  for (size_t i = 0; i < sizeof leaf7 / sizeof leaf7[0]; i++)
    if (r[leaf7[i].reg] & (1u << leaf7[i].shift))
      bits |= leaf7[i].bit;
  uint32_t s[4] = {7, 0, 1, 0};
  cpu_exec_cpuid_ext(s);
  if (s[0] & (1u << 5)) bits |= CAL_ISA_AVX512BF16;
  if (s[0] & (1u << 4)) bits |= CAL_ISA_AVXVNNI;
  return bits & os_enabled();  return bits;
}
#elif defined(__aarch64__)
#include <sys/auxv.h>
static uint32_t detect(void) {
  uint32_t bits = CAL_ISA_NEON; /* mandatory on AArch64 */
#ifdef HWCAP_SVE
  if (getauxval(AT_HWCAP) & HWCAP_SVE)
    bits |= CAL_ISA_SVE;
#endif
  return bits;
}
#else
static uint32_t detect(void) { return 0; }
#endif

uint32_t cal_isa_features(void) {
  static int done;
  static uint32_t bits;
  if (!done) {
    bits = detect();
    done = 1;
  }
  return bits;
}

static const char *const variant_names[CAL_VARIANT_COUNT] = {"scalar", "avx2",
                                                              "avx512"};

const char *cal_variant_name(int variant) {
  if (variant < 0 || variant >= CAL_VARIANT_COUNT)
    return "auto";
  return variant_names[variant];
}

int cal_variant_parse(const char *name, int *variant) {
  for (int v = 0; v < CAL_VARIANT_COUNT; v++)
    if (strcmp(name, variant_names[v]) == 0) {
      *variant = v;
      return 0;
    }
  if (strcmp(name, "auto") == 0) {
    *variant = CAL_VARIANT_AUTO;
    return 0;
  }
  return CAL_EINVAL;
}

int cal_variant_supported(int variant) {
  uint32_t f = cal_isa_features();
  switch (variant) {
  case CAL_VARIANT_SCALAR: return 1;
#if defined(__x86_64__)
  case CAL_VARIANT_AVX2:
    return (f & (CAL_ISA_AVX2 | CAL_ISA_FMA3)) == (CAL_ISA_AVX2 | CAL_ISA_FMA3);
  case CAL_VARIANT_AVX512:
    return (f & (CAL_ISA_AVX512F | CAL_ISA_AVX512BW | CAL_ISA_AVX512VL |
                 CAL_ISA_AVX512DQ)) ==
           (CAL_ISA_AVX512F | CAL_ISA_AVX512BW | CAL_ISA_AVX512VL |
            CAL_ISA_AVX512DQ);
#endif
  default: return 0;
  }
}

int cal_variant_best(int *variant) {
  const char *force = getenv("CALIBRATE_ISA");
  if (force && *force) {
    int v;
    if (cal_variant_parse(force, &v) < 0)
      return CAL_EINVAL;
    if (v != CAL_VARIANT_AUTO) {
      if (!cal_variant_supported(v))
        return CAL_EUNSUPP;
      *variant = v;
      return 0;
    }
  }
  for (int v = CAL_VARIANT_COUNT - 1; v >= 0; v--)
    if (cal_variant_supported(v)) {
      *variant = v;
      return 0;
    }
  *variant = CAL_VARIANT_SCALAR;
  return 0;
}

int cal_variant_resolve(int requested, int *variant) {
  if (requested == CAL_VARIANT_AUTO)
    return cal_variant_best(variant);
  if (requested < 0 || requested >= CAL_VARIANT_COUNT)
    return CAL_EINVAL;
  if (!cal_variant_supported(requested))
    return CAL_EUNSUPP;
  *variant = requested;
  return 0;
}
