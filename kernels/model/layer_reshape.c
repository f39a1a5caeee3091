/* The part of a layer's setup that depends on the batch (see
 * layer_internal.h): the KV cache, the activations, the attention's
 * workspace, the team's rows, the bf16 scratch, each sequence's input
 * and cache, and the engine's products bound to them.  cal_layer_create
 * makes it once the weights are made; cal_layer_reshape re-makes it alone
 * for another batch, so that a batch sweep keeps a model's weights (the
 * seconds of drawing and packing them) between its points.  The weights'
 * form depends on the path (packed for the team's GEMV, row-major for the
 * engine's GEMM), so a reshape stays on its path. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "cal_err.h"
#include "cal_mem.h"
#include "engine.h"
#include "layer_internal.h"

/* Whether a and b are the same shape but for the batch. */
static int same_but_batch(const cal_layer_shape_t *a,
                          const cal_layer_shape_t *b) {
  return a->hidden == b->hidden && a->heads == b->heads &&
         a->kv_heads == b->kv_heads && a->ffn == b->ffn && a->seq == b->seq &&
         a->decode == b->decode && a->bf16 == b->bf16 && a->grow == b->grow &&
         a->lora_rank == b->lora_rank;
}

/* Whether L may run on share's rows: the same shape and path, and on the
 * team as many threads (the rows of hteam and xteam). */
static int share_fits(const cal_layer_t *L, const cal_layer_t *share) {
  return same_but_batch(&L->s, &share->s) && L->s.batch == share->s.batch &&
         L->team == share->team && L->nthreads == share->nthreads;
}

/* The KV cache, the layer's own: bf16 in a bf16 decode layer. */
static int alloc_cache(cal_layer_t *L) {
  const cal_layer_shape_t *s = &L->s;
  size_t kvn = (size_t)(s->batch * s->kv_heads * L->l.lk * L->l.hd);
  if (L->cache16) {
    L->kc16 = cal_alloc(2 * kvn);
    L->vc16 = cal_alloc(2 * kvn);
  } else {
    L->kc = cal_alloc(4 * kvn);
    L->vc = cal_alloc(4 * kvn);
  }
  return (L->kc || L->kc16) && (L->vc || L->vc16) ? 0 : CAL_ENOMEM;
}

/* The activations, the attention's workspace, the team's rows and the
 * bf16 scratch: share's (a model's layers run one at a time over the same
 * rows), or the layer's own. */
static int alloc_acts(cal_layer_t *L, const cal_layer_t *share) {
  if (L->borrowed) {
    L->x = share->x; L->h = share->h; L->out = share->out;
    L->x1 = share->x1; L->qkv = share->qkv; L->q = share->q;
    L->o = share->o; L->ao = share->ao; L->gu = share->gu; L->a = share->a;
    L->h16 = share->h16; L->ao16 = share->ao16; L->a16 = share->a16;
    L->q16 = share->q16;
    if (!L->cache16) { /* bf16 prefill's scratch copies */
      L->kc16 = share->kc16;
      L->vc16 = share->vc16;
    }
    L->hteam = share->hteam;
    L->xteam = share->xteam;
    L->ws = share->ws;
    return 0;
  }
  const cal_layer_shape_t *s = &L->s;
  size_t d = (size_t)s->hidden, f = (size_t)s->ffn, t = (size_t)L->l.tokens;
  size_t hq = (size_t)(s->heads * L->l.hd), nt = (size_t)L->nthreads;
  float **f32[] = {&L->x, &L->h, &L->out, &L->x1, &L->qkv, &L->q, &L->o,
                   &L->ao, &L->gu, &L->a};
  const size_t n32[] = {t * d, t * d, t * d, t * d, t * (size_t)L->l.nqkv,
                        t * hq, t * hq, t * hq, t * 2 * f, t * f};
  for (size_t i = 0; i < sizeof n32 / sizeof *n32; i++)
    if (!(*f32[i] = cal_alloc(4 * n32[i])))
      return CAL_ENOMEM;
  if (s->bf16 && (!(L->h16 = cal_alloc(2 * t * d)) ||
                  !(L->ao16 = cal_alloc(2 * t * hq)) ||
                  !(L->a16 = cal_alloc(2 * t * f)) ||
                  !(L->q16 = cal_alloc(2 * t * hq))))
    return CAL_ENOMEM;
  size_t kvn = (size_t)(s->batch * s->kv_heads * L->l.lk * L->l.hd);
  if (s->bf16 && !s->decode && (!(L->kc16 = cal_alloc(2 * kvn)) ||
                                !(L->vc16 = cal_alloc(2 * kvn))))
    return CAL_ENOMEM;
  /* the team: per thread, the normalised rows, and in bf16 o or a rounded */
  size_t k = hq > f ? hq : f;
  if (L->team && (!(L->hteam = cal_alloc(4 * nt * t * d)) ||
                  (s->bf16 && !(L->xteam = cal_alloc(4 * nt * t * k)))))
    return CAL_ENOMEM;
  if (L->l.ws_bytes > 0 && !(L->ws = cal_alloc((size_t)L->l.ws_bytes)))
    return CAL_ENOMEM;
  return 0;
}

/* Each sequence's input rows (x, share's in a borrowing layer) and KV
 * cache from its own stream of the seed, so that sequence b is the same
 * at every batch, a reshaped layer's as a fresh one's; a bf16 cache holds
 * the same draws rounded, staged a sequence at a time. */
static int fill_sequences(cal_layer_t *L) {
  const cal_layer_shape_t *s = &L->s;
  const cal_layer_layout_t *l = &L->l;
  const size_t d = (size_t)s->hidden, seq_tokens = (size_t)l->lq;
  const size_t cache_seq = (size_t)(s->kv_heads * l->lk * l->hd);
  float *tmp = NULL;
  if (L->cache16 && !(tmp = cal_alloc(4 * cache_seq)))
    return CAL_ENOMEM;
  for (int64_t b = 0; b < s->batch; b++) {
    cal_rng_t rb;
    size_t at = (size_t)b * cache_seq;
    cal_rng_seed(&rb, L->seed ^ (0x5e9a11ULL + 0x1000193ULL * (uint64_t)b));
    cal_fill_f32(L->x + (size_t)b * seq_tokens * d, seq_tokens * d, -1.0f,
                 1.0f, &rb);
    if (!L->cache16) {
      cal_fill_f32(L->kc + at, cache_seq, -2.0f, 2.0f, &rb);
      cal_fill_f32(L->vc + at, cache_seq, -1.0f, 1.0f, &rb);
      continue;
    }
    cal_fill_f32(tmp, cache_seq, -2.0f, 2.0f, &rb);
    for (size_t i = 0; i < cache_seq; i++)
      L->kc16[at + i] = cal_f32_to_bf16(tmp[i]);
    cal_fill_f32(tmp, cache_seq, -1.0f, 1.0f, &rb);
    for (size_t i = 0; i < cache_seq; i++)
      L->vc16[at + i] = cal_f32_to_bf16(tmp[i]);
  }
  cal_free(tmp);
  return 0;
}

/* The BLAS path's products on the chosen engine (its row's products:
 * OpenBLAS's sgemm or sbgemm, oneDNN's matmul, fp32 or bf16 inputs), each
 * bound to the weights and to the token rows, whose count is the batch's;
 * CAL_ENGINE_BUILTIN: cal_engine_default. */
static int products_setup(cal_layer_t *L, cal_engine_t engine) {
  const cal_layer_shape_t *s = &L->s;
  const int64_t t = L->l.tokens, d = s->hidden, f = s->ffn;
  const int64_t hq = s->heads * L->l.hd, nqkv = L->l.nqkv;
  cal_gemm_dt_t dt = s->bf16 ? CAL_GEMM_BF16 : CAL_GEMM_F32;
  if (engine == CAL_ENGINE_BUILTIN)
    engine = cal_engine_default(s->bf16);
  const cal_engine_row_t *row = cal_engine_row(engine);
  if (!row || !row->mm_create)
    return CAL_EINVAL;
  L->engine = engine;
  L->eng = row;
  const int64_t dims[CAL_LAYER_NMM][3] = {
      {t, nqkv, d}, {t, d, hq}, {t, 2 * f, d}, {t, d, f}};
  void *a[CAL_LAYER_NMM], *b[CAL_LAYER_NMM];
  float *c[CAL_LAYER_NMM] = {L->qkv, L->x1, L->gu, L->out};
  if (s->bf16) {
    a[0] = L->h16; a[1] = L->ao16; a[2] = L->h16; a[3] = L->a16;
    b[0] = L->wqkv16; b[1] = L->wo16; b[2] = L->wgu16; b[3] = L->wd16;
  } else {
    a[0] = L->h; a[1] = L->ao; a[2] = L->h; a[3] = L->a;
    b[0] = L->wqkv; b[1] = L->wo; b[2] = L->wgu; b[3] = L->wd;
  }
  snprintf(L->impl, sizeof L->impl, "%s", cal_engine_name(engine));
  for (int i = 0; i < CAL_LAYER_NMM; i++) {
    int rc = row->mm_create(dt, dims[i][0], dims[i][1], dims[i][2], a[i], b[i],
                            c[i], &L->mm[i]);
    if (rc < 0)
      return rc;
    /* the implementations, each named once */
    const char *impl = row->mm_impl(L->mm[i]);
    if (!strstr(L->impl, impl)) {
      size_t n = strlen(L->impl);
      snprintf(L->impl + n, sizeof L->impl - n, "%s%s", i ? "," : " ", impl);
    }
  }
  return 0;
}

int cal_layer_batch_setup(cal_layer_t *L, cal_engine_t engine,
                          const cal_layer_t *share) {
  int rc;
  if (L->borrowed != (share != NULL) || (share && !share_fits(L, share)))
    return CAL_EINVAL;
  if ((rc = alloc_cache(L)) < 0 || (rc = alloc_acts(L, share)) < 0 ||
      (rc = fill_sequences(L)) < 0)
    return rc;
  /* NaN until a run writes it */
  memset(L->out, 0xff, 4 * (size_t)L->l.tokens * (size_t)L->s.hidden);
  return L->team ? 0 : products_setup(L, engine);
}

void cal_layer_batch_free(cal_layer_t *L) {
  for (int i = 0; L->eng && i < CAL_LAYER_NMM; i++) {
    L->eng->mm_free(L->mm[i]);
    L->mm[i] = NULL;
  }
  /* the cache is the layer's own: a bf16 decode layer's kc16 and vc16,
   * else kc and vc (kc16 and vc16 then bf16 prefill's scratch, shared
   * like the activations) */
  uint16_t *kc16 = L->cache16 ? L->kc16 : NULL;
  uint16_t *vc16 = L->cache16 ? L->vc16 : NULL;
  cal_free_each(L->kc, L->vc, kc16, vc16);
  if (!L->borrowed)
    cal_free_each(L->x, L->h, L->out, L->x1, L->qkv, L->q, L->o, L->ao,
                  L->gu, L->a, L->hteam, L->xteam, L->h16, L->ao16, L->a16,
                  L->q16, kc16 ? NULL : L->kc16, vc16 ? NULL : L->vc16,
                  L->ws);
  L->x = L->h = L->out = L->x1 = L->qkv = L->q = L->o = L->ao = NULL;
  L->gu = L->a = L->kc = L->vc = L->hteam = L->xteam = NULL;
  L->h16 = L->ao16 = L->a16 = L->q16 = L->kc16 = L->vc16 = NULL;
  L->ws = NULL;
}

int cal_layer_reshape_check(const cal_layer_t *L, const cal_params_t *p) {
  cal_layer_shape_t s;
  cal_layer_shape_from_params(p, &s);
  s.bf16 = L->s.bf16;
  int rc = cal_layer_check_shape(&s, NULL, 0);
  if (rc < 0 || !same_but_batch(&s, &L->s))
    return rc < 0 ? rc : CAL_EINVAL;
  int team = cal_layer_path_team(&s, p->path);
  if (team < 0)
    return team;
  return team == L->team ? 0 : CAL_EUNSUPP;
}

int cal_layer_reshape(cal_layer_t *L, const cal_params_t *p,
                      const cal_layer_t *share) {
  int rc = cal_layer_reshape_check(L, p);
  if (rc < 0)
    return rc;
  cal_layer_batch_free(L);
  cal_layer_set_shape(L, p, L->s.bf16);
  return cal_layer_batch_setup(L, p->engine, share);
}
