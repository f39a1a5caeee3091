/* The microarchitecture table: every row found from its own vendor,
 * family, model range ends and brand words; real CPUs to their rows (Zen 4
 * as two 256-bit pipes with 512-bit operations split); SKUs CPUID cannot
 * tell apart decided by the brand or left unknown; an unknown CPU without
 * a theory; and the theoretical rates each row gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cal_isa.h"
#include "limits_json.h"
#include "roofline.h"
#include "test_util.h"
#include "uarch.h"

/* The first brand word of a row ("" when any brand will do). */
static void first_word(const cal_uarch_t *u, char *buf, size_t len) {
  snprintf(buf, len, "%s", u->brand_has ? u->brand_has : "");
  buf[strcspn(buf, "|")] = '\0';
}

static void every_row_identified(void **state) {
  (void)state;
  size_t n;
  const cal_uarch_t *t = cal_uarch_table(&n);
  assert_true(n >= 15);
  for (size_t i = 0; i < n; i++) {
    const cal_uarch_t *u = &t[i];
    char brand[64];
    first_word(u, brand, sizeof brand);
    assert_non_null(u->source);
    assert_true(u->fma_pipes >= 1);
    assert_true(u->fma_bits == 128 || u->fma_bits == 256 || u->fma_bits == 512);
    assert_true(u->nmodels >= 1 && u->nmodels <= CAL_UARCH_MAX_RANGES);
    for (size_t j = 0; j < i; j++)
      assert_string_not_equal(u->id, t[j].id);
    for (int r = 0; r < u->nmodels; r++) {
      assert_true(u->models[r].lo <= u->models[r].hi);
      const int ends[2] = {u->models[r].lo, u->models[r].hi};
      for (int e = 0; e < 2; e++) {
        const cal_uarch_t *got =
            cal_uarch_lookup(u->vendor, u->family, ends[e], brand, NULL);
        assert_non_null(got);
        assert_string_equal(got->id, u->id);
      }
    }
  }
}

static const cal_uarch_t *find(const char *vendor, int family, int model,
                               const char *brand) {
  return cal_uarch_lookup(vendor, family, model, brand, NULL);
}

static void real_cpus(void **state) {
  (void)state;
  /* AMD EPYC 9xx4 (Genoa): family 25, model 17 */
  const cal_uarch_t *z4 = find("AuthenticAMD", 25, 17, "AMD EPYC 9654");
  assert_non_null(z4);
  assert_string_equal(z4->id, "amd-zen4");
  assert_int_equal(z4->fma_pipes, 2);
  assert_int_equal(z4->fma_bits, 256);
  assert_true(z4->split512);
  assert_double_equal(cal_uarch_fma_ipc(z4, 512), 1.0, 0);
  assert_double_equal(cal_uarch_fma_ipc(z4, 256), 2.0, 0);
  assert_double_equal(cal_uarch_fma_ipc(z4, 0), 2.0, 0);
  /* Zen 5 server (Turin): full-width 512-bit pipes */
  const cal_uarch_t *z5 = find("AuthenticAMD", 26, 2, "AMD EPYC 9575F");
  assert_string_equal(z5->id, "amd-zen5");
  assert_double_equal(cal_uarch_fma_ipc(z5, 512), 2.0, 0);
  assert_string_equal(find("AuthenticAMD", 26, 0x24, "")->id,
                      "amd-zen5-mobile");
  assert_string_equal(find("AuthenticAMD", 25, 1, "AMD EPYC 7763")->id,
                      "amd-zen3");
  assert_double_equal(cal_uarch_fma_ipc(find("AuthenticAMD", 25, 1, ""), 512),
                      0.0, 0); /* no AVX-512 */
  assert_string_equal(find("AuthenticAMD", 23, 0x31, "")->id, "amd-zen2");
  assert_double_equal(cal_uarch_fma_ipc(find("AuthenticAMD", 23, 1, ""), 256),
                      1.0, 0); /* Zen 1: two 128-bit pipes */
  /* Skylake-SP: the brand decides the FMA-512 units */
  const cal_uarch_t *gold =
      find("GenuineIntel", 6, 0x55, "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz");
  const cal_uarch_t *silver =
      find("GenuineIntel", 6, 0x55, "Intel(R) Xeon(R) Silver 4110 CPU");
  assert_double_equal(cal_uarch_fma_ipc(gold, 512), 2.0, 0);
  assert_double_equal(cal_uarch_fma_ipc(silver, 512), 1.0, 0);
  assert_double_equal(cal_uarch_fma_ipc(silver, 256), 2.0, 0);
  assert_double_equal(
      cal_uarch_fma_ipc(find("GenuineIntel", 6, 0x55, "Xeon(R) Gold 5122"),
                        512),
      2.0, 0);
  assert_double_equal(
      cal_uarch_fma_ipc(find("GenuineIntel", 6, 0x55, "Xeon(R) Gold 5118"),
                        512),
      1.0, 0);
  assert_string_equal(find("GenuineIntel", 6, 0x8F, "")->id,
                      "intel-sapphire-rapids");
  assert_string_equal(find("GenuineIntel", 6, 0xCF, "")->id,
                      "intel-sapphire-rapids");
  assert_string_equal(find("GenuineIntel", 6, 0xAD, "")->id,
                      "intel-granite-rapids");
  assert_string_equal(find("GenuineIntel", 6, 0x6A, "")->id,
                      "intel-icelake-sp");
  assert_string_equal(find("GenuineIntel", 6, 0x3C, "")->id, "intel-haswell");
  assert_string_equal(find("GenuineIntel", 6, 0x97, "")->id,
                      "intel-alderlake");
}

static void unknown_cpus(void **state) {
  (void)state;
  const char *why = NULL;
  /* a Skylake-SP part whose brand does not say how many FMA-512 units */
  assert_null(cal_uarch_lookup("GenuineIntel", 6, 0x55,
                               "Intel(R) Xeon(R) W-2123", &why));
  assert_non_null(strstr(why, "differ by SKU"));
  assert_null(cal_uarch_lookup("GenuineIntel", 6, 0x55, NULL, &why));
  why = NULL;
  assert_null(cal_uarch_lookup("GenuineIntel", 6, 0x01, "", &why));
  assert_non_null(strstr(why, "no row"));
  assert_null(cal_uarch_lookup("HygonGenuine", 0x18, 0, "", NULL));
  assert_null(cal_uarch_lookup("AuthenticAMD", 0x1B, 0, "", NULL));
  assert_null(cal_uarch_lookup(NULL, 25, 17, "", NULL));
  assert_double_equal(cal_uarch_fma_ipc(NULL, 256), 0.0, 0);

  /* no row: no rates at all, said so */
  cal_theory_t m;
  assert_int_equal(cal_theory_init(&m, NULL, CAL_VARIANT_AVX512,
                                   CAL_ISA_AVX512VNNI | CAL_ISA_AMX_TILE |
                                       CAL_ISA_AMX_BF16,
                                   3.0, 2),
                   0);
  assert_null(m.uarch);
  for (int dt = 0; dt < CAL_DT_COUNT; dt++) {
    assert_double_equal(cal_theory_gflops(&m, dt), 0.0, 0);
    assert_double_equal(cal_theory_matrix_gflops(&m, dt), 0.0, 0);
  }
  assert_null(m.matrix_engine);
  assert_non_null(strstr(m.assumption, "theory unknown"));
  assert_int_equal(cal_theory_check(&m, CAL_DT_FP32, 100.0, NULL, 0),
                   CAL_THEORY_AGREES);
}

static void theory_rates(void **state) {
  (void)state;
  cal_theory_t m;
  uint32_t zen4_bits = CAL_ISA_AVX512BF16 | CAL_ISA_AVX512VNNI;
  const cal_uarch_t *z4 = find("AuthenticAMD", 25, 17, "");
  /* Zen 4 at 3.67 GHz, 512-bit: one FMA a cycle, 32 fp32 flops */
  assert_int_equal(cal_theory_init(&m, z4, CAL_VARIANT_AVX512, zen4_bits,
                                   3.67, 2), 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP32), 32 * 3.67,
                      1e-9);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP64), 16 * 3.67,
                      1e-9);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_INT8), 128 * 3.67,
                      1e-9);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_BF16), 64 * 3.67,
                      1e-9);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_FP32), 2 * 32 * 3.67,
                      1e-9);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_FP16), 0.0, 0);
  assert_null(m.matrix_engine);
  assert_non_null(strstr(m.assumption, "Zen 4 (row amd-zen4)"));
  assert_non_null(strstr(m.assumption, "split"));
  /* the figure: 117.4 GF/s agrees with the row; 235 would not */
  assert_int_equal(cal_theory_check(&m, CAL_DT_FP32, 117.4, NULL, 0),
                   CAL_THEORY_AGREES);
  assert_int_equal(cal_theory_check(&m, CAL_DT_FP32, 235.0, NULL, 0),
                   CAL_THEORY_FASTER);
  /* the same core on 256 bits: two FMA a cycle of 16 fp32 flops */
  assert_int_equal(cal_theory_init(&m, z4, CAL_VARIANT_AVX2, zen4_bits, 3.0,
                                   1), 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP32), 96.0, 1e-9);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_INT8), 0.0, 0);
  /* Zen 5 server: 512-bit at two a cycle */
  assert_int_equal(cal_theory_init(&m, find("AuthenticAMD", 26, 2, ""),
                                   CAL_VARIANT_AVX512, zen4_bits, 3.0, 1), 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP32), 192.0, 1e-9);
  /* a 512-bit Zen 5 loop at the 256-bit rate says the row is wrong */
  char note[320];
  assert_int_equal(cal_theory_check(&m, CAL_DT_FP32, 96.0, note, sizeof note),
                   CAL_THEORY_SLOWER);
  assert_non_null(strstr(note, "amd-zen5"));
  /* Xeon Silver: one FMA-512 a cycle, VNNI at the FMA's rate */
  assert_int_equal(
      cal_theory_init(&m, find("GenuineIntel", 6, 0x55, "Silver 4210"),
                      CAL_VARIANT_AVX512, CAL_ISA_AVX512VNNI, 2.0, 1), 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP64), 32.0, 1e-9);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_INT8), 256.0, 1e-9);
  /* Haswell, AVX2 only */
  assert_int_equal(cal_theory_init(&m, find("GenuineIntel", 6, 0x3C, ""),
                                   CAL_VARIANT_AVX2, 0, 3.0, 4), 0);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_FP64), 4 * 2 * 8 * 3.0,
                      1e-9);
}

/* The profile names the row, or says the theory is unknown. */
static void profile_keys(void **state) {
  (void)state;
  cal_theory_t m;
  assert_int_equal(cal_theory_init(&m, NULL, CAL_VARIANT_AVX2, 0, 3.0, 2), 0);
  json_t *sec = cal_compute_peak_json(NULL, 0, NULL, &m);
  assert_non_null(sec);
  json_t *model = json_object_get(sec, "model");
  assert_string_equal(json_string_value(json_object_get(model, "theory")),
                      "unknown");
  assert_true(json_is_null(json_object_get(model, "uarch")));
  assert_int_equal(json_object_size(json_object_get(sec, "theoretical")), 0);
  json_decref(sec);
  assert_int_equal(cal_theory_init(&m, find("AuthenticAMD", 25, 17, ""),
                                   CAL_VARIANT_AVX512, 0, 3.0, 2), 0);
  sec = cal_compute_peak_json(NULL, 0, NULL, &m);
  model = json_object_get(sec, "model");
  assert_string_equal(json_string_value(json_object_get(model, "theory")),
                      "table");
  json_t *u = json_object_get(model, "uarch");
  assert_string_equal(json_string_value(json_object_get(u, "row")),
                      "amd-zen4");
  assert_int_equal(json_integer_value(json_object_get(u, "fma_bits")), 256);
  assert_true(json_is_true(json_object_get(u, "split_512")));
  assert_double_equal(
      json_number_value(json_object_get(
          json_object_get(json_object_get(sec, "theoretical"), "fp32"),
          "gflops_per_core")),
      96.0, 1e-9);
  json_decref(sec);
}

CAL_TEST_MAIN(
    cmocka_unit_test(every_row_identified),
    cmocka_unit_test(real_cpus),
    cmocka_unit_test(unknown_cpus),
    cmocka_unit_test(theory_rates),
    cmocka_unit_test(profile_keys))
