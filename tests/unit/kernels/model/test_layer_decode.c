/* The small-batch decode path of the layer (its GEMV: test_layer_gemv.c):
 * the team-shared attention against the fused kernel, the one-team layer step verified on ragged
 * shapes, batches and team sizes (and its verification failing on a wrong
 * answer), and the bytes-per-step convention of the bandwidth efficiency.
 * covers: calibrator/profile/batch_json.c */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "attention.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "kernel.h"
#include "layer.h"
#include "layer_gemv.h"
#include "layer_internal.h"
#include "options.h"
#include "results.h"
#include "run.h"
#include "test_util.h"

/* The team-shared decode attention gives bit for bit what the fused kernel
 * gives, inside a parallel region of any size and outside one, for every
 * variant the CPU runs; more than four queries are refused. */
static void attention_team_matches_fused(void **state) {
  (void)state;
  const cal_attn_shape_t shapes[] = {{3, 8, 2, 1, 37, 24, 1},
                                     {2, 6, 3, 4, 21, 17, 1},
                                     {1, 4, 4, 1, 1, 64, 0}};
  for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
    for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
      const cal_attn_shape_t *s = &shapes[si];
      if (!cal_variant_supported(v)) {
        assert_int_equal(cal_attn_fused_team(s, NULL, NULL, NULL, NULL, v),
                         CAL_EUNSUPP);
        continue;
      }
      size_t nqo = (size_t)(s->batch * s->heads * s->nq * s->head_dim);
      size_t nkv = (size_t)(s->batch * s->kv_heads * s->nk * s->head_dim);
      float *q = malloc(4 * nqo), *k = malloc(4 * nkv), *vv = malloc(4 * nkv);
      float *o = malloc(4 * nqo), *want = malloc(4 * nqo);
      assert_true(q && k && vv && o && want);
      cal_rng_t r;
      cal_rng_seed(&r, 17 + si);
      cal_fill_f32(q, nqo, -2.0f, 2.0f, &r);
      cal_fill_f32(k, nkv, -2.0f, 2.0f, &r);
      cal_fill_f32(vv, nkv, -1.0f, 1.0f, &r);
      assert_int_equal(cal_attn_fused(s, q, k, vv, want, v, NULL, NULL), 0);
      for (int nt = 1; nt <= 3; nt++) {
        int err = 0;
        memset(o, 0xff, 4 * nqo);
#pragma omp parallel num_threads(nt) reduction(| : err)
        err |= cal_attn_fused_team(s, q, k, vv, o, v) != 0;
        assert_int_equal(err, 0);
        assert_memory_equal(o, want, 4 * nqo);
      }
      memset(o, 0xff, 4 * nqo);
      assert_int_equal(cal_attn_fused_team(s, q, k, vv, o, v), 0);
      assert_memory_equal(o, want, 4 * nqo);
      free(q), free(k), free(vv), free(o), free(want);
    }
  const cal_attn_shape_t five = {1, 2, 1, 5, 8, 16, 1};
  assert_int_equal(cal_attn_fused_team(&five, NULL, NULL, NULL, NULL,
                                       CAL_VARIANT_SCALAR),
                   CAL_EINVAL);
}

/* hidden 64 in 4 heads (head dim 16), and a ragged one: hidden 60 in 4
 * heads (head dim 15), ffn 37, a cache of 5: no size a multiple of a
 * vector or of a thread's block of columns. */
static cal_params_t decode_params(int ragged, int64_t batch, int variant) {
  cal_params_t p = {0};
  p.hidden = ragged ? 60 : 64;
  p.heads = 4;
  p.kv_heads = 2;
  p.ffn = ragged ? 37 : 96;
  p.seq = ragged ? 5 : 13;
  p.batch = batch;
  p.decode = 1;
  p.threads = 1;
  p.seed = 23;
  p.variant = variant;
  return p;
}

/* The layer step verifies in double precision on every path, variant,
 * shape and team size: the one-team path up to CAL_LAYER_GEMV_MAX_BATCH
 * (fp32 weights packed with a SIMD variant), BLAS above it; verifying before any run fails (the output starts as
 * NaN), and a second run (the new token's cache slot rewritten) verifies
 * again. */
static void team_verifies(const char *name) {
  static const int64_t batches[] = {1, 2, 3, 7, CAL_LAYER_GEMV_MAX_BATCH,
                                    CAL_LAYER_GEMV_MAX_BATCH + 1};
  const cal_kernel_t *k = cal_kernel_find(name);
  assert_non_null(k);
  int saved = omp_get_max_threads();
  for (int nt = 1; nt <= 3; nt++) {
    omp_set_num_threads(nt);
    for (int ragged = 0; ragged < 2; ragged++)
      for (size_t bi = 0; bi < sizeof batches / sizeof *batches; bi++)
        for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
          if (!cal_variant_supported(v))
            continue;
          cal_params_t p = decode_params(ragged, batches[bi], v);
          void *st = NULL;
          assert_int_equal(k->setup(&p, &st), 0);
          const cal_layer_t *L = st;
          assert_int_equal(L->team, batches[bi] <= CAL_LAYER_GEMV_MAX_BATCH);
          /* fp32 on the team: packed where the variant has the form */
          assert_int_equal(L->wpf[0] != NULL,
                           !L->s.bf16 && L->team && cal_gemv_packed_for(v));
          assert_int_equal(k->verify(st), CAL_EVERIFY);
          for (int rep = 0; rep < 2; rep++) {
            assert_int_equal(k->run(st), 0);
            if (k->verify(st) != 0)
              fail_msg("%s, %d threads, %s shape, batch %lld, %s: verify "
                       "failed", name, nt, ragged ? "ragged" : "even",
                       (long long)batches[bi], cal_variant_name(v));
          }
          k->teardown(st);
        }
  }
  omp_set_num_threads(saved);
}

static void layer_team_verifies(void **state) {
  (void)state;
  team_verifies("layer_decode");
}

/* An fp32 layer made packed (the team path) holds the weights the BLAS
 * path's layer holds row-major at the same seed, every one of them: a
 * matrix below the team fill's size (the stream in order) and one above
 * it (made a chunk of rows at a time, its last chunk short), with ragged
 * columns. */
static void packed_weights_are_row_major_ones(void **state) {
  (void)state;
  const cal_kernel_t *kn = cal_kernel_find("layer_decode");
  int compared = 0;
  for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
    if (!cal_variant_supported(v) || !cal_gemv_packed_for(v))
      continue;
    cal_params_t p = decode_params(0, 1, v);
    p.hidden = 1024;
    p.heads = 8;
    p.ffn = 2301; /* up and gate: 1024 x 4602, past the team fill's size */
    void *st[2] = {NULL, NULL};
    for (int b = 0; b < 2; b++) {
      p.path = b ? "blas" : "gemv";
      assert_int_equal(kn->setup(&p, &st[b]), 0);
    }
    cal_layer_t *Lp = st[0], *Lr = st[1];
    for (int i = 0; i < CAL_LAYER_NMM; i++) {
      int64_t K, n;
      cal_layer_matrix_dims(Lp, i, &K, &n);
      assert_non_null(Lp->wpf[i]);
      assert_null(Lr->wpf[i]);
      if (i == 2)
        assert_true((size_t)(K * n) > CAL_FILL_TEAM_MIN / 4);
      for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < n; j++)
          if (*cal_layer_weight_f32(Lp, i, k, j) !=
              *cal_layer_weight_f32(Lr, i, k, j))
            fail_msg("%s: matrix %d (%lld x %lld), weight (%lld, %lld) "
                     "differs", cal_variant_name(v), i, (long long)K,
                     (long long)n, (long long)k, (long long)j);
    }
    kn->teardown(st[0]);
    kn->teardown(st[1]);
    compared++;
  }
  if (!compared) { /* no variant here has the packed form: none may */
    for (int v = 0; v < CAL_VARIANT_COUNT; v++)
      assert_true(!cal_variant_supported(v) || !cal_gemv_packed_for(v));
    cal_test_skip("no variant with the packed fp32 form on this CPU");
  }
}

/* Skip a bf16 layer test where the bf16 layer is refused, which it may be
 * only where the CPU or oneDNN has no native bf16: a refusal on a machine
 * with native bf16 fails. */
static void bf16_layer_or_skip(void) {
  cal_params_t p = decode_params(0, 1, CAL_VARIANT_AUTO);
  const char *why = NULL;
  if (cal_kernel_find("layer_decode_bf16")->supported(&p, &why) == 0)
    return;
  assert_false(cal_test_native_bf16());
  cal_test_skip("bf16 layer not run: %s", why);
}

static void layer_team_verifies_bf16(void **state) {
  (void)state;
  bf16_layer_or_skip();
  team_verifies("layer_decode_bf16");
}

/* The attention a bf16 decode layer ran (L->o) against the fp64 reference
 * on the same bf16 inputs (its q16 and bf16 cache, widened exactly; a
 * growing cache's slots up to the position), with the bf16 bound. */
static int decode_attention_check(const cal_layer_t *L) {
  const int64_t B = L->s.batch, H = L->s.heads, G = L->s.kv_heads;
  const int64_t hd = L->l.hd, lk = L->l.lk, nk = L->pos + 1;
  const size_t nq = (size_t)(B * H * hd), nkv = (size_t)(B * G * nk * hd);
  float *q = malloc(4 * nq), *k = malloc(4 * nkv), *v = malloc(4 * nkv);
  assert_true(q && k && v);
  for (size_t i = 0; i < nq; i++)
    q[i] = cal_bf16_to_f32(L->q16[i]);
  for (int64_t bg = 0; bg < B * G; bg++)
    for (int64_t i = 0; i < nk * hd; i++) {
      k[bg * nk * hd + i] = cal_bf16_to_f32(L->kc16[bg * lk * hd + i]);
      v[bg * nk * hd + i] = cal_bf16_to_f32(L->vc16[bg * lk * hd + i]);
    }
  const cal_attn_shape_t as = {B, H, G, 1, nk, hd, 1};
  int rc = cal_attn_verify_output_bf16(&as, q, k, v, L->o, 31, 16);
  free(q), free(k), free(v);
  return rc;
}

/* A bf16 decode layer keeps its KV cache in bf16 and attends over it in
 * bf16 with the variant the CPU runs: the portable one (scalar), then
 * vdpbf16ps (avx512, skipped where the CPU lacks AVX512_BF16), on both
 * matrix paths, over the full cache and a growing one.  The step verifies
 * against the layer's double reference, the attention against the fp64
 * attention reference within the bf16 bound; an output of the attention
 * moved past the bound, or a cache entry changed after the run, fails. */
static void bf16_cache_attention(void **state) {
  (void)state;
  static const int64_t batches[] = {1, 3, CAL_LAYER_GEMV_MAX_BATCH + 1};
  const int variants[] = {CAL_VARIANT_SCALAR, CAL_VARIANT_AVX512};
  const int want16[] = {CAL_ATTN_BF16_SCALAR, CAL_ATTN_BF16_AVX512};
  bf16_layer_or_skip();
  for (int vi = 0; vi < 2; vi++) {
    int a16;
    const char *why;
    if (!cal_variant_supported(variants[vi]) ||
        cal_attn_bf16_resolve(variants[vi], &a16, &why) < 0)
      cal_test_skip("bf16 decode attention on vdpbf16ps not run: %s",
                    cal_variant_supported(variants[vi])
                        ? why : "the CPU lacks AVX-512");
    for (int grow = 0; grow < 2; grow++)
      for (size_t bi = 0; bi < sizeof batches / sizeof *batches; bi++) {
        cal_params_t p = decode_params(bi & 1, batches[bi], variants[vi]);
        p.gen = grow ? 3 : 0;
        cal_layer_t *L = NULL;
        assert_int_equal(cal_layer_create(&p, 1, NULL, &L), 0);
        assert_true(L->cache16 && L->kc == NULL && L->vc == NULL);
        assert_int_equal(L->attn16, want16[vi]);
        /* vdpbf16ps on the team path: the weights packed for it */
        assert_int_equal(L->wp[0] != NULL, vi == 1 && L->team);
        assert_int_equal(L->wqkv16 == NULL, vi == 1 && L->team);
        if (grow) /* slots up to seq + 1 of seq + 3 */
          cal_layer_set_pos(L, p.seq + 1);
        assert_int_equal(cal_layer_run(L), 0);
        if (cal_layer_verify(L) != 0 || decode_attention_check(L) != 0)
          fail_msg("%s, batch %lld, %s cache: wrong answer",
                   cal_variant_name(variants[vi]), (long long)p.batch,
                   grow ? "growing" : "full");
        /* one output of the last row (a row the check always takes) */
        float *o = L->o + (p.batch * p.heads - 1) * L->l.hd + 1;
        *o += 1.0f;
        assert_int_equal(decode_attention_check(L), CAL_EVERIFY);
        *o -= 1.0f;
        /* a past key of the last sequence: the run read another */
        uint16_t *kc = L->kc16 + (p.batch - 1) * p.kv_heads * L->l.lk * L->l.hd;
        kc[0] = cal_f32_to_bf16(cal_bf16_to_f32(kc[0]) + 8.0f);
        assert_int_equal(cal_layer_verify(L), CAL_EVERIFY);
        cal_layer_free(L);
      }
  }
}

/* A wrong answer fails: an output element of the first or the last
 * sequence moved by ten times the tolerance, or the last sequence's input
 * changed after the run, on both paths. */
static void layer_verify_catches_wrong_answers(void **state) {
  (void)state;
  static const int64_t batches[] = {3, CAL_LAYER_GEMV_MAX_BATCH + 1};
  const cal_kernel_t *k = cal_kernel_find("layer_decode");
  for (size_t bi = 0; bi < 2; bi++) {
    cal_params_t p = decode_params(1, batches[bi], CAL_VARIANT_AUTO);
    void *st = NULL;
    assert_int_equal(k->setup(&p, &st), 0);
    cal_layer_t *L = st;
    const int64_t d = p.hidden, last = p.batch - 1;
    assert_int_equal(k->run(st), 0);
    assert_int_equal(k->verify(st), 0);
    const int64_t seqs[] = {0, last};
    for (int i = 0; i < 2; i++) {
      float *row = L->out + seqs[i] * d;
      double ss = 0;
      for (int64_t e = 0; e < d; e++)
        ss += (double)row[e] * row[e];
      float keep = row[d / 2];
      row[d / 2] += (float)(1e-2 * sqrt(ss / (double)d) + 1e-3);
      assert_int_equal(k->verify(st), CAL_EVERIFY);
      row[d / 2] = keep;
      assert_int_equal(k->verify(st), 0);
    }
    L->x[last * d + 1] += 0.25f;
    assert_int_equal(k->verify(st), CAL_EVERIFY);
    k->teardown(st);
  }
}

/* The bytes a step must read (the bandwidth efficiency's numerator), by
 * hand, and which path runs which shape. */
static void read_bytes_by_hand(void **state) {
  (void)state;
  /* weights 4·(64·128 + 64·64 + 2·64·96 + 96·64 + 2·64) = 123392;
   * decode KV: 2 sequences × 2 kv heads × 14 keys × 16 × (K, V) × 4 */
  cal_layer_shape_t s = {64, 4, 2, 96, 13, 2, 1, 0, 0, 0};
  assert_double_equal(cal_layer_read_bytes(&s), 123392.0 + 7168.0, 0);
  s.decode = 0; /* prefill: the 13 keys of each sequence */
  assert_double_equal(cal_layer_read_bytes(&s), 123392.0 + 6656.0, 0);
  /* bf16 prefill: the four matrices at 2 bytes (30720 weights), the gains
   * and the KV cache still fp32 */
  s.bf16 = 1;
  assert_double_equal(cal_layer_weight_bytes(&s), 2 * 30720.0 + 512.0, 0);
  assert_double_equal(cal_layer_read_bytes(&s), 2 * 30720.0 + 512.0 + 6656.0, 0);
  /* bf16 decode: the KV cache is bf16 too, 2 bytes an element */
  s.decode = 1;
  assert_double_equal(cal_layer_read_bytes(&s), 2 * 30720.0 + 512.0 + 3584.0, 0);
  s.decode = 0;
  s.bf16 = 0;
  /* qwen2-0.5b decode, batch 1: 14,911,232 weights and 129 keys */
  const cal_layer_preset_t *q = cal_layer_preset_find("qwen2-0.5b");
  assert_non_null(q);
  cal_layer_shape_t qs = {q->hidden, q->heads, q->kv_heads, q->ffn, q->seq,
                          1, 1, 0, 0, 0};
  assert_double_equal(cal_layer_weight_bytes(&qs), 59644928.0, 0);
  assert_double_equal(cal_layer_read_bytes(&qs), 59644928.0 + 132096.0, 0);
  qs.batch = 8;
  assert_double_equal(cal_layer_read_bytes(&qs), 59644928.0 + 8 * 132096.0, 0);

  s.decode = 1;
  s.batch = 1;
  assert_string_equal(cal_layer_matrix_path(&s), "gemv");
  s.batch = CAL_LAYER_GEMV_MAX_BATCH;
  assert_string_equal(cal_layer_matrix_path(&s), "gemv");
  s.batch++;
  assert_string_equal(cal_layer_matrix_path(&s), "blas");
  s.batch = 1;
  s.decode = 0;
  assert_string_equal(cal_layer_matrix_path(&s), "blas");
}

/* The reference of the efficiency: the bandwidth section's stream_read
 * point at memory on the sweep's threads, or NAN with the reason. */
static void memory_read_reference(void **state) {
  (void)state;
  char why[256];
  assert_true(isnan(cal_bandwidth_memory_read(NULL, 2, why, sizeof why)));
  assert_string_equal(why, "the bandwidth section did not run");
  cal_point_t pts[3];
  const char *levels[3] = {"L2", "memory", "memory"};
  memset(pts, 0, sizeof pts);
  for (int i = 0; i < 3; i++) {
    pts[i].kernel = cal_kernel_find(i == 2 ? "stream_triad" : "stream_read");
    pts[i].params.threads = 2;
    pts[i].status = CAL_POINT_OK;
    pts[i].gbps_sum.median = 10.0 * (i + 1);
  }
  cal_bandwidth_result_t bw = {pts, levels, 3};
  assert_double_equal(cal_bandwidth_memory_read(&bw, 2, why, sizeof why), 20.0, 0);
  assert_true(isnan(cal_bandwidth_memory_read(&bw, 1, why, sizeof why)));
  assert_string_equal(why, "the bandwidth section has no stream_read point "
                           "at memory on 1 thread");
  pts[1].status = CAL_POINT_SKIPPED;
  snprintf(pts[1].reason, sizeof pts[1].reason, "needs more memory");
  assert_true(isnan(cal_bandwidth_memory_read(&bw, 2, why, sizeof why)));
  assert_non_null(strstr(why, "was not measured: needs more memory"));
}

/* The decode mode's keys in the profile: null, with the reason, when the
 * bandwidth section did not run; the point's id when it did. */
static void decode_bandwidth_json(void **state) {
  (void)state;
  cal_opts_t o;
  memset(&o, 0, sizeof o);
  snprintf(o.sweep.preset, sizeof o.sweep.preset, "tiny");
  o.sweep.hidden = 128, o.sweep.heads = 4, o.sweep.kv_heads = 2;
  o.sweep.ffn = 384, o.sweep.seq = 32, o.threads = 2;
  cal_run_result_t r = {.opt = &o};
  cal_batch_point_t pt;
  memset(&pt, 0, sizeof pt);
  snprintf(pt.id, sizeof pt.id, "batch_sweep/decode/tiny/h128/s32/b1");
  pt.batch = 1;
  pt.status = CAL_POINT_SKIPPED;
  snprintf(pt.reason, sizeof pt.reason, "time budget");
  cal_batch_result_t res;
  memset(&res, 0, sizeof res);
  res.ran[1] = 1;
  res.modes[1] = (cal_batch_mode_t){.name = "decode", .status = "skipped",
                                    .points = &pt, .npoints = 1};
  res.top_mode = -1;
  res.dtype = CAL_DTYPE_FP32;
  res.engine = CAL_ENGINE_OPENBLAS;
  res.mem_read_threads = 2;
  for (int known = 0; known < 2; known++) {
    res.mem_read_gbps = known ? 31.5 : NAN;
    cal_bandwidth_memory_read(NULL, 2, res.mem_read_why,
                              sizeof res.mem_read_why);
    json_t *sec = cal_batch_write(&r, &res);
    assert_non_null(sec);
    json_t *m = json_object_get(json_object_get(sec, "modes"), "decode");
    json_t *gb = json_object_get(m, "memory_read_gbps");
    json_t *id = json_object_get(m, "memory_read_point");
    const char *note = json_string_value(json_object_get(m, "bandwidth_note"));
    assert_non_null(note);
    if (known) {
      assert_double_equal(json_real_value(gb), 31.5, 0);
      assert_string_equal(json_string_value(id),
                          "bandwidth/stream_read/memory/t2");
      assert_null(strstr(note, "no efficiency"));
    } else {
      assert_true(json_is_null(gb) && json_is_null(id));
      assert_non_null(strstr(note, "no efficiency: the bandwidth section did "
                                   "not run"));
    }
    json_decref(sec);
  }
}

CAL_TEST_MAIN(
    cmocka_unit_test(attention_team_matches_fused),
    cmocka_unit_test(layer_team_verifies),
    cmocka_unit_test(packed_weights_are_row_major_ones),
    cmocka_unit_test(layer_team_verifies_bf16),
    cmocka_unit_test(bf16_cache_attention),
    cmocka_unit_test(layer_verify_catches_wrong_answers),
    cmocka_unit_test(read_bytes_by_hand),
    cmocka_unit_test(memory_read_reference),
    cmocka_unit_test(decode_bandwidth_json))
