/* The ISA names of the machine record (machine.h). */
#include "machine.h"

#include <stdio.h>

#include "cal_isa.h"

static const struct {
  uint32_t bit;
  const char *name;
} isa_names[] = {
    {CAL_ISA_SSE42, "sse4_2"},         {CAL_ISA_AVX, "avx"},
    {CAL_ISA_AVX2, "avx2"},            {CAL_ISA_FMA3, "fma"},
    {CAL_ISA_AVX512F, "avx512f"},      {CAL_ISA_AVX512BW, "avx512bw"},
    {CAL_ISA_AVX512VL, "avx512vl"},    {CAL_ISA_AVX512DQ, "avx512dq"},
    {CAL_ISA_AVX512BF16, "avx512_bf16"}, {CAL_ISA_AVX512VNNI, "avx512_vnni"},
    {CAL_ISA_AVXVNNI, "avx_vnni"},     {CAL_ISA_AVX512FP16, "avx512_fp16"},
    {CAL_ISA_AMX_TILE, "amx_tile"},    {CAL_ISA_AMX_BF16, "amx_bf16"},
    {CAL_ISA_AMX_INT8, "amx_int8"},    {CAL_ISA_NEON, "neon"},
    {CAL_ISA_SVE, "sve"},
};

const char *cal_isa_name_at(size_t i, uint32_t *bit) {
  if (i >= sizeof isa_names / sizeof isa_names[0])
    return NULL;
  *bit = isa_names[i].bit;
  return isa_names[i].name;
}

void cal_isa_string(uint32_t isa, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof isa_names / sizeof isa_names[0]; i++)
    if (isa & isa_names[i].bit) {
      int w = snprintf(buf + used, len - used, "%s%s", used ? " " : "",
                       isa_names[i].name);
      if (w < 0 || (size_t)w >= len - used)
        break;
      used += (size_t)w;
    }
}
