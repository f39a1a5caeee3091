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

#endif
