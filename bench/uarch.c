#include "uarch.h"

#include <string.h>

#define INTEL "GenuineIntel"
#define AMD "AuthenticAMD"
#define R(lo, hi) {lo, hi}

/* Sources, by name: the vendors' optimization manuals (Intel 64 and IA-32
 * Architectures Optimization Reference Manual; AMD's Software Optimization
 * Guides for family 17h, 19h and 1Ah), the per-instruction throughput
 * tables of uops.info, likwid's CPU model tables (model numbers), and
 * Intel's product specifications (ark: "# of AVX-512 FMA Units"). */
#define SRC_INTEL "Intel Optimization Reference Manual; uops.info"
#define SRC_INTEL_SKX                                                         \
  "Intel Optimization Reference Manual (Skylake server: port 0+1 fused and "  \
  "port 5 FMA-512); Intel ark (AVX-512 FMA units per SKU); uops.info"
#define SRC_INTEL_AMX                                                         \
  "Intel Optimization Reference Manual (AMX chapter: one 16x16x32 "           \
  "TDPBF16PS or 16x16x64 TDPBSSD per 16 cycles); uops.info"
#define SRC_AMD(n) "AMD Software Optimization Guide for " n "; uops.info"
#define CLIENT_MODELS_NOTE                                                    \
  "CPUID model numbers as in likwid's tables"

/* Dot products on Intel server cores: vpdpbusd on the FMA ports (as fast
 * as the FMA), vdpbf16ps one per two cycles at 512 bits (a quarter of the
 * FMA's two), vfmadd231ph on the FMA ports. */
#define INTEL_DOT 0.25, 1.0, 1.0

static const cal_uarch_t table[] = {
    /* ---- Intel client, AVX2 on two 256-bit FMA pipes (ports 0 and 1) */
    {"intel-haswell", "Haswell", INTEL, 6,
     {R(0x3C, 0x3C), R(0x3F, 0x3F), R(0x45, 0x46)}, 3, NULL, 2, 256, 0,
     0, 0, 0, 0, 0, NULL, SRC_INTEL "; " CLIENT_MODELS_NOTE},
    {"intel-broadwell", "Broadwell", INTEL, 6,
     {R(0x3D, 0x3D), R(0x47, 0x47), R(0x4F, 0x4F), R(0x56, 0x56)}, 4, NULL,
     2, 256, 0, 0, 0, 0, 0, 0, NULL, SRC_INTEL "; " CLIENT_MODELS_NOTE},
    {"intel-skylake-client", "Skylake (client) .. Comet Lake", INTEL, 6,
     {R(0x4E, 0x4E), R(0x5E, 0x5E), R(0x8E, 0x8E), R(0x9E, 0x9E),
      R(0xA5, 0xA6)}, 5, NULL, 2, 256, 0, 0, 0, 0, 0, 0, NULL,
     SRC_INTEL "; " CLIENT_MODELS_NOTE},
    /* client cores with AVX-512: one FMA-512 (ports 0+1 fused), so a
     * 512-bit FMA takes both 256-bit pipes */
    {"intel-icelake-client", "Ice Lake / Tiger Lake / Rocket Lake (client)",
     INTEL, 6,
     {R(0x66, 0x66), R(0x7D, 0x7E), R(0x8C, 0x8D), R(0xA7, 0xA7)}, 4, NULL,
     2, 256, 1, 0, 1.0, 0, 0, 0, NULL, SRC_INTEL "; " CLIENT_MODELS_NOTE},
    {"intel-alderlake", "Alder Lake / Raptor Lake (P-cores)", INTEL, 6,
     {R(0x97, 0x97), R(0x9A, 0x9A), R(0xB7, 0xB7), R(0xBA, 0xBA),
      R(0xBF, 0xBF)}, 5, NULL, 2, 256, 0, 0, 1.0, 0, 0, 0,
     "hybrid: the E-cores (Gracemont) do 256-bit FMA at half this rate; "
     "every core is counted as a P-core",
     SRC_INTEL "; " CLIENT_MODELS_NOTE},
    /* ---- Intel server.  Skylake-SP, Cascade Lake and Cooper Lake share
     * model 0x55; the FMA-512 units per core differ by SKU and CPUID
     * cannot tell, so the brand string decides: Platinum, Gold 6xxx and
     * Gold 5122 have two, Silver, Bronze and the other Gold 5xxx one
     * (Intel ark). */
    {"intel-skylake-sp-2fma", "Skylake-SP / Cascade Lake / Cooper Lake",
     INTEL, 6, {R(0x55, 0x55)}, 1, "Platinum|Gold 6|Gold 5122", 2, 512, 0,
     INTEL_DOT, 0, 0, NULL, SRC_INTEL_SKX},
    {"intel-skylake-sp-1fma",
     "Skylake-SP / Cascade Lake (one FMA-512 unit)", INTEL, 6,
     {R(0x55, 0x55)}, 1, "Silver|Bronze|Gold 5", 2, 256, 1, INTEL_DOT, 0, 0,
     NULL, SRC_INTEL_SKX},
    {"intel-icelake-sp", "Ice Lake-SP", INTEL, 6, {R(0x6A, 0x6A),
     R(0x6C, 0x6C)}, 2, NULL, 2, 512, 0, INTEL_DOT, 0, 0,
     "two FMA-512 units per core as Intel ark lists for 3rd-generation Xeon "
     "Scalable; not checked SKU by SKU", SRC_INTEL_SKX},
    {"intel-sapphire-rapids", "Sapphire Rapids / Emerald Rapids", INTEL, 6,
     {R(0x8F, 0x8F), R(0xCF, 0xCF)}, 2, NULL, 2, 512, 0, INTEL_DOT, 1024,
     2048, NULL, SRC_INTEL_AMX},
    {"intel-granite-rapids", "Granite Rapids", INTEL, 6,
     {R(0xAD, 0xAE)}, 1, NULL, 2, 512, 0, INTEL_DOT, 1024, 2048, NULL,
     SRC_INTEL_AMX},
    /* ---- AMD.  Zen and Zen+: two 128-bit FMA pipes, a 256-bit FMA takes
     * both. */
    {"amd-zen", "Zen / Zen+", AMD, 0x17, {R(0x00, 0x2F)}, 1, NULL, 2, 128,
     0, 0, 0, 0, 0, 0, NULL, SRC_AMD("family 17h")},
    {"amd-zen2", "Zen 2", AMD, 0x17,
     {R(0x30, 0x3F), R(0x47, 0x47), R(0x60, 0x7F), R(0x84, 0x84),
      R(0x90, 0xAF)}, 5, NULL, 2, 256, 0, 0, 0, 0, 0, 0, NULL,
     SRC_AMD("family 17h models 30h and greater")},
    {"amd-zen3", "Zen 3", AMD, 0x19,
     {R(0x00, 0x0F), R(0x20, 0x2F), R(0x40, 0x5F)}, 3, NULL, 2, 256, 0, 0,
     0, 0, 0, 0, NULL, SRC_AMD("family 19h (Zen 3)")},
    /* Zen 4: AVX-512 on the two 256-bit FMA pipes; vdpbf16ps and vpdpbusd
     * on the same pipes at the FMA's rate */
    {"amd-zen4", "Zen 4", AMD, 0x19,
     {R(0x10, 0x1F), R(0x60, 0x7F), R(0xA0, 0xAF)}, 3, NULL, 2, 256, 1, 1.0,
     1.0, 0, 0, 0, NULL, SRC_AMD("family 19h (Zen 4)")},
    /* Zen 5: server and desktop parts have full-width 512-bit pipes; the
     * mobile Strix and Krackan Point double-pump 512-bit operations */
    {"amd-zen5", "Zen 5", AMD, 0x1A,
     {R(0x00, 0x1F), R(0x40, 0x4F), R(0x70, 0x7F)}, 3, NULL, 2, 512, 0, 1.0,
     1.0, 0, 0, 0,
     "dot-product rates taken equal to the FMA's (same pipes); not "
     "published per instruction",
     SRC_AMD("family 1Ah (Zen 5)")},
    {"amd-zen5-mobile", "Zen 5 (mobile, 256-bit datapath)", AMD, 0x1A,
     {R(0x20, 0x2F), R(0x60, 0x6F)}, 2, NULL, 2, 256, 1, 1.0, 1.0, 0, 0, 0,
     "dot-product rates taken equal to the FMA's (same pipes)",
     SRC_AMD("family 1Ah (Zen 5)")},
};

const cal_uarch_t *cal_uarch_table(size_t *n) {
  *n = sizeof table / sizeof table[0];
  return table;
}

/* Whether `brand` contains one of the '|'-separated words of `words`. */
static int brand_matches(const char *words, const char *brand) {
  if (!words)
    return 1;
  if (!brand)
    return 0;
  const char *w = words;
  while (*w) {
    size_t len = strcspn(w, "|");
    char word[64];
    if (len < sizeof word) {
      memcpy(word, w, len);
      word[len] = '\0';
      if (strstr(brand, word))
        return 1;
    }
    w += len + (w[len] == '|');
  }
  return 0;
}

static int model_matches(const cal_uarch_t *u, int model) {
  for (int i = 0; i < u->nmodels; i++)
    if (model >= u->models[i].lo && model <= u->models[i].hi)
      return 1;
  return 0;
}

const cal_uarch_t *cal_uarch_lookup(const char *vendor, int family, int model,
                                    const char *brand, const char **why) {
  int cpu_known = 0;
  for (size_t i = 0; vendor && i < sizeof table / sizeof table[0]; i++) {
    const cal_uarch_t *u = &table[i];
    if (strcmp(u->vendor, vendor) || u->family != family ||
        !model_matches(u, model))
      continue;
    cpu_known = 1;
    if (brand_matches(u->brand_has, brand))
      return u;
  }
  if (why)
    *why = cpu_known ? "the core's FMA units differ by SKU and the brand "
                       "string does not say which this is"
                     : "no row of the microarchitecture table has this "
                       "vendor, family and model";
  return NULL;
}

double cal_uarch_fma_ipc(const cal_uarch_t *u, int bits) {
  if (!u || u->fma_pipes < 1 || u->fma_bits < 1 || bits < 0)
    return 0.0;
  if (bits <= u->fma_bits) /* scalar (0) included */
    return u->fma_pipes;
  if (bits > 512 || (bits == 512 && !u->split512))
    return 0.0;
  return (double)u->fma_pipes * u->fma_bits / bits;
}
