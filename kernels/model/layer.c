/* The model-shaped layer workload (see layer.h) and its kernel-table
 * entries layer_prefill and layer_decode (fp32) and layer_prefill_bf16 and
 * layer_decode_bf16: shapes, figures, setup and the BLAS path, whose four
 * products run on OpenBLAS or oneDNN (cal_params_t.engine).  The part of
 * the setup that depends on the batch is in layer_reshape.c, the
 * small-batch decode step in layer_decode.c, the double-precision
 * verification in layer_verify.c. */
#include "layer.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "engine.h"
#include "forward_kernels.h"
#include "layer_internal.h"

void cal_layer_shape_from_params(const cal_params_t *p, cal_layer_shape_t *s) {
  s->hidden = p->hidden;
  s->heads = p->heads;
  s->kv_heads = p->kv_heads;
  s->ffn = p->ffn;
  s->seq = p->seq;
  s->batch = p->batch;
  s->decode = p->decode;
  s->bf16 = 0;
  s->grow = p->decode && p->gen > 1 ? p->gen : 0;
  s->lora_rank = p->decode ? 0 : p->lora_rank;
}

int cal_layer_check_shape(const cal_layer_shape_t *s, char *why, size_t len) {
  const char *msg = NULL;
  if (s->hidden < 1 || s->heads < 1 || s->kv_heads < 1 || s->ffn < 1 ||
      s->seq < 1 || s->batch < 1)
    msg = "every size (hidden, heads, kv-heads, ffn, seq, batch) must be at least 1";
  else if (s->hidden % s->heads)
    msg = "hidden must be a multiple of heads (head dim = hidden / heads)";
  else if (s->heads % s->kv_heads)
    msg = "heads must be a multiple of kv-heads (grouped-query attention)";
  else if (s->hidden / s->heads > CAL_ATTN_MAX_HEAD_DIM)
    msg = "head dim (hidden / heads) is above the attention kernel's maximum of 256";
  else if (s->hidden > (1 << 20) || s->ffn > (1 << 22) || s->seq > (1 << 22))
    msg = "sizes are unreasonably large";
  if (!msg)
    return 0;
  if (why)
    snprintf(why, len, "%s", msg);
  return CAL_EINVAL;
}

void cal_layer_layout(const cal_layer_shape_t *s, cal_layer_layout_t *l) {
  l->hd = s->hidden / s->heads;
  l->nqkv = (s->heads + 2 * s->kv_heads) * l->hd;
  l->lq = s->decode ? 1 : s->seq;
  l->lk = s->decode ? s->seq + (s->grow > 1 ? s->grow : 1) : s->seq;
  l->tokens = s->batch * l->lq;
  double d = (double)s->hidden, f = (double)s->ffn, t = (double)l->tokens;
  /* Wqkv, Wo, Wgate|Wup, Wdown; two gains */
  l->w_f = d * l->nqkv + (double)s->heads * l->hd * d + 2 * d * f + f * d;
  l->norm_f = 2 * d;
  /* x, h, out, x1, qkv, q, o, ao, gu (2f), a (f) */
  l->act_f = t * (4 * d + l->nqkv + 2.0 * s->heads * l->hd + 3 * f);
  /* bf16: h16, ao16, a16 */
  l->act16 = s->bf16 ? t * (d + (double)s->heads * l->hd + f) : 0.0;
  l->kv_f = 2.0 * s->batch * s->kv_heads * l->lk * l->hd;
  l->kv_b = s->bf16 && s->decode ? 2.0 : 4.0; /* bf16 decode: a bf16 cache */
  /* bf16: q rounded for the bf16 attention; prefill: kc, vc too */
  if (s->bf16)
    l->act16 += t * (double)s->heads * l->hd + (s->decode ? 0.0 : l->kv_f);
  /* reference for sequence 0: x1, h, qkv, ao, gu, a, out in doubles, and
   * q/k/v/o in floats for the attention reference (counted as doubles) */
  double lq = (double)l->lq, lk = (double)l->lk;
  l->ref_d = lq * (4 * d + l->nqkv + s->heads * l->hd + 3 * f) +
             lk * (2.0 * s->kv_heads * l->hd) +
             lq * 2.0 * s->heads * l->hd + lk;
  cal_attn_shape_t as = {s->batch, s->heads, s->kv_heads, l->lq, l->lk, l->hd, 1};
  l->ws_bytes = (double)cal_attn_fused_workspace_bytes(&as);
  if (s->bf16 && !s->decode &&
      (double)cal_attn_fused_bf16_workspace_bytes(&as) > l->ws_bytes)
    l->ws_bytes = (double)cal_attn_fused_bf16_workspace_bytes(&as);
}

double cal_layer_flops(const cal_layer_shape_t *s) {
  cal_layer_layout_t l;
  cal_layer_layout(s, &l);
  double t = (double)l.tokens, d = (double)s->hidden, f = (double)s->ffn;
  double mm = 2 * t * d * l.nqkv + 2 * t * s->heads * l.hd * d + 6 * t * d * f;
  cal_attn_shape_t as = {s->batch, s->heads, s->kv_heads, l.lq, l.lk, l.hd, 1};
  return mm + cal_attn_flops(&as);
}

/* Bytes of one weight of the four matrices. */
static double wbytes(const cal_layer_shape_t *s) { return s->bf16 ? 2.0 : 4.0; }

double cal_layer_weight_bytes(const cal_layer_shape_t *s) {
  cal_layer_layout_t l;
  cal_layer_layout(s, &l);
  return wbytes(s) * l.w_f + 4.0 * l.norm_f;
}

double cal_layer_mem_bytes(const cal_layer_shape_t *s) {
  cal_layer_layout_t l;
  cal_layer_layout(s, &l);
  double team = 0.0;
  if (s->decode && s->batch <= CAL_LAYER_GEMV_MAX_BATCH) {
    /* the team's rows for a thread count we do not know here: 2 per core
     * of a large machine is small beside the weights; count 64 */
    double hq = (double)s->heads * l.hd, k = hq > s->ffn ? hq : (double)s->ffn;
    team = 64.0 * 4.0 * (double)s->batch *
           ((double)s->hidden + (s->bf16 ? k : 0.0));
  }
  /* the setup's fp32 staging: of the largest weight matrix (bf16), or of
   * a chunk of it (fp32 on the team path, made packed), with the packed
   * matrices' padding to blocks of 16 columns */
  double d = (double)s->hidden, f = (double)s->ffn;
  double big = 4.0 * (d * 2 * f > d * l.nqkv ? d * 2 * f : d * l.nqkv);
  if (!s->bf16 && big > (double)CAL_FILL_TEAM_MIN)
    big = (double)CAL_FILL_TEAM_MIN + 4.0 * 2.0 * f;
  double stage = s->bf16 || team > 0.0 ? big + 64.0 * (d > f ? d : f) : 0.0;
  return cal_layer_weight_bytes(s) + 4.0 * l.act_f + l.kv_b * l.kv_f + 2.0 * l.act16 +
         8.0 * l.ref_d + l.ws_bytes + team + stage;
}

double cal_layer_tokens(const cal_layer_shape_t *s) {
  return (double)s->batch * (s->decode ? 1.0 : (double)s->seq);
}

double cal_layer_read_bytes(const cal_layer_shape_t *s) {
  cal_layer_layout_t l;
  cal_layer_layout(s, &l);
  return cal_layer_weight_bytes(s) + l.kv_b * l.kv_f;
}

static int uses_team(const cal_layer_shape_t *s) {
  return s->decode && s->batch <= CAL_LAYER_GEMV_MAX_BATCH;
}

const char *cal_layer_matrix_path(const cal_layer_shape_t *s) {
  return uses_team(s) ? "gemv" : "blas";
}

void cal_layer_free(cal_layer_t *L) {
  if (!L)
    return;
  cal_layer_batch_free(L);
  cal_free_each(L->wqkv, L->wo, L->wgu, L->wd, L->g1, L->g2, L->wqkv16,
                L->wo16, L->wgu16, L->wd16, L->wp[0], L->wp[1], L->wp[2],
                L->wp[3], L->wpf[0], L->wpf[1], L->wpf[2], L->wpf[3], L);
}

static void layer_teardown(void *state) { cal_layer_free(state); }

/* Matrix i, in the form the layer holds it (row-major fp32, bf16, or
 * packed fp32), weights uniform with variance 1/fan_in, so activations
 * stay O(1); a bf16 layer's are the same draws rounded (staged through
 * tmp), and a packed fp32 layer's the same draws made straight into their
 * blocks (staged through tmp a chunk at a time), so that every form
 * computes the same layer. */
static void fill_weights(cal_layer_t *L, int i, float *tmp, int64_t fan_in,
                         cal_rng_t *r) {
  float *const w[CAL_LAYER_NMM] = {L->wqkv, L->wo, L->wgu, L->wd};
  uint16_t *const w16[CAL_LAYER_NMM] = {L->wqkv16, L->wo16, L->wgu16,
                                        L->wd16};
  float a = (float)sqrt(3.0 / (double)fan_in);
  int64_t K, ldw;
  cal_layer_matrix_dims(L, i, &K, &ldw);
  const size_t n = (size_t)(K * ldw);
  if (L->wpf[i]) {
    cal_gemv_fill_packed_f32(L->wpf[i], K, ldw, a, r, tmp);
  } else if (!w16[i]) {
    cal_fill_f32(w[i], n, -a, a, r);
  } else {
    cal_fill_f32(tmp, n, -a, a, r);
    for (size_t e = 0; e < n; e++)
      w16[i][e] = cal_f32_to_bf16(tmp[e]);
  }
}

/* The weights and gains from the seed's stream (tmp: the weights' fp32
 * staging, bf16's or packed fp32's).  The sequences' inputs and caches
 * come from streams of their own (cal_layer_batch_setup), so these draws
 * are the same whatever the batch. */
static void fill_params(cal_layer_t *L, float *tmp) {
  cal_rng_t r;
  cal_rng_seed(&r, L->seed);
  for (int i = 0; i < CAL_LAYER_NMM; i++) {
    int64_t fan_in, n;
    cal_layer_matrix_dims(L, i, &fan_in, &n); /* a column's inputs: K */
    fill_weights(L, i, tmp, fan_in, &r);
  }
  cal_fill_f32(L->g1, (size_t)L->s.hidden, 0.5f, 1.5f, &r);
  cal_fill_f32(L->g2, (size_t)L->s.hidden, 0.5f, 1.5f, &r);
}

/* The layer's own buffers that do not depend on the batch: the four
 * weight matrices (fp32, packed fp32 or bf16, the last two with their
 * fp32 staging in *tmp) and the gains. */
static int alloc_params(cal_layer_t *L, float **tmp) {
  const cal_layer_shape_t *s = &L->s;
  const int packed = cal_layer_packs_f32(L), es = s->bf16 ? 2 : 4;
  void **w[CAL_LAYER_NMM] = {
      s->bf16 ? (void **)&L->wqkv16 : (void **)&L->wqkv,
      s->bf16 ? (void **)&L->wo16 : (void **)&L->wo,
      s->bf16 ? (void **)&L->wgu16 : (void **)&L->wgu,
      s->bf16 ? (void **)&L->wd16 : (void **)&L->wd};
  size_t stage = 0;
  for (int i = 0; i < CAL_LAYER_NMM; i++) {
    int64_t K, n;
    cal_layer_matrix_dims(L, i, &K, &n);
    size_t st = s->bf16 ? (size_t)(K * n) : cal_gemv_fill_stage_floats(K, n);
    stage = (s->bf16 || packed) && st > stage ? st : stage;
    if (packed ? !(L->wpf[i] = cal_alloc(4 * cal_gemv_packed_f32_floats(K, n)))
               : !(*w[i] = cal_alloc((size_t)es * (size_t)(K * n))))
      return CAL_ENOMEM;
  }
  if (stage && !(*tmp = cal_alloc(4 * stage)))
    return CAL_ENOMEM;
  L->g1 = cal_alloc(4 * (size_t)s->hidden);
  L->g2 = cal_alloc(4 * (size_t)s->hidden);
  return L->g1 && L->g2 ? 0 : CAL_ENOMEM;
}

void cal_layer_set_shape(cal_layer_t *L, const cal_params_t *p, int bf16) {
  cal_layer_shape_from_params(p, &L->s);
  L->s.bf16 = bf16;
  cal_layer_layout(&L->s, &L->l);
  L->pos = L->s.seq;
}

/* What does not depend on the batch, then what does (layer_reshape.c,
 * which a reshape re-makes alone). */
int cal_layer_create(const cal_params_t *p, int bf16, const cal_layer_t *share,
                     cal_layer_t **out) {
  cal_layer_t *L = cal_alloc(sizeof *L);
  float *tmp = NULL; /* bf16, packed fp32: fp32 staging of the weights */
  int rc;
  const char *no16;
  if (!L)
    return CAL_ENOMEM;
  memset(L, 0, sizeof *L);
  L->borrowed = share != NULL; /* before anything of share's is reached */
  L->seed = p->seed;
  cal_layer_set_shape(L, p, bf16);
  if ((rc = cal_layer_check_shape(&L->s, NULL, 0)) < 0 ||
      (rc = cal_variant_resolve(p->variant, &L->variant)) < 0)
    goto fail;
  L->cache16 = bf16 && p->decode;
  if (!bf16 || cal_attn_bf16_resolve(p->variant, &L->attn16, &no16) < 0)
    /* prefill: fp32 attention; decode (a bf16 cache): the portable one */
    L->attn16 = L->cache16 ? CAL_ATTN_BF16_SCALAR : -1;
  if ((rc = cal_layer_team_setup(L, p->path)) < 0 ||
      (rc = alloc_params(L, &tmp)) < 0)
    goto fail;
  fill_params(L, tmp);
  if ((rc = cal_layer_pack_weights(L, tmp)) < 0)
    goto fail;
  cal_free(tmp);
  tmp = NULL;
  if ((rc = cal_layer_batch_setup(L, p->engine, share)) < 0)
    goto fail;
  *out = L;
  return 0;
fail:
  cal_free(tmp);
  cal_layer_free(L);
  return rc;
}

static int layer_setup(const cal_params_t *p, void **state, int bf16) {
  return cal_layer_create(p, bf16, NULL, (cal_layer_t **)state);
}

void cal_layer_rmsnorm_rows(const float *x, const float *g, float *y,
                            int64_t rows, int64_t d) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * d;
    float *yr = y + r * d;
    float ss = 0.0f;
    for (int64_t i = 0; i < d; i++)
      ss += xr[i] * xr[i];
    float inv = 1.0f / sqrtf(ss / (float)d + CAL_LAYER_RMS_EPS);
    for (int64_t i = 0; i < d; i++)
      yr[i] = xr[i] * inv * g[i];
  }
}

static void rmsnorm(const float *x, const float *g, float *y, int64_t rows,
                    int64_t d) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; r++)
    cal_layer_rmsnorm_rows(x + r * d, g, y + r * d, 1, d);
}

/* Product i of the BLAS path: c[m×n] = a[m×k]·w[k×n], a in fp32 (a bf16
 * layer rounds it into a16 first) */
/* Product i of the BLAS path, its input a (m×k) rounded to a16 first in
 * bf16; the engine's product was bound to the buffers at setup. */
static int product(cal_layer_t *L, int i, const float *a, uint16_t *a16,
                   int64_t m, int64_t k) {
  if (L->s.bf16)
    cal_f32_to_bf16_n(a, a16, m * k);
  return L->eng->mm_run(L->mm[i]);
}

int cal_layer_run(cal_layer_t *L) {
  if (L->team)
    return cal_layer_run_team(L);
  const cal_layer_shape_t *s = &L->s;
  const cal_layer_layout_t *l = &L->l;
  const int64_t d = s->hidden, f = s->ffn, t = l->tokens, hd = l->hd;
  const int64_t H = s->heads, G = s->kv_heads, lq = l->lq, lk = l->lk;
  const int64_t hq = H * hd, nqkv = l->nqkv;

  int rc;
  rmsnorm(L->x, L->g1, L->h, t, d);
  if ((rc = product(L, CAL_LAYER_QKV, L->h, L->h16, t, d)) < 0)
    return rc;
  /* scatter q into [b][h][i][:], k and v into the cache at their position */
#pragma omp parallel for schedule(static)
  for (int64_t tok = 0; tok < t; tok++) {
    int64_t b = tok / lq, i = tok % lq, pos = s->decode ? L->pos : i;
    const float *row = L->qkv + tok * nqkv;
    for (int64_t h = 0; h < H; h++)
      memcpy(L->q + ((b * H + h) * lq + i) * hd, row + h * hd, 4 * (size_t)hd);
    for (int64_t g = 0; g < G; g++) {
      size_t at = (size_t)(((b * G + g) * lk + pos) * hd);
      if (L->cache16) { /* bf16 decode: rounded into the bf16 cache */
        for (int64_t e = 0; e < hd; e++) {
          L->kc16[at + e] = cal_f32_to_bf16(row[(H + g) * hd + e]);
          L->vc16[at + e] = cal_f32_to_bf16(row[(H + G + g) * hd + e]);
        }
        continue;
      }
      memcpy(L->kc + at, row + (H + g) * hd, 4 * (size_t)hd);
      memcpy(L->vc + at, row + (H + G + g) * hd, 4 * (size_t)hd);
    }
  }
  cal_attn_shape_t as = {s->batch, H, G, lq, lk, hd, 1};
  if (s->decode) { /* full or growing cache, fp32 or bf16 */
    if (L->cache16)
      cal_f32_to_bf16_n(L->q, L->q16, s->batch * H * hd);
    rc = cal_layer_attend_decode(L);
  } else if (L->attn16 >= 0) { /* bf16 prefill: attention in bf16 */
    cal_f32_to_bf16_n(L->q, L->q16, s->batch * H * lq * hd);
    cal_f32_to_bf16_n(L->kc, L->kc16, s->batch * G * lk * hd);
    cal_f32_to_bf16_n(L->vc, L->vc16, s->batch * G * lk * hd);
    rc = cal_attn_fused_bf16(&as, L->q16, L->kc16, L->vc16, L->o, L->attn16,
                             L->ws, NULL);
  } else {
    rc = cal_attn_fused(&as, L->q, L->kc, L->vc, L->o, L->variant, L->ws,
                        NULL);
  }
  if (rc < 0)
    return rc;
  /* gather o back to token rows [tok][h*hd] */
#pragma omp parallel for schedule(static)
  for (int64_t tok = 0; tok < t; tok++) {
    int64_t b = tok / lq, i = tok % lq;
    for (int64_t h = 0; h < H; h++)
      memcpy(L->ao + tok * hq + h * hd, L->o + ((b * H + h) * lq + i) * hd,
             4 * (size_t)hd);
  }
  if ((rc = product(L, CAL_LAYER_O, L->ao, L->ao16, t, hq)) < 0)
    return rc;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < t * d; i++)
    L->x1[i] += L->x[i];
  rmsnorm(L->x1, L->g2, L->h, t, d);
  if ((rc = product(L, CAL_LAYER_GU, L->h, L->h16, t, d)) < 0)
    return rc;
#pragma omp parallel for schedule(static)
  for (int64_t tok = 0; tok < t; tok++) {
    const float *gate = L->gu + tok * 2 * f, *up = gate + f;
    float *a = L->a + tok * f;
    for (int64_t j = 0; j < f; j++)
      a[j] = gate[j] / (1.0f + expf(-gate[j])) * up[j];
  }
  if ((rc = product(L, CAL_LAYER_DOWN, L->a, L->a16, t, f)) < 0)
    return rc;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < t * d; i++)
    L->out[i] += L->x1[i];
  return 0;
}

static double layer_flops(const cal_params_t *p) {
  cal_layer_shape_t s;
  cal_layer_shape_from_params(p, &s);
  return cal_layer_flops(&s);
}

/* weights read once, the KV cache read once, token activations in/out */
static double layer_bytes_as(const cal_params_t *p, int bf16) {
  cal_layer_shape_t s;
  cal_layer_shape_from_params(p, &s);
  s.bf16 = bf16;
  cal_layer_layout_t l;
  cal_layer_layout(&s, &l);
  return cal_layer_read_bytes(&s) + 8.0 * (double)l.tokens * (double)s.hidden;
}

static double layer_mem_as(const cal_params_t *p, int bf16) {
  cal_layer_shape_t s;
  cal_layer_shape_from_params(p, &s);
  s.bf16 = bf16;
  return cal_layer_mem_bytes(&s);
}

static const char *layer_variant(const void *state) {
  return cal_variant_name(((const cal_layer_t *)state)->variant);
}

static const char *layer_impl(const void *state) {
  return ((const cal_layer_t *)state)->impl;
}

static cal_engine_t layer_engine(const void *state) {
  const cal_layer_t *L = state;
  return L->team ? CAL_ENGINE_BUILTIN : L->engine;
}

static int layer_setup_as(const cal_params_t *p, void **st, int decode,
                          int bf16) {
  cal_params_t q = *p;
  q.decode = decode;
  return layer_setup(&q, st, bf16);
}

static int layer_run(void *state) { return cal_layer_run(state); }
#define layer_verify cal_layer_verify

/* one layer, set up per point: no re-shaping */
#define layer_reshape NULL
CAL_FORWARD_KERNELS(layer, layer);
