/* Machine facts parsed from text: /proc/meminfo values and the OpenBLAS
 * core type chosen from feature bits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <sys/resource.h>

#include "cal_err.h"
#include "hwinfo.h"
#include "test_fs.h"
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

/* Issue 49: under a child cgroup of 3 GiB the root's limit was read (none)
 * and the run was OOM-killed.  The process's own cgroup is found from
 * /proc/self/cgroup and the tightest limit on the way up taken. */
static void cgroup_limit_of_own_cgroup(void **state) {
  (void)state;
  char *root = test_scratch_dir();
  assert_non_null(root);
  uint64_t lim, room;
  assert_int_equal(cal_cgroup_mem_room(root, &lim, &room), CAL_ENOTFOUND);
  assert_int_equal(test_write_file_at(root, "proc/self/cgroup", "0::/a/b\n"), 0);
  assert_int_equal(cal_cgroup_mem_room(root, &lim, &room), CAL_ENOTFOUND);
  assert_int_equal(test_write_file_at(root, "sys/fs/cgroup/a/b/memory.max",
                                      "max\n"), 0);
  assert_int_equal(test_write_file_at(root, "sys/fs/cgroup/a/memory.max",
                                      "3221225472\n"), 0);
  assert_int_equal(test_write_file_at(root, "sys/fs/cgroup/a/memory.current",
                                      "1073741824\n"), 0);
  assert_int_equal(cal_cgroup_mem_room(root, &lim, &room), 0);
  assert_true(lim == 3221225472ULL && room == 2147483648ULL);
  /* a tighter one below wins */
  assert_int_equal(test_write_file_at(root, "sys/fs/cgroup/a/b/memory.max",
                                      "1500000000\n"), 0);
  assert_int_equal(test_write_file_at(root, "sys/fs/cgroup/a/b/memory.current",
                                      "500000000\n"), 0);
  assert_int_equal(cal_cgroup_mem_room(root, &lim, &room), 0);
  assert_true(lim == 1500000000ULL && room == 1000000000ULL);
  /* v1: the memory controller's line */
  assert_int_equal(test_write_file_at(root, "proc/self/cgroup",
                                      "5:cpu:/x\n4:memory:/m\n"), 0);
  assert_int_equal(
      test_write_file_at(root, "sys/fs/cgroup/memory/m/memory.limit_in_bytes",
                         "2000000000\n"), 0);
  assert_int_equal(
      test_write_file_at(root, "sys/fs/cgroup/memory/m/memory.usage_in_bytes",
                         "0\n"), 0);
  assert_int_equal(cal_cgroup_mem_room(root, &lim, &room), 0);
  assert_true(lim == 2000000000ULL && room == 2000000000ULL);
  free(root);
}

/* Issue 49: an address-space limit was not in the memory budget. */
static void address_space_room(void **state) {
  (void)state;
  struct rlimit old, rl;
  uint64_t room;
  assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
  if (old.rlim_cur == RLIM_INFINITY)
    assert_int_equal(cal_as_room(&room), CAL_ENOTFOUND);
  /* a limit 1 GiB above what is mapped now (a sanitizer maps terabytes
   * of shadow) */
  size_t len = 0;
  char *status = test_read_file("/proc/self/status", &len);
  uint64_t size = 0;
  assert_non_null(status);
  assert_int_equal(cal_meminfo_value(status, "VmSize", &size), 0);
  free(status);
  rl = old;
  rl.rlim_cur = (rlim_t)(size + ((uint64_t)1 << 30));
  if (old.rlim_max != RLIM_INFINITY && old.rlim_max < rl.rlim_cur)
    cal_test_skip("the hard address-space limit is below what is mapped");
  assert_int_equal(setrlimit(RLIMIT_AS, &rl), 0);
  int rc = cal_as_room(&room);
  assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
  assert_int_equal(rc, 0);
  /* four fifths of about 1 GiB, less 256 MiB */
  assert_true(room > ((uint64_t)500 << 20) && room <= ((uint64_t)564 << 20));
}

CAL_TEST_MAIN(
    cmocka_unit_test(meminfo_parsing), cmocka_unit_test(blas_coretype_choice),
    cmocka_unit_test(cgroup_limit_of_own_cgroup),
    cmocka_unit_test(address_space_room))
