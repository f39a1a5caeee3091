/* The one list of kernels.  Add a kernel here and define
 * `const cal_kernel_t cal_kernel_<name>` in its source file. */
#ifndef CAL_KERNEL_LIST_H
#define CAL_KERNEL_LIST_H

#define CAL_KERNEL_LIST(X)                                                   \
  X(sgemm)                                                                   \
  X(dgemm)                                                                   \
  X(sbgemm)                                                                  \
  X(onednn_sgemm)                                                            \
  X(onednn_bf16gemm)                                                         \
  X(onednn_u8s8gemm)                                                         \
  X(attn_ref)                                                                \
  X(attn_fused)                                                              \
  X(attn_fused_bf16)                                                         \
  X(layer_prefill)                                                           \
  X(layer_decode)                                                            \
  X(layer_prefill_bf16)                                                      \
  X(layer_decode_bf16)                                                       \
  X(model_prefill)                                                           \
  X(model_decode)                                                            \
  X(model_prefill_bf16)                                                      \
  X(model_decode_bf16)                                                       \
  X(model_infer)                                                             \
  X(model_infer_bf16)                                                        \
  X(layer_train)                                                             \
  X(layer_train_bf16)                                                        \
  X(lm_head_train)                                                           \
  X(lm_head_train_bf16)                                                      \
  X(fma_f64)                                                                 \
  X(fma_f32)                                                                 \
  X(dp_bf16)                                                                 \
  X(dp_int8)                                                                 \
  X(fma_fp16)                                                                \
  X(amx_bf16)                                                                \
  X(amx_int8)                                                                \
  X(stream_read)                                                             \
  X(stream_copy)                                                             \
  X(stream_triad)

#endif
