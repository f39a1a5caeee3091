/* Usable cores: cgroup quota text, the quota found in a synthetic cgroup
 * tree, and how affinity and quota combine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "cal_err.h"
#include "test_fs.h"
#include "test_util.h"
#include "threads.h"

static void cgroup_text_parsing(void **state) {
  (void)state;
  double cpus;
  assert_int_equal(cal_cgroup_v2_quota("max 100000\n", &cpus), 0);
  assert_double_equal(cpus, 0.0, 0);
  assert_int_equal(cal_cgroup_v2_quota("200000 100000\n", &cpus), 0);
  assert_double_equal(cpus, 2.0, 1e-12);
  assert_int_equal(cal_cgroup_v2_quota("150000 100000", &cpus), 0);
  assert_double_equal(cpus, 1.5, 1e-12);
  assert_int_equal(cal_cgroup_v2_quota("garbage", &cpus), CAL_EPARSE);
  assert_int_equal(cal_cgroup_v2_quota("-5 100000", &cpus), CAL_EPARSE);
  assert_int_equal(cal_cgroup_v1_quota("-1\n", "100000\n", &cpus), 0);
  assert_double_equal(cpus, 0.0, 0);
  assert_int_equal(cal_cgroup_v1_quota("400000", "100000", &cpus), 0);
  assert_double_equal(cpus, 4.0, 1e-12);
  assert_int_equal(cal_cgroup_v1_quota("x", "100000", &cpus), CAL_EPARSE);
}

static void usable_core_logic(void **state) {
  (void)state;
  /* a CI container with 2 CPUs of quota on a 64-core host has 2 */
  assert_int_equal(cal_usable_cores(64, 2.0), 2);
  assert_int_equal(cal_usable_cores(64, 0.0), 64); /* no quota */
  assert_int_equal(cal_usable_cores(64, 1.5), 2);  /* rounded up */
  assert_int_equal(cal_usable_cores(4, 8.0), 4);   /* affinity is tighter */
  assert_int_equal(cal_usable_cores(1, 0.0), 1);
  assert_int_equal(cal_usable_cores(8, 0.2), 1);
}

/* A synthetic /proc and /sys tree: each file is (path under root, text). */
typedef struct {
  const char *path, *text;
} tree_file_t;

static char *make_tree(const tree_file_t *files, size_t n) {
  char *root = test_scratch_dir();
  assert_non_null(root);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(test_write_file_at(root, files[i].path, files[i].text), 0);
  return root;
}

static void cgroup_synthetic_tree(void **state) {
  (void)state;
  /* v2: the process sits in /ci/job; the quota is set on /ci (2.5 CPUs)
   * and a looser one on the job itself */
  static const tree_file_t v2[] = {
      {"proc/self/cgroup", "0::/ci/job\n"},
      {"sys/fs/cgroup/ci/cpu.max", "250000 100000\n"},
      {"sys/fs/cgroup/ci/job/cpu.max", "max 100000\n"},
  };
  char *root = make_tree(v2, sizeof v2 / sizeof v2[0]);
  assert_double_equal(cal_cgroup_quota_cpus(root), 2.5, 1e-12);
  assert_int_equal(cal_usable_cores(64, cal_cgroup_quota_cpus(root)), 3);
  test_rm_rf(root);
  free(root);

  /* v1: cpu controller line */
  static const tree_file_t v1[] = {
      {"proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n1:name=systemd:/x\n"},
      {"sys/fs/cgroup/cpu/docker/abc/cpu.cfs_quota_us", "200000\n"},
      {"sys/fs/cgroup/cpu/docker/abc/cpu.cfs_period_us", "100000\n"},
  };
  root = make_tree(v1, sizeof v1 / sizeof v1[0]);
  assert_double_equal(cal_cgroup_quota_cpus(root), 2.0, 1e-12);
  test_rm_rf(root);
  free(root);

  /* nothing readable: no quota */
  assert_double_equal(cal_cgroup_quota_cpus("/nonexistent-root"), 0.0, 0);
}

CAL_TEST_MAIN(
    cmocka_unit_test(cgroup_text_parsing), cmocka_unit_test(usable_core_logic),
    cmocka_unit_test(cgroup_synthetic_tree))
