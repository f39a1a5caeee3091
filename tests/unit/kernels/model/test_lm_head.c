/* The LM head's training step (lm_head.h): its verification on both
 * engines and in bf16, and that it rejects a wrong step; the two engines
 * against each other; a head reshaped from one batch to another keeping
 * W and its moments, its inputs those of a fresh head at that batch, its
 * steps still verified; FLOPs and memory figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "gemm_onednn.h"
#include "kernel.h"
#include "lm_head.h"
#include "test_util.h"

/* A vector table whose softmax gradient is 5% large (every element but
 * the target's), standing for a wrong step: the sampled rows' gradients
 * are off by that much. */
static const cal_train_vec_t *good;
static void row_scale_off(const float *e32, const uint16_t *e16, int64_t n,
                          float scale, float *g32, uint16_t *g16) {
  good->row_scale(e32, e16, n, scale * 1.05f, g32, g16);
}

/* The verification of H, and of H stepped on a wrong softmax gradient. */
static void verify_and_reject(cal_lm_head_t *H) {
  assert_int_equal(cal_lm_head_verify(H), 0);
  cal_train_vec_t off = *H->vec;
  good = H->vec;
  off.row_scale = row_scale_off;
  H->vec = &off;
  assert_int_equal(cal_lm_head_verify(H), CAL_EVERIFY);
  H->vec = good;
  assert_int_equal(cal_lm_head_verify(H), 0);
}

/* The reference of H's next step, the step, and a check of it left to
 * the caller (who may damage the step first). */
static cal_lm_head_ref_t *stepped(cal_lm_head_t *H) {
  cal_lm_head_ref_t *R = NULL;
  assert_int_equal(cal_lm_head_ref_make(H, &R), 0);
  assert_int_equal(cal_lm_head_step(H), 0);
  return R;
}

/* The fp32 LM head on engine e: a vocabulary of two chunks and a ragged
 * end; the verification passes, and catches a wrong dh and a wrong
 * gradient row. */
static void lm_head_on(cal_engine_t e) {
  cal_lm_head_t *H = NULL;
  assert_int_equal(
      cal_lm_head_create_on(16, 32, CAL_LM_HEAD_CHUNK + 77, 3, e, &H), 0);
  assert_int_equal(H->engine, e);
  assert_int_equal(H->mm[0][0] != NULL, e == CAL_ENGINE_ONEDNN);
  assert_int_equal(H->mm[1][0] != NULL, e == CAL_ENGINE_ONEDNN);
  assert_int_equal(cal_lm_head_verify(H), CAL_EVERIFY); /* nothing ran */
  assert_int_equal(cal_lm_head_step(H), 0);
  /* logits of variance 1/3: the loss near log(vocab) + 1/6 */
  assert_true(fabs(H->loss - log((double)H->vocab)) < 1.0);
  verify_and_reject(H);
  cal_lm_head_ref_t *R = stepped(H);
  assert_int_equal(cal_lm_head_ref_check(H, R), 0);
  H->dh[3] += 0.01f;
  assert_int_equal(cal_lm_head_ref_check(H, R), CAL_EVERIFY);
  H->dh[3] -= 0.01f;
  assert_int_equal(cal_lm_head_ref_check(H, R), 0);
  cal_lm_head_ref_free(R);
  /* the path large batches take: logits recomputed in the second pass */
  assert_int_equal(H->keep, 1);
  H->keep = 0;
  assert_int_equal(cal_lm_head_verify(H), 0);
  /* the first target's row: its moment (so its gradient) off */
  R = stepped(H);
  size_t row = (size_t)H->target[0] * (size_t)H->d;
  H->m[row + 1] += 1e-3f;
  assert_int_equal(cal_lm_head_ref_check(H, R), CAL_EVERIFY);
  cal_lm_head_ref_free(R);
  cal_lm_head_free(H);
  const cal_kernel_t *k = cal_kernel_find("lm_head_train");
  assert_non_null(k);
  cal_params_t p = {0};
  p.hidden = 32, p.seq = 5, p.batch = 2, p.n = 300, p.seed = 1;
  p.engine = e;
  void *st = NULL;
  assert_int_equal(k->setup(&p, &st), 0);
  assert_int_equal(k->engine_used(st), e);
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->verify(st), 0);
  k->teardown(st);
  assert_true(fabs(k->flops(&p) - 6.0 * 10 * 300 * 32) < 1);
}

/* The fp32 head on OpenBLAS and on oneDNN (the layers' engine in a
 * sweep), each verified; the two engines' losses and dh agree on the same
 * data; the builtin default is OpenBLAS's, and no other engine is taken. */
static void lm_head(void **state) {
  (void)state;
  lm_head_on(CAL_ENGINE_OPENBLAS);
  lm_head_on(CAL_ENGINE_ONEDNN);
  const int64_t t = 16, d = 32, V = CAL_LM_HEAD_CHUNK + 77;
  cal_lm_head_t *B = NULL, *O = NULL;
  assert_int_equal(cal_lm_head_create_on(t, d, V, 7, CAL_ENGINE_BUILTIN, &B), 0);
  assert_int_equal(B->engine, CAL_ENGINE_OPENBLAS);
  assert_int_equal(cal_lm_head_create_on(t, d, V, 7, CAL_ENGINE_ONEDNN, &O), 0);
  for (int st = 0; st < 2; st++) {
    assert_int_equal(cal_lm_head_step(B), 0);
    assert_int_equal(cal_lm_head_step(O), 0);
    assert_true(fabs(B->loss - O->loss) < 1e-5 * fabs(B->loss));
    for (int64_t i = 0; i < t * d; i++)
      assert_true(fabsf(B->dh[i] - O->dh[i]) <= 1e-5f + 1e-4f * fabsf(B->dh[i]));
  }
  cal_lm_head_free(B);
  cal_lm_head_free(O);
  assert_int_equal(cal_lm_head_create_on(t, d, V, 7, CAL_ENGINE_COUNT, &B),
                   CAL_EINVAL);
  assert_null(B);
}

/* The RMS of a - b over the RMS of b, over n floats. */
static double rel_diff(const float *a, const float *b, size_t n) {
  double e2 = 0, r2 = 0;
  for (size_t i = 0; i < n; i++) {
    e2 += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    r2 += (double)b[i] * b[i];
  }
  return sqrt(e2 / (r2 + 1e-300));
}

/* The bf16 head's checks that damage a step: dh 3% large, the first
 * target's gradient (as the first moment holds it) 3% large, a stale bf16
 * copy of W. */
static void bf16_rejects(cal_lm_head_t *H) {
  const int64_t t = H->t, d = H->d;
  cal_lm_head_ref_t *R = stepped(H);
  for (int64_t i = 0; i < t * d; i++)
    H->dh[i] *= 1.03f;
  assert_int_equal(cal_lm_head_ref_check(H, R), CAL_EVERIFY);
  for (int64_t i = 0; i < t * d; i++)
    H->dh[i] /= 1.03f;
  assert_int_equal(cal_lm_head_ref_check(H, R), 0);
  cal_lm_head_ref_free(R);
  const cal_adamw_t *o = &H->opt;
  size_t row = (size_t)H->target[0] * (size_t)d;
  float *m0 = malloc(4 * (size_t)d), *m1 = malloc(4 * (size_t)d);
  assert_non_null(m0);
  assert_non_null(m1);
  memcpy(m0, H->m + row, 4 * (size_t)d);
  R = stepped(H);
  memcpy(m1, H->m + row, 4 * (size_t)d);
  for (int64_t e = 0; e < d; e++) {
    double g = (m1[e] - o->beta1 * m0[e]) / (1.0 - o->beta1);
    H->m[row + e] = (float)(o->beta1 * m0[e] + (1.0 - o->beta1) * g * 1.03);
  }
  assert_int_equal(cal_lm_head_ref_check(H, R), CAL_EVERIFY);
  memcpy(H->m + row, m1, 4 * (size_t)d);
  assert_int_equal(cal_lm_head_ref_check(H, R), 0);
  free(m0);
  free(m1);
  /* the copy the next step reads one bf16 step off the new masters */
  H->w16[row + 2] ^= 1;
  assert_int_equal(cal_lm_head_ref_check(H, R), CAL_EVERIFY);
  H->w16[row + 2] ^= 1;
  assert_int_equal(cal_lm_head_ref_check(H, R), 0);
  cal_lm_head_ref_free(R);
}

/* The bf16 LM head on oneDNN: a vocabulary of two chunks and a ragged end
 * (a second set of products), both logits paths; its loss and dh close to
 * the fp32 head's on the same data; verification passes, and catches a
 * wrong step, dh or one gradient row a few percent off and a stale bf16
 * copy of W. */
static void lm_head_bf16(void **state) {
  (void)state;
  if (!cal_test_native_bf16()) {
    cal_test_skip("no native bf16 on this CPU or oneDNN");
  }
  const int64_t t = 16, d = 32, V = CAL_LM_HEAD_CHUNK + 77;
  cal_lm_head_t *H = NULL, *F = NULL;
  assert_int_equal(cal_lm_head_create_bf16(t, d, V, 3, &H), 0);
  assert_int_equal(cal_lm_head_create(t, d, V, 3, &F), 0);
  assert_non_null(H->mm[1][0]);
  /* every product on an optimized implementation, none on a reference */
  print_message("bf16 LM head: %s\n", H->impl);
  assert_true(strncmp(H->impl, "onednn ", 7) == 0);
  assert_null(strstr(H->impl, "ref"));
  assert_int_equal(cal_lm_head_verify(H), CAL_EVERIFY);
  for (int s = 0; s < 2; s++) {
    assert_int_equal(cal_lm_head_step(H), 0);
    assert_int_equal(cal_lm_head_step(F), 0);
    double e = rel_diff(H->dh, F->dh, (size_t)(t * d));
    print_message("step %d: loss bf16 %.6f fp32 %.6f, dh %.2e apart\n", s + 1,
                  H->loss, F->loss, e);
    assert_true(fabs(H->loss - F->loss) < 1e-2);
    assert_true(e < 2e-2);
  }
  verify_and_reject(H);
  bf16_rejects(H);
  /* logits recomputed in the second pass */
  H->keep = 0;
  assert_int_equal(cal_lm_head_verify(H), 0);
  cal_lm_head_free(H);
  cal_lm_head_free(F);
  /* the kernel row: one chunk; its bf16 buffers counted */
  const cal_kernel_t *k = cal_kernel_find("lm_head_train_bf16");
  assert_non_null(k);
  assert_string_equal(cal_kdtype_name(k->dtype), "bf16");
  assert_int_equal(k->engine, CAL_ENGINE_ONEDNN);
  cal_params_t p = {0};
  p.hidden = 32, p.seq = 5, p.batch = 2, p.n = 300, p.seed = 1;
  const char *why = NULL;
  assert_int_equal(k->supported(&p, &why), 0);
  void *st = NULL;
  assert_int_equal(k->setup(&p, &st), 0);
  assert_null(((cal_lm_head_t *)st)->mm[1][0]);
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->verify(st), 0);
  assert_true(strncmp(k->impl_name(st), "onednn ", 7) == 0);
  k->teardown(st);
  const cal_kernel_t *k32 = cal_kernel_find("lm_head_train");
  assert_true(k->flops(&p) == k32->flops(&p));
  assert_true(k->mem_bytes(&p) - k32->mem_bytes(&p) >=
              2.0 * (10 * 32 + 300 * 32 + 10 * 300));
}

#define SEQ 5
#define HID 32
#define VOCAB (CAL_LM_HEAD_CHUNK + 77)

static cal_lm_head_t *made(int bf16, cal_engine_t e, int64_t batch) {
  cal_lm_head_t *H = NULL;
  int rc = bf16 ? cal_lm_head_create_bf16(batch * SEQ, HID, VOCAB, 11, &H)
                : cal_lm_head_create_on(batch * SEQ, HID, VOCAB, 11, e, &H);
  assert_int_equal(rc, 0);
  return H;
}

/* H, just reshaped to `batch`: its inputs and what follows from the
 * token count are a fresh head's at that batch; given H's W, moments and
 * step count, that head steps exactly as H does. */
static void as_fresh(cal_lm_head_t *H, int bf16, cal_engine_t e,
                     int64_t batch) {
  cal_lm_head_t *F = made(bf16, e, batch);
  const size_t nw = (size_t)(VOCAB * HID), n = (size_t)(H->t * HID);
  assert_int_equal(H->t, F->t);
  assert_int_equal(H->keep, F->keep);
  assert_memory_equal(H->h, F->h, 4 * n);
  assert_memory_equal(H->target, F->target, 4 * (size_t)H->t);
  assert_string_equal(H->impl, F->impl);
  memcpy(F->w, H->w, 4 * nw);
  memcpy(F->m, H->m, 4 * nw);
  memcpy(F->v, H->v, 4 * nw);
  if (bf16)
    memcpy(F->w16, H->w16, 2 * nw);
  F->step = H->step;
  cal_lm_head_ref_t *R = stepped(H);
  assert_int_equal(cal_lm_head_ref_check(H, R), 0);
  cal_lm_head_ref_free(R);
  assert_int_equal(cal_lm_head_step(F), 0);
  assert_true(H->loss == F->loss);
  assert_memory_equal(H->dh, F->dh, 4 * n);
  assert_memory_equal(H->w, F->w, 4 * nw);
  cal_lm_head_free(F);
}

/* A head set up at batch 1 (fewer tokens than the verification samples),
 * stepped, reshaped to 3 (more) and back, and to the same batch: W and its
 * moments kept through each reshape, the inputs a fresh head's, the steps
 * verified (and a wrong one caught); a batch of no tokens refused with
 * the head unchanged. */
static void reshape_on(int bf16, cal_engine_t e) {
  cal_lm_head_t *H = made(bf16, e, 1);
  const size_t nw = (size_t)(VOCAB * HID);
  float *w = malloc(4 * nw), *m = malloc(4 * nw);
  assert_non_null(w);
  assert_non_null(m);
  assert_int_equal(cal_lm_head_step(H), 0);
  assert_int_equal(cal_lm_head_verify(H), 0);
  const int64_t batches[] = {3, 1, 1};
  for (int i = 0; i < 3; i++) {
    int64_t steps = H->step;
    memcpy(w, H->w, 4 * nw);
    memcpy(m, H->m, 4 * nw);
    assert_int_equal(cal_lm_head_reshape(H, batches[i] * SEQ), 0);
    assert_memory_equal(H->w, w, 4 * nw);
    assert_memory_equal(H->m, m, 4 * nw);
    assert_int_equal(H->step, steps);
    as_fresh(H, bf16, e, batches[i]);
    verify_and_reject(H);
  }
  float *h = H->h;
  assert_int_equal(cal_lm_head_reshape(H, 0), CAL_EINVAL);
  assert_int_equal(H->t, SEQ);
  assert_ptr_equal(H->h, h);
  assert_int_equal(cal_lm_head_verify(H), 0);
  free(w);
  free(m);
  cal_lm_head_free(H);
}

static void reshape(void **state) {
  (void)state;
  reshape_on(0, CAL_ENGINE_OPENBLAS);
  reshape_on(0, CAL_ENGINE_ONEDNN);
}

static void reshape_bf16(void **state) {
  (void)state;
  if (!cal_test_native_bf16()) {
    cal_test_skip("no native bf16 on this CPU or oneDNN");
  }
  reshape_on(1, CAL_ENGINE_ONEDNN);
}

/* The kernel rows reshape: set up at batch 1, run, reshaped to 3, run and
 * verified, back to 1 and verified; the bf16 row where it runs. */
static void kernel_reshape(void **state) {
  (void)state;
  const char *names[] = {"lm_head_train", "lm_head_train_bf16"};
  for (int i = 0; i < 2; i++) {
    const cal_kernel_t *k = cal_kernel_find(names[i]);
    assert_non_null(k);
    assert_non_null(k->reshape);
    cal_params_t p = {0};
    p.hidden = HID, p.seq = SEQ, p.batch = 1, p.n = 300, p.seed = 4;
    const char *why = NULL;
    if (k->supported && k->supported(&p, &why) < 0) {
      print_message("%s: %s\n", names[i], why);
      continue;
    }
    void *st = NULL;
    assert_int_equal(k->setup(&p, &st), 0);
    assert_int_equal(k->run(st), 0);
    p.batch = 3;
    assert_int_equal(k->reshape(st, &p), 0);
    assert_int_equal(((cal_lm_head_t *)st)->t, 3 * SEQ);
    assert_int_equal(k->run(st), 0);
    assert_int_equal(k->verify(st), 0);
    p.batch = 1;
    assert_int_equal(k->reshape(st, &p), 0);
    assert_int_equal(k->verify(st), 0);
    k->teardown(st);
  }
}

/* The footprint holds one set of masters and moments: each row of the
 * vocabulary adds three fp32 rows of W's size (and the bf16 copy's) and
 * the few bytes the logits and the verification take, less than a fourth
 * (a second set would add three). */
static void memory(void **state) {
  (void)state;
  const int64_t t = 4, d = 256, v0 = 1 << 15, v1 = 1 << 16;
  for (int bf16 = 0; bf16 < 2; bf16++) {
    double per_row = (cal_lm_head_mem_bytes(t, d, v1, bf16) -
                      cal_lm_head_mem_bytes(t, d, v0, bf16)) /
                     (double)(v1 - v0);
    double w = (3.0 * 4.0 + (bf16 ? 2.0 : 0.0)) * (double)d;
    print_message("bf16 %d: %.0f bytes a row of the vocabulary\n", bf16,
                  per_row);
    assert_true(per_row >= w && per_row < w + 4.0 * (double)d);
  }
}

CAL_TEST_MAIN(cmocka_unit_test(lm_head), cmocka_unit_test(lm_head_bf16),
              cmocka_unit_test(reshape), cmocka_unit_test(reshape_bf16),
              cmocka_unit_test(kernel_reshape), cmocka_unit_test(memory))
