/* The LM head's training step, measured beside the layer's (layer_train.h)
 * so a model's step is the layers' plus this:
 *
 *   logits = h·Wᵀ (W [vocab][hidden]), loss = mean cross-entropy against
 *   one target per token; backward: dlogits = (softmax - onehot)/tokens,
 *   dh = dlogits·W, dW = dlogitsᵀ·h; AdamW on W.
 *
 * The vocabulary is done in chunks (CAL_LM_HEAD_CHUNK rows of W): a first
 * pass takes each row's log-sum-exp over the chunks, a second takes each
 * chunk's logits again (kept from the first pass while all of them fit
 * CAL_LM_HEAD_KEEP_BYTES, else recomputed, so large batches never hold
 * them whole),
 * its softmax gradient, dh (accumulated), dW for the chunk's rows and
 * their AdamW update at once (the gradient of W is never held whole
 * either).  Masters and moments are double-buffered (read one set, write
 * the other) so verification sees the step's inputs.  Products on
 * OpenBLAS sgemm in fp32 whatever the layers' dtype.
 *
 * The kernel (lm_head_train, family "lm_head") reads hidden, seq, batch
 * and the vocabulary from cal_params_t.n.  FLOPs: 3 × 2·tokens·vocab·hidden
 * (forward, dh, dW); logits the second pass recomputes, the softmax
 * and AdamW are not counted. */
#ifndef CAL_LM_HEAD_H
#define CAL_LM_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"
#include "layer_train.h"

#ifndef CAL_LM_HEAD_CHUNK
#define CAL_LM_HEAD_CHUNK 4096
#endif
/* a step keeps all the logits (no recomputation) when they take at most
 * this many bytes */
#ifndef CAL_LM_HEAD_KEEP_BYTES
#define CAL_LM_HEAD_KEEP_BYTES (256.0 * 1048576.0)
#endif

typedef struct cal_lm_head {
  int64_t t, d, vocab, chunk;
  int64_t step;
  int cur;
  int keep;                   /* 1: logits kept whole [chunks][t][chunk] */
  cal_adamw_t opt;
  float *w[2], *m[2], *v[2];  /* [vocab][d], double-buffered */
  float *h, *dh, *logits, *gw, *lse;
  int32_t *target;
  double loss;
} cal_lm_head_t;

int cal_lm_head_create(int64_t tokens, int64_t hidden, int64_t vocab,
                       uint64_t seed, cal_lm_head_t **out);
void cal_lm_head_free(cal_lm_head_t *H);
int cal_lm_head_step(cal_lm_head_t *H);
/* The last step against a double composition: the loss, dh in full, and
 * for a sample of rows of W (every target's and others) the gradient (read
 * back from the first moment) and the AdamW update.  0, CAL_EVERIFY,
 * CAL_ENOMEM. */
int cal_lm_head_verify(const cal_lm_head_t *H);

double cal_lm_head_flops(int64_t tokens, int64_t hidden, int64_t vocab);
double cal_lm_head_mem_bytes(int64_t tokens, int64_t hidden, int64_t vocab);

#endif
