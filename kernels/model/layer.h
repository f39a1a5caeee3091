/* A model-shaped workload: one transformer decoder layer's forward pass,
 * fp32, built from the BLAS GEMM and the fused attention kernel:
 *
 *   h  = RMSNorm(x)·g1           qkv = h·Wqkv   (GQA: H + 2·Hkv heads)
 *   o  = attention(q, k, v), causal, over the KV cache
 *   x1 = x + o·Wo                h2 = RMSNorm(x1)·g2
 *   y  = x1 + (SiLU(h2·Wg) ⊙ (h2·Wu))·Wd
 *
 * prefill: batch × seq tokens (each sequence attends to itself, causal);
 * decode: batch × 1 new token against a KV cache of `seq` past tokens (the
 * new token's key and value are appended, so attention spans seq + 1).
 * Rotary embeddings are left out: elementwise work that does not change
 * the matrix shapes.  Small decode batches run on one OpenMP team with
 * matrix-vector products (see CAL_LAYER_GEMV_MAX_BATCH), the rest on BLAS.  FLOPs count the matrix products and attention
 * (elementwise work, under 1%, is not counted). */
#ifndef CAL_LAYER_H
#define CAL_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

typedef struct cal_layer_shape {
  int64_t hidden, heads, kv_heads, ffn, seq, batch;
  int decode;
  int bf16;  /* 1: weights and the products' inputs in bf16 (fp32
                accumulation; norms, softmax and residuals stay fp32, the
                KV cache too in prefill; decode keeps it in bf16 and
                attends in bf16) */
  /* decode: above 1, a generate loop's growing cache: seq + grow slots,
   * the new token written at the layer's position (seq at setup, moved
   * along by cal_layer_set_pos) and attention over the slots up to it;
   * the shape's figures are those of its last step (seq + grow keys) */
  int64_t grow;
  /* the training step: above 0, LoRA adapters of this rank on a frozen
   * base (lora.h); 0: every weight trained */
  int64_t lora_rank;
} cal_layer_shape_t;

/* A named model shape (the batch is the sweep's). */
typedef struct cal_layer_preset {
  const char *name;
  const char *description;
  int64_t hidden, heads, kv_heads, ffn, seq;
  int64_t layers, vocab; /* the model's depth and vocabulary */
} cal_layer_preset_t;

/* The preset table; entries belong to the library.  NULL past the end. */
const cal_layer_preset_t *cal_layer_preset_at(size_t i);
const cal_layer_preset_t *cal_layer_preset_find(const char *name);

void cal_layer_shape_from_params(const cal_params_t *p, cal_layer_shape_t *s);
/* CAL_EINVAL with a one-line reason for a shape that cannot run: sizes
 * below 1, hidden not a multiple of heads, heads not a multiple of
 * kv_heads, head_dim above the attention kernel's maximum. */
int cal_layer_check_shape(const cal_layer_shape_t *s, char *why, size_t whylen);
/* Analytic FLOPs of one forward pass. */
double cal_layer_flops(const cal_layer_shape_t *s);
/* Bytes setup allocates (weights, activations, KV cache, workspace and the
 * verification buffers): what a point needs before it may run. */
double cal_layer_mem_bytes(const cal_layer_shape_t *s);
/* Bytes of the weights alone. */
double cal_layer_weight_bytes(const cal_layer_shape_t *s);
/* Examples one forward pass processes (sequences) and tokens. */
double cal_layer_tokens(const cal_layer_shape_t *s);
/* Bytes a forward pass must read from memory at the least, the figure a
 * decode step's bandwidth efficiency divides by its time: every weight of
 * the layer once (the projections, the MLP and both norm gains, 4 bytes
 * each; bf16: the projections and the MLP 2) plus the K and V cache rows
 * attention reads for every sequence of the batch (batch × kv_heads ×
 * keys × head_dim × 2 × 4 bytes, 2 in bf16 decode; keys = seq + 1 in
 * decode, the past tokens and the new one; seq in prefill).
 * Activations are not counted. */
double cal_layer_read_bytes(const cal_layer_shape_t *s);

/* By default decode batches up to this size run the small-batch path: one
 * OpenMP team per step and our own matrix-vector products, each thread
 * streaming its columns of every weight matrix once (layer_gemv.h).
 * Larger decode batches and prefill run the products on the engine's GEMM.
 * cal_params_t.path forces either path for a decode step (the batch sweep
 * measures both where either may win: which one does depends on the engine
 * and the dtype). */
#ifndef CAL_LAYER_GEMV_MAX_BATCH
#define CAL_LAYER_GEMV_MAX_BATCH 16
#endif
/* Which path runs the shape's matrix products: "gemv" (the small-batch
 * decode path) or "blas"; static storage. */
const char *cal_layer_matrix_path(const cal_layer_shape_t *s);

/* A set-up decode layer's new token goes to position pos (seq ..
 * seq + grow - 1) and attends over the pos + 1 slots up to it. */
struct cal_layer;
void cal_layer_set_pos(struct cal_layer *L, int64_t pos);

#endif
