/* The model's reshape (model.h, kernel.h): a step set up at one batch and
 * made to run another keeps its weights and path, verifies, and runs
 * exactly as a step set up fresh at that batch; a batch on the other path
 * is refused with the step left whole; a layer that cannot borrow
 * another's rows is refused without touching them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cal_err.h"
#include "kernel.h"
#include "layer.h"
#include "layer_internal.h"
#include "lm_logits.h"
#include "model.h"
#include "test_util.h"

/* Two distinct layers over four passes: the last pass is the borrowing
 * layer's, so verify checks a layer re-pointed at layer 0's rows. */
static cal_params_t small(int64_t batch, const char *path) {
  cal_params_t p = {0};
  p.hidden = 64;
  p.heads = 4;
  p.kv_heads = 2;
  p.ffn = 96;
  p.seq = 13;
  p.batch = batch;
  p.threads = 2;
  p.seed = 11;
  p.variant = -1;
  p.layers = 2;
  p.depth = 4;
  p.n = 300;
  p.path = path;
  return p;
}

/* The kernel of that name, or the test skipped where bf16 has no native
 * path here (the sweep skips it too). */
static const cal_kernel_t *kernel_or_skip(const char *name,
                                          const cal_params_t *p) {
  const cal_kernel_t *k = cal_kernel_find(name);
  assert_non_null(k);
  assert_non_null(k->reshape);
  const char *why = NULL;
  if (k->supported && k->supported(p, &why) < 0)
    cal_test_skip("%s: %s", name, why);
  return k;
}

/* Matrix 0 of a layer and the head's W, in whatever form each holds it. */
static const void *layer_w(const cal_layer_t *L) {
  return L->wpf[0]  ? (const void *)L->wpf[0]
         : L->wp[0] ? (const void *)L->wp[0]
         : L->wqkv  ? (const void *)L->wqkv
                    : (const void *)L->wqkv16;
}

static const void *head_w(const cal_lm_logits_t *H) {
  return H->wpf ? (const void *)H->wpf
         : H->wp ? (const void *)H->wp
         : H->w  ? (const void *)H->w
                 : (const void *)H->w16;
}

/* The last run of st left the same output rows (every sequence's, the
 * last pass's in the shared rows) and logits as a fresh step of p. */
static void assert_as_fresh(const cal_kernel_t *k, void *st,
                            const cal_params_t *p) {
  void *fr = NULL;
  assert_int_equal(k->setup(p, &fr), 0);
  assert_int_equal(k->run(fr), 0);
  const cal_model_t *A = st, *B = fr;
  assert_int_equal(A->L[0]->l.tokens, B->L[0]->l.tokens);
  size_t rows = (size_t)B->L[0]->l.tokens * (size_t)p->hidden;
  assert_memory_equal(A->L[0]->out, B->L[0]->out, 4 * rows);
  assert_memory_equal(A->head->logits, B->head->logits,
                      4 * (size_t)p->batch * (size_t)p->n);
  k->teardown(fr);
}

/* Set up at batch 1, run and verify; reshaped to 3 and back to 1, each
 * time the weights and path kept, the output poisoned until a run, then
 * run twice (decode rewrites its slots), as a fresh step, verified. */
static void round_trip(const char *name, const char *path) {
  cal_params_t p = small(1, path);
  const cal_kernel_t *k = kernel_or_skip(name, &p);
  void *st = NULL;
  assert_int_equal(k->setup(&p, &st), 0);
  cal_model_t *M = st;
  const int team = M->L[0]->team;
  const void *w0 = layer_w(M->L[0]), *w1 = layer_w(M->L[1]);
  const void *hw = head_w(M->head);
  assert_true(k->run(st) == 0 && k->verify(st) == 0);
  static const int64_t batches[] = {3, 1};
  for (int i = 0; i < 2; i++) {
    p.batch = batches[i];
    assert_int_equal(k->reshape(st, &p), 0);
    assert_true(layer_w(M->L[0]) == w0 && layer_w(M->L[1]) == w1 &&
                head_w(M->head) == hw);
    assert_int_equal(M->L[0]->team, team);
    assert_int_equal(M->head->rows, p.batch);
    assert_true(M->L[1]->s.batch == p.batch && M->L[1]->x == M->L[0]->x &&
                M->L[1]->hteam == M->L[0]->hteam);
    assert_int_equal(k->verify(st), CAL_EVERIFY);
    assert_int_equal(k->run(st), 0);
    assert_as_fresh(k, st, &p);
    assert_int_equal(k->verify(st), 0);
    assert_true(k->run(st) == 0 && k->verify(st) == 0);
  }
  k->teardown(st);
}

static const char *mode(void **state, const char *fp32, const char *bf16) {
  return *state ? bf16 : fp32;
}

static void prefill(void **state) {
  round_trip(mode(state, "model_prefill", "model_prefill_bf16"), NULL);
}

static void decode_gemv(void **state) {
  round_trip(mode(state, "model_decode", "model_decode_bf16"), "gemv");
}

static void decode_blas(void **state) {
  round_trip(mode(state, "model_decode", "model_decode_bf16"), "blas");
}

/* By the shape's rule a decode step runs on the team up to
 * CAL_LAYER_GEMV_MAX_BATCH and on the engine's GEMM past it: a reshape
 * across is refused both ways, the step still running its own batch as a
 * fresh one; within a side, and with the path forced, it goes. */
static void across_paths(void **state) {
  const char *name = mode(state, "model_decode", "model_decode_bf16");
  const int64_t past = CAL_LAYER_GEMV_MAX_BATCH + 1;
  cal_params_t p = small(1, NULL);
  const cal_kernel_t *k = kernel_or_skip(name, &p);
  static const int64_t from[] = {1, CAL_LAYER_GEMV_MAX_BATCH + 1};
  for (int i = 0; i < 2; i++) {
    p.batch = from[i];
    void *st = NULL;
    assert_int_equal(k->setup(&p, &st), 0);
    assert_int_equal(((cal_model_t *)st)->L[0]->team, i == 0);
    cal_params_t q = p;
    q.batch = i ? 1 : past;
    assert_int_equal(k->reshape(st, &q), CAL_EUNSUPP);
    assert_int_equal(((cal_model_t *)st)->s.batch, p.batch);
    assert_int_equal(k->run(st), 0);
    assert_as_fresh(k, st, &p);
    assert_int_equal(k->verify(st), 0);
    q.batch = i ? past + 3 : 2; /* the same side */
    assert_int_equal(k->reshape(st, &q), 0);
    assert_true(k->run(st) == 0 && k->verify(st) == 0);
    k->teardown(st);
  }
  p = small(1, "gemv"); /* forced: the team past the rule's batch */
  void *st = NULL;
  assert_int_equal(k->setup(&p, &st), 0);
  p.batch = past;
  assert_int_equal(k->reshape(st, &p), 0);
  assert_true(k->run(st) == 0 && k->verify(st) == 0);
  k->teardown(st);
}

/* A decode step over a growing cache, moved along, is back at slot seq
 * after a reshape (as a fresh step starts) and verifies there. */
static void position_reset(void **state) {
  (void)state;
  cal_params_t p = small(2, NULL);
  p.gen = 3;
  cal_model_t *M = NULL;
  assert_int_equal(cal_model_create(&p, 1, 0, &M), 0);
  cal_model_set_pos(M, p.seq + 2);
  assert_int_equal(cal_model_run(M), 0);
  p.batch = 3;
  assert_int_equal(cal_model_reshape(M, &p), 0);
  for (int64_t l = 0; l < M->n; l++)
    assert_int_equal(M->L[l]->pos, p.seq);
  assert_int_equal(cal_model_run(M), 0);
  assert_int_equal(cal_model_verify(M), 0);
  cal_model_free(M);
}

/* A layer that cannot run on share's rows (another MLP width: share's gu
 * and a are too short) is refused, and share keeps its buffers, team rows
 * included: it still runs and verifies, and is freed once. */
static void borrowing_refused(void **state) {
  (void)state;
  cal_params_t p = small(2, "gemv");
  p.decode = 1;
  cal_layer_t *L0 = NULL, *L1 = NULL;
  assert_int_equal(cal_layer_create(&p, 0, NULL, &L0), 0);
  cal_params_t q = p;
  q.ffn = 128;
  assert_int_equal(cal_layer_create(&q, 0, L0, &L1), CAL_EINVAL);
  assert_null(L1);
  assert_true(L0->hteam != NULL);
  assert_true(cal_layer_run(L0) == 0 && cal_layer_verify(L0) == 0);
  /* a reshape of another shape is refused before anything changes */
  q = p;
  q.batch = 3;
  q.seq = 14;
  assert_int_equal(cal_layer_reshape(L0, &q, NULL), CAL_EINVAL);
  assert_true(cal_layer_run(L0) == 0 && cal_layer_verify(L0) == 0);
  cal_layer_free(L0);
}

CAL_TEST_MAIN(cmocka_unit_test(prefill), cal_unit_test_bf16(prefill),
              cmocka_unit_test(decode_gemv), cal_unit_test_bf16(decode_gemv),
              cmocka_unit_test(decode_blas), cal_unit_test_bf16(decode_blas),
              cmocka_unit_test(across_paths), cal_unit_test_bf16(across_paths),
              cmocka_unit_test(position_reset),
              cmocka_unit_test(borrowing_refused))
