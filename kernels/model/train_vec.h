/* The training step's elementwise loops, written once portably
 * (train_vec.c), once in AVX2 + FMA (isa/train_avx2.c) and once in AVX-512
 * (isa/train_avx512.c), chosen by the CPU's feature bits (CALIBRATE_ISA
 * caps the choice):
 *
 *   AdamW      one pass over masters, moments and gradients writing the
 *              new masters, moments and (bf16 steps) the masters rounded
 *              to bf16: 28 bytes an element read and written (30 with
 *              the bf16 copy), non-temporal stores where the outputs are
 *              aligned (they are read again only by the next step)
 *   SwiGLU     the MLP's gate of one row of tokens and its backward
 *   rows       the LM head's softmax over a chunk of a row of logits: the
 *              row's maximum, e = exp(l - shift) with its sum (stored as
 *              fp32, or fp16 to halve a kept chunk's bytes), and e·scale
 *              into fp32 or rounded to bf16 (the products' input)
 *
 * exp (AVX2, AVX-512): the attention loops' vector e^x (attention_softmax_impl.h:
 * 2^n · a degree-6 polynomial of r = x - n·ln 2), relative error within
 * 3e-7 of exp in double for x in [-87, 0] (the unit test holds it there);
 * 0 below -87. */
#ifndef CAL_TRAIN_VEC_H
#define CAL_TRAIN_VEC_H

#include <stddef.h>
#include <stdint.h>

/* AdamW's constants at one step (cal_adamw_consts). */
typedef struct cal_adamw_k {
  float b1, b2, ob1, ob2, c1, c2, lr, eps, decay;
} cal_adamw_k_t;

/* AdamW over elements [0, n) on the calling thread: m2 = b1·m + (1-b1)·g,
 * v2 = b2·v + (1-b2)·g², p2 = p·decay - lr·(m2·c1)/(sqrt(v2·c2) + eps),
 * and p16 = p2 rounded to bf16 (cal_f32_to_bf16) unless p16 is NULL. */
typedef void (*cal_adamw_fn)(const cal_adamw_k_t *k, const float *p,
                             const float *m, const float *v, const float *g,
                             float *p2, float *m2, float *v2, uint16_t *p16,
                             size_t n);

typedef struct cal_train_vec {
  const char *name;   /* "scalar", "avx2" or "avx512" */
  int fp16;           /* row_exp and row_scale take fp16 e */
  cal_adamw_fn adamw;
  /* max of l[0..n) */
  float (*row_max)(const float *l, int64_t n);
  /* e[j] = exp(l[j] - shift) into e32 (may be l) or e16 (fp16; only
   * when fp16), either or both NULL; returns the sum of e in fp32 */
  float (*row_exp)(const float *l, int64_t n, float shift, float *e32,
                   uint16_t *e16);
  /* g[j] = e[j]·scale from e32 or (when fp16) e16, into g32 (may be e32)
   * or rounded to bf16 into g16 */
  void (*row_scale)(const float *e32, const uint16_t *e16, int64_t n,
                    float scale, float *g32, uint16_t *g16);
  /* SwiGLU of one row, gu = [gate f | up f]: a = silu(gate)·up, and its
   * backward from da into dgu = [dgate | dup] */
  void (*swiglu)(const float *gu, int64_t f, float *a);
  void (*swiglu_bwd)(const float *gu, const float *da, int64_t f,
                     float *dgu);
} cal_train_vec_t;

/* The best table this CPU runs (AVX-512 F/BW/VL/DQ, else AVX2 + FMA, else
 * portable), at most the variant CALIBRATE_ISA names. */
const cal_train_vec_t *cal_train_vec(void);
/* A variant's table (cal_isa_variant_t), NULL where this build or CPU has
 * none. */
const cal_train_vec_t *cal_train_vec_for(int variant);

/* AdamW's constants for hyper-parameters lr, betas, eps and weight decay
 * at step >= 1. */
cal_adamw_k_t cal_adamw_consts(double lr, double beta1, double beta2,
                               double eps, double weight_decay, int64_t step);
/* The AdamW pass of vec over n elements on the OpenMP team (each thread a
 * contiguous, 64-byte aligned range). */
void cal_adamw_pass(const cal_train_vec_t *vec, const cal_adamw_k_t *k,
                    const float *p, const float *m, const float *v,
                    const float *g, float *p2, float *m2, float *v2,
                    uint16_t *p16, size_t n);
/* Bytes one AdamW pass moves per element: read p, m, v, g; write p2, m2,
 * v2 (and p16). */
double cal_adamw_bytes(int bf16_copy);

/* The two sets of an AdamW state of n floats each (masters p, moments m
 * and v; a step reads one set and writes the other), 64-byte aligned:
 * 0, or CAL_ENOMEM with what was allocated left to cal_adamw_sets_free. */
int cal_adamw_sets_alloc(float *p[2], float *m[2], float *v[2], size_t n);
/* Frees both sets (NULL entries accepted). */
void cal_adamw_sets_free(float *p[2], float *m[2], float *v[2]);

/* A variant's AdamW over whole cache lines of outputs from element i
 * (streamed, and fenced before it returns, when nt): where it stopped. */
typedef size_t (*cal_adamw_body_fn)(const cal_adamw_k_t *k, const float *p,
                                    const float *m, const float *v,
                                    const float *g, float *p2, float *m2,
                                    float *v2, uint16_t *p16, size_t i,
                                    size_t n, int nt);
/* AdamW (cal_adamw_fn) through a variant's body: the elements before p2's
 * first cache line and those after the body's last portably, streamed
 * where every output is aligned from there. */
void cal_adamw_by_lines(cal_adamw_body_fn body, const cal_adamw_k_t *k,
                        const float *p, const float *m, const float *v,
                        const float *g, float *p2, float *m2, float *v2,
                        uint16_t *p16, size_t n);

/* The portable loops (train_vec.c) and the AVX-512 ones (only where
 * cal_variant_supported(CAL_VARIANT_AVX512)). */
void cal_adamw_scalar(const cal_adamw_k_t *k, const float *p, const float *m,
                      const float *v, const float *g, float *p2, float *m2,
                      float *v2, uint16_t *p16, size_t n);
void cal_adamw_avx512(const cal_adamw_k_t *k, const float *p, const float *m,
                      const float *v, const float *g, float *p2, float *m2,
                      float *v2, uint16_t *p16, size_t n);
float cal_row_max_avx512(const float *l, int64_t n);
float cal_row_exp_avx512(const float *l, int64_t n, float shift, float *e32,
                         uint16_t *e16);
void cal_row_scale_avx512(const float *e32, const uint16_t *e16, int64_t n,
                          float scale, float *g32, uint16_t *g16);
void cal_swiglu_avx512(const float *gu, int64_t f, float *a);
void cal_swiglu_bwd_avx512(const float *gu, const float *da, int64_t f,
                           float *dgu);
/* The AVX2 + FMA ones (only where cal_variant_supported(CAL_VARIANT_AVX2)). */
void cal_adamw_avx2(const cal_adamw_k_t *k, const float *p, const float *m,
                    const float *v, const float *g, float *p2, float *m2,
                    float *v2, uint16_t *p16, size_t n);
float cal_row_max_avx2(const float *l, int64_t n);
float cal_row_exp_avx2(const float *l, int64_t n, float shift, float *e32,
                       uint16_t *e16);
void cal_row_scale_avx2(const float *e32, const uint16_t *e16, int64_t n,
                        float scale, float *g32, uint16_t *g16);
void cal_swiglu_avx2(const float *gu, int64_t f, float *a);
void cal_swiglu_bwd_avx2(const float *gu, const float *da, int64_t f,
                         float *dgu);

#endif
