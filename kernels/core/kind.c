#include "kind.h"

#include <string.h>

static const char *const engine_names[CAL_ENGINE_COUNT] = {
    [CAL_ENGINE_BUILTIN] = "builtin",
    [CAL_ENGINE_OPENBLAS] = "openblas",
    [CAL_ENGINE_ONEDNN] = "onednn",
};

static const char *const dtype_names[CAL_DTYPE_COUNT] = {
    [CAL_DTYPE_FP32] = "fp32",
    [CAL_DTYPE_FP64] = "fp64",
    [CAL_DTYPE_BF16] = "bf16",
    [CAL_DTYPE_INT8] = "int8",
    [CAL_DTYPE_FP16] = "fp16",
};

static const char *const family_names[CAL_FAMILY_COUNT] = {
    [CAL_FAMILY_GEMM] = "gemm",     [CAL_FAMILY_ATTENTION] = "attention",
    [CAL_FAMILY_STREAM] = "stream", [CAL_FAMILY_FMA] = "fma",
    [CAL_FAMILY_MATRIX] = "matrix", [CAL_FAMILY_LAYER] = "layer",
    [CAL_FAMILY_LM_HEAD] = "lm_head",
};

static const char *name_at(const char *const *names, int n, int i) {
  return i >= 0 && i < n ? names[i] : "?";
}

static int index_of(const char *const *names, int n, const char *name) {
  for (int i = 0; name && i < n; i++)
    if (strcmp(names[i], name) == 0)
      return i;
  return -1;
}

const char *cal_engine_name(cal_engine_t e) {
  return name_at(engine_names, CAL_ENGINE_COUNT, (int)e);
}
const char *cal_kdtype_name(cal_kdtype_t d) {
  return name_at(dtype_names, CAL_DTYPE_COUNT, (int)d);
}
const char *cal_family_name(cal_family_t f) {
  return name_at(family_names, CAL_FAMILY_COUNT, (int)f);
}

int cal_engine_parse(const char *name) {
  return index_of(engine_names, CAL_ENGINE_COUNT, name);
}
int cal_kdtype_parse(const char *name) {
  return index_of(dtype_names, CAL_DTYPE_COUNT, name);
}
int cal_family_parse(const char *name) {
  return index_of(family_names, CAL_FAMILY_COUNT, name);
}
