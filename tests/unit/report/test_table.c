/* report/table.c: the run's table is printed escaped, lines kept: a CPU
 * brand or a warning with control characters in it cannot act on the
 * terminal or add a row.  report/table_attention.c: points skipped for
 * one reason share a row.  report/table_gemm.c: a headline row whose two
 * figures come from two engines names both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel.h"
#include "machine.h"
#include "results.h"
#include "run_result.h"
#include "table.h"

static void hostile_strings_escaped(void **state) {
  (void)state;
  cal_opts_t opt;
  cal_hwinfo_t hw;
  memset(&opt, 0, sizeof opt);
  memset(&hw, 0, sizeof hw);
  opt.hcfg.cv_threshold = 0.05;
  snprintf(hw.brand, sizeof hw.brand, "cpu\x1b]0;title\x07 \xe2\x80\xae");
  char *warn = strdup("warned\x1b[2J");
  char *warnings[1] = {warn};
  cal_run_result_t r = {.opt = &opt, .hw = &hw};
  r.res.quality.warnings = warnings;
  r.res.quality.nwarnings = 1;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  cal_table_print(&r, f);
  assert_int_equal(fclose(f), 0);
  assert_null(memchr(buf, 0x1b, len));
  assert_null(memchr(buf, 0x07, len));
  assert_null(strstr(buf, "\xe2\x80\xae"));
  assert_non_null(strstr(buf, "cpu\\x1b]0;title\\x07 \\u202e"));
  assert_non_null(strstr(buf, "warning: warned\\x1b[2J\n"));
  free(buf);
  free(warn);
}

/* One attention point, skipped (reason non-NULL) or measured. */
static cal_attn_point_t attn_point(int bf16, int64_t nq, const char *reason) {
  cal_attn_point_t ap;
  memset(&ap, 0, sizeof ap);
  ap.bf16 = bf16;
  ap.shape = (cal_attn_shape_t){1, 4, 2, nq, nq, 128, 1};
  ap.fused = -1;
  ap.pt.params.threads = 1;
  snprintf(ap.pt.variant, sizeof ap.pt.variant, "avx2");
  ap.pt.status = reason ? CAL_POINT_SKIPPED : CAL_POINT_OK;
  if (reason)
    snprintf(ap.pt.reason, sizeof ap.pt.reason, "%s", reason);
  else
    ap.pt.gflops_sum.median = 50.0;
  return ap;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
    n++;
  return n;
}

/* bf16 points skipped for one reason, before and after a measured point,
 * share one row that counts them; a point skipped for another reason, or
 * an fp32 point skipped for the same one, keeps its own row. */
static void attention_skips_share_a_row(void **state) {
  (void)state;
  const char *no = "no bf16 here";
  cal_attn_point_t pts[] = {
      attn_point(0, 512, NULL),  attn_point(1, 512, no),
      attn_point(1, 2048, no),   attn_point(0, 2048, NULL),
      attn_point(1, 256, no),    attn_point(1, 1024, "out of memory"),
      attn_point(0, 1024, no),
  };
  cal_attention_result_t a = {.points = pts,
                              .npoints = sizeof pts / sizeof *pts};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  cal_attention_print(NULL, &a, f);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(count(buf, "bf16, 3 points"), 1);
  assert_int_equal(count(buf, "skipped: no bf16 here"), 2);
  assert_non_null(strstr(buf, "bf16 b1 h4/2 q1024 k1024 d128 causal"));
  assert_non_null(strstr(buf, " b1 h4/2 q1024 k1024 d128 causal"));
  assert_int_equal(count(buf, "avx2"), 2);
  assert_int_equal(count(buf, "\n"), 7); /* blank, heading, 5 rows */
  free(buf);
}

/* The fp32 headline row when ONE made the one-thread figure and ALL the
 * all-thread one. */
static char *headline_row(const char *one, const char *all) {
  cal_opts_t opt;
  memset(&opt, 0, sizeof opt);
  opt.threads = 2;
  cal_run_result_t r = {.opt = &opt};
  cal_gemm_result_t g;
  memset(&g, 0, sizeof g);
  g.ndtypes = 1;
  cal_gemm_dtype_t *d = &g.dtypes[0];
  d->dtype = "fp32";
  d->metric = "gflops";
  d->supported = 1;
  d->best[0] = (cal_gemm_best_t){
      .kernel = cal_kernel_find(one), .gflops = 88.9, .n = 512};
  d->best[1] = (cal_gemm_best_t){
      .kernel = cal_kernel_find(all), .gflops = 139.9, .n = 1024};
  assert_non_null(d->best[0].kernel);
  assert_non_null(d->best[1].kernel);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  cal_gemm_print(&r, &g, f);
  assert_int_equal(fclose(f), 0);
  return buf;
}

static void gemm_headline_names_both_engines(void **state) {
  (void)state;
  char *mixed = headline_row("sgemm", "onednn_sgemm");
  const char *row = strstr(mixed, "  fp32  best GFLOPS");
  assert_non_null(row);
  const char *end = strchr(row, '\n');
  assert_non_null(end);
  const char *named = strstr(row, "onednn");
  const char *one = strstr(row, "1 thread: openblas");
  assert_true(named && named < end && one && one < end);
  free(mixed);
  char *same = headline_row("onednn_sgemm", "onednn_sgemm");
  assert_null(strstr(same, "1 thread:"));
  free(same);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hostile_strings_escaped),
      cmocka_unit_test(attention_skips_share_a_row),
      cmocka_unit_test(gemm_headline_names_both_engines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
