/* The attention tests' inputs: Q, K, V, O buffers filled from a seed and
 * the grid of small shapes every variant runs on.  Include after
 * test_util.h. */
#ifndef CAL_ATTENTION_TEST_DATA_H
#define CAL_ATTENTION_TEST_DATA_H

typedef struct {
  cal_attn_shape_t s;
  float *q, *k, *v, *o;
  size_t nqo, nkv;
} bufs_t;

static void bufs_free(bufs_t *b) {
  cal_free(b->q);
  cal_free(b->k);
  cal_free(b->v);
  cal_free(b->o);
}

/* Q, K uniform in [-qk, qk], V in [-1, 1]; O poisoned with NaN. */
static void bufs_init(bufs_t *b, const cal_attn_shape_t *s, uint64_t seed,
                      float qk) {
  b->s = *s;
  b->nqo = (size_t)(s->batch * s->heads * s->nq * s->head_dim);
  b->nkv = (size_t)(s->batch * s->kv_heads * s->nk * s->head_dim);
  b->q = cal_alloc(b->nqo * sizeof(float));
  b->o = cal_alloc(b->nqo * sizeof(float));
  b->k = cal_alloc(b->nkv * sizeof(float));
  b->v = cal_alloc(b->nkv * sizeof(float));
  assert_non_null(b->q);
  assert_non_null(b->o);
  assert_non_null(b->k);
  assert_non_null(b->v);
  cal_rng_t r;
  cal_rng_seed(&r, seed);
  cal_fill_f32(b->q, b->nqo, -qk, qk, &r);
  cal_fill_f32(b->k, b->nkv, -qk, qk, &r);
  cal_fill_f32(b->v, b->nkv, -1.0f, 1.0f, &r);
  memset(b->o, 0xff, b->nqo * sizeof(float));
}

static const cal_attn_shape_t grid[] = {
    /* B  H  Hkv Nq   Nk   D  causal */
    {1, 2, 2, 17, 17, 64, 1},   /* MHA prefill, N not a multiple of a tile */
    {2, 4, 2, 33, 33, 80, 1},   /* GQA, D = 80 */
    {1, 4, 1, 20, 45, 96, 1},   /* MQA, Nq < Nk causal */
    {1, 1, 1, 70, 70, 128, 0},  /* non-causal, spans two 64-key tiles */
    {1, 2, 1, 9, 100, 33, 0},   /* non-causal Nq < Nk, D = 33 */
    {1, 3, 3, 1, 70, 33, 1},    /* decode */
    {2, 4, 2, 1, 100, 128, 0},  /* decode GQA */
    {1, 2, 1, 3, 40, 64, 1},    /* few queries, causal Nq < Nk */
    {1, 20, 1, 2, 9, 16, 1},    /* MQA decode, more rows than a group */
    {1, 1, 1, 5, 5, 1, 1},      /* D = 1 */
    {1, 1, 1, 66, 66, 256, 1},  /* D at the maximum */
    {1, 2, 2, 6, 6, 7, 0},      /* tiny */
};

#endif
