/* A plan in a trainer's words (report/plan_trainer.c): the Hugging Face
 * keys per machine, shell assignments with safe names and quoting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "plan_trainer.h"
#include "reporter.h"
#include "test_util.h"

/* A plan of n machines (names, measured dtypes, micro-batch and
 * accumulation); the third, when there is one, is not in the split. */
typedef struct fake {
  cal_plan_machine_t m[4];
  cal_plan_entry_t e[4];
  cal_plan_t p;
} fake_t;

static void fake_plan(fake_t *f, size_t n, const char *const *names,
                      const char *const *dtypes) {
  memset(f, 0, sizeof *f);
  for (size_t i = 0; i < n; i++) {
    f->m[i].name = names[i];
    f->m[i].measured_dtype = dtypes[i];
    f->e[i].m = &f->m[i];
    f->e[i].in_split = i != 2;
    f->e[i].batch.micro_batch = (int64_t)(8 << i);
    f->e[i].batch.accum_steps = (int64_t)(4 >> i) ? (int64_t)(4 >> i) : 1;
  }
  f->p.machines = f->e;
  f->p.nmachines = n;
}

static char *render(cal_render_fn fn, const cal_plan_t *p, int *rc) {
  char err[256] = "";
  cal_test_text_t t;
  FILE *f = cal_test_text_open(&t);
  *rc = fn(p, 0, f, err, sizeof err);
  return cal_test_text_close(f, &t);
}

static void hf_keys_per_machine(void **state) {
  (void)state;
  static const char *const names[] = {"box-a", "gpu box", "left-out"};
  static const char *const dtypes[] = {"bf16", "fp32", "bf16"};
  fake_t f;
  fake_plan(&f, 3, names, dtypes);
  int rc;
  char *text = render(cal_plan_render_hf, &f.p, &rc);
  assert_int_equal(rc, 0);
  json_error_t je;
  json_t *doc = json_loads(text, 0, &je);
  assert_non_null(doc);
  assert_int_equal(json_object_size(doc), 2); /* the split's machines */
  json_t *a = json_object_get(doc, "box-a");
  assert_int_equal(json_object_size(a), 3); /* the trainer's keys only */
  assert_int_equal(json_integer_value(json_object_get(a, "per_device_train_batch_size")), 8);
  assert_int_equal(json_integer_value(json_object_get(a, "gradient_accumulation_steps")), 4);
  assert_true(json_is_true(json_object_get(a, "bf16")));
  json_t *b = json_object_get(doc, "gpu box");
  assert_int_equal(json_integer_value(json_object_get(b, "per_device_train_batch_size")), 16);
  assert_int_equal(json_integer_value(json_object_get(b, "gradient_accumulation_steps")), 2);
  assert_true(json_is_false(json_object_get(b, "bf16")));
  assert_null(json_object_get(doc, "left-out"));
  json_decref(doc);
  free(text);
}

static void env_assignments(void **state) {
  (void)state;
  static const char *const names[] = {"box-a", "it's \x1b[31m"};
  static const char *const dtypes[] = {"bf16", NULL};
  fake_t f;
  fake_plan(&f, 2, names, dtypes);
  int rc;
  char *text = render(cal_plan_render_env, &f.p, &rc);
  assert_int_equal(rc, 0);
  assert_string_equal(text,
                      "CALIBRATE_BOX_A_NAME='box-a'\n"
                      "CALIBRATE_BOX_A_BATCH_SIZE=8\n"
                      "CALIBRATE_BOX_A_GRAD_ACCUM=4\n"
                      "CALIBRATE_BOX_A_BF16=1\n"
                      "CALIBRATE_IT_S___31M_NAME='it'\\''s \\x1B[31m'\n"
                      "CALIBRATE_IT_S___31M_BATCH_SIZE=16\n"
                      "CALIBRATE_IT_S___31M_GRAD_ACCUM=2\n"
                      "CALIBRATE_IT_S___31M_BF16=0\n");
  free(text);
}

/* Names that make one variable are told apart by their place. */
static void env_names_told_apart(void **state) {
  (void)state;
  static const char *const names[] = {"box-a", "box_a", "x", "BOX.A"};
  static const char *const dtypes[] = {NULL, NULL, NULL, NULL};
  fake_t f;
  fake_plan(&f, 4, names, dtypes);
  int rc;
  char *text = render(cal_plan_render_env, &f.p, &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(text, "CALIBRATE_BOX_A_1_NAME='box-a'\n"));
  assert_non_null(strstr(text, "CALIBRATE_BOX_A_2_NAME='box_a'\n"));
  assert_non_null(strstr(text, "CALIBRATE_BOX_A_4_NAME='BOX.A'\n"));
  assert_null(strstr(text, "'x'")); /* not in the split */
  /* in plan order */
  assert_true(strstr(text, "BOX_A_1") < strstr(text, "BOX_A_2"));
  free(text);
}

static void idents(void **state) {
  (void)state;
  char buf[16];
  assert_int_equal(cal_env_ident(buf, sizeof buf, "gpu-box.2"), 9);
  assert_string_equal(buf, "GPU_BOX_2");
  cal_env_ident(buf, sizeof buf, "\xc3\xa9t\xc3\xa9");
  assert_string_equal(buf, "__T__");
  cal_env_ident(buf, sizeof buf, "--");
  assert_string_equal(buf, "MACHINE");
  cal_env_ident(buf, sizeof buf, "a-very-long-machine-name");
  assert_int_equal(strlen(buf), 15);
}

CAL_TEST_MAIN(cmocka_unit_test(hf_keys_per_machine),
              cmocka_unit_test(env_assignments),
              cmocka_unit_test(env_names_told_apart),
              cmocka_unit_test(idents))
