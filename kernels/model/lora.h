/* LoRA on the training step of the decoder layer (layer_train.h): the
 * base weights frozen, a low-rank adapter trained on each of the layer's
 * four projections (q|k|v, o, gate|up, down: both fused matrices adapted
 * as one), where cal_layer_shape_t.lora_rank > 0:
 *
 *   forward   out = in·W + s·(in·A)·B, s = alpha / rank (alpha
 *             CAL_LORA_ALPHA); u = in·A [tokens][rank] kept for backward
 *   backward  z = dout·Bᵀ; din = dout·Wᵀ + s·z·Aᵀ (the data gradient
 *             through the frozen base and the adapter); dA = s·inᵀ·z,
 *             dB = s·uᵀ·dout; no gradient of W nor of the norm gains is
 *             used (the gains' are still computed, elementwise)
 *   AdamW     the adapters only (fp32 masters and moments, double-
 *             buffered as the base's are in full training); the base has
 *             no gradient buffer's update, masters' second set nor moments
 *
 * A is k × rank, B rank × n for a projection of input width k and output
 * width n; both fp32, their products OpenBLAS sgemm in either dtype (the
 * base products stay the step's: bf16 ones round their inputs, the
 * adapters' read the fp32 rows).  A is drawn with variance 1/k; B, zero at
 * the start of real training, is drawn non-zero here (variance chosen so
 * that s·A·B is half the base weights' spread) so that verification
 * checks every term: the timing does not depend on the values.
 *
 * Verification: the adapted layer is the full layer with weights W + s·A·B,
 * so the double-precision composition of the whole step
 * (cal_train_reference) from those weights gives the output, every
 * activation gradient and G = ∂loss/∂W', from which the adapters'
 * gradients are dA = s·G·Bᵀ and dB = s·Aᵀ·G (in double); then the
 * adapters' AdamW update.
 *
 * FLOPs of a step, as done: 2 × the base products' forward (forward and
 * data gradients; no weight gradients), 3 × attention's forward, 3 × the
 * adapters' forward (2·tokens·rank·(k + n) a projection). */
#ifndef CAL_LORA_H
#define CAL_LORA_H

#include <stddef.h>
#include <stdint.h>

#include "layer.h"
#include "layer_train.h"

#define CAL_LORA_ALPHA 16.0

typedef struct cal_lora {
  int64_t rank;
  float scale;                      /* alpha / rank */
  size_t off[2 * 4 + 1];            /* A_i at off[2i], B_i at off[2i + 1] */
  size_t np;                        /* adapter parameters */
  int cur;                          /* the set holding the current masters */
  float *p[2], *m[2], *v[2], *g;
  float *u[4];                      /* in·A_i [tokens][rank] */
  float *z;                         /* dout·B_iᵀ [tokens][rank] */
} cal_lora_t;

/* T's adapters (T->lora) for rank T->s.lora_rank, drawn from seed.
 * 0, CAL_EINVAL, CAL_ENOMEM. */
int cal_lora_create(cal_train_t *T, uint64_t seed);
void cal_lora_free(cal_lora_t *A);
/* Product i's adapter (CAL_TRAIN_WQKV .. CAL_TRAIN_WD) after the base
 * product: forward (out += s·(in·A)·B), backward (din += s·z·Aᵀ, dA,
 * dB). */
void cal_lora_forward(cal_train_t *T, int i);
void cal_lora_backward(cal_train_t *T, int i);
/* AdamW on the adapters (the step's count advances). */
void cal_lora_update(cal_train_t *T);
/* The last step against the reference (above).  0, CAL_EVERIFY,
 * CAL_ENOMEM. */
int cal_lora_verify(const cal_train_t *T);

/* A layer's adapter parameters, the floats of the adapters' buffers
 * (masters and moments twice, gradients, u and z), and the step's FLOPs
 * (above). */
double cal_lora_layer_params(const cal_layer_shape_t *s);
double cal_lora_buffer_floats(const cal_layer_shape_t *s);
double cal_lora_train_flops(const cal_layer_shape_t *s);

#endif
