/* A model's forward step (inference), the layer (layer.h) stacked to the
 * model's depth with its LM head:
 *
 *   x → layer 1 → … → layer `depth` → final RMSNorm → logits (lm_logits.h)
 *
 * prefill: batch × seq tokens through every layer, the head over the last
 * position of each sequence (the one the next token is sampled from);
 * decode: one new token a sequence through every layer, each against its
 * own KV cache of seq past tokens (a generate loop's growing cache:
 * cal_params_t.gen, cal_model_set_pos), and the head over the new tokens.
 *
 * The layers' weights are distinct: `layers` sets of them (1 ≤ layers ≤
 * depth), the step running depth layer passes over them in turn (pass p
 * runs set p mod layers).  With layers = depth it is the model; with fewer,
 * each set's weights and cache are evicted before their next turn as long
 * as the sets together exceed the last-level cache several times over
 * (cal_model_distinct_layers), so each pass reads them from memory as the
 * model's layers would.  The layers run one at a time over one set of
 * activation rows (layer_internal.h's share).
 *
 * The kernels model_prefill, model_decode, model_prefill_bf16 and
 * model_decode_bf16 (family "layer") read the layer shape, batch, decode,
 * path and engine as the layer's do, cal_params_t.layers (the distinct
 * sets; 0: one), .depth (the passes; 0: layers) and .n (the vocabulary).
 * A decode step's path (cal_params_t.path, or the layer's rule by batch)
 * runs both the layers and the head.  Verification: the head's rows, the
 * last pass's layer from its own input and the first layer again from the
 * model's input, each against its double-precision reference. */
#ifndef CAL_MODEL_H
#define CAL_MODEL_H

#include <stdint.h>

#include "layer.h"

/* A set-up step (the kernels' state; tests reach it). */
typedef struct cal_model {
  cal_layer_shape_t s;
  int64_t depth, n, vocab;
  struct cal_layer **L;    /* n distinct layers; L[0] owns the activations */
  struct cal_lm_logits *head;
  float *x0;               /* the model's input rows [tokens][hidden] */
  char impl[320];
} cal_model_t;

/* FLOPs of a step: depth layers' (cal_layer_flops) and the head's logits
 * (2·batch·hidden·vocab; the final norm not counted). */
double cal_model_flops(const cal_layer_shape_t *s, int64_t depth, int64_t vocab);
/* Bytes a step must read from memory at the least: depth × the layer's
 * (cal_layer_read_bytes: its weights and the KV cache attention reads)
 * plus the head's weights and gain. */
double cal_model_read_bytes(const cal_layer_shape_t *s, int64_t depth,
                            int64_t vocab);
/* Bytes setup allocates with `layers` distinct layers. */
double cal_model_mem_bytes(const cal_layer_shape_t *s, int64_t layers,
                           int64_t vocab);
/* The distinct layers a step of depth layers should hold: all of them when
 * they fit `budget` bytes; else the fewest whose weights exceed 4 × llc
 * bytes (the last-level cache; 0 when unknown: as many as fit), never more
 * than fit the budget nor fewer than 1. */
int64_t cal_model_distinct_layers(const cal_layer_shape_t *s, int64_t depth,
                                  int64_t vocab, double llc, double budget);

/* A step set up from p (the kernels' parameters, decode and bf16 as
 * given), run, verified (the kernels' run and verify) and freed: the
 * inference workload (model_infer.c) runs a prefill and a decode step in
 * turn.  CAL_EINVAL, CAL_ENOMEM. */
int cal_model_create(const cal_params_t *p, int decode, int bf16,
                     cal_model_t **out);
int cal_model_run(void *model);
int cal_model_verify(void *model);
void cal_model_free(cal_model_t *M);
/* The kernels' reshape (kernel.h): a set-up step made to run p, whose
 * parameters differ from its own in the batch alone.  Kept: every layer's
 * weights in the form they hold and its gains, the head's W and gain;
 * re-made: the KV caches (sequence b's drawn as setup draws it, the same
 * at every batch), the shared activations, workspace and team rows, the
 * engine's products, the input rows, the head's rows, each decode layer's
 * position (back to seq).  CAL_EUNSUPP, the step unchanged, where p's
 * batch runs the other path (the team's GEMV or the engine's GEMM, whose
 * weights are held in other forms); after CAL_ENOMEM or an engine's error
 * the step may only be freed. */
int cal_model_reshape(void *model, const cal_params_t *p);
/* A decode step over a growing cache (cal_params_t.gen above 1): every
 * layer's new token at position pos (cal_layer_set_pos). */
void cal_model_set_pos(cal_model_t *M, int64_t pos);
/* Bytes the inference workload's step (model_infer.c) sets up: a prefill
 * and a decode step of parameters p. */
double cal_model_infer_mem_bytes(const cal_params_t *p, int bf16);

#endif
