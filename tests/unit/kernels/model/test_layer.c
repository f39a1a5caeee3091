/* The model-shaped layer: verification, FLOP count, shapes, presets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "kernel.h"
#include "gemm_onednn.h"
#include "layer.h"
#include "layer_internal.h"
#include "test_util.h"

static cal_params_t tiny(int64_t batch, int decode) {
  cal_params_t p = {0};
  p.hidden = 64;
  p.heads = 4;
  p.kv_heads = 2;
  p.ffn = 96;
  p.seq = 13; /* ragged: not a multiple of any tile */
  p.batch = batch;
  p.decode = decode;
  p.threads = 1;
  p.seed = 11;
  p.variant = -1;
  return p;
}

static void run_engine(const char *name, int64_t batch, cal_engine_t engine) {
  const cal_kernel_t *k = cal_kernel_find(name);
  assert_non_null(k);
  cal_params_t p = tiny(batch, strstr(name, "decode") != NULL);
  p.engine = engine;
  void *st = NULL;
  assert_int_equal(k->setup(&p, &st), 0);
  /* nothing written yet: the poisoned output must not verify */
  assert_int_equal(k->verify(st), CAL_EVERIFY);
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->verify(st), 0);
  /* running again (the decode slot is rewritten) stays correct */
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->verify(st), 0);
  k->teardown(st);
}

static void run_and_verify(const char *name, int64_t batch) {
  run_engine(name, batch, CAL_ENGINE_BUILTIN);
}

static void prefill_and_decode_verify(void **state) {
  (void)state;
  run_and_verify("layer_prefill", 1);
  run_and_verify("layer_prefill", 3);
  run_and_verify("layer_decode", 1);
  run_and_verify("layer_decode", 5);
  /* the products on oneDNN where it runs here (fp32 always native) */
  const char *why = NULL;
  if (cal_onednn_supported(CAL_GEMM_F32, &why) == 0) {
    run_engine("layer_prefill", 3, CAL_ENGINE_ONEDNN);
    run_engine("layer_decode", 40, CAL_ENGINE_ONEDNN);
  }
}

/* Either path forced for a decode step runs and verifies at any batch;
 * the one-team path is refused for prefill and a path not named so. */
static void forced_paths_of(const char *name) {
  static const int64_t batches[] = {1, 40};
  const cal_kernel_t *kn = cal_kernel_find(name);
  const char *why = NULL;
  cal_params_t p = tiny(1, 1);
  if (kn->supported && kn->supported(&p, &why) < 0)
    cal_test_skip("%s: %s", name, why);
  for (size_t b = 0; b < 2; b++)
    for (int path = 0; path < 2; path++) {
      p = tiny(batches[b], 1);
      p.path = path ? "blas" : "gemv";
      void *st = NULL;
      assert_int_equal(kn->setup(&p, &st), 0);
      assert_int_equal(((cal_layer_t *)st)->team, !path);
      assert_int_equal(kn->run(st), 0);
      if (kn->verify(st) != 0)
        fail_msg("%s batch %lld on %s: verify failed", name,
                 (long long)batches[b], p.path);
      kn->teardown(st);
    }
}

static void forced_paths(void **state) {
  (void)state;
  forced_paths_of("layer_decode");
  void *st = NULL;
  cal_params_t p = tiny(2, 0);
  p.path = "gemv";
  assert_int_equal(cal_kernel_find("layer_prefill")->setup(&p, &st), CAL_EINVAL);
  p = tiny(2, 1);
  p.path = "fast";
  assert_int_equal(cal_kernel_find("layer_decode")->setup(&p, &st), CAL_EINVAL);
}

static void forced_paths_bf16(void **state) {
  (void)state;
  forced_paths_of("layer_decode_bf16");
}

/* The output of a set-up layer after one run (copied; free it). */
static float *output_of(const char *name, const cal_params_t *p) {
  const cal_kernel_t *k = cal_kernel_find(name);
  void *st = NULL;
  assert_int_equal(k->setup(p, &st), 0);
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->verify(st), 0);
  const cal_layer_t *L = st;
  size_t n = (size_t)(L->l.tokens * L->s.hidden);
  float *out = malloc(n * sizeof *out);
  assert_non_null(out);
  memcpy(out, L->out, n * sizeof *out);
  k->teardown(st);
  return out;
}

/* The bf16 layer where the CPU has a native bf16 path: prefill and decode
 * on both paths and every engine that runs bf16 here, verified; it
 * computes the same layer as fp32 (same weights, rounded), so the outputs
 * agree to bf16 precision; and a wrong answer fails.  Where no native
 * path exists, supported() says why and nothing runs. */
static void bf16_layer(void **state) {
  (void)state;
  const cal_kernel_t *pk = cal_kernel_find("layer_prefill_bf16");
  const cal_kernel_t *dk = cal_kernel_find("layer_decode_bf16");
  assert_non_null(pk);
  assert_non_null(dk);
  assert_string_equal(cal_kdtype_name(pk->dtype), "bf16");
  cal_params_t p = tiny(3, 0);
  const char *why = NULL;
  if (pk->supported(&p, &why) < 0) {
    assert_non_null(why);
    assert_false(cal_isa_features() & CAL_ISA_AVX512BF16 &&
                 cal_onednn_supported(CAL_GEMM_BF16, &why) == 0);
    cal_test_skip("no native bf16 path here (%s): the bf16 layer is refused",
                  why);
  }
  /* its prefill's attention runs the bf16 kernel where the CPU has one */
  void *lst = NULL;
  int av;
  assert_int_equal(pk->setup(&p, &lst), 0);
  assert_int_equal(((cal_layer_t *)lst)->attn16 >= 0,
                   cal_attn_bf16_resolve(p.variant, &av, &why) == 0);
  pk->teardown(lst);
  static const cal_engine_t engines[] = {CAL_ENGINE_BUILTIN, CAL_ENGINE_ONEDNN,
                                         CAL_ENGINE_OPENBLAS};
  for (size_t e = 0; e < 3; e++) {
    p.engine = engines[e];
    if (e && pk->supported(&p, &why) < 0)
      continue; /* e.g. a BLAS without sbgemm */
    run_engine("layer_prefill_bf16", 1, engines[e]);
    run_engine("layer_prefill_bf16", 3, engines[e]);
    run_engine("layer_decode_bf16", 40, engines[e]); /* BLAS path */
  }
  run_engine("layer_decode_bf16", 1, CAL_ENGINE_BUILTIN); /* the team path */
  run_engine("layer_decode_bf16", 5, CAL_ENGINE_BUILTIN);
  /* the same layer as fp32, to bf16's precision */
  const char *pairs[2][2] = {{"layer_prefill", "layer_prefill_bf16"},
                             {"layer_decode", "layer_decode_bf16"}};
  for (int m = 0; m < 2; m++) {
    cal_params_t q = tiny(2, m);
    float *f32 = output_of(pairs[m][0], &q), *b16 = output_of(pairs[m][1], &q);
    size_t n = (size_t)(2 * (m ? 1 : q.seq) * q.hidden);
    double ss = 0, err = 0;
    for (size_t i = 0; i < n; i++) {
      ss += (double)f32[i] * f32[i];
      err += ((double)f32[i] - b16[i]) * ((double)f32[i] - b16[i]);
    }
    /* bf16 keeps 8 bits: a few parts in a thousand, far from 0 */
    if (!(sqrt(err / ss) < 2e-2 && sqrt(err / ss) > 1e-5))
      fail_msg("%s: relative difference %.3g from fp32", pairs[m][1],
               sqrt(err / ss));
    print_message("%s: %.3g of fp32's RMS apart\n", pairs[m][1], sqrt(err / ss));
    free(f32);
    free(b16);
  }
  /* a wrong answer fails: one output moved by ten times the tolerance of
   * an element, or a whole row by 3% */
  void *st = NULL;
  cal_params_t q = tiny(2, 0);
  assert_int_equal(pk->setup(&q, &st), 0);
  assert_int_equal(pk->run(st), 0);
  assert_int_equal(pk->verify(st), 0);
  cal_layer_t *L = st;
  double ss = 0;
  for (int64_t e = 0; e < q.hidden; e++)
    ss += (double)L->out[e] * L->out[e];
  float keep = L->out[q.hidden / 2];
  L->out[q.hidden / 2] += (float)(0.5 * sqrt(ss / (double)q.hidden) + 0.05);
  assert_int_equal(pk->verify(st), CAL_EVERIFY);
  L->out[q.hidden / 2] = keep;
  assert_int_equal(pk->verify(st), 0);
  for (int64_t e = 0; e < q.hidden; e++)
    L->out[e] *= 1.03f;
  assert_int_equal(pk->verify(st), CAL_EVERIFY);
  pk->teardown(st);
}

/* Every variant the CPU's feature bits allow runs and verifies, the others
 * are refused; scalar is always among the ones that ran. */
static void every_simd_variant(void **state) {
  (void)state;
  int ran = 0;
  for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
    const cal_kernel_t *k = cal_kernel_find("layer_prefill");
    assert_non_null(k);
    cal_params_t p = tiny(2, 0);
    p.variant = v;
    void *st = NULL;
    int rc = k->setup(&p, &st);
    if (!cal_variant_supported(v)) {
      if (rc != CAL_EUNSUPP)
        fail_msg("variant %s: setup returned %d, expected CAL_EUNSUPP",
                 cal_variant_name(v), rc);
      continue;
    }
    if (rc != 0)
      fail_msg("variant %s is supported but setup returned %d",
               cal_variant_name(v), rc);
    assert_int_equal(k->run(st), 0);
    assert_int_equal(k->verify(st), 0);
    k->teardown(st);
    ran |= 1 << v;
  }
  assert_true(ran & (1 << CAL_VARIANT_SCALAR));
}

static void flops_by_hand(void **state) {
  (void)state;
  /* d=64, H=4, Hkv=2, hd=16, F=96, L=13, B=2 prefill:
   * qkv 2*26*64*(4+4)*16 = 425984; o-proj 2*26*64*64 = 212992;
   * mlp 6*26*64*96 = 958464; causal attention 4*B*H*hd*sum(1..13)
   *   = 4*2*4*16*91 = 46592 */
  cal_layer_shape_t s = {64, 4, 2, 96, 13, 2, 0, 0};
  assert_double_equal(cal_layer_flops(&s), 425984.0 + 212992 + 958464 + 46592, 0);
  /* decode: 2 tokens, attention over 14 keys each: 4*2*4*1*14*16 */
  s.decode = 1;
  assert_double_equal(cal_layer_flops(&s),
                      (425984.0 + 212992 + 958464) / 13 + 4.0 * 2 * 4 * 14 * 16, 1e-6);
  assert_double_equal(cal_layer_tokens(&s), 2, 0);
  s.decode = 0;
  assert_double_equal(cal_layer_tokens(&s), 26, 0);
  /* memory grows with the batch */
  cal_layer_shape_t b2 = s;
  b2.batch = 4;
  assert_true(cal_layer_mem_bytes(&b2) > cal_layer_mem_bytes(&s));
  assert_double_equal(cal_layer_weight_bytes(&s),
                      4.0 * (64 * 128 + 64 * 64 + 2 * 64 * 96 + 96 * 64 + 128), 0);
}

static void bad_shapes(void **state) {
  (void)state;
  char why[256];
  cal_layer_shape_t ok = {64, 4, 2, 96, 13, 1, 0, 0};
  assert_int_equal(cal_layer_check_shape(&ok, why, sizeof why), 0);
  cal_layer_shape_t s = ok;
  s.hidden = 66; /* not a multiple of heads */
  assert_int_equal(cal_layer_check_shape(&s, why, sizeof why), CAL_EINVAL);
  assert_non_null(strstr(why, "multiple of heads"));
  s = ok;
  s.kv_heads = 3;
  assert_int_equal(cal_layer_check_shape(&s, why, sizeof why), CAL_EINVAL);
  assert_non_null(strstr(why, "kv-heads"));
  s = ok;
  s.batch = 0;
  assert_int_equal(cal_layer_check_shape(&s, why, sizeof why), CAL_EINVAL);
  s = ok;
  s.hidden = 2048;
  s.heads = 4; /* head dim 512 */
  assert_int_equal(cal_layer_check_shape(&s, why, sizeof why), CAL_EINVAL);
  cal_params_t p = tiny(1, 0);
  p.kv_heads = 3;
  void *st = NULL;
  assert_int_equal(cal_kernel_find("layer_prefill")->setup(&p, &st), CAL_EINVAL);
}

static void presets_are_valid(void **state) {
  (void)state;
  const cal_layer_preset_t *p;
  size_t n = 0;
  for (size_t i = 0; (p = cal_layer_preset_at(i)); i++, n++) {
    cal_layer_shape_t s = {p->hidden, p->heads, p->kv_heads, p->ffn, p->seq, 1, 0, 0};
    assert_int_equal(cal_layer_check_shape(&s, NULL, 0), 0);
    assert_ptr_equal(cal_layer_preset_find(p->name), p);
    assert_true(p->layers >= 1 && p->vocab >= 2);
  }
  assert_true(n >= 3);
  /* the real models' depth and vocabulary (their published configs) */
  const cal_layer_preset_t *q = cal_layer_preset_find("qwen2-0.5b");
  assert_int_equal(q->layers, 24);
  assert_int_equal(q->vocab, 151936);
  q = cal_layer_preset_find("llama3-8b");
  assert_int_equal(q->layers, 32);
  assert_int_equal(q->vocab, 128256);
  /* the models people train on such machines, each shape's figures */
  static const struct { const char *name; int64_t d, h, g, f, L, v; } want[] = {
      {"qwen2.5-3b", 2048, 16, 2, 11008, 36, 151936},
      {"llama3.2-3b", 3072, 24, 8, 8192, 28, 128256},
      {"mistral-7b", 4096, 32, 8, 14336, 32, 32000}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    q = cal_layer_preset_find(want[i].name);
    assert_non_null(q);
    assert_true(q->hidden == want[i].d && q->heads == want[i].h &&
                q->kv_heads == want[i].g && q->ffn == want[i].f &&
                q->layers == want[i].L && q->vocab == want[i].v);
  }
  assert_true(n >= 8);
  assert_non_null(cal_layer_preset_find("tiny"));
  assert_null(cal_layer_preset_find("nope"));
}

CAL_TEST_MAIN(
    cmocka_unit_test(prefill_and_decode_verify), cmocka_unit_test(bf16_layer),
    cmocka_unit_test(forced_paths), cmocka_unit_test(forced_paths_bf16),
    cmocka_unit_test(every_simd_variant), cmocka_unit_test(flops_by_hand),
    cmocka_unit_test(bad_shapes), cmocka_unit_test(presets_are_valid))
