/* One training step of the decoder layer (layer.h's forward pass, prefill
 * shape, causal): forward, backward and an AdamW update.
 *
 *   forward   as layer.h; saved for backward: the layer's input x, the
 *             normalised rows h1 and h2 with their inverse RMS, qkv, the
 *             attention output ao and each query row's log-sum-exp (not
 *             the probabilities), x1, gate|up and the SwiGLU output a
 *   loss      sum(y ⊙ dy): dy stands for the gradient the layers above
 *             and the LM head send down (fixed random rows, one stream per
 *             sequence); the step's gradients are those of a real layer
 *   backward  every product's data and weight gradient on the same engine
 *             (OpenBLAS sgemm with transposes; in bf16 oneDNN matmuls over
 *             bf16 copies, transposed where the product needs it); the
 *             attention backward recomputes each probability from the
 *             saved log-sum-exp, as flash-attention does, a block of
 *             query rows at a time (train_attention.c); RMSNorm and
 *             SwiGLU backward elementwise; the gains' gradients too
 *   attention fp32: sgemm products; bf16 (forward and backward): Q, K, V
 *             and dO rounded to bf16, the probabilities and the scores'
 *             gradients rounded before their products, every product on
 *             the step's bf16 engine, scores, softmax, its log-sum-exp
 *             and the accumulations in fp32 (as autocast runs it)
 *   AdamW     every parameter (the four matrices and both gains), fp32
 *             master weights and moments; a bf16 step rounds the new
 *             masters to bf16 for the next step's products
 *
 * One set of masters and moments, updated in place.  Verification
 * (layer_train_verify.c recomputes the whole step in double) needs the
 * step's inputs: a layer asked to (cal_train_save_inputs) copies its
 * masters and moments aside before its update, and a stack's
 * verification runs one more step with its bottom and top layers saving
 * theirs, so the state is never held twice.
 *
 * FLOPs of a step: 3 × the forward pass's (cal_layer_flops; backward = 2 ×
 * forward: a data and a weight gradient per product, attention's backward
 * likewise); the scores attention's backward recomputes, elementwise work
 * and AdamW are not counted. */
#ifndef CAL_LAYER_TRAIN_H
#define CAL_LAYER_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "gemm_onednn.h"
#include "gemm_openblas.h"
#include "kernel.h"
#include "layer.h"

/* Attention's query rows per block (fp32: its products are sgemm calls
 * over a block's scores against the keys up to the block's last row;
 * bf16: products of square blocks of this many queries and keys). */
#ifndef CAL_TRAIN_QB
#define CAL_TRAIN_QB 64
#endif

/* AdamW hyper-parameters (the step's; fixed). */
typedef struct cal_adamw {
  double lr, beta1, beta2, eps, weight_decay;
} cal_adamw_t;

extern const cal_adamw_t cal_train_adamw_default;

/* p2, m2, v2 = one AdamW step from p, m, v with gradient g, step >= 1
 * (bias correction 1 - beta^step); decoupled weight decay on every
 * element.  Elementwise, OpenMP over n. */
void cal_train_adamw(const cal_adamw_t *h, int64_t step, const float *p,
                     const float *m, const float *v, const float *g, float *p2,
                     float *m2, float *v2, size_t n);
/* The same, also writing the new masters rounded to bf16 into p16 (in
 * the same pass: a mixed-precision step's copy for its next products). */
void cal_train_adamw16(const cal_adamw_t *h, int64_t step, const float *p,
                       const float *m, const float *v, const float *g,
                       float *p2, float *m2, float *v2, uint16_t *p16,
                       size_t n);

/* The parameters, one buffer: Wqkv [d][nqkv], Wo [hq][d], Wgu [d][2f],
 * Wd [f][d], g1 [d], g2 [d]. */
enum { CAL_TRAIN_WQKV, CAL_TRAIN_WO, CAL_TRAIN_WGU, CAL_TRAIN_WD,
       CAL_TRAIN_G1, CAL_TRAIN_G2, CAL_TRAIN_NPARAM };

/* Activation gradients the step keeps (each checked by verification). */
enum { CAL_TRAIN_DX, CAL_TRAIN_DQKV, CAL_TRAIN_DAO, CAL_TRAIN_DX1,
       CAL_TRAIN_DH1, CAL_TRAIN_DH2, CAL_TRAIN_DGU, CAL_TRAIN_DA,
       CAL_TRAIN_NDACT };

typedef struct cal_train {
  cal_layer_shape_t s;
  int64_t hd, nqkv, hq, t;
  size_t off[CAL_TRAIN_NPARAM + 1]; /* offsets into a parameter buffer */
  size_t np;                        /* parameters */
  size_t dact_n[CAL_TRAIN_NDACT];   /* elements of each activation grad */
  int64_t step;                     /* steps taken */
  uint64_t seed;                    /* draws the state and each sequence */
  cal_adamw_t opt;
  float *p, *m, *v, *g;             /* masters, moments, gradients */
  float *p0, *m0, *v0;              /* the last step's p, m, v, saved for
                                       the check (NULL: not saving) */
  float *x, *dy, *h1, *r1, *qkv, *lse, *ao, *x1, *h2, *r2, *gu, *a, *y;
  float *dact[CAL_TRAIN_NDACT];
  float *scratch;                   /* attention: [nthr][2][QB][seq] */
  int alias_x, alias_dy;            /* x, dy belong to a stack neighbour */
  /* the activation gradients but dx, and in bf16 the output gradients'
   * copies (dout16), are the stack's bottom layer's: one layer's backward
   * runs at a time, and each uses them only within it */
  int shared_grads;
  int nthr;
  double loss;                      /* sum(y ⊙ dy) at the forward (a
                                       stack's lower layers get their dy
                                       later: no loss of theirs) */
  /* bf16: per product i (CAL_TRAIN_WQKV..WD): the weights (the data
   * gradient's product reads them as Bᵀ), the input rows and their
   * transpose, the output gradient */
  uint16_t *w16[4], *in16[4], *in16t[4], *dout16[4];
  cal_onednn_mm_t *mm[12]; /* bf16 on oneDNN: forward, data, weight */
  /* bf16: attention's bf16 copies of Q, K, V and dO and its products per
   * thread (train_attention.c) */
  struct cal_train_attn16 *attn16;
  cal_sbgemm_fn sbgemm;
  cal_engine_t engine;
  char impl[160];
  /* s.lora_rank > 0: the adapters (lora.h); the base frozen (no second
   * set of masters, no moments) */
  struct cal_lora *lora;
} cal_train_t;

/* Set up a step for shape s (decode ignored; s->bf16 picks the dtype) on
 * engine (fp32: always OpenBLAS; bf16: CAL_ENGINE_BUILTIN for the
 * default, cal_engine_default).  0, CAL_EINVAL, CAL_ENOMEM, CAL_EUNSUPP. */
int cal_train_create(const cal_layer_shape_t *s, uint64_t seed,
                     cal_engine_t engine, cal_train_t **out);
void cal_train_free(cal_train_t *T);
/* One step (forward, backward, AdamW), or its three parts (a stack runs
 * every layer's forward, then every backward from the top, then every
 * update). */
int cal_train_step(cal_train_t *T);
int cal_train_forward(cal_train_t *T);
int cal_train_backward(cal_train_t *T);
void cal_train_update(cal_train_t *T);
/* Whether the step copies its masters and moments aside before updating
 * them (on: allocated; off: freed), so that cal_train_verify can check
 * it.  0 or CAL_ENOMEM. */
int cal_train_save_inputs(cal_train_t *T, int on);
/* The masters the last step read (its inputs, where saved; else the
 * current ones), and wrote. */
const float *cal_train_params_before(const cal_train_t *T);
const float *cal_train_params_after(const cal_train_t *T);

/* A double-precision composition of the step from parameters P (np
 * floats) and T's x and dy, with T's bf16 roundings where T is bf16:
 * y, the loss, every parameter gradient and every activation gradient
 * (NULL pointers are not filled; no_backward: y and loss only).
 * 0 or CAL_ENOMEM. */
typedef struct cal_train_ref {
  double *y;                        /* [t][d] */
  double loss;
  double *grad;                     /* [np] */
  double *dact[CAL_TRAIN_NDACT];
} cal_train_ref_t;
int cal_train_reference(const cal_train_t *T, const double *P,
                        cal_train_ref_t *R, int no_backward);
void cal_train_ref_free(cal_train_ref_t *R);
/* Allocate R's arrays for T. 0 or CAL_ENOMEM. */
int cal_train_ref_alloc(const cal_train_t *T, cal_train_ref_t *R);

/* Relative error of a[n] (float) against r[n] (double): the RMS of the
 * differences over the RMS of r (plus tiny). */
double cal_train_rel_err(const float *a, const double *r, size_t n);

/* The last step against the reference: the output, every gradient and
 * the update (a LoRA step: cal_lora_verify); the step must have saved its
 * inputs (cal_train_save_inputs; CAL_EINVAL otherwise).  0, CAL_EVERIFY,
 * CAL_ENOMEM. */
int cal_train_verify(const cal_train_t *T);
/* The step's output and activation gradients (and with weights, its
 * parameters' gradients) against the reference from parameters P, R
 * allocated and left filled; the tolerance on their relative errors.
 * 0, CAL_EVERIFY, CAL_ENOMEM. */
int cal_train_check(const cal_train_t *T, const double *P, cal_train_ref_t *R,
                    int weights);
double cal_train_tolerance(const cal_train_t *T);
/* An AdamW step of h at step `step` from p0, m0, v0 and grad to p1, m1,
 * v1 (n each) recomputed in double.  0 or CAL_EVERIFY. */
int cal_train_verify_adamw(const cal_adamw_t *h, int64_t step,
                           const float *p0, const float *m0, const float *v0,
                           const float *grad, const float *p1,
                           const float *m1, const float *v1, size_t n);

/* Bytes of T's buffers (what a step touches; the verification's are
 * apart), counted from the sizes setup allocated. */
double cal_train_buffer_bytes(const cal_train_t *T);

/* A stack of layers trained as a model's body: layer l's input rows are
 * layer l - 1's output (the same buffer), its upstream gradient layer
 * l + 1's dx; the top layer's dy and the bottom's x as a single layer's.
 * A step runs every forward, every backward from the top, then every
 * update; verification checks the bottom and the top layer against the
 * double composition from their own inputs (the top's input is the whole
 * stack's forward, the bottom's upstream gradient the whole backward's;
 * a model's depth of double-precision steps would cost minutes).  The
 * kernels layer_train and layer_train_bf16 are a stack of
 * cal_params_t.layers layers (0 or 1: one). */
typedef struct cal_train_stack {
  int n;
  cal_train_t **T;
} cal_train_stack_t;

int cal_train_stack_create(const cal_layer_shape_t *s, int layers,
                           uint64_t seed, cal_engine_t engine,
                           cal_train_stack_t **out);
void cal_train_stack_free(cal_train_stack_t *S);
/* The stack re-made for another batch: every layer's masters, moments and
 * step count kept, what depends on the batch allocated and drawn anew as
 * create draws it (the kernel's reshape).  0; CAL_EUNSUPP for LoRA
 * adapters (the stack unchanged); CAL_EINVAL, CAL_ENOMEM (then only
 * cal_train_stack_free may follow). */
int cal_train_stack_reshape(cal_train_stack_t *S, int64_t batch);
int cal_train_stack_step(cal_train_stack_t *S);
/* The kernel's verify: the bottom layer's step once more from what the
 * stack's last step left it (its input rows, the upstream gradient from
 * the layer above), its inputs saved and checked (cal_train_verify), then
 * the top layer's the same way on the bottom's new output where they are
 * neighbours: two layers' steps, not the stack's.  0, CAL_EVERIFY,
 * CAL_ENOMEM. */
int cal_train_stack_verify(cal_train_stack_t *S);
/* The last step's bottom and top layers checked (each must have saved its
 * inputs). */
int cal_train_stack_check(const cal_train_stack_t *S);
/* Bytes a stack of `layers` allocates (the verification's once). */
double cal_train_stack_mem_bytes(const cal_layer_shape_t *s, int layers);

/* Analytic FLOPs of a step (3 × forward) and bytes setup allocates. */
double cal_train_flops(const cal_layer_shape_t *s);
double cal_train_mem_bytes(const cal_layer_shape_t *s);
/* Bytes of the activations the step keeps for backward (saved forward
 * buffers; the model the sweep's activation figure states). */
double cal_train_saved_bytes(const cal_layer_shape_t *s);

#endif
