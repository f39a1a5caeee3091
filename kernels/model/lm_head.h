/* The LM head's training step, measured beside the layer's (layer_train.h)
 * so a model's step is the layers' plus this:
 *
 *   logits = h·Wᵀ (W [vocab][hidden]), loss = mean cross-entropy against
 *   one target per token; backward: dlogits = (softmax - onehot)/tokens,
 *   dh = dlogits·W, dW = dlogitsᵀ·h; AdamW on W.
 *
 * The vocabulary is done in chunks (CAL_LM_HEAD_CHUNK rows of W): a first
 * pass takes each chunk's logits on the matrix engine, each row's maximum
 * over the chunk and e = exp(logit - that maximum) with its sum (the
 * log-sum-exp online over the chunks, vectorised, train_vec.h), keeping
 * e (fp32, or fp16 where the vector loops have it: half the bytes) while
 * all of it fits CAL_LM_HEAD_KEEP_BYTES; a second pass takes each chunk's
 * softmax gradient from the kept e times exp(chunk maximum - log-sum-exp)
 * (or from the logits recomputed, so large batches never hold them
 * whole), dh (accumulated), dW for the chunk's rows and their AdamW
 * update at once (the gradient of W is never held whole either).
 * Masters and moments are one set, updated in place: a chunk's rows are
 * read (its logits again, dh) before its AdamW writes them, and no later
 * chunk reads them.  Verification takes its double reference from the
 * state before a step of its own and checks that step, so it holds no
 * second copy of W.
 *
 * Everything bound to the token count (h, dh, the logits or kept e, the
 * per-token figures, the targets, the bf16 copies of h and of a chunk's
 * gradient, oneDNN's products) is made apart from W and its moments, so
 * a head can be reshaped to another batch keeping its optimizer state
 * (cal_lm_head_reshape, the kernel table's reshape).
 *
 * Two dtypes, as the layers': fp32, the products on OpenBLAS sgemm; bf16
 * mixed precision, the three products on oneDNN matmuls over bf16 inputs
 * with fp32 accumulation and output (h rounded once a step; W's bf16 copy
 * is the masters rounded, kept beside them: each chunk's AdamW rounds its
 * new masters into it for the next step, as the layer does; each chunk's
 * softmax gradient rounded before dh and dW), the log-sum-exp, softmax,
 * loss and AdamW in fp32 in both.
 *
 * The kernels (lm_head_train and lm_head_train_bf16, family "lm_head")
 * read hidden, seq, batch and the vocabulary from cal_params_t.n.  FLOPs:
 * 3 × 2·tokens·vocab·hidden (forward, dh, dW); logits the second pass
 * recomputes, the softmax and AdamW are not counted. */
#ifndef CAL_LM_HEAD_H
#define CAL_LM_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "cal_mem.h"
#include "gemm_onednn.h"
#include "kernel.h"
#include "layer_train.h"
#include "train_vec.h"

/* rows of W a chunk: its fp32 gradient (3.5 MiB at hidden 896) stays in
 * the LLC from the dW product that writes it to the AdamW that reads it;
 * 4096 rows sent 14 MiB a chunk to memory and back, the qwen2-0.5b head's
 * step 1-2% slower at 128-512 tokens */
#ifndef CAL_LM_HEAD_CHUNK
#define CAL_LM_HEAD_CHUNK 1024
#endif
/* a step keeps every chunk's e (no recomputation) when they take at most
 * this many bytes (fp16: 2 a logit, else 4) */
#ifndef CAL_LM_HEAD_KEEP_BYTES
#define CAL_LM_HEAD_KEEP_BYTES (512.0 * 1048576.0)
#endif

typedef struct cal_lm_head {
  int64_t t, d, vocab, chunk;
  int64_t step;
  int keep;                   /* 1: e kept whole [chunks][t][chunk] (in
                                 logits, or e16 when fp16) */
  int bf16;                   /* 1: the products in bf16 on oneDNN */
  cal_engine_t engine;        /* the products' engine: OpenBLAS's sgemm,
                                 or oneDNN's matmul (mm, in bf16 always) */
  cal_adamw_t opt;
  float *w, *m, *v;           /* [vocab][d], updated in place */
  /* the stream of the inputs where create left it after W: any token
   * count's h and targets are drawn from here as create draws them */
  cal_rng_t rng;
  float *h, *dh, *logits, *gw, *lse;
  float *cmax;                /* each row's maximum per chunk [chunks][t] */
  uint16_t *e16;              /* fp16 e, kept [t·vocab] (NULL: fp32) */
  const cal_train_vec_t *vec; /* the vector loops */
  int32_t *target;
  /* bf16: h rounded [t][d], the current masters rounded [vocab][d], a
   * chunk's softmax gradient rounded [t][chunk]; the oneDNN products per
   * chunk width ([0] a full chunk, [1] the last when it is shorter):
   * logits = h·Wᵀ, dh += g·W, gW = gᵀ·h (bf16: h16, W16 and dl16; fp32:
   * h, the current masters and the gradient, the last two bound per
   * chunk) */
  uint16_t *h16, *w16, *dl16;
  cal_onednn_mm_t *mm[2][3];
  char impl[96];              /* the engine's implementations */
  double loss;
} cal_lm_head_t;

/* fp32 (cal_lm_head_create: OpenBLAS; cal_lm_head_create_on: the
 * products on `engine`, CAL_ENGINE_BUILTIN the fp32 default) or bf16
 * (cal_lm_head_create_bf16, oneDNN).  0, CAL_EINVAL, CAL_ENOMEM,
 * CAL_EUNSUPP (bf16 where oneDNN cannot run it natively).  Free with
 * cal_lm_head_free (accepts NULL). */
int cal_lm_head_create(int64_t tokens, int64_t hidden, int64_t vocab,
                       uint64_t seed, cal_lm_head_t **out);
int cal_lm_head_create_on(int64_t tokens, int64_t hidden, int64_t vocab,
                          uint64_t seed, cal_engine_t engine,
                          cal_lm_head_t **out);
int cal_lm_head_create_bf16(int64_t tokens, int64_t hidden, int64_t vocab,
                            uint64_t seed, cal_lm_head_t **out);
void cal_lm_head_free(cal_lm_head_t *H);
/* H made for `tokens` tokens, keeping W, its moments (and bf16 copy) and
 * the step count; h and the targets drawn as create draws them for that
 * many, everything bound to the token count re-made (at the same count
 * only the inputs drawn again).  0; CAL_EINVAL (tokens < 1), H unchanged;
 * CAL_ENOMEM or an engine's error: H may only be freed. */
int cal_lm_head_reshape(cal_lm_head_t *H, int64_t tokens);
/* One step; allocates nothing.  0, or an engine's error. */
int cal_lm_head_step(cal_lm_head_t *H);
/* One more step, checked against a double composition from the state
 * before it (bf16: h and W rounded as the step rounds them): the loss,
 * dh in full, and for a sample of rows of W (every sampled token's
 * target's and others) the gradient (read back from the first moment)
 * and the AdamW update from the rows as they were, and in bf16 the copy
 * the next step reads.  CAL_EVERIFY before any step (nothing ran to
 * check), else 0, CAL_EVERIFY, CAL_ENOMEM or the step's error. */
int cal_lm_head_verify(cal_lm_head_t *H);
/* cal_lm_head_verify in its parts, for a test that damages the step
 * between them: the reference from H now (R freed by
 * cal_lm_head_ref_free, accepts NULL), then after one step its check.
 * 0, CAL_ENOMEM; 0, CAL_EVERIFY, CAL_ENOMEM. */
typedef struct cal_lm_head_ref cal_lm_head_ref_t;
int cal_lm_head_ref_make(const cal_lm_head_t *H, cal_lm_head_ref_t **R);
int cal_lm_head_ref_check(const cal_lm_head_t *H, const cal_lm_head_ref_t *R);
void cal_lm_head_ref_free(cal_lm_head_ref_t *R);

double cal_lm_head_flops(int64_t tokens, int64_t hidden, int64_t vocab);
/* Bytes a head allocates (bf16: with its bf16 copies and oneDNN's
 * scratchpads), and what its verification holds while it runs. */
double cal_lm_head_mem_bytes(int64_t tokens, int64_t hidden, int64_t vocab,
                             int bf16);

#endif
