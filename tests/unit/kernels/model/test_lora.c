/* LoRA on the training step (lora.h): on the tiny preset's shape a step
 * trains the adapters only (the base's masters unchanged, no moments of
 * its own), verifies against the double composition (fp32, bf16 where it
 * runs, a stack of two layers and the kernel table's entry), and a wrong
 * adapter gradient or update is caught; its FLOPs are those done and its
 * memory has no base optimizer state. */
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
#include "layer_train.h"
#include "lora.h"
#include "test_util.h"

/* the tiny preset's layer at batch 2, seq 16, LoRA rank 4 */
static cal_layer_shape_t tiny(int bf16) {
  const cal_layer_preset_t *t = cal_layer_preset_find("tiny");
  assert_non_null(t);
  cal_layer_shape_t s = {t->hidden, t->heads, t->kv_heads, t->ffn, 16, 2,
                         0, bf16, 0, 0};
  s.lora_rank = 4;
  return s;
}

/* A step and its verification; the base frozen, the adapters moved; a
 * wrong adapter gradient, then a wrong update, fail. */
static void step_verifies(void **state) {
  int bf16 = *state != NULL;
  if (bf16 && !cal_test_native_bf16())
    cal_test_skip("no native bf16 on this CPU or oneDNN");
  cal_layer_shape_t s = tiny(bf16);
  cal_train_t *T = NULL;
  assert_int_equal(
      cal_train_create(&s, 3, bf16 ? CAL_ENGINE_ONEDNN : CAL_ENGINE_BUILTIN,
                       &T),
      0);
  cal_lora_t *A = T->lora;
  assert_non_null(A);
  assert_null(T->m); /* the base's masters, no moments */
  assert_float_equal(A->scale, CAL_LORA_ALPHA / 4, 0);
  assert_int_equal(cal_train_verify(T), CAL_EVERIFY); /* nothing run */
  float w0 = T->p[5], b0 = A->p[0][A->off[1] + 3];
  for (int i = 0; i < 2; i++) {
    assert_int_equal(cal_train_step(T), 0);
    assert_int_equal(cal_train_verify(T), 0);
  }
  assert_float_equal(T->p[5], w0, 0); /* frozen */
  assert_true(A->p[A->cur][A->off[1] + 3] != b0);
  assert_true(strstr(T->impl, "LoRA r4") != NULL);
  /* dB of the down projection a few per cent off */
  float *gb = A->g + A->off[7];
  float keep = gb[0];
  for (size_t i = 0; i < A->off[8] - A->off[7]; i++)
    gb[i] *= 1.05f;
  assert_int_equal(cal_train_verify(T), CAL_EVERIFY);
  for (size_t i = 0; i < A->off[8] - A->off[7]; i++)
    gb[i] /= 1.05f;
  gb[0] = keep;
  assert_int_equal(cal_train_verify(T), 0);
  /* a new master of A off */
  A->p[A->cur][0] += 0.01f;
  assert_int_equal(cal_train_verify(T), CAL_EVERIFY);
  cal_train_free(T);
}

/* A stack of two adapted layers, through the kernel table (layer_train
 * with cal_params_t.lora_rank). */
static void kernel_stack(void **state) {
  (void)state;
  const cal_kernel_t *k = cal_kernel_find("layer_train");
  assert_non_null(k);
  cal_layer_shape_t s = tiny(0);
  cal_params_t p = {0};
  p.hidden = s.hidden;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.ffn = s.ffn;
  p.seq = s.seq;
  p.batch = 1;
  p.layers = 2;
  p.lora_rank = 4;
  p.threads = 1;
  p.seed = 7;
  void *st = NULL;
  assert_int_equal(k->setup(&p, &st), 0);
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->verify(st), 0);
  k->teardown(st);
  /* its FLOPs: the LoRA step's, two layers */
  cal_layer_shape_t one = s;
  one.batch = 1;
  assert_float_equal(k->flops(&p), 2 * cal_train_flops(&one), 1e-9 * k->flops(&p));
}

/* FLOPs as done: 2 x the base products + 3 x attention + 3 x the
 * adapters' forward, below a full step's; memory without the base's
 * second masters, moments and weight updates. */
static void figures(void **state) {
  (void)state;
  cal_layer_shape_t s = tiny(0), full = s;
  full.lora_rank = 0;
  const double t = 32, d = (double)s.hidden, f = (double)s.ffn;
  const double hd = d / (double)s.heads;
  const double nqkv = ((double)s.heads + 2.0 * (double)s.kv_heads) * hd;
  const double mm = 2 * t * (d * nqkv + d * d + 2 * d * f + f * d);
  const double attn = cal_layer_flops(&full) - mm;
  const double adapters = 4.0 * (d + nqkv + d + d + d + 2 * f + f + d);
  assert_float_equal(cal_lora_layer_params(&s), adapters, 0);
  assert_float_equal(cal_train_flops(&s),
                     2 * mm + 3 * attn + 3 * 2 * t * adapters, 1e-6 * mm);
  assert_true(cal_train_flops(&s) < cal_train_flops(&full));
  assert_true(cal_train_mem_bytes(&s) < cal_train_mem_bytes(&full));
  cal_train_t *T = NULL;
  assert_int_equal(cal_train_create(&s, 3, CAL_ENGINE_BUILTIN, &T), 0);
  cal_train_t *F = NULL;
  assert_int_equal(cal_train_create(&full, 3, CAL_ENGINE_BUILTIN, &F), 0);
  /* two fewer base-sized buffers (the moments), the adapters' added */
  assert_float_equal(cal_train_buffer_bytes(F) - cal_train_buffer_bytes(T),
                     4.0 * (2.0 * (double)T->np) -
                         4.0 * cal_lora_buffer_floats(&s),
                     1.0);
  cal_train_free(T);
  cal_train_free(F);
}

CAL_TEST_MAIN(cmocka_unit_test(step_verifies),
              cal_unit_test_bf16(step_verifies),
              cmocka_unit_test(kernel_stack),
              cmocka_unit_test(figures))
