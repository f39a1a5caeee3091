/* The one memory model (mem_model.h): bytes per parameter, the estimate
 * plan and the library make, the activation model, and its agreement with
 * the training step's own count of what it keeps. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cal_err.h"
#include "layer.h"
#include "layer_train.h"
#include "mem_model.h"
#include "plan_math.h"
#include "test_util.h"

static void bytes_per_param(void **state) {
  (void)state;
  cal_mem_param_t b;
  cal_mem_param_bytes(2, CAL_MEM_TRAINED, &b); /* bf16: 2 + 4 + 4 + 8 */
  assert_double_equal(b.weights, 2, 0);
  assert_double_equal(b.master, 4, 0);
  assert_double_equal(b.gradients, 4, 0);
  assert_double_equal(b.optimizer, 8, 0);
  assert_double_equal(b.total, 18, 0);
  cal_mem_param_bytes(4, CAL_MEM_TRAINED, &b); /* fp32: its own master */
  assert_double_equal(b.master, 0, 0);
  assert_double_equal(b.total, 16, 0);
  cal_mem_param_bytes(2, CAL_MEM_FROZEN, &b); /* the weight alone */
  assert_double_equal(b.total, 2, 0);
  cal_mem_param_bytes(1, CAL_MEM_FROZEN, &b);
  assert_double_equal(b.total, 1, 0);
  cal_mem_param_bytes(2, CAL_MEM_FUSED, &b); /* no gradient held */
  assert_double_equal(b.gradients, 0, 0);
  assert_double_equal(b.total, 14, 0);
  cal_mem_param_bytes(4, CAL_MEM_FUSED, &b);
  assert_double_equal(b.total, 12, 0);
}

static void memory_7b_bf16(void **state) {
  (void)state;
  cal_mem_assume_t a;
  cal_mem_need_t m;
  const double P = 7e9;
  cal_mem_assume_default(CAL_TRAIN_FULL, &a);
  assert_double_equal(a.lora_fraction, 0.01, 0);
  assert_double_equal(a.headroom, 0.10, 0);
  /* full: 14 + 28 (fp32 gradients) + 56 (Adam) + 28 (fp32 master) GB
   * + 0.28 GB/example: 18 bytes a parameter */
  assert_int_equal(cal_plan_memory(P, CAL_DT_BF16, CAL_TRAIN_FULL, 1, &a, &m), 0);
  assert_double_equal(m.weights_bytes, 14e9, 1);
  assert_double_equal(m.gradients_bytes, 28e9, 1);
  assert_double_equal(m.optimizer_bytes, 56e9, 1);
  assert_double_equal(m.master_bytes, 28e9, 1);
  assert_double_equal(m.activations_bytes, 0.28e9, 1);
  assert_double_equal(m.total_bytes, 126.28e9, 1);
  assert_int_equal(cal_plan_memory(P, CAL_DT_BF16, CAL_TRAIN_FULL, 8, &a, &m), 0);
  assert_double_equal(m.activations_bytes, 2.24e9, 1);
  /* LoRA, 1% trainable: 7e7 fp32 adapter params beside the frozen bf16
   * weights, 16 bytes each */
  cal_mem_assume_default(CAL_TRAIN_LORA, &a);
  assert_int_equal(cal_plan_memory(P, CAL_DT_BF16, CAL_TRAIN_LORA, 1, &a, &m), 0);
  assert_double_equal(m.trainable_params, 7e7, 1e-3);
  assert_double_equal(m.weights_bytes, 14.28e9, 1);
  assert_double_equal(m.gradients_bytes, 0.28e9, 1);
  assert_double_equal(m.optimizer_bytes, 0.56e9, 1);
  assert_double_equal(m.master_bytes, 0, 0);
  assert_double_equal(m.total_bytes, 15.40e9, 1);
  /* inference: weights and a quarter-size activation factor only */
  cal_mem_assume_default(CAL_TRAIN_INFERENCE, &a);
  assert_double_equal(a.activation_fraction, 0.005, 0);
  assert_int_equal(
      cal_plan_memory(P, CAL_DT_BF16, CAL_TRAIN_INFERENCE, 4, &a, &m), 0);
  assert_double_equal(m.gradients_bytes + m.optimizer_bytes + m.master_bytes,
                      0, 0);
  assert_double_equal(m.total_bytes, 14e9 + 4 * 0.07e9, 1);
  /* fp32 keeps no separate master copy; int8 weights are one byte */
  cal_mem_assume_default(CAL_TRAIN_FULL, &a);
  assert_int_equal(cal_plan_memory(P, CAL_DT_FP32, CAL_TRAIN_FULL, 1, &a, &m), 0);
  assert_double_equal(m.master_bytes, 0, 0);
  assert_double_equal(m.total_bytes, 28e9 + 28e9 + 56e9 + 0.56e9, 1);
  assert_int_equal(
      cal_plan_memory(P, CAL_DT_INT8, CAL_TRAIN_INFERENCE, 1, &a, &m), 0);
  assert_double_equal(m.weights_bytes, 7e9, 1);
  /* fits a 24 GB machine with 10% headroom? LoRA yes, full no */
  double budget = cal_plan_budget(24e9, 0.10);
  assert_double_equal(budget, 21.6e9, 1);
  assert_true(15.40e9 <= budget);
  assert_false(126.28e9 <= budget);
  assert_int_equal(cal_plan_memory(0, CAL_DT_FP32, CAL_TRAIN_FULL, 1, &a, &m),
                   CAL_EINVAL);
  assert_int_equal(cal_plan_memory(P, CAL_DT_FP32, CAL_TRAIN_FULL, 0, &a, &m),
                   CAL_EINVAL);
}

/* qwen2-0.5b as the reference profile records it (hidden 896, 14 heads,
 * 2 KV heads of 64, ffn 4864, seq 128), 24 layers. */
static void activation_model_qwen(void **state) {
  (void)state;
  cal_act_shape_t sh = {.hidden = 896, .heads = 14, .kv_heads = 2,
                        .head_dim = 64, .ffn = 4864, .seq = 128, .layers = 24};
  cal_act_est_t a;
  assert_int_equal(cal_act_model(&sh, 4, 0, &a), 0);
  /* per layer: 128 x (3584 + 2 + 1792 + 256 + 14 + 14592) */
  assert_double_equal(a.layer_elements, 2590720, 0);
  assert_double_equal(a.head_elements, 0, 0);
  assert_double_equal(a.full_bytes, 24 * 2590720.0 * 4, 0);
  /* checkpointing: 24 layer inputs of 128 x 896, one layer recomputed */
  assert_double_equal(a.checkpointed_bytes, (24 * 128 * 896 + 2590720.0) * 4,
                      0);
  /* inference: KV cache 24 x 2 x 128 x 128, one layer */
  assert_double_equal(a.inference_bytes, (24 * 2 * 128 * 128 + 2590720.0) * 4,
                      0);
  assert_true(a.checkpointed_bytes < a.full_bytes);
  /* the LM head: its rows and one chunk of 1024 logits a token */
  sh.vocab = 151936;
  assert_int_equal(cal_act_model(&sh, 4, 0, &a), 0);
  assert_double_equal(a.head_elements, 128 * (896 + 1024), 0);
  assert_double_equal(a.full_bytes, (24 * 2590720.0 + 128 * 1920) * 4, 0);
  /* bf16 products: their inputs kept in bf16 too, with their transposes:
   * 128 x 2 x (2 x 896 + 896 + 4864) bf16 elements a layer */
  sh.bf16_inputs = 1;
  assert_int_equal(cal_act_model(&sh, 4, 0, &a), 0);
  assert_double_equal(a.layer_bf16_elements, 1933312, 0);
  assert_double_equal(a.full_bytes,
                      (24 * 2590720.0 + 128 * 1920) * 4 + 24 * 1933312.0 * 2,
                      0);
  sh.bf16_inputs = 0;
  /* LoRA rank 8: seq x 7 x 8 more a layer; 4,399,104 trainable params
   * (24 x 8 x (7 x 896 + 2 x 896 + 2 x 128 + 3 x 4864)) */
  sh.vocab = 0;
  assert_int_equal(cal_act_model(&sh, 2, 8, &a), 0);
  assert_double_equal(a.layer_elements, 2590720 + 128 * 56, 0);
  assert_double_equal(cal_lora_params(&sh, 8), 4399104, 0);
  cal_act_est_t b;
  assert_int_equal(cal_act_model(&sh, 4, 8, &b), 0);
  assert_double_equal(b.full_bytes, 2 * a.full_bytes, 0);
  /* bad shapes */
  cal_act_shape_t bad = sh;
  bad.kv_heads = 3; /* 14 heads in groups of 3 */
  assert_int_equal(cal_act_model(&bad, 2, 0, &a), CAL_EINVAL);
  assert_double_equal(cal_lora_params(&bad, 8), 0, 0);
  bad = sh;
  bad.layers = 0;
  assert_int_equal(cal_act_model(&bad, 2, 0, &a), CAL_EINVAL);
  bad = sh;
  bad.vocab = -1;
  assert_int_equal(cal_act_model(&bad, 2, 0, &a), CAL_EINVAL);
  assert_int_equal(cal_act_model(&sh, 0, 0, &a), CAL_EINVAL);
  assert_int_equal(cal_act_model(&sh, 2, -1, &a), CAL_EINVAL);

  /* the memory estimate takes them in place of the assumed fractions */
  cal_mem_assume_t as;
  cal_mem_need_t m;
  cal_mem_assume_default(CAL_TRAIN_LORA, &as);
  as.activation_bytes_per_example = 1e8;
  as.lora_params = 4399104;
  assert_int_equal(cal_plan_memory(5e8, CAL_DT_BF16, CAL_TRAIN_LORA, 4, &as,
                                   &m), 0);
  assert_double_equal(m.activations_bytes, 4e8, 0);
  assert_double_equal(m.trainable_params, 4399104, 0);
  assert_double_equal(m.optimizer_bytes, 4399104 * 8.0, 0);
}

/* The model's layer activations are the training step's own count of
 * what it keeps (cal_train_saved_bytes, which test_train holds to the
 * resident bytes a step adds), over shapes of every preset's kind. */
static void activations_are_the_steps(void **state) {
  (void)state;
  static const int64_t shapes[][6] = {
      /* hidden, heads, kv_heads, ffn, seq, batch */
      {896, 14, 2, 4864, 128, 1}, {2048, 32, 8, 8192, 64, 3},
      {128, 2, 1, 256, 17, 2},    {256, 4, 4, 512, 1, 1}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const int64_t *v = shapes[i];
    cal_layer_shape_t ls = {.hidden = v[0], .heads = v[1], .kv_heads = v[2],
                            .ffn = v[3], .seq = v[4], .batch = v[5]};
    cal_act_shape_t as = {.hidden = v[0], .heads = v[1], .kv_heads = v[2],
                          .head_dim = v[0] / v[1], .ffn = v[3], .seq = v[4],
                          .layers = 1};
    cal_act_est_t a;
    assert_int_equal(cal_act_model(&as, 4, 0, &a), 0);
    assert_double_equal((double)v[5] * a.full_bytes,
                        cal_train_saved_bytes(&ls), 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bytes_per_param),
      cmocka_unit_test(memory_7b_bf16),
      cmocka_unit_test(activation_model_qwen),
      cmocka_unit_test(activations_are_the_steps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
