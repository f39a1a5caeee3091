/* The model's forward step (model.h): distinct layers chained to the
 * depth with the LM head, verified; its figures; the choice of distinct
 * layers; and the inference head alone (lm_logits.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cal_err.h"
#include "kernel.h"
#include "layer.h"
#include "layer_internal.h"
#include "cal_isa.h"
#include "lm_logits.h"
#include "model.h"
#include "test_util.h"

static cal_params_t small(int64_t batch, int64_t layers, int64_t depth) {
  cal_params_t p = {0};
  p.hidden = 64;
  p.heads = 4;
  p.kv_heads = 2;
  p.ffn = 96;
  p.seq = 13; /* ragged */
  p.batch = batch;
  p.threads = 1;
  p.seed = 5;
  p.variant = -1;
  p.layers = layers;
  p.depth = depth;
  p.n = 300; /* vocabulary: not a multiple of a cache line of floats */
  return p;
}

/* the tiny preset at batch b, every layer distinct */
static cal_params_t tiny(int64_t b) {
  const cal_layer_preset_t *t = cal_layer_preset_find("tiny");
  assert_non_null(t);
  cal_params_t p = small(b, t->layers, t->layers);
  p.hidden = t->hidden;
  p.heads = t->heads;
  p.kv_heads = t->kv_heads;
  p.ffn = t->ffn;
  p.seq = t->seq;
  p.n = t->vocab;
  return p;
}

/* setup, a poisoned output fails, a run verifies (twice) */
static void run_model(const char *name, cal_params_t p) {
  const cal_kernel_t *k = cal_kernel_find(name);
  assert_non_null(k);
  const char *why = NULL;
  if (k->supported && k->supported(&p, &why) < 0)
    return; /* bf16 has no native path here: the sweep skips it too */
  void *st = NULL;
  assert_int_equal(k->setup(&p, &st), 0);
  assert_int_equal(k->verify(st), CAL_EVERIFY);
  for (int i = 0; i < 2; i++) /* again: decode rewrites its cache slots */
    assert_true(k->run(st) == 0 && k->verify(st) == 0);
  k->teardown(st);
}

static void model_steps_verify(void **state) {
  (void)state;
  static const char *const names[] = {"model_prefill", "model_decode",
                                      "model_prefill_bf16",
                                      "model_decode_bf16"};
  for (int i = 0; i < 4; i++) {
    run_model(names[i], small(1, 3, 3));  /* the whole depth distinct */
    run_model(names[i], small(3, 2, 5));  /* cycled over two sets */
    run_model(names[i], small(2, 1, 1));  /* one layer */
  }
  /* decode on both paths */
  cal_params_t p = small(3, 2, 4);
  p.path = "gemv";
  run_model("model_decode", p);
  run_model("model_decode_bf16", p);
  p.path = "blas";
  run_model("model_decode", p);
}

/* the tiny preset as the sweep runs it: its depth and vocabulary, every
 * layer distinct, and a deeper stack cycled over three */
static void tiny_preset(void **state) {
  (void)state;
  cal_params_t p = tiny(2);
  p.threads = 2;
  run_model("model_prefill_bf16", p);
  run_model("model_decode", p);
  p.layers = 3;
  p.depth = 7;
  run_model("model_prefill", p);
  run_model("model_decode_bf16", p);
}

/* a layer whose weights were changed after its run fails: the chain's
 * layers are each checked, not only the ends' figures */
static void wrong_weights_fail(void **state) {
  (void)state;
  const cal_kernel_t *k = cal_kernel_find("model_prefill");
  cal_params_t p = small(2, 3, 3);
  void *st = NULL;
  assert_int_equal(k->setup(&p, &st), 0);
  assert_int_equal(k->run(st), 0);
  /* the last layer's down projection */
  cal_layer_t **L = ((cal_model_t *)st)->L;
  L[2]->wd[7] += 0.5f;
  assert_int_equal(k->verify(st), CAL_EVERIFY);
  L[2]->wd[7] -= 0.5f;
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->verify(st), 0);
  k->teardown(st);
}

static void head_alone(void **state) {
  (void)state;
  float x[3 * 40];
  for (int i = 0; i < 120; i++)
    x[i] = (float)sin(0.37 * i);
  for (int team = 0; team < 2; team++) {
    cal_lm_logits_t *H = NULL;
    assert_int_equal(cal_lm_logits_create(3, 40, 77, 0, team, 0,
                                          CAL_ENGINE_BUILTIN, 9, &H), 0);
    assert_int_equal(cal_lm_logits_run(H, x, 40), 0);
    assert_int_equal(cal_lm_logits_verify(H, x, 40), 0);
    H->logits[2 * 77 + 5] += 1.0f; /* the last row is checked */
    assert_int_equal(cal_lm_logits_verify(H, x, 40), CAL_EVERIFY);
    cal_lm_logits_free(H);
  }
  assert_int_equal(cal_lm_logits_create(0, 40, 77, 0, 0, 0,
                                        CAL_ENGINE_BUILTIN, 9, NULL), CAL_EINVAL);
}

/* An fp32 head on the team holds W packed with every SIMD variant the CPU
 * runs (a vocabulary of ragged blocks), its logits verifying and a wrong
 * one caught; the portable variant keeps W row-major. */
static void head_packed_f32(void **state) {
  (void)state;
  float x[3 * 40];
  for (int i = 0; i < 120; i++)
    x[i] = (float)sin(0.29 * i);
  for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
    if (!cal_variant_supported(v))
      continue;
    cal_lm_logits_t *H = NULL;
    assert_int_equal(cal_lm_logits_create(3, 40, 301, 0, 1, v,
                                          CAL_ENGINE_BUILTIN, 9, &H), 0);
    assert_int_equal(H->wpf != NULL, cal_gemv_packed_for(v) != NULL);
    assert_int_equal(H->w == NULL, H->wpf != NULL);
    assert_int_equal(cal_lm_logits_run(H, x, 40), 0);
    assert_int_equal(cal_lm_logits_verify(H, x, 40), 0);
    H->logits[2 * 301 + 300] += 1.0f; /* the last row's ragged block */
    assert_int_equal(cal_lm_logits_verify(H, x, 40), CAL_EVERIFY);
    cal_lm_logits_free(H);
  }
}

/* A bf16 head on the team where the CPU has AVX512_BF16 holds W packed:
 * the same draws as the portable head's row-major W (an odd hidden size:
 * a last pair of one row), the same logits within fp32 summation, its
 * verification passing and failing on a wrong logit. */
static void head_packed(void **state) {
  (void)state;
  if (!cal_gemv_packed_ok(CAL_VARIANT_AVX512))
    cal_test_skip("packed bf16 head not run: the CPU lacks AVX512_BF16");
  float x[3 * 41];
  for (int i = 0; i < 123; i++)
    x[i] = (float)sin(0.37 * i);
  cal_lm_logits_t *H = NULL, *R = NULL;
  assert_int_equal(cal_lm_logits_create(3, 41, 300, 1, 1, CAL_VARIANT_AVX512,
                                        CAL_ENGINE_BUILTIN, 9, &H), 0);
  assert_int_equal(cal_lm_logits_create(3, 41, 300, 1, 1, CAL_VARIANT_SCALAR,
                                        CAL_ENGINE_BUILTIN, 9, &R), 0);
  assert_true(H->wp && !H->w16 && R->w16 && !R->wp);
  for (int64_t k = 0; k < 41; k++)
    for (int64_t j = 0; j < 300; j++)
      assert_int_equal(cal_gemv_packed_at(H->wp, 41, k, j), R->w16[k * 300 + j]);
  assert_int_equal(cal_lm_logits_run(H, x, 41), 0);
  assert_int_equal(cal_lm_logits_run(R, x, 41), 0);
  assert_int_equal(cal_lm_logits_verify(H, x, 41), 0);
  for (int i = 0; i < 3 * 300; i++)
    assert_true(fabs(H->logits[i] - R->logits[i]) <= 1e-5 * (1.0 + fabs(R->logits[i])));
  H->logits[2 * 300 + 299] += 1.0f;
  assert_int_equal(cal_lm_logits_verify(H, x, 41), CAL_EVERIFY);
  cal_lm_logits_free(H);
  cal_lm_logits_free(R);
}

static void figures(void **state) {
  (void)state;
  cal_layer_shape_t s = {64, 4, 2, 96, 13, 2, 1, 1, 0, 0};
  double layer = cal_layer_flops(&s);
  assert_true(fabs(cal_model_flops(&s, 5, 300) - (5 * layer + 2.0 * 2 * 64 * 300)) < 1e-6);
  double rb = 5 * cal_layer_read_bytes(&s) + 2.0 * 64 * 300 + 4.0 * 64;
  assert_true(fabs(cal_model_read_bytes(&s, 5, 300) - rb) < 1e-6);
  /* each distinct layer adds its weights and KV cache */
  double one = cal_model_mem_bytes(&s, 1, 300), two = cal_model_mem_bytes(&s, 2, 300);
  cal_layer_layout_t l;
  cal_layer_layout(&s, &l);
  /* a bf16 decode layer's cache is bf16 */
  assert_true(l.kv_b == 2.0);
  assert_true(fabs(two - one - (cal_layer_weight_bytes(&s) + 2.0 * l.kv_f)) < 1e-6);
  assert_true(one > cal_layer_mem_bytes(&s));
}

static void distinct_layers(void **state) {
  (void)state;
  cal_layer_shape_t s = {896, 14, 2, 4864, 128, 1, 1, 1, 0, 0}; /* qwen2-0.5b */
  double w = cal_layer_weight_bytes(&s), all = cal_model_mem_bytes(&s, 24, 151936);
  /* the whole depth where it fits */
  assert_int_equal(cal_model_distinct_layers(&s, 24, 151936, 32 << 20, all), 24);
  /* else enough to exceed 4x the LLC: 32 MiB and ~30 MB a layer */
  int64_t n = cal_model_distinct_layers(&s, 24, 151936, 32 << 20, all - 1);
  assert_true(n * w > 4.0 * (32 << 20) && (n - 1) * w <= 4.0 * (32 << 20));
  /* a 1 GiB LLC: more than the depth holds; as many as fit */
  n = cal_model_distinct_layers(&s, 24, 151936, 1073741824.0, all - 1);
  assert_int_equal(n, 23);
  /* never fewer than one, whatever the budget */
  assert_int_equal(cal_model_distinct_layers(&s, 24, 151936, 32 << 20, 1.0), 1);
}

/* The inference workload's step (model_infer): prefill then gen decode
 * steps, verified on the tiny preset; its FLOPs and bytes are the
 * prefill's plus each decode step's at its own cache length (seq + t past
 * tokens: the cache grows); its memory both steps' (the decode step's
 * cache sized for seq + gen); a wrong decode weight fails; no generated
 * token is refused. */
static void inference_step(void **state) {
  (void)state;
  cal_params_t p = tiny(2);
  p.gen = 3;
  run_model("model_infer", p);
  run_model("model_infer_bf16", p);
  const cal_kernel_t *k = cal_kernel_find("model_infer");
  const cal_kernel_t *kp = cal_kernel_find("model_prefill");
  const cal_kernel_t *kd = cal_kernel_find("model_decode");
  assert_true(k && kp && kd);
  cal_params_t d = p;
  d.decode = 1;
  assert_float_equal(k->mem_bytes(&p), kp->mem_bytes(&p) + kd->mem_bytes(&d),
                     1e-6 * k->mem_bytes(&p));
  cal_params_t fixed = d;
  fixed.gen = 0;
  assert_true(kd->mem_bytes(&d) > kd->mem_bytes(&fixed)); /* 2 slots more */
  double flops = kp->flops(&p), bytes = kp->bytes(&p);
  for (int t = 0; t < 3; t++) {
    fixed.seq = p.seq + t;
    flops += kd->flops(&fixed);
    bytes += kd->bytes(&fixed);
  }
  assert_float_equal(k->flops(&p), flops, 1e-6 * flops);
  /* model_decode's bytes add the activations' rows in and out */
  assert_true(k->bytes(&p) <= bytes && k->bytes(&p) > 0.9 * bytes);
  void *st = NULL;
  assert_int_equal(k->setup(&p, &st), 0);
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->verify(st), 0);
  /* the decode step's last layer, changed after its run: its down
   * projection */
  /* the state begins with its prefill and decode steps (model_infer.c) */
  cal_model_t *dec = ((cal_model_t **)st)[1];
  *cal_layer_weight_f32(dec->L[dec->n - 1], CAL_LAYER_DOWN, 0, 3) += 0.5f;
  assert_int_equal(k->verify(st), CAL_EVERIFY);
  k->teardown(st);
  p.gen = 0;
  st = NULL;
  assert_int_equal(k->setup(&p, &st), CAL_EINVAL);
}

/* A decode step over a growing cache: each position verifies against the
 * double reference over the slots up to it, on both paths, at a batch
 * and kv heads that leave threads fewer (sequence, kv head) pairs than
 * query heads; a slot past the position is never read (poisoned, the
 * step still verifies), and a wrong slot before it is. */
static void growing_cache(void **state) {
  (void)state;
  static const char *const paths[] = {"gemv", "blas"};
  for (int pi = 0; pi < 2; pi++) {
    cal_params_t p = small(1, 1, 1);
    p.gen = 4;
    p.decode = 1;
    p.threads = 2;
    p.kv_heads = pi ? 2 : 1; /* one pair: its query heads split */
    p.path = paths[pi];
    cal_model_t *M = NULL;
    assert_int_equal(cal_model_create(&p, 1, 0, &M), 0);
    cal_layer_t *L = M->L[0];
    assert_int_equal(L->l.lk, p.seq + 4);
    for (int64_t t = 0; t < 4; t++) {
      cal_model_set_pos(M, p.seq + t);
      assert_int_equal(L->pos, p.seq + t);
      if (t == 1) /* slot seq + 3 (kv head 0): not attended yet */
        for (int64_t e = 0; e < L->l.hd; e++)
          L->kc[(p.seq + 3) * L->l.hd + e] = NAN;
      assert_int_equal(cal_model_run(M), 0);
      assert_int_equal(cal_model_verify(M), 0);
    }
    /* out of the cache: the position stays */
    cal_model_set_pos(M, p.seq + 4);
    assert_int_equal(L->pos, p.seq + 3);
    /* a past slot changed after the run: the reference reads it too, so
     * the run's output no longer matches */
    cal_model_set_pos(M, p.seq + 2);
    assert_int_equal(cal_model_run(M), 0);
    L->vc[1 * L->l.hd] += 4.0f;
    assert_int_equal(cal_model_verify(M), CAL_EVERIFY);
    cal_model_free(M);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(model_steps_verify),
      cmocka_unit_test(tiny_preset),
      cmocka_unit_test(wrong_weights_fail),
      cmocka_unit_test(head_alone),
      cmocka_unit_test(head_packed_f32),
    cmocka_unit_test(head_packed),
      cmocka_unit_test(figures),
      cmocka_unit_test(distinct_layers),
      cmocka_unit_test(inference_step),
      cmocka_unit_test(growing_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
