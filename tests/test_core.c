/* Unit tests of the foundation: usable cores and cgroups, /proc parsing,
 * option parsing, the harness on fake kernels, GEMM verification, and the
 * profile loader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cal_err.h"
#include "cli.h"
#include "harness.h"
#include "hwinfo.h"
#include "kernel.h"
#include "profile.h"
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

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void mkdirs(const char *path) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(buf, 0755);
      *p = '/';
    }
  mkdir(buf, 0755);
}

static void cgroup_synthetic_tree(void **state) {
  (void)state;
  char root[] = "/tmp/cal_cgroup_XXXXXX";
  assert_non_null(mkdtemp(root));
  char p[1024];
  /* v2: the process sits in /ci/job; the quota is set on /ci (2.5 CPUs)
   * and a looser one on the job itself */
  snprintf(p, sizeof p, "%s/proc/self", root);
  mkdirs(p);
  snprintf(p, sizeof p, "%s/proc/self/cgroup", root);
  write_file(p, "0::/ci/job\n");
  snprintf(p, sizeof p, "%s/sys/fs/cgroup/ci/job", root);
  mkdirs(p);
  snprintf(p, sizeof p, "%s/sys/fs/cgroup/ci/cpu.max", root);
  write_file(p, "250000 100000\n");
  snprintf(p, sizeof p, "%s/sys/fs/cgroup/ci/job/cpu.max", root);
  write_file(p, "max 100000\n");
  assert_double_equal(cal_cgroup_quota_cpus(root), 2.5, 1e-12);
  assert_int_equal(cal_usable_cores(64, cal_cgroup_quota_cpus(root)), 3);

  /* v1: cpu controller line */
  snprintf(p, sizeof p, "%s/proc/self/cgroup", root);
  write_file(p, "4:cpu,cpuacct:/docker/abc\n1:name=systemd:/x\n");
  snprintf(p, sizeof p, "%s/sys/fs/cgroup/cpu/docker/abc", root);
  mkdirs(p);
  snprintf(p, sizeof p, "%s/sys/fs/cgroup/cpu/docker/abc/cpu.cfs_quota_us", root);
  write_file(p, "200000\n");
  snprintf(p, sizeof p, "%s/sys/fs/cgroup/cpu/docker/abc/cpu.cfs_period_us", root);
  write_file(p, "100000\n");
  assert_double_equal(cal_cgroup_quota_cpus(root), 2.0, 1e-12);

  /* nothing readable: no quota */
  assert_double_equal(cal_cgroup_quota_cpus("/nonexistent-root"), 0.0, 0);
  char cmd[1100];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  assert_int_equal(system(cmd), 0);
}

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

static void option_parsing(void **state) {
  (void)state;
  long v;
  double d;
  uint64_t u;
  assert_int_equal(cal_parse_long("4", 1, 10, &v), 0);
  assert_int_equal(v, 4);
  assert_int_equal(cal_parse_long("0", 1, 10, &v), CAL_EINVAL);
  assert_int_equal(cal_parse_long("abc", 1, 10, &v), CAL_EINVAL);
  assert_int_equal(cal_parse_long("3x", 1, 10, &v), CAL_EINVAL);
  assert_int_equal(cal_parse_long("", 1, 10, &v), CAL_EINVAL);
  assert_int_equal(cal_parse_fraction("5%", &d), 0);
  assert_double_equal(d, 0.05, 1e-15);
  assert_int_equal(cal_parse_fraction("0.05", &d), 0);
  assert_double_equal(d, 0.05, 1e-15);
  assert_int_equal(cal_parse_fraction("150%", &d), CAL_EINVAL);
  assert_int_equal(cal_parse_fraction("2", &d), CAL_EINVAL);
  assert_int_equal(cal_parse_fraction("%", &d), CAL_EINVAL);
  assert_int_equal(cal_parse_double("nan", 0, 1, &d), CAL_EINVAL);
  assert_int_equal(cal_parse_u64("18446744073709551615", &u), 0);
  assert_int_equal(cal_parse_u64("-1", &u), CAL_EINVAL);
  char why[256];
  assert_int_equal(cal_check_writable("/nonexistent-dir/x.json", why, sizeof why),
                   CAL_EINVAL);
  assert_non_null(strstr(why, "does not exist"));
  assert_int_equal(cal_check_writable("/tmp", why, sizeof why), CAL_EINVAL);
  assert_int_equal(cal_check_writable("/tmp/x.json", why, sizeof why), 0);
  assert_int_equal(cal_check_writable("-", why, sizeof why), 0);
}

/* A fake kernel whose answer can be made wrong. */
typedef struct {
  int runs;
  int wrong;
} fake_t;
static int fake_wrong_next;
static double fake_flops(const cal_params_t *p) { return 1e6; }
static int fake_setup(const cal_params_t *p, void **st) {
  fake_t *f = calloc(1, sizeof *f);
  if (!f)
    return CAL_ENOMEM;
  f->wrong = fake_wrong_next;
  *st = f;
  return 0;
}
static int fake_run(void *st) {
  fake_t *f = st;
  volatile double x = 0;
  for (int i = 0; i < 2000; i++)
    x += i;
  f->runs++;
  return 0;
}
static int fake_verify(void *st) { return ((fake_t *)st)->wrong ? CAL_EVERIFY : 0; }
static void fake_teardown(void *st) { free(st); }
static double fake_mem(const cal_params_t *p) { return 1e12; }
static const cal_kernel_t fake_kernel = {
    .name = "fake", .family = "test", .dtype = "fp64", .flops = fake_flops,
    .setup = fake_setup, .run = fake_run, .verify = fake_verify,
    .teardown = fake_teardown,
};

static void harness_samples_and_verification(void **state) {
  (void)state;
  cal_harness_cfg_t cfg;
  cal_harness_defaults(&cfg, 1);
  cfg.samples = 9;
  cfg.min_sample_s = 0.002;
  cfg.warmup_s = 0.001;
  cal_point_t pt;
  cal_params_t p = {.threads = 1};
  fake_wrong_next = 0;
  assert_int_equal(cal_bench_kernel(&cfg, NULL, &fake_kernel, &p, &pt), 0);
  assert_int_equal(pt.status, CAL_POINT_OK);
  assert_int_equal(pt.m.n, 9);
  assert_true(pt.m.iters >= 1);
  for (size_t i = 0; i < pt.m.n; i++)
    assert_true(pt.m.samples_s[i] > 0);
  /* rates are flops / time of each sample, and summarised */
  assert_double_equal(pt.gflops[3], 1e6 / pt.m.samples_s[3] * 1e-9, 1e-9);
  assert_true(pt.gflops_sum.min <= pt.gflops_sum.median);
  assert_null(pt.gbps); /* no bytes declared */
  cal_point_free(&pt);

  fake_wrong_next = 1;
  assert_int_equal(cal_bench_kernel(&cfg, NULL, &fake_kernel, &p, &pt),
                   CAL_EVERIFY);
  assert_int_equal(pt.status, CAL_POINT_FAILED);
  cal_point_free(&pt);

  /* a point that needs more memory than available is skipped, not run */
  cal_kernel_t big = fake_kernel;
  big.mem_bytes = fake_mem;
  cfg.mem_avail_bytes = 1e9;
  fake_wrong_next = 0;
  assert_int_equal(cal_bench_kernel(&cfg, NULL, &big, &p, &pt), 0);
  assert_int_equal(pt.status, CAL_POINT_SKIPPED);
  assert_int_equal(pt.err, CAL_ETOOBIG);
  assert_non_null(strstr(pt.reason, "MiB"));
  cal_point_free(&pt);
}

static void gemm_verification_catches_wrong_results(void **state) {
  (void)state;
  static const char *const names[] = {"sgemm", "dgemm"};
  for (int i = 0; i < 2; i++) {
    const cal_kernel_t *k = cal_kernel_find(names[i]);
    assert_non_null(k);
    cal_params_t p = {.m = 67, .n = 45, .k = 129, .threads = 1, .seed = 3};
    void *st = NULL;
    /* before any run, C is poisoned: verification must fail */
    assert_int_equal(k->setup(&p, &st), 0);
    assert_int_equal(k->verify(st), CAL_EVERIFY);
    assert_int_equal(k->run(st), 0);
    assert_int_equal(k->verify(st), 0);
    assert_double_equal(k->flops(&p), 2.0 * 67 * 45 * 129, 0);
    k->teardown(st);
  }
  assert_null(cal_kernel_find("nonexistent"));
  cal_params_t bad = {.m = 0, .n = 4, .k = 4};
  void *st = NULL;
  assert_int_equal(cal_kernel_find("sgemm")->setup(&bad, &st), CAL_EINVAL);
}

static const char *minimal_profile =
    "{\"schema\":\"calibrate-profile/1\",\"device_name\":\"x\",\"device\":"
    "\"cpu\",\"gflops\":100.5,\"gflops_per_core\":50,\"optimal_batch_size\":"
    "null,\"throughput\":null,\"memory_gb\":24,\"latency_ms\":null,"
    "\"created\":\"2026-01-01T00:00:00Z\",\"tool\":{},\"machine\":{},"
    "\"settings\":{},\"quality\":{},\"gemm\":{\"points\":[{\"id\":\"a\","
    "\"status\":\"ok\",\"metric\":\"gflops\",\"gflops\":2,\"samples_gflops\":"
    "[1,2,3],\"stats\":{}},{\"id\":\"b\",\"status\":\"skipped\",\"reason\":"
    "\"r\"}]}}";

static int count_points(const char *section, json_t *pt, void *arg) {
  (*(int *)arg)++;
  return 0;
}

static void profile_round_trip_and_rejects(void **state) {
  (void)state;
  char err[512];
  json_error_t jerr;
  json_t *root = json_loads(minimal_profile, 0, &jerr);
  assert_non_null(root);
  assert_int_equal(cal_profile_validate(root, err, sizeof err), 0);
  char path[] = "/tmp/cal_profile_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(cal_json_write_atomic(root, path, err, sizeof err), 0);
  cal_profile_t *p = NULL;
  assert_int_equal(cal_profile_load(path, &p, err, sizeof err), 0);
  assert_true(json_equal(p->root, root));
  int n = 0;
  cal_profile_each_point(p->root, count_points, &n);
  assert_int_equal(n, 2);
  cal_profile_free(p);

  /* truncated */
  FILE *f = fopen(path, "w");
  fwrite(minimal_profile, 1, 80, f);
  fclose(f);
  assert_int_equal(cal_profile_load(path, &p, err, sizeof err), CAL_EPARSE);
  assert_non_null(strstr(err, "not valid JSON"));

  /* wrong schema, wrong types, missing keys, bad points */
  static const struct {
    const char *from, *to, *msg;
  } edits[] = {
      {"calibrate-profile/1", "calibrate-profile/9", "schema is"},
      {"\"gflops\":100.5", "\"gflops\":\"fast\"", "\"gflops\" must be"},
      {"\"device\":\"cpu\",", "", "missing top-level key \"device\""},
      {"\"samples_gflops\":[1,2,3]", "\"samples_gflops\":[1,\"x\",3]",
       "samples_gflops[1]"},
      {"\"status\":\"ok\"", "\"status\":\"great\"", "status"},
      {"\"samples_gflops\":[1,2,3]", "\"samples_gflops\":[]", "non-empty"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    char buf[2048];
    const char *at = strstr(minimal_profile, edits[i].from);
    assert_non_null(at);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - minimal_profile),
             minimal_profile, edits[i].to, at + strlen(edits[i].from));
    f = fopen(path, "w");
    fputs(buf, f);
    fclose(f);
    assert_int_equal(cal_profile_load(path, &p, err, sizeof err), CAL_ESCHEMA);
    if (!strstr(err, edits[i].msg))
      fail_msg("edit %zu: message '%s' lacks '%s'", i, err, edits[i].msg);
  }
  f = fopen(path, "w");
  fputs("[1,2]", f);
  fclose(f);
  assert_int_equal(cal_profile_load(path, &p, err, sizeof err), CAL_ESCHEMA);
  unlink(path);
  assert_int_equal(cal_profile_load(path, &p, err, sizeof err), CAL_EIO);

  /* a failed atomic write leaves nothing behind */
  assert_int_equal(cal_json_write_atomic(root, "/nonexistent-dir/p.json", err,
                                         sizeof err),
                   CAL_EIO);
  json_decref(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cgroup_text_parsing),
      cmocka_unit_test(usable_core_logic),
      cmocka_unit_test(cgroup_synthetic_tree),
      cmocka_unit_test(meminfo_parsing),
      cmocka_unit_test(blas_coretype_choice),
      cmocka_unit_test(option_parsing),
      cmocka_unit_test(harness_samples_and_verification),
      cmocka_unit_test(gemm_verification_catches_wrong_results),
      cmocka_unit_test(profile_round_trip_and_rejects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
