/* The four kernel-table entries of a forward workload (prefill and decode,
 * fp32 and bf16), from one set of functions: a workload PFX defines
 *
 *   int    PFX_setup_as(const cal_params_t *, void **, int decode, int bf16)
 *   double PFX_flops(const cal_params_t *)
 *   double PFX_bytes_as(const cal_params_t *, int bf16)
 *   double PFX_mem_as(const cal_params_t *, int bf16)
 *   int    PFX_run(void *), PFX_verify(void *); void PFX_teardown(void *)
 *   const char *PFX_variant(const void *), *PFX_impl(const void *)
 *   cal_engine_t PFX_engine(const void *)
 *   int    PFX_reshape(void *, const cal_params_t *)  (or a macro: NULL)
 *
 * and CAL_FORWARD_KERNELS(PFX, NAME) defines cal_kernel_NAME_prefill,
 * _decode, _prefill_bf16 and _decode_bf16 (family "layer"; bf16 where
 * cal_bf16_supported says the engine runs it); CAL_LAYER_KERNEL(PFX,
 * NAME, DTYPE, SUPPORTED, DECODE, BF16) one such entry (the training
 * step's, whose setup ignores decode).  Not a public header. */
#ifndef CAL_FORWARD_KERNELS_H
#define CAL_FORWARD_KERNELS_H

#include "engine.h"
#include "kernel.h"

/* bf16 products run where the engine (the point's, else the default) has
 * a native bf16 path */
static inline int cal_forward_bf16_supported(const cal_params_t *p,
                                             const char **why) {
  return cal_bf16_supported(p ? p->engine : CAL_ENGINE_BUILTIN, why);
}

#define CAL_LAYER_KERNEL(PFX, NAME, DT, SUPP, DEC, BF)                      \
  static int PFX##_setup_##DEC##BF(const cal_params_t *p, void **st) {        \
    return PFX##_setup_as(p, st, DEC, BF);                                    \
  }                                                                           \
  static double PFX##_bytes_##DEC##BF(const cal_params_t *p) {                \
    return PFX##_bytes_as(p, BF);                                             \
  }                                                                           \
  static double PFX##_mem_##DEC##BF(const cal_params_t *p) {                  \
    return PFX##_mem_as(p, BF);                                               \
  }                                                                           \
  const cal_kernel_t cal_kernel_##NAME = {                                    \
      .name = #NAME, .family = CAL_FAMILY_LAYER, .dtype = DT,                 \
      .flops = PFX##_flops, .bytes = PFX##_bytes_##DEC##BF,                   \
      .mem_bytes = PFX##_mem_##DEC##BF, .supported = SUPP,                    \
      .setup = PFX##_setup_##DEC##BF, .run = PFX##_run,                       \
      .verify = PFX##_verify, .teardown = PFX##_teardown,                     \
      .variant_name = PFX##_variant, .impl_name = PFX##_impl,                 \
      .engine_used = PFX##_engine, .reshape = PFX##_reshape}

#define CAL_FORWARD_KERNELS(PFX, NAME)                                        \
  CAL_LAYER_KERNEL(PFX, NAME##_prefill, CAL_DTYPE_FP32, NULL, 0, 0);        \
  CAL_LAYER_KERNEL(PFX, NAME##_decode, CAL_DTYPE_FP32, NULL, 1, 0);         \
  CAL_LAYER_KERNEL(PFX, NAME##_prefill_bf16, CAL_DTYPE_BF16,                \
                     cal_forward_bf16_supported, 0, 1);                       \
  CAL_LAYER_KERNEL(PFX, NAME##_decode_bf16, CAL_DTYPE_BF16,                 \
                     cal_forward_bf16_supported, 1, 1)

#endif
