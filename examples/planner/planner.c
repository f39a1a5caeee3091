/* A planner written against libcalibrate: read the profiles named on the
 * command line, print each machine's figures and its batch curve, and
 * split a number of examples across the machines as `calibrate plan`
 * does.
 *
 *   make
 *   ./planner [--examples N] PROFILE...
 *
 * Output: one "key=value" record per line, easy to read back:
 *   library version=...
 *   machine i=... name=... gflops=... gflops_per_core=... fp32=...
 *           fp32_per_core=... (one pair per dtype measured)
 *           optimal_batch=... throughput=... memory_bytes=...
 *   curve i=... peak_batch=... peak=... knee_batch=... optimal_batch=...
 *         shape=...
 *   split examples=... makespan_s=... even_makespan_s=... speedup=...
 *         heterogeneous=0|1
 *   share i=... in_split=0|1 share=... examples=... finish_s=...
 *         straggler=0|1
 * Figures a profile lacks print as "null".  Exit status: 0 ok, 2 bad
 * arguments or a profile that does not load (one line on stderr). */
#include <calibrate/calibrate.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void num(const char *key, double v) {
  if (isnan(v))
    printf(" %s=null", key);
  else
    printf(" %s=%.17g", key, v);
}

/* The confidence interval of the throughput: the curve's point at the
 * optimal batch whose median is the throughput (NaN when there is none). */
static void throughput_ci(const cal_batchcurve_t *c, int64_t batch,
                          double thr, double *lo, double *hi) {
  *lo = *hi = NAN;
  for (size_t k = 0; c && k < cal_batchcurve_size(c); k++) {
    int64_t b;
    double med, l, h;
    if (cal_batchcurve_point(c, k, &b, &med, &l, &h) == CAL_SUCCESS &&
        b == batch && fabs(med - thr) <= 1e-6 * fabs(thr)) {
      *lo = l;
      *hi = h;
    }
  }
}

static void print_machine(size_t i, const cal_machine_t *m) {
  static const char *const dtypes[] = {"fp32", "fp64", "bf16", "int8"};
  double all, one, mem;
  int64_t batch;
  printf("machine i=%zu name=\"%s\"", i, cal_machine_name(m));
  cal_machine_gflops(m, NULL, &all, &one);
  num("gflops", all);
  num("gflops_per_core", one);
  for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
    char key[32];
    if (cal_machine_gflops(m, dtypes[d], &all, &one) != CAL_SUCCESS)
      continue;
    num(dtypes[d], all);
    snprintf(key, sizeof key, "%s_per_core", dtypes[d]);
    num(key, one);
  }
  cal_machine_throughput(m, &batch, &all);
  printf(" optimal_batch=%" PRId64, batch);
  num("throughput", all);
  cal_machine_memory(m, &mem);
  num("memory_bytes", mem);
  printf("\n");
}

static void print_curve(size_t i, const cal_batchcurve_t *c) {
  int64_t pb;
  double peak;
  if (cal_batchcurve_peak(c, &pb, &peak) != CAL_SUCCESS)
    return;
  printf("curve i=%zu peak_batch=%" PRId64, i, pb);
  num("peak", peak);
  printf(" knee_batch=%" PRId64 " optimal_batch=%" PRId64 " shape=%s\n",
         cal_batchcurve_knee(c), cal_batchcurve_optimal(c),
         cal_batchcurve_shape(c));
}

int main(int argc, char **argv) {
  uint64_t examples = 10000;
  int first = 1, rc = 2;
  if (argc > 2 && strcmp(argv[1], "--examples") == 0) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(argv[2], &end, 10);
    if (errno || *end || end == argv[2] || argv[2][0] == '-') {
      fprintf(stderr, "planner: --examples wants a count, not '%s'\n",
              argv[2]);
      return 2;
    }
    examples = v;
    first = 3;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: planner [--examples N] PROFILE...\n");
    return 2;
  }
  if (cal_version_number() / 10000 != CALIBRATE_VERSION_MAJOR) {
    fprintf(stderr, "planner: built for libcalibrate %d, running with %s\n",
            CALIBRATE_VERSION_MAJOR, cal_version_string());
    return 2;
  }
  printf("library version=%s\n", cal_version_string());

  size_t n = (size_t)(argc - first);
  cal_machine_t **ms = calloc(n, sizeof *ms);
  double *thr = calloc(n, sizeof *thr);
  double *lo = calloc(n, sizeof *lo);
  double *hi = calloc(n, sizeof *hi);
  cal_worksplit_t *split = NULL;
  if (!ms || !thr || !lo || !hi) {
    fprintf(stderr, "planner: out of memory\n");
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    char err[512];
    cal_batchcurve_t *c = NULL;
    int64_t batch;
    if (cal_machine_load(argv[first + i], &ms[i], err, sizeof err) !=
        CAL_SUCCESS) {
      fprintf(stderr, "planner: %s\n", err);
      goto out;
    }
    print_machine(i, ms[i]);
    cal_machine_throughput(ms[i], &batch, &thr[i]);
    if (cal_machine_curve(ms[i], NULL, &c) == CAL_SUCCESS)
      print_curve(i, c);
    throughput_ci(c, batch, thr[i], &lo[i], &hi[i]);
    cal_batchcurve_free(c);
  }

  int st = cal_worksplit_compute(thr, lo, hi, n, examples, &split);
  if (st != CAL_SUCCESS) {
    fprintf(stderr, "planner: cannot split: %s\n", cal_status_message(st));
    goto out;
  }
  printf("split examples=%" PRIu64, examples);
  num("makespan_s", cal_worksplit_makespan_s(split));
  num("even_makespan_s", cal_worksplit_even_makespan_s(split));
  num("speedup", cal_worksplit_speedup(split));
  printf(" heterogeneous=%d\n", cal_worksplit_heterogeneous(split));
  for (size_t i = 0; i < n; i++) {
    int in, strag;
    double share, fin;
    uint64_t cnt;
    cal_worksplit_machine(split, i, &in, &share, &cnt, &fin, &strag);
    printf("share i=%zu in_split=%d", i, in);
    num("share", share);
    printf(" examples=%" PRIu64, cnt);
    num("finish_s", fin);
    printf(" straggler=%d\n", strag);
  }
  rc = 0;
out:
  cal_worksplit_free(split);
  for (size_t i = 0; ms && i < n; i++)
    cal_machine_free(ms[i]);
  free(ms);
  free(thr);
  free(lo);
  free(hi);
  return rc;
}
