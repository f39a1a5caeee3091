/* Between the layer's files (layer.c: shapes, setup and the BLAS path;
 * layer_reshape.c: the part of the setup that depends on the batch, and
 * the reshape that re-makes it; layer_decode.c: the small-batch decode
 * step; layer_verify.c: the double-precision reference).  Not a public
 * header; tests may use it to reach the state of a set-up layer. */
#ifndef CAL_LAYER_INTERNAL_H
#define CAL_LAYER_INTERNAL_H

#include <stdint.h>

#include "engine.h"
#include "layer.h"
#include "layer_gemv.h"

#define CAL_LAYER_RMS_EPS 1e-6f

/* Every buffer of a layer, in elements: weights w_f (4 bytes each in fp32,
 * 2 in bf16, but the two norm gains, norm_f, always fp32), fp32
 * activations act_f, the bf16 copies of the products' inputs act16 (bf16
 * layers only), the KV cache kv_f (kv_b bytes each: 2 in a bf16 decode
 * layer, whose cache is bf16, else 4), the reference's doubles ref_d. */
typedef struct cal_layer_layout {
  int64_t hd, nqkv, lq, lk, tokens;
  double w_f, norm_f, act_f, act16, kv_f, kv_b, ref_d, ws_bytes;
} cal_layer_layout_t;

void cal_layer_layout(const cal_layer_shape_t *s, cal_layer_layout_t *l);

/* A set-up layer (the kernel's state).  Weights are row-major [in][out]:
 * wqkv [hidden][nqkv] (q heads, then k heads, then v heads), wo [H·hd]
 * [hidden], wgu [hidden][2·ffn] (gate columns, then up), wd [ffn][hidden].
 * Activations are token rows; q, o [batch][heads][lq][hd]; kc, vc
 * [batch][kv_heads][lk][hd].
 *
 * A bf16 layer (s.bf16) holds its four weight matrices in bf16 only
 * (w*16; the fp32 pointers are NULL) and rounds each product's input rows
 * to bf16 (h, ao and a: into h16, ao16, a16 on the BLAS path, in the
 * team's own rows on the team path); everything else is fp32, but for a
 * bf16 decode layer's KV cache (cache16): kc16, vc16 [batch][kv_heads]
 * [lk][hd] are its own cache (kc, vc NULL), the new token's k and v
 * rounded into it, and q rounded into q16 for the attention (variant
 * attn16), which reads them in place. */
enum { CAL_LAYER_QKV, CAL_LAYER_O, CAL_LAYER_GU, CAL_LAYER_DOWN, CAL_LAYER_NMM };

typedef struct cal_layer {
  cal_layer_shape_t s;
  cal_layer_layout_t l;
  int variant;        /* SIMD variant of attention and the GEMV */
  int team;           /* 1: run by cal_layer_run_team */
  int borrowed;       /* 1: the activations, workspace, team rows and
                         bf16 scratch are another layer's (cal_layer_create's
                         share), set before any of them is reached so that
                         a failed setup frees none of share's */
  int nthreads;       /* the team's size (rows of hteam) */
  cal_gemv_fn gemv;   /* the variant's GEMV (team path, fp32) */
  cal_gemv_bf16_fn gemv16; /* the same over bf16 weights */
  cal_engine_t engine; /* BLAS path: OpenBLAS or oneDNN */
  const cal_engine_row_t *eng; /* its row: the products' functions */
  void *mm[CAL_LAYER_NMM]; /* one product each, the engine's */
  char impl[160];     /* what ran the products (kernel impl_name) */
  uint64_t seed;
  int64_t pos;        /* decode: the new token's cache slot (layer.h) */
  float *wqkv, *wo, *wgu, *wd, *g1, *g2;
  uint16_t *wqkv16, *wo16, *wgu16, *wd16;
  /* a bf16 layer on the team path where the CPU has AVX512_BF16: the four
   * matrices packed (cal_gemv_bf16_packed; w*16 then NULL) */
  uint32_t *wp[CAL_LAYER_NMM];
  /* an fp32 layer on the team path with an AVX2 or AVX-512 variant: the
   * four matrices packed in blocks of 16 columns (cal_gemv_packed_for,
   * gemvp; wqkv, wo, wgu, wd then NULL) */
  float *wpf[CAL_LAYER_NMM];
  cal_gemv_packed_fn gemvp;
  float *x, *h, *out, *x1, *qkv, *q, *o, *ao, *gu, *a, *kc, *vc;
  uint16_t *h16, *ao16, *a16;
  /* bf16 prefill: attention in bf16 (attn16: its variant, -1: fp32) on
   * q, kc, vc rounded into q16, kc16, vc16; bf16 decode (cache16 = 1):
   * attention in bf16 always (the portable variant where the CPU has no
   * bf16 dot product) on q16 and the bf16 cache */
  int attn16, cache16;
  uint16_t *q16, *kc16, *vc16;
  float *hteam;       /* team path: per thread, the normalised rows
                         [nthreads][batch][hidden] */
  float *xteam;       /* team path in bf16: per thread, o or a rounded to
                         bf16 [nthreads][batch][max(H·hd, ffn)] */
  void *ws;
} cal_layer_t;

/* Set up a layer for p (p->decode, p->path, p->engine as the kernels
 * read them) in fp32 or bf16.  With share (a layer of the same shape and
 * path, set up first and freed last), the activations, the attention's
 * workspace, the team's rows and the bf16 scratch are share's: a model's
 * layers, run one at a time, own only their weights, gains and KV cache.
 * The seed draws the weights, the gains, the KV cache and the input rows
 * (x, which a borrowing layer overwrites in share's).  0, CAL_EINVAL,
 * CAL_EUNSUPP, CAL_ENOMEM. */
int cal_layer_create(const cal_params_t *p, int bf16, const cal_layer_t *share,
                     cal_layer_t **out);
void cal_layer_free(cal_layer_t *L);

/* The layer's shape from p (bf16 as given), its layout, and a decode
 * layer's new token at slot seq: set first by setup and by the reshape. */
void cal_layer_set_shape(cal_layer_t *L, const cal_params_t *p, int bf16);
/* What depends on the batch (layer_reshape.c), made once the weights are:
 * the KV cache, the activations, workspace, team rows and bf16 scratch
 * (share's where L borrows, share then required), each sequence's input
 * rows and cache drawn, the output poisoned, and on the BLAS path the
 * engine's products bound to them.  0, CAL_EINVAL (share missing or of
 * another shape or path), CAL_ENOMEM or the engine's error. */
int cal_layer_batch_setup(cal_layer_t *L, cal_engine_t engine,
                          const cal_layer_t *share);
/* Frees what cal_layer_batch_setup made (a borrowing layer drops share's
 * buffers without freeing them), the pointers left NULL. */
void cal_layer_batch_free(cal_layer_t *L);
/* Whether L can be re-made for p, whose shape differs from L's in the
 * batch alone: 0; CAL_EUNSUPP where p's batch runs the other path (the
 * team's GEMV or the engine's GEMM, which hold the weights in other
 * forms); CAL_EINVAL for another shape.  Changes nothing. */
int cal_layer_reshape_check(const cal_layer_t *L, const cal_params_t *p);
/* L made to run p's batch (checked as above first: on an error there L is
 * unchanged): its weights and gains kept, its batch part re-made as setup
 * makes it (share: as for cal_layer_create, already reshaped).  After
 * another error L may only be freed. */
int cal_layer_reshape(cal_layer_t *L, const cal_params_t *p,
                      const cal_layer_t *share);
/* One forward pass from x into out (and the new token's K and V into the
 * cache in decode).  0, or an engine's or the attention's error. */
int cal_layer_run(cal_layer_t *L);

/* Whether shape s runs on the team (1) or the BLAS path (0): path
 * "gemv" or "blas", or (NULL) the shape's rule; CAL_EINVAL for an unknown
 * path or "gemv" in prefill (layer_decode.c). */
int cal_layer_path_team(const cal_layer_shape_t *s, const char *path);
/* The small-batch decode path (layer_decode.c): one OpenMP team and our
 * matrix-vector products, where cal_layer_path_team says so; its size and
 * GEMVs (its rows, which depend on the batch, are cal_layer_batch_setup's).
 * CAL_EINVAL as cal_layer_path_team, CAL_EUNSUPP. */
int cal_layer_team_setup(cal_layer_t *L, const char *path);
/* Rows K and columns (row stride) n of weight matrix i (layer_decode.c). */
void cal_layer_matrix_dims(const cal_layer_t *L, int i, int64_t *K,
                           int64_t *n);
/* Whether an fp32 layer holds its matrices packed in blocks of 16
 * columns (wpf): on the team path with an AVX2 or AVX-512 variant.  Its
 * setup then makes them packed (cal_gemv_fill_packed_f32), with no
 * row-major copy. */
int cal_layer_packs_f32(const cal_layer_t *L);
/* A layer on the team path (layer_decode.c): in bf16 where the CPU has
 * AVX512_BF16, each weight matrix packed for the dot-product instruction
 * (layer_gemv.h, wp), staged through tmp (fp32, as large as the largest
 * matrix), its row-major copy freed; in fp32, made packed already
 * (cal_layer_packs_f32), the packed GEMV chosen.  Other layers as they
 * are.  0 or CAL_ENOMEM. */
int cal_layer_pack_weights(cal_layer_t *L, float *tmp);
/* Where weight (k, j) of an fp32 layer's matrix i is, in whichever form
 * it holds (tests change single weights through it); NULL in bf16. */
float *cal_layer_weight_f32(cal_layer_t *L, int i, int64_t k, int64_t j);

/* One decode step on a single OpenMP team (layer_decode.c): matrix-vector
 * products over each thread's columns, attention shared by the team, four
 * barriers, no allocation.  0, or the attention's error. */
int cal_layer_run_team(cal_layer_t *L);

/* The kernel's verify (layer_verify.c): sequences 0 and batch - 1 against
 * a double-precision composition.  0, CAL_EVERIFY or CAL_ENOMEM. */
int cal_layer_verify(void *state);

/* Decode attention (layer_grow.c): over the full cache, or over a
 * growing one filled up to L->pos (of l.lk slots), in fp32 or, for a
 * bf16 decode layer, in bf16 on q16 and the bf16 cache.  Called by every
 * thread of the layer's team, or outside a parallel region (it opens its
 * own).  0, CAL_EINVAL or CAL_EUNSUPP, the same on every thread. */
int cal_layer_attend_decode(const cal_layer_t *L);

/* y = RMSNorm(x)·g for `rows` rows of d, on the calling thread. */
void cal_layer_rmsnorm_rows(const float *x, const float *g, float *y,
                            int64_t rows, int64_t d);

#endif
