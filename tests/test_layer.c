/* The model-shaped layer: verification, FLOP count, shapes, presets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "kernel.h"
#include "layer.h"
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

static void run_and_verify(const char *name, int64_t batch) {
  const cal_kernel_t *k = cal_kernel_find(name);
  assert_non_null(k);
  cal_params_t p = tiny(batch, strcmp(name, "layer_decode") == 0);
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

static void prefill_and_decode_verify(void **state) {
  (void)state;
  run_and_verify("layer_prefill", 1);
  run_and_verify("layer_prefill", 3);
  run_and_verify("layer_decode", 1);
  run_and_verify("layer_decode", 5);
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
  cal_layer_shape_t s = {64, 4, 2, 96, 13, 2, 0};
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
  cal_layer_shape_t ok = {64, 4, 2, 96, 13, 1, 0};
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
    cal_layer_shape_t s = {p->hidden, p->heads, p->kv_heads, p->ffn, p->seq, 1, 0};
    assert_int_equal(cal_layer_check_shape(&s, NULL, 0), 0);
    assert_ptr_equal(cal_layer_preset_find(p->name), p);
  }
  assert_true(n >= 3);
  assert_non_null(cal_layer_preset_find("tiny"));
  assert_null(cal_layer_preset_find("nope"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(prefill_and_decode_verify),
      cmocka_unit_test(every_simd_variant),
      cmocka_unit_test(flops_by_hand),
      cmocka_unit_test(bad_shapes),
      cmocka_unit_test(presets_are_valid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
