/* The one memory model: the bytes a decoder model's state and activations
 * take to train or to serve.  The batch sweep's `fits` (its training state
 * and activations against the memory budget), `calibrate plan`'s no-fit
 * rule and largest micro-batch, and libcalibrate's cal_memory_need all
 * count with the functions below.  No I/O, no allocation.
 *
 * Bytes per parameter (cal_mem_param_bytes), AdamW in mixed precision as
 * the measured training step keeps it and as PyTorch's autocast does:
 *   trained, fp32:    the weight (its own master) 4, gradient 4, the two
 *                     moments 8                                  = 16
 *   trained, 16-bit:  the 16-bit copy 2, an fp32 master 4, an fp32
 *                     gradient 4, the two moments 8              = 18
 *   frozen (LoRA's base, inference): its weight only (4, 2 or 1)
 *   trained, its update fused into the backward pass (AdamW applied to
 *   each chunk's gradient as it is made, as the measured LM head's step
 *   does; Lv et al., "Full Parameter Fine-tuning for Large Language
 *   Models with Limited Resources" (2023)): no gradient held, 14 or 12
 * Sources: Rajbhandari et al., "ZeRO: Memory Optimizations Toward
 * Training Trillion Parameter Models" (SC 2020), section 3.1: mixed-
 * precision Adam holds 2 + 2 + (4 + 4 + 4) = 16 bytes a parameter with
 * 16-bit gradients; the measured step, like torch.autocast over fp32
 * parameters, accumulates its gradients in fp32 (+2).  Adapters (LoRA,
 * Hu et al. 2021) are trained in fp32: 16 bytes each.
 *
 * Activations (cal_act_model): what the measured step keeps for its
 * backward pass, counted from its buffers (test_train holds the kernel's
 * own count to the resident bytes a step adds); checkpointing as in
 * Chen et al., "Training Deep Nets with Sublinear Memory Cost" (2016),
 * one layer recomputed at a time. */
#ifndef CAL_MEM_MODEL_H
#define CAL_MEM_MODEL_H

#include <stdint.h>

/* How a parameter is held (the table above). */
typedef enum {
  CAL_MEM_FROZEN = 0,  /* its weight only */
  CAL_MEM_TRAINED,     /* AdamW's full set */
  CAL_MEM_FUSED,       /* AdamW's set but the gradient (fused update) */
} cal_mem_role_t;

/* Bytes one parameter holds: weight_bytes is its dtype's width (4, 2 or
 * 1). */
typedef struct cal_mem_param {
  double weights, master, gradients, optimizer, total;
} cal_mem_param_t;

void cal_mem_param_bytes(double weight_bytes, cal_mem_role_t role,
                         cal_mem_param_t *out);

/* The activation model (from the shapes, not measured): a decoder layer
 * of RMSNorm, Q/K/V projections, fused causal attention (online softmax:
 * it keeps a log-sum-exp per head and row, not the probabilities), the
 * output projection, RMSNorm, SwiGLU MLP (gate, up, down).  With q =
 * heads × head_dim and kv = kv_heads × head_dim, the elements one example
 * keeps for the backward pass of one layer are
 *   A = seq × (4·hidden + 2 + 2·q + 2·kv + heads + 3·ffn)
 *   (the two norms' inputs and outputs 4·hidden and their inverse RMS 2;
 *   Q, K, V and the attention output 2·q + 2·kv; the log-sum-exp heads;
 *   gate, up and SiLU(gate)·up 3·ffn), plus seq × 7·rank for LoRA
 *   adapters on all seven projections; the LM head (vocab > 0) keeps
 *   H = seq × (hidden + min(vocab, CAL_MEM_HEAD_CHUNK)): its input rows
 *   and one chunk of logits.  A step whose products run in bf16
 *   (bf16_inputs) keeps the four products' inputs also as bf16 rows and
 *   their transposes: B = seq × 2·(2·hidden + q + ffn) bf16 elements a
 *   layer.  Per example, times bytes_per_element (the measured step keeps
 *   its activations in fp32: 4 in either dtype), B at 2 bytes:
 *   training                 layers × (A + B) + H
 *   training, checkpointing  layers × seq × hidden (each layer's input
 *                            kept) + A + B (one layer recomputed at a
 *                            time) + H
 *   inference                layers × 2 × seq × kv (the KV cache) + A
 * Not counted: the embedding's rows, framework workspace.  Linear in the
 * batch. */
#define CAL_MEM_HEAD_CHUNK 1024 /* the LM head's step: logits a chunk */

typedef struct cal_act_shape {
  int64_t hidden, heads, kv_heads, head_dim, ffn, seq, layers;
  int64_t vocab;   /* the LM head's; 0: not counted */
  int bf16_inputs; /* the products' inputs kept in bf16 too (B) */
} cal_act_shape_t;

typedef struct cal_act_est {
  double layer_elements;           /* A with the LoRA term, one example */
  double head_elements;            /* H, one example (0 without vocab) */
  double layer_bf16_elements;      /* B, one example (0 without them) */
  double full_bytes;               /* per example, training, no checkpoints */
  double checkpointed_bytes;       /* per example, training, checkpointing */
  double inference_bytes;          /* per example, inference */
} cal_act_est_t;

/* CAL_EINVAL when a shape is < 1 (lora_rank < 0, bytes_per_element <= 0)
 * or heads is not a multiple of kv_heads. */
int cal_act_model(const cal_act_shape_t *s, double bytes_per_element,
                  int64_t lora_rank, cal_act_est_t *out);

/* Trainable parameters of LoRA rank r on the seven projections of every
 * layer: layers × r × (7·hidden + 2·q + 2·kv + 3·ffn), each adapter of an
 * in × out matrix holding r × (in + out).  0 when the shape is bad. */
double cal_lora_params(const cal_act_shape_t *s, int64_t rank);

#endif
