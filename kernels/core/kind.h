/* What a kernel is: its family, the dtype of its inputs and the engine that
 * runs it, as enums.  Each has one name table: the names are the strings
 * ids, the profile and the table print, and the only place a name is
 * compared is the parse functions (user input). */
#ifndef CAL_KIND_H
#define CAL_KIND_H

/* The library that runs a kernel's products.  BUILTIN is our own code; in
 * cal_params_t it means "the kernel's default engine". */
typedef enum cal_engine {
  CAL_ENGINE_BUILTIN,
  CAL_ENGINE_OPENBLAS,
  CAL_ENGINE_ONEDNN,
  CAL_ENGINE_COUNT
} cal_engine_t;

/* a kernel's dtype (the planner's cal_dtype_t is the model's) */
typedef enum cal_kdtype {
  CAL_DTYPE_FP32,
  CAL_DTYPE_FP64,
  CAL_DTYPE_BF16,
  CAL_DTYPE_INT8,
  CAL_DTYPE_FP16,
  CAL_DTYPE_COUNT
} cal_kdtype_t;

typedef enum cal_family {
  CAL_FAMILY_GEMM,
  CAL_FAMILY_ATTENTION,
  CAL_FAMILY_STREAM,
  CAL_FAMILY_FMA,
  CAL_FAMILY_MATRIX,
  CAL_FAMILY_LAYER,
  CAL_FAMILY_LM_HEAD,
  CAL_FAMILY_COUNT
} cal_family_t;

/* "builtin", "openblas", "onednn"; "?" out of range. */
const char *cal_engine_name(cal_engine_t e);
/* "fp32", "fp64", "bf16", "int8", "fp16"; "?" out of range. */
const char *cal_kdtype_name(cal_kdtype_t d);
/* "gemm", "attention", "stream", "fma", "matrix", "layer", "lm_head";
 * "?" out of range. */
const char *cal_family_name(cal_family_t f);

/* The enum of a name; -1 when none has it. */
int cal_engine_parse(const char *name);
int cal_kdtype_parse(const char *name);
int cal_family_parse(const char *name);

#endif
