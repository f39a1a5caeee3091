/* The machine record's ISA names (results/machine.h): every name once,
 * each with its own bit, joined in table order, never past the buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cal_isa.h"
#include "machine.h"
#include "test_util.h"

static void names_distinct(void **state) {
  (void)state;
  uint32_t seen = 0, bit = 0;
  size_t n = 0;
  const char *name;
  for (; (name = cal_isa_name_at(n, &bit)) != NULL; n++) {
    assert_true(bit != 0 && (bit & (bit - 1)) == 0); /* one bit */
    assert_false(seen & bit);
    seen |= bit;
    assert_true(strlen(name) > 0);
  }
  assert_true(n >= 10);
  assert_true(seen & CAL_ISA_AVX2);
}

static void string_joins(void **state) {
  (void)state;
  char buf[64];
  cal_isa_string(CAL_ISA_AVX2 | CAL_ISA_FMA3, buf, sizeof buf);
  assert_string_equal(buf, "avx2 fma");
  cal_isa_string(0, buf, sizeof buf);
  assert_string_equal(buf, "");
  /* too small for both: a terminated prefix of the whole, the first name
   * kept */
  cal_isa_string(CAL_ISA_AVX2 | CAL_ISA_FMA3, buf, 6);
  assert_true(strlen(buf) < 6);
  assert_memory_equal(buf, "avx2 fma", strlen(buf));
  assert_true(strncmp(buf, "avx2", 4) == 0);
}

CAL_TEST_MAIN(
    cmocka_unit_test(names_distinct),
    cmocka_unit_test(string_joins))
