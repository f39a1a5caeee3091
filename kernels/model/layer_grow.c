/* Decode attention, over the full KV cache or a growing one, in fp32 or
 * (a bf16 decode layer) in bf16 over its bf16 cache.
 *
 * A growing KV cache (layer.h, cal_layer_shape_t.grow): a
 * generate loop's step t writes its token's key and value at slot seq + t
 * of a cache laid out for seq + grow slots and attends over the seq + t +
 * 1 slots up to it.  The attention kernels read a cache as contiguous
 * [kv_heads][keys][head_dim] rows per sequence, so a cache filled to
 * fewer keys than its slots is attended one (sequence, kv head) at a
 * time, where the keys are contiguous: each such item (split further by
 * its query heads where there are fewer items than threads) is a shape of
 * one sequence and one kv head, run by one thread of the caller's team on
 * a team of its own (a one-thread region), the items shared out by an
 * orphaned worksharing loop. */
#include <omp.h>

#include "attention.h"
#include "cal_err.h"
#include "layer_internal.h"

void cal_layer_set_pos(cal_layer_t *L, int64_t pos) {
  if (L->s.decode && pos >= L->s.seq && pos < L->l.lk)
    L->pos = pos;
}

/* Attention of shape s shared by the calling team, its queries and
 * outputs from element qo of q (q16) and o, its keys and values from
 * element kv of the cache: fp32, or bf16 over the bf16 cache. */
static int attend_team(const cal_layer_t *L, const cal_attn_shape_t *s,
                       size_t qo, size_t kv) {
  if (L->cache16)
    return cal_attn_fused_bf16_team(s, L->q16 + qo, L->kc16 + kv,
                                    L->vc16 + kv, L->o + qo, L->attn16);
  return cal_attn_fused_team(s, L->q + qo, L->kc + kv, L->vc + kv, L->o + qo,
                             L->variant);
}

/* The query heads of one kv head each item takes: all of them, or fewer
 * where (sequence, kv head) pairs are fewer than the team's threads. */
static int64_t heads_per_item(const cal_layer_t *L, int nt) {
  const int64_t pairs = L->s.batch * L->s.kv_heads;
  const int64_t per = L->s.heads / L->s.kv_heads;
  int64_t split = pairs >= nt ? 1 : (nt + pairs - 1) / pairs;
  if (split > per)
    split = per;
  return (per + split - 1) / split;
}

/* The items of the calling thread; every thread of the team calls it
 * (outside a team: the caller does them all). */
static int attend_items(const cal_layer_t *L) {
  const int64_t B = L->s.batch, H = L->s.heads, G = L->s.kv_heads;
  const int64_t hd = L->l.hd, lk = L->l.lk, nk = L->pos + 1;
  const int64_t per = H / G, hc = heads_per_item(L, omp_get_num_threads());
  const int64_t chunks = (per + hc - 1) / hc, items = B * G * chunks;
  cal_params_t ap = {.batch = 1, .heads = hc, .kv_heads = 1, .nq = 1,
                     .nk = nk, .head_dim = hd, .causal = 1};
  /* the same answer on every thread, before any work */
  if (nk < 1 || nk > lk || cal_attn_check_shape(&ap, 0, NULL, 0) < 0)
    return CAL_EINVAL;
  int rc = 0;
#pragma omp for schedule(dynamic, 1)
  for (int64_t it = 0; it < items; it++) {
    const int64_t bg = it / chunks, h0 = (it % chunks) * hc;
    const int64_t b = bg / G, g = bg % G;
    const int64_t nh = per - h0 < hc ? per - h0 : hc;
    const cal_attn_shape_t one = {1, nh, 1, 1, nk, hd, 1};
    const size_t qo = (size_t)((b * H + g * per + h0) * hd);
    const size_t kv = (size_t)(bg * lk * hd);
    int r = 0;
#pragma omp parallel num_threads(1)
    r = attend_team(L, &one, qo, kv);
    if (r < 0)
      rc = r; /* checked above: not seen */
  }
  return rc;
}

/* Full cache or growing; on the calling team. */
static int attend(const cal_layer_t *L) {
  const cal_attn_shape_t as = {L->s.batch, L->s.heads, L->s.kv_heads, 1,
                               L->l.lk, L->l.hd, 1};
  if (L->pos + 1 < L->l.lk) /* a growing cache, not yet full */
    return attend_items(L);
  return attend_team(L, &as, 0, 0);
}

int cal_layer_attend_decode(const cal_layer_t *L) {
  if (omp_in_parallel())
    return attend(L);
  int rc = 0;
#pragma omp parallel
  {
    int r = attend(L);
    if (r < 0 && omp_get_thread_num() == 0)
      rc = r;
  }
  return rc;
}
