/* Profile JSON of the attention section:
 *   "attention": {flops_note, gemm_reference{t<threads>: {gflops, source}},
 *                 gemm_reference_bf16{t<threads>: ...} (when bf16 points
 *                 ran), points[]}
 * each point in the point convention (metric "gflops", also "gbps"; its
 * dtype fp32 or bf16) with its shape (batch, heads, kv_heads, nq, nk,
 * head_dim, causal, mode) and, when known, ratio_to_gemm (against the
 * GEMM reference of its dtype) and (fp32 fused points)
 * speedup_vs_reference. */
#include <stdio.h>

#include "point_json.h"
#include "results.h"
#include "run_result.h"

static const char flops_note[] =
    "4*B*H*D*sum over queries of keys attended (exact for causal); bytes: "
    "Q, K, V read and O written once (bf16: Q, K, V in 2 bytes, O in 4)";

/* Add the shape's keys to o; -1 when out of memory. */
static int shape_into(json_t *o, const cal_attn_shape_t *s) {
  json_t *sj = json_pack(
      "{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:s}", "batch", (json_int_t)s->batch,
      "heads", (json_int_t)s->heads, "kv_heads", (json_int_t)s->kv_heads, "nq",
      (json_int_t)s->nq, "nk", (json_int_t)s->nk, "head_dim",
      (json_int_t)s->head_dim, "causal", s->causal, "mode",
      s->nq == 1 && s->nk > 1 ? "decode" : "prefill");
  int rc = sj ? json_object_update(o, sj) : -1;
  json_decref(sj);
  return rc;
}

static json_t *point_json(const cal_attn_point_t *ap) {
  json_t *o = cal_point_json(&ap->pt, ap->id, "gflops");
  if (!o || shape_into(o, &ap->shape) < 0)
    goto fail;
  if (ap->pt.status == CAL_POINT_OK && ap->ratio_to_gemm > 0 &&
      json_object_set_new(o, "ratio_to_gemm", json_real(ap->ratio_to_gemm)) < 0)
    goto fail;
  if (ap->speedup_vs_reference > 0 &&
      json_object_set_new(o, "speedup_vs_reference",
                          json_real(ap->speedup_vs_reference)) < 0)
    goto fail;
  return o;
fail:
  json_decref(o);
  return NULL;
}

json_t *cal_attention_write(const cal_run_result_t *r, const void *result) {
  const cal_attention_result_t *a = result;
  json_t *sec = NULL, *gref = json_object(), *gref16 = json_object();
  json_t *points = json_array();
  (void)r;
  if (!gref || !gref16 || !points)
    goto out;
  for (size_t i = 0; i < a->ngemm_ref; i++) {
    const cal_attn_gemm_ref_t *g = &a->gemm_ref[i];
    char key[32];
    snprintf(key, sizeof key, "t%d", g->threads);
    if (json_object_set_new(g->bf16 ? gref16 : gref, key,
                            json_pack("{s:f, s:s}", "gflops", g->gflops,
                                      "source", g->source)) < 0)
      goto out;
  }
  for (size_t i = 0; i < a->npoints; i++)
    if (json_array_append_new(points, point_json(&a->points[i])) < 0)
      goto out;
  sec = json_pack("{s:s, s:O, s:O}", "flops_note", flops_note,
                  "gemm_reference", gref, "points", points);
  if (sec && json_object_size(gref16) > 0 &&
      json_object_set(sec, "gemm_reference_bf16", gref16) < 0) {
    json_decref(sec);
    sec = NULL;
  }
out:
  json_decref(gref);
  json_decref(gref16);
  json_decref(points);
  return sec;
}
