/* What the training step's setup (layer_train.c) and the step itself
 * (layer_train_step.c) share; not a public header. */
#ifndef CAL_LAYER_TRAIN_INTERNAL_H
#define CAL_LAYER_TRAIN_INTERNAL_H

#include <stdint.h>

#include "layer_train.h"

/* the products: [i] = {rows of the input (t), k, n} with input [t][k] and
 * weights [k][n] */
void cal_train_prod_dims(const cal_train_t *T, int i, int64_t *k, int64_t *n);
/* the product i's pointers: input rows (fp32), output (forward), the
 * output's gradient, the input's gradient */
void cal_train_prod_bufs(cal_train_t *T, int i, float **in, float **out,
                         float **dout, float **din);
/* w (k×n) rounded to bf16 into w16 and, transposed, w16t (n×k) */
void cal_train_round_weights(const float *w, uint16_t *w16, uint16_t *w16t,
                             int64_t k, int64_t n);

/* The step's causal attention (train_attention.c): forward from qkv into
 * ao and lse, backward from the ao's gradient into qkv's; fp32 or, in a
 * bf16 step, on the step's bf16 engine.  0 or the engine's error. */
int cal_train_attention_fwd(cal_train_t *T);
int cal_train_attention_bwd(cal_train_t *T);
/* A bf16 step's attention buffers and products (T->attn16), after the
 * engine's setup; its threads' scratch and products those of share where
 * share (a layer of the same shape and team, run one layer at a time, as
 * a stack's) has them.  The free takes the team size they were made
 * for. */
int cal_train_attn16_create(cal_train_t *T, const cal_train_t *share);
void cal_train_attn16_free(struct cal_train_attn16 *A, int nthr);
/* Bytes of a bf16 step's attention buffers for nthr threads (0 in fp32);
 * T laid out. */
double cal_train_attn16_bytes(const cal_train_t *T, int nthr);
/* The bf16 copy the attention's products read: 0 Q, 1 K, 2 V ([batch]
 * [head][rows][hd], rows a multiple of CAL_TRAIN_QB), 3 dO; *n gets its
 * elements.  NULL in fp32.  (Tests corrupt one between forward and
 * backward.) */
uint16_t *cal_train_attn16_copy(cal_train_t *T, int which, size_t *n);

#endif
