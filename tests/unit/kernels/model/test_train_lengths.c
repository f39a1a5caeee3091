/* The training step at the short and block-edge sequence lengths 1, 15,
 * 16, 17, 32, 63, 64, 65, 127, 128 and head sizes 32, 64, 128 (two query
 * heads on one kv head; ffn 100, so that SwiGLU's rows end in part of a
 * vector at either width), under every variant of its vector loops
 * (train_vec.h: scalar, AVX2, AVX-512; CALIBRATE_ISA picks the one a step
 * runs), in fp32 and in bf16 on oneDNN.  Each variant's step, forward and
 * backward, against the double composition within the kernel's own bound
 * (cal_train_tolerance, what cal_train_verify checks) and element-wise
 * against the same step on the portable loops (far tighter: a wrong lane
 * of a tail moves a tensor's RMS too little for the first bound to
 * notice); its AdamW against the formula in double (cal_train_verify's
 * check) over two steps, and in bf16 the masters' copies the next step's
 * products read exactly cal_f32_to_bf16 of the new masters.
 *
 * One layer per shape and dtype, made in the group's setup with its double
 * composition and the portable loops' step, is rewound to its first state
 * for each variant (a step's cost here is page faults and set-up, not
 * arithmetic).  Each variant is its own test; one this CPU cannot run is
 * skipped with the reason, and only where the feature check and the
 * table agree it has none (a skip never stands in for a wrong answer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "layer_train.h"
#include "layer_train_internal.h"
#include "test_util.h"
#include "train_vec.h"

static const int64_t lens[] = {1, 15, 16, 17, 32, 63, 64, 65, 127, 128};
static const int64_t dims[] = {32, 64, 128};
enum {
  NLEN = sizeof lens / sizeof lens[0],
  NDIM = sizeof dims / sizeof dims[0],
  NCASE = NLEN * NDIM,
  /* the tensors a step leaves: y, every parameter gradient, every kept
   * activation gradient */
  NT = 1 + CAL_TRAIN_NPARAM + CAL_TRAIN_NDACT
};

/* A vector variant's step against the portable loops' step, element-wise:
 * the largest difference over the tensor's largest magnitude.  They
 * differ only in e^x (a few 1e-7 relative) and the order of FMAs in
 * SwiGLU (here below 1e-6); in bf16 that can move an operand across a
 * rounding boundary now and then, an element of a product by at most 2^-8
 * of a term (here below 1.2e-3). */
#define VS_PORTABLE_FP32 1e-5
#define VS_PORTABLE_BF16 1e-2

typedef struct {
  cal_train_t *T;    /* rewound to its first state before each step */
  float *p_init;     /* its first masters (moments start at zero) */
  float *dy_init;    /* its upstream gradient before the first step (a
                        step changes its sign) */
  cal_train_ref_t R; /* the double composition of its first step */
  float *base[NT];   /* the portable loops' first step */
} case_t;

typedef struct {
  int bf16;
  const char *no_bf16; /* why bf16 is not run here (NULL: it is) */
  case_t c[NCASE];
} group_t;

static const float *tensor(const cal_train_t *T, int i, size_t *n) {
  if (i == 0) {
    *n = (size_t)(T->t * T->s.hidden);
    return T->y;
  }
  if (i <= CAL_TRAIN_NPARAM) {
    *n = T->off[i] - T->off[i - 1];
    return T->g + T->off[i - 1];
  }
  *n = T->dact_n[i - 1 - CAL_TRAIN_NPARAM];
  return T->dact[i - 1 - CAL_TRAIN_NPARAM];
}

static const double *ref_tensor(const case_t *c, int i) {
  if (i == 0)
    return c->R.y;
  if (i <= CAL_TRAIN_NPARAM)
    return c->R.grad + c->T->off[i - 1];
  return c->R.dact[i - 1 - CAL_TRAIN_NPARAM];
}

/* The layer back at its first state: masters, zero moments, no steps, the
 * products' bf16 copies of the masters. */
static void rewind_layer(case_t *c) {
  cal_train_t *T = c->T;
  memcpy(T->p, c->p_init, 4 * T->np);
  memcpy(T->dy, c->dy_init, 4 * (size_t)(T->t * T->s.hidden));
  memset(T->m, 0, 4 * T->np);
  memset(T->v, 0, 4 * T->np);
  T->step = 0;
  for (int i = 0; T->s.bf16 && i < 4; i++) {
    int64_t k, n;
    cal_train_prod_dims(T, i, &k, &n);
    cal_train_round_weights(T->p + T->off[i], T->w16[i], NULL, k, n);
  }
}

/* One step on the loops of `variant` (a CALIBRATE_ISA name). */
static void step_on(cal_train_t *T, const char *variant) {
  setenv("CALIBRATE_ISA", variant, 1);
  int rc = cal_train_step(T);
  unsetenv("CALIBRATE_ISA");
  assert_int_equal(rc, 0);
}

/* Case i (length i / NDIM, head size i % NDIM): its layer, the double
 * composition of its first step and the portable loops' first step. */
static void case_make(case_t *c, int i, int bf16) {
  const int64_t hd = dims[i % NDIM];
  cal_layer_shape_t s = {2 * hd, 2, 1, 100, lens[i / NDIM], 1, 0, bf16, 0, 0};
  cal_train_t *T = NULL;
  assert_int_equal(cal_train_create(&s, 77 + (uint64_t)i, CAL_ENGINE_BUILTIN,
                                    &T),
                   0);
  c->T = T;
  assert_int_equal(cal_train_save_inputs(T, 1), 0);
  assert_non_null(c->p_init = malloc(4 * T->np));
  memcpy(c->p_init, T->p, 4 * T->np);
  const size_t nd = (size_t)(T->t * T->s.hidden);
  assert_non_null(c->dy_init = malloc(4 * nd));
  memcpy(c->dy_init, T->dy, 4 * nd);
  step_on(T, "scalar");
  /* the composition of that step: the first masters, the upstream
   * gradient as the step used it */
  double *P = malloc(8 * T->np);
  assert_non_null(P);
  for (size_t j = 0; j < T->np; j++)
    P[j] = c->p_init[j];
  assert_int_equal(cal_train_ref_alloc(T, &c->R), 0);
  assert_int_equal(cal_train_reference(T, P, &c->R, 0), 0);
  free(P);
  for (int t = 0; t < NT; t++) {
    size_t n;
    const float *a = tensor(T, t, &n);
    assert_non_null(c->base[t] = malloc(4 * n));
    memcpy(c->base[t], a, 4 * n);
  }
}

static void case_free(case_t *c) {
  cal_train_free(c->T);
  free(c->p_init);
  free(c->dy_init);
  if (c->R.y)
    cal_train_ref_free(&c->R);
  for (int t = 0; t < NT; t++)
    free(c->base[t]);
}

static int group_setup(void **state, int bf16) {
  group_t *g = calloc(1, sizeof *g);
  assert_non_null(g);
  g->bf16 = bf16;
  *state = g;
  if (bf16 && cal_bf16_supported(CAL_ENGINE_BUILTIN, &g->no_bf16) < 0)
    return 0;
  for (int i = 0; i < NCASE; i++)
    case_make(&g->c[i], i, bf16);
  return 0;
}

static int setup_fp32(void **state) { return group_setup(state, 0); }
static int setup_bf16(void **state) { return group_setup(state, 1); }

static int group_teardown(void **state) {
  group_t *g = *state;
  for (int i = 0; i < NCASE; i++)
    case_free(&g->c[i]);
  free(g);
  return 0;
}

/* largest |a - b| over largest |b| */
static double max_rel(const float *a, const float *b, size_t n) {
  double e = 0, s = 0;
  for (size_t i = 0; i < n; i++) {
    e = fmax(e, fabs((double)a[i] - (double)b[i]));
    s = fmax(s, fabs((double)b[i]));
  }
  return e / (s + 1e-300);
}

/* The last step's AdamW against the formula in double from its own
 * gradients, and in bf16 the copies of the masters exact. */
static void check_update(const cal_train_t *T, const char *what) {
  if (cal_train_verify_adamw(&T->opt, T->step, T->p0, T->m0, T->v0, T->g,
                             T->p, T->m, T->v, T->np) != 0)
    fail_msg("%s: AdamW step %lld off the formula", what, (long long)T->step);
  for (int i = 0; T->s.bf16 && i < 4; i++)
    for (size_t j = 0; j < T->off[i + 1] - T->off[i]; j++)
      if (T->w16[i][j] != cal_f32_to_bf16(T->p[T->off[i] + j]))
        fail_msg("%s: step %lld, product %d's bf16 copy of master %zu is "
                 "0x%04x, not 0x%04x",
                 what, (long long)T->step, i, j, T->w16[i][j],
                 cal_f32_to_bf16(T->p[T->off[i] + j]));
}

/* Two steps of case c on `variant`; the worst error against the double
 * composition and against the portable loops into w[0], w[1]. */
static void run_case(case_t *c, const char *variant, double w[2]) {
  cal_train_t *T = c->T;
  const double tol = cal_train_tolerance(T);
  const double vs = T->s.bf16 ? VS_PORTABLE_BF16 : VS_PORTABLE_FP32;
  char what[96];
  snprintf(what, sizeof what, "%s %s seq %lld hd %lld", variant,
           T->s.bf16 ? "bf16" : "fp32", (long long)T->s.seq,
           (long long)T->hd);
  rewind_layer(c);
  step_on(T, variant);
  for (int t = 0; t < NT; t++) {
    size_t n;
    const float *a = tensor(T, t, &n);
    double e = cal_train_rel_err(a, ref_tensor(c, t), n);
    double v = max_rel(a, c->base[t], n);
    if (!(e <= tol))
      fail_msg("%s: tensor %d against the double composition: relative "
               "error %.3g, bound %.3g", what, t, e, tol);
    if (!(v <= vs))
      fail_msg("%s: tensor %d against the portable loops: %.3g of its "
               "largest element, bound %.3g", what, t, v, vs);
    w[0] = fmax(w[0], e);
    w[1] = fmax(w[1], v);
  }
  check_update(T, what);
  step_on(T, variant); /* from the updated masters and moments */
  check_update(T, what);
}

static const char *const needs[CAL_VARIANT_COUNT] = {
    "", "AVX2 with FMA", "AVX-512 (F, BW, VL, DQ)"};

/* Every case on one variant; a skip, with why, where the CPU lacks it. */
static void run_variant(group_t *g, int variant) {
  const cal_train_vec_t *t = cal_train_vec_for(variant);
  assert_int_equal(t != NULL, cal_variant_supported(variant));
  if (!t)
    cal_test_skip("training loops %s not run: the CPU has no %s",
                  cal_variant_name(variant), needs[variant]);
  if (g->no_bf16)
    cal_test_skip("bf16 training not run: %s", g->no_bf16);
  double w[2] = {0, 0};
  for (int i = 0; i < NCASE; i++)
    run_case(&g->c[i], t->name, w);
  print_message("%s %s: worst %.2e against double (bound %.0e), %.2e "
                "against the portable loops\n",
                t->name, g->bf16 ? "bf16" : "fp32", w[0],
                cal_train_tolerance(g->c[0].T), w[1]);
}

static void on_scalar(void **state) { run_variant(*state, CAL_VARIANT_SCALAR); }
static void on_avx2(void **state) { run_variant(*state, CAL_VARIANT_AVX2); }
static void on_avx512(void **state) { run_variant(*state, CAL_VARIANT_AVX512); }

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(on_scalar),
                                     cmocka_unit_test(on_avx2),
                                     cmocka_unit_test(on_avx512)};
  int fails = cmocka_run_group_tests_name("fp32", tests, setup_fp32,
                                          group_teardown);
  return fails + cmocka_run_group_tests_name("bf16", tests, setup_bf16,
                                             group_teardown);
}
