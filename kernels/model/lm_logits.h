/* The LM head of a model's forward pass (inference): the final RMSNorm of
 * the rows the next token is predicted from, then their logits over the
 * vocabulary,
 *
 *   h = RMSNorm(x_row)·g      logits = h·W    (W [hidden][vocab])
 *
 * for `rows` rows (a model step takes one a sequence: the last position of
 * each sequence in prefill, the new token in decode).  Two paths, as the
 * layer's: one OpenMP team whose threads each stream their columns of W
 * once (the layer's GEMV, layer_gemv.h; decode at small batches), or one
 * product on the engine's GEMM.  bf16: W in bf16, h rounded to bf16 before
 * the product, fp32 accumulation and logits.  Not a public header:
 * model.c and the tests use it. */
#ifndef CAL_LM_LOGITS_H
#define CAL_LM_LOGITS_H

#include <stdint.h>

#include "engine.h"
#include "layer_gemv.h"

typedef struct cal_lm_logits {
  int64_t rows, d, vocab;
  int bf16, team, nthreads, variant;
  float *g, *w, *h, *logits;   /* gain [d], W [d][vocab] (fp32), h [rows][d],
                                  logits [rows][vocab] */
  uint16_t *w16, *h16;         /* bf16: W, and h for the engine's product */
  uint32_t *wp;                /* bf16 on the team where the CPU has
                                  AVX512_BF16: W packed (w16 NULL) */
  float *wpf;                  /* fp32 on the team with an AVX2 or
                                  AVX-512 variant: W packed in blocks of
                                  16 columns (w NULL) */
  cal_gemv_fn gemv;
  cal_gemv_packed_fn gemvp;
  cal_gemv_bf16_fn gemv16;
  const cal_engine_row_t *eng;
  void *mm;
  char impl[96];
} cal_lm_logits_t;

/* rows × hidden → vocab, on the team path (team 1) or the engine's GEMM
 * (CAL_ENGINE_BUILTIN: cal_engine_default), SIMD variant resolved.  0,
 * CAL_EINVAL, CAL_EUNSUPP, CAL_ENOMEM.  Free with cal_lm_logits_free. */
int cal_lm_logits_create(int64_t rows, int64_t hidden, int64_t vocab, int bf16,
                         int team, int variant, cal_engine_t engine,
                         uint64_t seed, cal_lm_logits_t **out);
void cal_lm_logits_free(cal_lm_logits_t *H);
/* H made to take `rows` rows (a model's new batch): W and the gain kept,
 * the rows' buffers and the engine's product bound to them re-made, on
 * the path H was made for.  0, CAL_EINVAL (H unchanged), or CAL_ENOMEM or
 * the engine's error, after which H may only be freed. */
int cal_lm_logits_reshape(cal_lm_logits_t *H, int64_t rows,
                          cal_engine_t engine);
/* Row r's input at x + r·ldx (ldx floats apart).  0 or an engine's error. */
int cal_lm_logits_run(cal_lm_logits_t *H, const float *x, int64_t ldx);
/* Rows 0 and rows - 1 of the last run against a double composition from
 * the same x: the normalised rows (bf16: within a rounding step) and every
 * logit.  0, CAL_EVERIFY, CAL_ENOMEM. */
int cal_lm_logits_verify(const cal_lm_logits_t *H, const float *x, int64_t ldx);

/* FLOPs (2·rows·hidden·vocab), bytes of W, bytes a head allocates. */
double cal_lm_logits_flops(int64_t rows, int64_t hidden, int64_t vocab);
double cal_lm_logits_weight_bytes(int64_t hidden, int64_t vocab, int bf16);
double cal_lm_logits_mem_bytes(int64_t rows, int64_t hidden, int64_t vocab,
                               int bf16);

#endif
