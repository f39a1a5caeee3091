/* Machine facts parsed from text: /proc/meminfo values and the OpenBLAS
 * core type chosen from feature bits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cal_err.h"
#include "hwinfo.h"
#include "test_util.h"

static void meminfo_parsing(void **state) {
  (void)state;
  const char *text = "MemTotal:       24576000 kB\nMemFree:  100 kB\n"
                     "MemAvailable:   20000000 kB\n";
  uint64_t b;
  assert_int_equal(cal_meminfo_value(text, "MemTotal", &b), 0);
  assert_int_equal(b, 24576000ULL * 1024);
  assert_int_equal(cal_meminfo_value(text, "MemAvailable", &b), 0);
  assert_int_equal(b, 20000000ULL * 1024);
  assert_int_equal(cal_meminfo_value(text, "Mem", &b), CAL_ENOTFOUND);
  assert_int_equal(cal_meminfo_value(text, "SwapTotal", &b), CAL_ENOTFOUND);
}

static void blas_coretype_choice(void **state) {
  (void)state;
  assert_int_equal(cal_blas_coretype_rank("Prescott"), 1);
  assert_int_equal(cal_blas_coretype_rank("haswell"), 3);
  assert_int_equal(cal_blas_coretype_rank("Cooperlake"), 5);
  assert_int_equal(cal_blas_coretype_rank("NoSuchCore"), 0);
  assert_string_equal(cal_blas_coretype_for(0xffffffffu), "Cooperlake");
  /* AVX-512 without BF16: SkylakeX; AVX2+FMA: Haswell; nothing: none */
  assert_string_equal(cal_blas_coretype_for((1u << 4) | (1u << 5) | (1u << 6) |
                                            (1u << 7) | (1u << 2) | (1u << 3)),
                      "SkylakeX");
  assert_string_equal(cal_blas_coretype_for((1u << 2) | (1u << 3)), "Haswell");
  assert_null(cal_blas_coretype_for(0));
}

CAL_TEST_MAIN(
    cmocka_unit_test(meminfo_parsing), cmocka_unit_test(blas_coretype_choice))
