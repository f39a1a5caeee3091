/* The training step's causal attention, forward and backward (see
 * layer_train.h), in blocks of CAL_TRAIN_QB query rows.
 *
 * fp32: a block's scores against the keys up to its last row (the causal
 * part) are one matrix, so the products are sgemm calls (one thread each:
 * OpenBLAS runs a call made inside a parallel region on the calling
 * thread) and only the softmax is elementwise.  A thread's scratch
 * (T->scratch) holds two such blocks.
 *
 * bf16: Q, K, V and the output's gradient dO rounded to bf16 once per
 * step into per-head copies [batch][head][lqp][hd] (rows past seq zero,
 * lqp a multiple of the block), so every product is one of three fixed
 * shapes over square blocks of keys, run on the step's bf16 engine (a
 * oneDNN matmul per thread and shape, made for one thread and pointed at
 * each block's operands; or OpenBLAS's sbgemm): scores S = Q·Kᵀ and
 * dP = dO·Vᵀ, O = P·V and dQ = dS·K accumulated over the key blocks, dV
 * and dK accumulated as Pᵀ·dO and dSᵀ·Q.  The probabilities P and the
 * score gradients dS are rounded to bf16 for their products; scores,
 * softmax, its log-sum-exp and every accumulation stay fp32.  A block's
 * scores are kept by key block, [block][QB][QB]. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_mem.h"
#include "layer_train.h"
#include "layer_train_internal.h"

enum { QB = CAL_TRAIN_QB };

/* ---- fp32 */

static void attn_sgemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                       int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b,
                       int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k,
              alpha, a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

static float *attn_scratch(const cal_train_t *T) {
  return T->scratch +
         (size_t)omp_get_thread_num() * 2 * CAL_TRAIN_QB * (size_t)T->s.seq;
}

/* Causal attention of every (sequence, head) over qkv's token rows into
 * ao; each query row's log-sum-exp into lse [b][h][i]. */
static void attention_fwd(cal_train_t *T) {
  const int64_t B = T->s.batch, H = T->s.heads, G = T->s.kv_heads;
  const int64_t lq = T->s.seq, hd = T->hd, nqkv = T->nqkv, hq = T->hq;
  const float scale = 1.0f / sqrtf((float)hd);
#pragma omp parallel num_threads(T->nthr)
  {
    float *p = attn_scratch(T);
#pragma omp for schedule(dynamic, 1) collapse(3)
    for (int64_t b = 0; b < B; b++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t i0 = 0; i0 < lq; i0 += CAL_TRAIN_QB) {
          const int64_t g = h / (H / G);
          const int64_t n = lq - i0 < CAL_TRAIN_QB ? lq - i0 : CAL_TRAIN_QB;
          const int64_t kn = i0 + n; /* keys 0..kn-1 */
          const float *base = T->qkv + b * lq * nqkv;
          const float *q = base + i0 * nqkv + h * hd;
          const float *k = base + (H + g) * hd, *v = base + (H + G + g) * hd;
          attn_sgemm(CblasNoTrans, CblasTrans, n, kn, hd, scale, q, nqkv, k,
                     nqkv, 0.0f, p, kn);
          for (int64_t r = 0; r < n; r++) {
            const int64_t i = i0 + r;
            float *pr = p + r * kn, mx = -INFINITY, sum = 0.0f;
            for (int64_t j = 0; j <= i; j++)
              mx = pr[j] > mx ? pr[j] : mx;
            for (int64_t j = 0; j <= i; j++)
              sum += (pr[j] = expf(pr[j] - mx));
            const float inv = 1.0f / sum;
            for (int64_t j = 0; j <= i; j++)
              pr[j] *= inv;
            for (int64_t j = i + 1; j < kn; j++)
              pr[j] = 0.0f;
            T->lse[(b * H + h) * lq + i] = mx + logf(sum);
          }
          attn_sgemm(CblasNoTrans, CblasNoTrans, n, hd, kn, 1.0f, p, kn, v,
                     nqkv, 0.0f, T->ao + (b * lq + i0) * hq + h * hd, hq);
        }
  }
}

/* Attention backward from dao into dqkv, the probabilities recomputed
 * from the saved log-sum-exp: per (sequence, kv group), its heads one
 * after the other (they share the group's dK and dV), a block of query
 * rows at a time:
 *   P = exp(scale·Q·Kᵀ - lse), dV += Pᵀ·dO, dP = dO·Vᵀ,
 *   dS = P ⊙ (dP - rowsum(dO ⊙ O))·scale, dQ = dS·K, dK += dSᵀ·Q */
static void attention_bwd(cal_train_t *T) {
  const int64_t B = T->s.batch, H = T->s.heads, G = T->s.kv_heads;
  const int64_t lq = T->s.seq, hd = T->hd, nqkv = T->nqkv, hq = T->hq;
  const float scale = 1.0f / sqrtf((float)hd);
  const float *dao = T->dact[CAL_TRAIN_DAO];
  float *dqkv = T->dact[CAL_TRAIN_DQKV];
#pragma omp parallel num_threads(T->nthr)
  {
    float *p = attn_scratch(T), *dp = p + CAL_TRAIN_QB * lq;
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (int64_t b = 0; b < B; b++)
      for (int64_t g = 0; g < G; g++) {
        const float *base = T->qkv + b * lq * nqkv;
        const float *k = base + (H + g) * hd, *v = base + (H + G + g) * hd;
        float *dbase = dqkv + b * lq * nqkv;
        float *dk = dbase + (H + g) * hd, *dv = dbase + (H + G + g) * hd;
        for (int64_t j = 0; j < lq; j++) {
          memset(dk + j * nqkv, 0, 4 * (size_t)hd);
          memset(dv + j * nqkv, 0, 4 * (size_t)hd);
        }
        for (int64_t h = g * (H / G); h < (g + 1) * (H / G); h++)
          for (int64_t i0 = 0; i0 < lq; i0 += CAL_TRAIN_QB) {
            const int64_t n = lq - i0 < CAL_TRAIN_QB ? lq - i0 : CAL_TRAIN_QB;
            const int64_t kn = i0 + n;
            const float *q = base + i0 * nqkv + h * hd;
            const float *o = T->ao + (b * lq + i0) * hq + h * hd;
            const float *dout = dao + (b * lq + i0) * hq + h * hd;
            const float *lse = T->lse + (b * H + h) * lq + i0;
            attn_sgemm(CblasNoTrans, CblasTrans, n, kn, hd, scale, q, nqkv, k,
                       nqkv, 0.0f, p, kn);
            attn_sgemm(CblasNoTrans, CblasTrans, n, kn, hd, 1.0f, dout, hq, v,
                       nqkv, 0.0f, dp, kn);
            for (int64_t r = 0; r < n; r++) {
              const int64_t i = i0 + r;
              float *pr = p + r * kn, *dpr = dp + r * kn, D = 0.0f;
              for (int64_t e = 0; e < hd; e++)
                D += dout[r * hq + e] * o[r * hq + e];
              for (int64_t j = 0; j <= i; j++) {
                pr[j] = expf(pr[j] - lse[r]);
                dpr[j] = pr[j] * (dpr[j] - D) * scale;
              }
              for (int64_t j = i + 1; j < kn; j++)
                pr[j] = dpr[j] = 0.0f;
            }
            attn_sgemm(CblasTrans, CblasNoTrans, kn, hd, n, 1.0f, p, kn, dout,
                       hq, 1.0f, dv, nqkv);
            attn_sgemm(CblasNoTrans, CblasNoTrans, n, hd, kn, 1.0f, dp, kn, k,
                       nqkv, 0.0f, dbase + i0 * nqkv + h * hd, nqkv);
            attn_sgemm(CblasTrans, CblasNoTrans, kn, hd, n, 1.0f, dp, kn, q,
                       nqkv, 1.0f, dk, nqkv);
          }
      }
  }
}

/* ---- bf16 */

/* the three block products: C = A·Bᵀ [QB×QB, k = hd]; C += A·B [QB×hd,
 * k = QB]; C += Aᵀ·B [QB×hd, k = QB, A stored QB×QB] */
enum { MM_ABT, MM_AB, MM_ATB, NMM };

/* a thread's part: its products and scratch */
typedef struct {
  cal_onednn_mm_t *mm[NMM];
  float *s, *dp;        /* [lqp / QB][QB][QB] */
  uint16_t *p16, *ds16; /* the same, rounded */
  float *acc;           /* [QB][hd]: a block's O or dQ */
  float *dk, *dv;       /* [lqp][hd]: a kv group's */
} thr_t;

struct cal_train_attn16 {
  int64_t lqp;
  uint16_t *q16, *do16; /* [B][H][lqp][hd] */
  uint16_t *k16, *v16;  /* [B][G][lqp][hd] */
  thr_t *thr;           /* [nthr] */
  void *scr;
  int borrowed;         /* thr belongs to the stack's first layer */
};

static int64_t padded(int64_t lq) { return (lq + QB - 1) / QB * QB; }

/* bytes of a thread's scratch, a multiple of 64 */
static size_t thr_bytes(int64_t lqp, int64_t hd) {
  size_t n = (size_t)QB * (size_t)lqp * (4 + 4 + 2 + 2) +
             (size_t)QB * (size_t)hd * 4 + 2 * (size_t)lqp * (size_t)hd * 4;
  return (n + 63) / 64 * 64;
}

static size_t copies_bytes(const cal_train_t *T, int64_t lqp) {
  return 2 * (size_t)(2 * (T->s.heads + T->s.kv_heads)) *
         (size_t)(T->s.batch * lqp * T->hd);
}

double cal_train_attn16_bytes(const cal_train_t *T, int nthr) {
  if (!T->s.bf16)
    return 0.0;
  const int64_t lqp = padded(T->s.seq);
  return (double)copies_bytes(T, lqp) +
         (double)nthr * (double)thr_bytes(lqp, T->hd);
}

void cal_train_attn16_free(struct cal_train_attn16 *A, int nthr) {
  if (!A)
    return;
  for (int t = 0; !A->borrowed && A->thr && t < nthr; t++)
    for (int i = 0; i < NMM; i++)
      cal_onednn_mm_free(A->thr[t].mm[i]);
  if (!A->borrowed)
    cal_free_each(A->thr, A->scr);
  cal_free_each(A->q16, A->do16, A->k16, A->v16, A);
}

uint16_t *cal_train_attn16_copy(cal_train_t *T, int which, size_t *n) {
  struct cal_train_attn16 *A = T->attn16;
  if (!A || which < 0 || which > 3)
    return NULL;
  const int64_t heads = which == 1 || which == 2 ? T->s.kv_heads : T->s.heads;
  uint16_t *const c[4] = {A->q16, A->k16, A->v16, A->do16};
  *n = (size_t)(T->s.batch * heads * A->lqp * T->hd);
  return c[which];
}

/* the thread's scratch carved from its block */
static void thr_carve(thr_t *w, char *blk, int64_t lqp, int64_t hd) {
  const size_t sq = (size_t)QB * (size_t)lqp;
  w->s = (float *)blk;
  w->dp = w->s + sq;
  w->acc = w->dp + sq;
  w->dk = w->acc + (size_t)QB * (size_t)hd;
  w->dv = w->dk + (size_t)lqp * (size_t)hd;
  w->p16 = (uint16_t *)(w->dv + (size_t)lqp * (size_t)hd);
  w->ds16 = w->p16 + sq;
}

/* A thread's three oneDNN products, made for one thread (each runs inside
 * the attention's team, on the calling thread) over its own scratch. */
static int thr_products(cal_train_t *T, thr_t *w) {
  const int64_t hd = T->hd;
  int rc;
  if ((rc = cal_onednn_mm_create_ex(CAL_GEMM_BF16, QB, QB, hd,
                                    CAL_ONEDNN_MM_TRANS_B, w->p16, w->ds16,
                                    w->s, &w->mm[MM_ABT])) < 0 ||
      (rc = cal_onednn_mm_create_ex(CAL_GEMM_BF16, QB, hd, QB,
                                    CAL_ONEDNN_MM_ACCUMULATE, w->p16, w->ds16,
                                    w->acc, &w->mm[MM_AB])) < 0 ||
      (rc = cal_onednn_mm_create_ex(
           CAL_GEMM_BF16, QB, hd, QB,
           CAL_ONEDNN_MM_TRANS_A | CAL_ONEDNN_MM_ACCUMULATE, w->p16, w->ds16,
           w->dk, &w->mm[MM_ATB])) < 0)
    return rc;
  for (int i = 0; i < NMM; i++)
    cal_onednn_mm_impl_append(w->mm[i], T->impl, sizeof T->impl);
  return 0;
}

int cal_train_attn16_create(cal_train_t *T, const cal_train_t *share) {
  const int64_t lqp = padded(T->s.seq), hd = T->hd;
  const size_t nh = (size_t)(T->s.batch * lqp * hd);
  const size_t blk = thr_bytes(lqp, hd);
  struct cal_train_attn16 *A = cal_zalloc(sizeof *A);
  if (!A)
    return CAL_ENOMEM;
  T->attn16 = A;
  A->lqp = lqp;
  /* zeroed: the rows past seq stay zero */
  if (!(A->q16 = cal_zalloc(2 * nh * (size_t)T->s.heads)) ||
      !(A->do16 = cal_zalloc(2 * nh * (size_t)T->s.heads)) ||
      !(A->k16 = cal_zalloc(2 * nh * (size_t)T->s.kv_heads)) ||
      !(A->v16 = cal_zalloc(2 * nh * (size_t)T->s.kv_heads)))
    return CAL_ENOMEM;
  if (share && share->attn16 && share->nthr == T->nthr) {
    A->thr = share->attn16->thr;
    A->borrowed = 1;
    return 0;
  }
  if (!(A->thr = cal_zalloc(sizeof *A->thr * (size_t)T->nthr)) ||
      !(A->scr = cal_zalloc(blk * (size_t)T->nthr)))
    return CAL_ENOMEM;
  for (int t = 0; t < T->nthr; t++)
    thr_carve(&A->thr[t], (char *)A->scr + blk * (size_t)t, lqp, hd);
  if (T->sbgemm)
    return 0;
  /* oneDNN sizes a primitive's threads when it is made */
  const int keep = omp_get_max_threads();
  int rc = 0;
  omp_set_num_threads(1);
  for (int t = 0; t < T->nthr && rc == 0; t++)
    rc = thr_products(T, &A->thr[t]);
  omp_set_num_threads(keep);
  return rc;
}

/* One block product on the step's engine. */
static int amm(const cal_train_t *T, thr_t *w, int kind, const uint16_t *a,
               const uint16_t *b, float *c) {
  const int64_t hd = T->hd;
  if (T->sbgemm) {
    const int abt = kind == MM_ABT, atb = kind == MM_ATB;
    T->sbgemm(CblasRowMajor, atb ? CblasTrans : CblasNoTrans,
              abt ? CblasTrans : CblasNoTrans, QB, (blasint)(abt ? QB : hd),
              (blasint)(abt ? hd : QB), 1.0f, a, (blasint)(abt ? hd : QB), b,
              (blasint)hd, abt ? 0.0f : 1.0f, c, (blasint)(abt ? QB : hd));
    return 0;
  }
  int rc = cal_onednn_mm_bind(w->mm[kind], (void *)a, (void *)b, c);
  return rc < 0 ? rc : cal_onednn_mm_run(w->mm[kind]);
}

/* nh heads of rows with leading dimension ld, from column c0, rounded
 * into per-head copies [B][nh][lqp][hd] */
static void pack16(const cal_train_t *T, const float *src, int64_t ld,
                   int64_t c0, int64_t nh, uint16_t *dst) {
  const int64_t B = T->s.batch, lq = T->s.seq, hd = T->hd;
  const int64_t lqp = T->attn16->lqp;
#pragma omp parallel for schedule(static) collapse(2) num_threads(T->nthr)
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < lq; i++)
      for (int64_t h = 0; h < nh; h++) {
        const float *s = src + (b * lq + i) * ld + c0 + h * hd;
        uint16_t *d = dst + ((b * nh + h) * lqp + i) * hd;
        for (int64_t e = 0; e < hd; e++)
          d[e] = cal_f32_to_bf16(s[e]);
      }
}

/* element (r, j) of a block's scores kept by key block */
static inline size_t at(int64_t r, int64_t j) {
  return (size_t)((j / QB) * QB * QB + r * QB + j % QB);
}

/* a block's query rows r0.. (of nc key blocks) past the sequence: no
 * probabilities, no gradients */
static void zero_rows(uint16_t *x, int64_t r0, int64_t nc) {
  for (int64_t c = 0; c < nc; c++)
    memset(x + (size_t)(c * QB * QB + r0 * QB), 0, 2 * (size_t)((QB - r0) * QB));
}

/* block ib's rows: softmax of scale·S into P (rounded), the log-sum-exp */
static void softmax_rows(thr_t *w, int64_t i0, int64_t n, int64_t nc,
                         float scale, float *lse) {
  for (int64_t r = 0; r < n; r++) {
    const int64_t i = i0 + r;
    float mx = -INFINITY, sum = 0.0f;
    for (int64_t j = 0; j <= i; j++) {
      float v = w->s[at(r, j)] * scale;
      mx = v > mx ? v : mx;
    }
    for (int64_t j = 0; j <= i; j++)
      sum += (w->s[at(r, j)] = expf(w->s[at(r, j)] * scale - mx));
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < nc * QB; j++)
      w->p16[at(r, j)] = j <= i ? cal_f32_to_bf16(w->s[at(r, j)] * inv) : 0;
    lse[r] = mx + logf(sum);
  }
  zero_rows(w->p16, n, nc);
}

/* a block of query rows: (sequence b, head h, block ib), its rows
 * i0..i0+n-1, the nc key blocks it attends, its operands' copies */
typedef struct {
  int64_t b, h, i0, n, nc;
  const uint16_t *q, *dout, *k, *v;
} blk_t;

static blk_t block_of(const cal_train_t *T, int64_t b, int64_t h, int64_t ib) {
  const struct cal_train_attn16 *A = T->attn16;
  const int64_t H = T->s.heads, G = T->s.kv_heads, lq = T->s.seq;
  const int64_t hd = T->hd, lqp = A->lqp, g = h / (H / G), i0 = ib * QB;
  blk_t k = {b, h, i0, lq - i0 < QB ? lq - i0 : QB, ib + 1, NULL, NULL,
             NULL, NULL};
  k.q = A->q16 + ((b * H + h) * lqp + i0) * hd;
  k.dout = A->do16 + ((b * H + h) * lqp + i0) * hd;
  k.k = A->k16 + (b * G + g) * lqp * hd;
  k.v = A->v16 + (b * G + g) * lqp * hd;
  return k;
}

/* forward of (sequence b, head h, query block ib) */
static int fwd_block(cal_train_t *T, thr_t *w, int64_t b, int64_t h,
                     int64_t ib) {
  const blk_t k = block_of(T, b, h, ib);
  const int64_t hd = T->hd, lq = T->s.seq;
  int rc = 0;
  for (int64_t c = 0; c < k.nc && rc == 0; c++)
    rc = amm(T, w, MM_ABT, k.q, k.k + c * QB * hd, w->s + c * QB * QB);
  if (rc < 0)
    return rc;
  softmax_rows(w, k.i0, k.n, k.nc, 1.0f / sqrtf((float)hd),
               T->lse + (b * T->s.heads + h) * lq + k.i0);
  memset(w->acc, 0, 4 * (size_t)(QB * hd));
  for (int64_t c = 0; c < k.nc && rc == 0; c++)
    rc = amm(T, w, MM_AB, w->p16 + c * QB * QB, k.v + c * QB * hd, w->acc);
  for (int64_t r = 0; r < k.n; r++)
    memcpy(T->ao + (b * lq + k.i0 + r) * T->hq + h * hd, w->acc + r * hd,
           4 * (size_t)hd);
  return rc;
}

/* block ib's rows: P from the saved log-sum-exp, dS = P ⊙ (dP - dO·O)·scale,
 * both rounded */
static void grad_rows(const cal_train_t *T, thr_t *w, int64_t b, int64_t h,
                      int64_t i0, int64_t n, int64_t nc) {
  const int64_t H = T->s.heads, lq = T->s.seq, hd = T->hd, hq = T->hq;
  const float scale = 1.0f / sqrtf((float)hd);
  const float *dao = T->dact[CAL_TRAIN_DAO];
  for (int64_t r = 0; r < n; r++) {
    const int64_t i = i0 + r;
    const float *o = T->ao + (b * lq + i) * hq + h * hd;
    const float *dout = dao + (b * lq + i) * hq + h * hd;
    const float lse = T->lse[(b * H + h) * lq + i];
    float D = 0.0f;
    for (int64_t e = 0; e < hd; e++)
      D += dout[e] * o[e];
    for (int64_t j = 0; j < nc * QB; j++) {
      const size_t x = at(r, j);
      const float p = j <= i ? expf(w->s[x] * scale - lse) : 0.0f;
      w->p16[x] = cal_f32_to_bf16(p);
      w->ds16[x] = cal_f32_to_bf16(p * (w->dp[x] - D) * scale);
    }
  }
  zero_rows(w->p16, n, nc);
  zero_rows(w->ds16, n, nc);
}

/* backward of (sequence b, head h, query block ib): dQ of its rows, its
 * share of the group's dK and dV */
static int bwd_block(cal_train_t *T, thr_t *w, int64_t b, int64_t h,
                     int64_t ib) {
  const blk_t k = block_of(T, b, h, ib);
  const int64_t hd = T->hd;
  int rc = 0;
  for (int64_t c = 0; c < k.nc && rc == 0; c++)
    if ((rc = amm(T, w, MM_ABT, k.q, k.k + c * QB * hd, w->s + c * QB * QB)) == 0)
      rc = amm(T, w, MM_ABT, k.dout, k.v + c * QB * hd, w->dp + c * QB * QB);
  if (rc < 0)
    return rc;
  grad_rows(T, w, b, h, k.i0, k.n, k.nc);
  memset(w->acc, 0, 4 * (size_t)(QB * hd));
  for (int64_t c = 0; c < k.nc && rc == 0; c++)
    if ((rc = amm(T, w, MM_AB, w->ds16 + c * QB * QB, k.k + c * QB * hd,
                  w->acc)) == 0 &&
        (rc = amm(T, w, MM_ATB, w->p16 + c * QB * QB, k.dout,
                  w->dv + c * QB * hd)) == 0)
      rc = amm(T, w, MM_ATB, w->ds16 + c * QB * QB, k.q, w->dk + c * QB * hd);
  float *dq = T->dact[CAL_TRAIN_DQKV] + (b * T->s.seq + k.i0) * T->nqkv + h * hd;
  for (int64_t r = 0; r < k.n; r++)
    memcpy(dq + r * T->nqkv, w->acc + r * hd, 4 * (size_t)hd);
  return rc;
}

/* the first error of the team's, kept */
static void keep_err(int *shared, int rc) {
  if (rc < 0) {
#pragma omp critical(cal_train_attn16_err)
    if (*shared == 0)
      *shared = rc;
  }
}

static int attention16_fwd(cal_train_t *T) {
  const int64_t B = T->s.batch, H = T->s.heads, G = T->s.kv_heads;
  const int64_t nqkv = T->nqkv, hd = T->hd;
  const int64_t nb = T->attn16->lqp / QB;
  int err = 0;
  pack16(T, T->qkv, nqkv, 0, H, T->attn16->q16);
  pack16(T, T->qkv, nqkv, H * hd, G, T->attn16->k16);
  pack16(T, T->qkv, nqkv, (H + G) * hd, G, T->attn16->v16);
#pragma omp parallel num_threads(T->nthr)
  {
    thr_t *w = &T->attn16->thr[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 1) collapse(3)
    for (int64_t b = 0; b < B; b++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t ib = 0; ib < nb; ib++)
          keep_err(&err, fwd_block(T, w, b, h, ib));
  }
  return err;
}

static int attention16_bwd(cal_train_t *T) {
  const int64_t B = T->s.batch, H = T->s.heads, G = T->s.kv_heads;
  const int64_t lq = T->s.seq, hd = T->hd, nqkv = T->nqkv;
  const int64_t lqp = T->attn16->lqp, nb = lqp / QB;
  int err = 0;
  pack16(T, T->dact[CAL_TRAIN_DAO], T->hq, 0, H, T->attn16->do16);
#pragma omp parallel num_threads(T->nthr)
  {
    thr_t *w = &T->attn16->thr[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (int64_t b = 0; b < B; b++)
      for (int64_t g = 0; g < G; g++) {
        memset(w->dk, 0, 4 * (size_t)(lqp * hd));
        memset(w->dv, 0, 4 * (size_t)(lqp * hd));
        for (int64_t h = g * (H / G); h < (g + 1) * (H / G); h++)
          for (int64_t ib = 0; ib < nb; ib++)
            keep_err(&err, bwd_block(T, w, b, h, ib));
        float *d = T->dact[CAL_TRAIN_DQKV] + b * lq * nqkv;
        for (int64_t j = 0; j < lq; j++) {
          memcpy(d + j * nqkv + (H + g) * hd, w->dk + j * hd, 4 * (size_t)hd);
          memcpy(d + j * nqkv + (H + G + g) * hd, w->dv + j * hd,
                 4 * (size_t)hd);
        }
      }
  }
  return err;
}

int cal_train_attention_fwd(cal_train_t *T) {
  if (T->s.bf16)
    return attention16_fwd(T);
  attention_fwd(T);
  return 0;
}

int cal_train_attention_bwd(cal_train_t *T) {
  if (T->s.bf16)
    return attention16_bwd(T);
  attention_bwd(T);
  return 0;
}
