/* The small-batch decode step (see layer.h, CAL_LAYER_GEMV_MAX_BATCH): the
 * whole layer on one OpenMP team.  Decode at a small batch is bound by
 * reading the weights, so every weight matrix is streamed once per step:
 * each thread owns a block of output columns of every matrix and runs the
 * variant's GEMV (layer_gemv.h) over it, with what can be fused into that
 * block done there (SiLU·up, writing q, k and v straight to their
 * places).  The weights are packed in blocks of columns, each block one
 * stream (layer_gemv.h), in fp32 with an AVX2 or AVX-512 variant and as
 * below in bf16; with row-major weights (the portable variant), the two
 * projections back to the hidden size, whose columns are few, go by
 * blocks of rows instead, each thread's partial sums added with the
 * residual after a barrier.  Per step: one parallel region, at most six
 * barriers, no allocation.  A bf16 layer streams bf16 weights (half the
 * bytes), packed for the dot-product instruction on a CPU with
 * AVX512_BF16 (layer_gemv.h; that product rounds its input rows to bf16
 * itself; the others' rows are rounded first, each thread in its own);
 * its KV cache is bf16 too (the new token's k and v rounded into it),
 * attended in bf16. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "cal_err.h"
#include "cal_mem.h"
#include "cal_isa.h"
#include "layer_internal.h"
#include "train_vec.h"

void cal_layer_matrix_dims(const cal_layer_t *L, int i, int64_t *K,
                           int64_t *ldw) {
  const int64_t d = L->s.hidden, f = L->s.ffn, hq = L->s.heads * L->l.hd;
  const int64_t dims[CAL_LAYER_NMM][2] = {
      {d, L->l.nqkv}, {hq, d}, {d, 2 * f}, {f, d}};
  *K = dims[i][0];
  *ldw = dims[i][1];
}

/* y = x·W_i[k0 .. k0+kn, c0 .. c0+n) for every sequence (x: the rows
 * from column k0) on the calling thread: packed bf16, bf16, packed fp32
 * or fp32, the form the layer holds. */
static void product(const cal_layer_t *L, int i, const float *x, int64_t ldx,
                    int64_t k0, int64_t kn, int64_t c0, int64_t n, float *y,
                    int64_t ldy) {
  const float *const w[CAL_LAYER_NMM] = {L->wqkv, L->wo, L->wgu, L->wd};
  const uint16_t *const w16[CAL_LAYER_NMM] = {L->wqkv16, L->wo16, L->wgu16,
                                              L->wd16};
  int64_t K, ldw;
  cal_layer_matrix_dims(L, i, &K, &ldw);
  if (L->wpf[i]) {
    L->gemvp(x, ldx, L->s.batch, L->wpf[i], K, k0, kn, c0, n, y, ldy);
    return;
  }
#ifdef CAL_HAVE_X86_SIMD
  if (L->wp[i]) {
    cal_gemv_bf16_packed(x, ldx, L->s.batch, L->wp[i], K, k0, kn, c0, n, y,
                         ldy);
    return;
  }
#endif
  if (L->s.bf16)
    L->gemv16(x, ldx, L->s.batch, kn, w16[i] + k0 * ldw + c0, ldw, n, NULL,
              0, y, ldy);
  else
    L->gemv(x, ldx, L->s.batch, kn, w[i] + k0 * ldw + c0, ldw, n, NULL, 0, y,
            ldy);
}

int cal_layer_path_team(const cal_layer_shape_t *s, const char *path) {
  if (path && strcmp(path, "gemv") && strcmp(path, "blas"))
    return CAL_EINVAL;
  if (path && strcmp(path, "gemv") == 0 && !s->decode)
    return CAL_EINVAL; /* the one-team path is a decode step */
  if (!path)
    path = cal_layer_matrix_path(s); /* the shape's rule */
  return strcmp(path, "gemv") == 0;
}

int cal_layer_team_setup(cal_layer_t *L, const char *path) {
  int team = cal_layer_path_team(&L->s, path);
  if (team <= 0)
    return team;
  L->team = 1;
  L->nthreads = omp_get_max_threads();
  L->gemv = cal_gemv_for(L->variant);
  L->gemv16 = cal_gemv_bf16_for(L->variant);
  if (!L->gemv || !L->gemv16)
    return CAL_EUNSUPP;
  snprintf(L->impl, sizeof L->impl, "gemv %s", L->s.bf16 ? "bf16" : "fp32");
  return 0;
}

int cal_layer_packs_f32(const cal_layer_t *L) {
  return L->team && !L->s.bf16 && cal_gemv_packed_for(L->variant);
}

float *cal_layer_weight_f32(cal_layer_t *L, int i, int64_t k, int64_t j) {
  float *const w[CAL_LAYER_NMM] = {L->wqkv, L->wo, L->wgu, L->wd};
  int64_t K, n;
  cal_layer_matrix_dims(L, i, &K, &n);
  if (L->wpf[i])
    return L->wpf[i] + cal_gemv_packed_f32_off(K, k, j);
  return w[i] ? w[i] + k * n + j : NULL;
}

int cal_layer_pack_weights(cal_layer_t *L, float *tmp) {
  const int f32 = cal_layer_packs_f32(L);
  if (!L->team || !(f32 || cal_gemv_packed_ok(L->variant)))
    return 0;
  snprintf(L->impl, sizeof L->impl, "gemv %s packed", f32 ? "fp32" : "bf16");
  if (f32) { /* made packed (cal_layer_create) */
    L->gemvp = cal_gemv_packed_for(L->variant);
    return 0;
  }
  uint16_t **w16[CAL_LAYER_NMM] = {&L->wqkv16, &L->wo16, &L->wgu16,
                                   &L->wd16};
  for (int i = 0; i < CAL_LAYER_NMM; i++) {
    int64_t K, n;
    cal_layer_matrix_dims(L, i, &K, &n);
    if (!(L->wp[i] = cal_alloc(4 * cal_gemv_packed_words(K, n))))
      return CAL_ENOMEM;
    for (int64_t e = 0; e < K * n; e++)
      tmp[e] = cal_bf16_to_f32((*w16[i])[e]);
    cal_gemv_pack_bf16(tmp, n, K, n, L->wp[i]);
    cal_free(*w16[i]);
    *w16[i] = NULL;
  }
  return 0;
}

/* Rows of x rounded to bf16 in place (bf16 layers; n values). */
static void round_bf16(float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    x[i] = cal_bf16_round(x[i]);
}

/* The input rows of a product for this thread: x itself (fp32, or bf16
 * over packed weights, whose product rounds them), or the thread's own
 * copy rounded to bf16. */
static const float *input_rows(const cal_layer_t *L, const float *x,
                               int64_t n, int t) {
  if (!L->s.bf16 || L->wp[0]) /* packed: the product rounds its input */
    return x;
  const int64_t hq = L->s.heads * L->l.hd, f = L->s.ffn;
  float *own = L->xteam + (size_t)t * (size_t)(L->s.batch * (hq > f ? hq : f));
  for (int64_t i = 0; i < n; i++)
    own[i] = cal_bf16_round(x[i]);
  return own;
}

/* Columns [*c0, *c1) of n for thread t of nt: equal blocks rounded to 16
 * floats (a cache line) so that no two threads write the same line. */
static void columns(int64_t n, int t, int nt, int64_t *c0, int64_t *c1) {
  int64_t per = (n + nt - 1) / nt;
  per = (per + 15) / 16 * 16;
  *c0 = (int64_t)t * per < n ? (int64_t)t * per : n;
  *c1 = *c0 + per < n ? *c0 + per : n;
}

/* Where QKV column c goes: *y (row 0) and *ldy (between sequences), and
 * the end of the run of columns that go to consecutive places.  Query head
 * columns go to q [batch][H][1][hd], key and value head columns to the
 * cache slot of the new token (position seq). */
static int64_t qkv_dest(const cal_layer_t *L, int64_t c, float **y,
                        int64_t *ldy) {
  const int64_t hd = L->l.hd, H = L->s.heads, G = L->s.kv_heads;
  const int64_t hq = H * hd, lk = L->l.lk, pos = L->pos;
  if (c < hq) {
    *y = L->q + c;
    *ldy = hq;
    return hq;
  }
  int64_t kv = (c - hq) / (G * hd), g = (c - hq) % (G * hd) / hd;
  int64_t e = (c - hq) % hd;
  *y = (kv ? L->vc : L->kc) + (g * lk + pos) * hd + e;
  *ldy = G * lk * hd;
  return hq + (kv * G + g + 1) * hd;
}

/* A bf16 decode layer: q, k, v = h·Wqkv over columns [c0, c1) into the
 * rows of qkv, then rounded to bf16 into q16 and the new token's slot of
 * the bf16 cache. */
static void qkv_cols16(const cal_layer_t *L, const float *h, int64_t c0,
                       int64_t c1) {
  const int64_t d = L->s.hidden, nqkv = L->l.nqkv, hd = L->l.hd;
  const int64_t hq = L->s.heads * hd, G = L->s.kv_heads, lk = L->l.lk;
  product(L, CAL_LAYER_QKV, h, d, 0, d, c0, c1 - c0, L->qkv + c0, nqkv);
  for (int64_t b = 0; b < L->s.batch; b++)
    for (int64_t c = c0; c < c1; c++) {
      uint16_t v = cal_f32_to_bf16(L->qkv[b * nqkv + c]);
      if (c < hq) {
        L->q16[b * hq + c] = v;
        continue;
      }
      int64_t kv = (c - hq) / (G * hd), g = (c - hq) % (G * hd) / hd;
      (kv ? L->vc16 : L->kc16)[((b * G + g) * lk + L->pos) * hd +
                               (c - hq) % hd] = v;
    }
}

/* q, k, v = h·Wqkv over this thread's columns, written in place. */
static void qkv_cols(const cal_layer_t *L, const float *h, int t, int nt) {
  const int64_t d = L->s.hidden, nqkv = L->l.nqkv;
  int64_t c0, c1;
  columns(nqkv, t, nt, &c0, &c1);
  if (L->cache16) {
    if (c0 < c1)
      qkv_cols16(L, h, c0, c1);
    return;
  }
  while (c0 < c1) {
    float *y;
    int64_t ldy, end = qkv_dest(L, c0, &y, &ldy);
    if (end > c1)
      end = c1;
    product(L, CAL_LAYER_QKV, h, d, 0, d, c0, end - c0, y, ldy);
    c0 = end;
  }
}

/* a = SiLU(h·Wg) ⊙ (h·Wu) over this thread's n columns of the MLP: the
 * gate's and the up's columns side by side in the thread's stretch of
 * each row of gu, then the training step's SwiGLU of a row (vector e^x
 * where the layer's variant is AVX-512). */
static void gate_up_cols(const cal_layer_t *L, const float *h, int t, int nt) {
  const int64_t d = L->s.hidden, f = L->s.ffn, B = L->s.batch;
  int64_t j0, j1;
  columns(f, t, nt, &j0, &j1);
  if (j0 >= j1)
    return;
  const int64_t n = j1 - j0;
  float *gu = L->gu + 2 * j0; /* [gate n | up n] in each row */
  product(L, CAL_LAYER_GU, h, d, 0, d, j0, n, gu, 2 * f);
  product(L, CAL_LAYER_GU, h, d, 0, d, f + j0, n, gu + n, 2 * f);
  const cal_train_vec_t *vec = cal_train_vec_for(L->variant);
  if (!vec)
    vec = cal_train_vec_for(CAL_VARIANT_SCALAR);
  for (int64_t b = 0; b < B; b++)
    vec->swiglu(gu + b * 2 * f, n, L->a + b * f + j0);
}

/* y = res + x·W over this thread's columns, W packed: a block of columns
 * is one stretch of the packed matrix (every row of its 16 or 32 columns), so
 * the row split below would cut each block's stream into a piece a
 * thread, every piece a start the prefetch has not reached. */
static void proj_cols(const cal_layer_t *L, const float *x, int64_t k,
                      int mi, const float *res, float *y, int t, int nt) {
  const int64_t d = L->s.hidden, B = L->s.batch;
  int64_t c0, c1;
  columns(d, t, nt, &c0, &c1);
  if (c0 >= c1)
    return;
  product(L, mi, x, k, 0, k, c0, c1 - c0, y + c0, d);
  for (int64_t b = 0; b < B; b++)
    for (int64_t c = c0; c < c1; c++)
      y[b * d + c] += res[b * d + c];
}

/* y = res + x·W, W k x d (not packed).  Its d columns are few (the hidden size), so
 * a block of columns a thread would be a few cache lines of every row:
 * streams too short for the prefetchers (batch-1 decode read 0.64 of the
 * memory's rate that way).  Each thread takes a block of W's rows
 * instead, one stretch of memory, into partial sums over all d columns
 * in its rows of hteam (free between the products), and after a barrier
 * sums the team's partials over its columns. */
static void proj_rows(const cal_layer_t *L, const float *x, int64_t k,
                      int mi, const float *res, float *y, int t, int nt) {
  const int64_t d = L->s.hidden, B = L->s.batch;
  int64_t r0, r1;
  columns(k, t, nt, &r0, &r1); /* rows, in blocks of 16 */
  float *part = L->hteam + (size_t)t * (size_t)(B * d);
  if (r0 < r1) {
    x = input_rows(L, x, B * k, t);
    product(L, mi, x + r0, k, r0, r1 - r0, 0, d, part, d);
  } else {
    for (int64_t i = 0; i < B * d; i++)
      part[i] = 0.0f;
  }
#pragma omp barrier
  int64_t c0, c1;
  columns(d, t, nt, &c0, &c1);
  for (int64_t b = 0; b < B; b++)
    for (int64_t c = c0; c < c1; c++) {
      float sum = res[b * d + c];
      for (int u = 0; u < nt; u++)
        sum += L->hteam[((size_t)u * (size_t)B + (size_t)b) * (size_t)d + c];
      y[b * d + c] = sum;
    }
}

/* y = res + x·W_mi, split as the weights' form wants it. */
static void proj(const cal_layer_t *L, const float *x, int64_t k, int mi,
                 const float *res, float *y, int t, int nt) {
  if (L->wp[mi] || L->wpf[mi])
    proj_cols(L, x, k, mi, res, y, t, nt);
  else
    proj_rows(L, x, k, mi, res, y, t, nt);
}

int cal_layer_run_team(cal_layer_t *L) {
  const int64_t d = L->s.hidden, f = L->s.ffn, B = L->s.batch;
  const int64_t hq = L->s.heads * L->l.hd;
  int rc = 0;
#pragma omp parallel num_threads(L->nthreads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    float *h = L->hteam + (size_t)t * (size_t)(B * d);
    cal_layer_rmsnorm_rows(L->x, L->g1, h, B, d); /* per thread, own buffer */
    if (L->s.bf16 && !L->wp[0])
      round_bf16(h, B * d);
    qkv_cols(L, h, t, nt);
#pragma omp barrier
    /* the same answer on every thread, so all or none reach its barrier */
    int arc = cal_layer_attend_decode(L);
    if (arc == 0) {
      /* x1 = x + o·Wo */
      proj(L, L->o, hq, CAL_LAYER_O, L->x, L->x1, t, nt);
#pragma omp barrier
      cal_layer_rmsnorm_rows(L->x1, L->g2, h, B, d);
      if (L->s.bf16 && !L->wp[0])
        round_bf16(h, B * d);
      gate_up_cols(L, h, t, nt);
#pragma omp barrier
      /* out = x1 + a·Wd */
      proj(L, L->a, f, CAL_LAYER_DOWN, L->x1, L->out, t, nt);
    } else if (t == 0) {
      rc = arc;
    }
  }
  return rc;
}
