/* calibrate [run]: measure the machine and write the profile. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cal_err.h"
#include "cli.h"
#include "commands.h"
#include "profile.h"
#include "run.h"
#include "subcommands.h"
#include "timer.h"

extern const char cal_results_dir[];

static void run_help(void) {
  printf(
      "Usage: calibrate [run] [options]\n\n"
      "Measure what this machine does for ML work (GEMM per dtype at one\n"
      "pinned thread and all usable threads, thread scaling) and write a\n"
      "calibrated profile (JSON) plus a readable table.\n\n"
      "Options:\n"
      "  -o, --output FILE   write the profile to FILE ('-': standard output;\n"
      "                      the table then goes to standard error); default:\n"
      "                      results/<host>-<UTC time>.json\n"
      "  -q, --quick         short run (under 20 s on 2 cores), fewer sizes\n"
      "  -t, --threads N     threads for the all-core runs (1..usable cores)\n"
      "      --samples N     timed samples per point (default 7, at least 1)\n"
      "      --min-time S    minimum seconds per sample (default 0.05, quick 0.01)\n"
      "      --cv-threshold F  mark points unstable above this CV (default 5%%)\n"
      "      --budget-scale F  multiply every section's time budget by F\n"
      "      --seed N        seed of the input data (default 42)\n"
      "      --no-progress   no progress line on standard error\n"
      "  -v, --verbose       say which kernel variants ran, and warnings\n"
      "  -h, --help          show this help\n\n"
      "Exit status: 0 success, 2 usage or input error, 3 a result failed\n"
      "verification, 4 internal error.\n"
      "Environment: OPENBLAS_CORETYPE chooses OpenBLAS kernels (by default\n"
      "calibrate picks them from the CPU's features when the library's own\n"
      "choice is older; CALIBRATE_KEEP_BLAS_CORETYPE=1 keeps the library's);\n"
      "CALIBRATE_ISA=scalar|avx2|avx512 caps our own kernels' SIMD variant.\n");
}

static void default_path(const cal_hwinfo_t *hw, char *out, size_t len) {
  const char *dir = getenv("CALIBRATE_RESULTS_DIR");
  struct stat st;
  if (!dir || !*dir)
    dir = (stat(cal_results_dir, &st) == 0 && S_ISDIR(st.st_mode))
              ? cal_results_dir
              : ".";
  char host[64];
  size_t j = 0;
  for (size_t i = 0; hw->hostname[i] && j < sizeof host - 1; i++) {
    char c = hw->hostname[i];
    host[j++] = (c == '/' || c == ' ' || c == '\\') ? '_' : c;
  }
  host[j] = '\0';
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  snprintf(out, len, "%s/%s-%s.json", dir, host[0] ? host : "host", stamp);
}

static json_t *top_number(double v) { return v > 0 ? json_real(v) : json_null(); }

/* The profile's skeleton: top-level keys planners read, then the record. */
static int profile_begin(cal_run_t *r) {
  char created[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  r->warnings = json_array();
  r->root = json_pack(
      "{s:s, s:s, s:s, s:n, s:n, s:n, s:n, s:f, s:n,"
      " s:{s:s, s:s, s:s}, s:s, s:o, s:o}",
      "schema", CAL_PROFILE_SCHEMA, "device_name",
      r->hw.brand[0] ? r->hw.brand : "unknown CPU", "device", "cpu", "gflops",
      "gflops_per_core", "optimal_batch_size", "throughput", "memory_gb",
      (double)r->hw.mem_total_bytes / 1e9, "latency_ms", "tool", "name",
      "calibrate", "version", cal_version, "git", cal_git, "created", created,
      "machine", cal_hwinfo_machine_json(&r->hw), "blas",
      cal_hwinfo_blas_json(&r->hw));
  if (!r->root || !r->warnings)
    return CAL_ENOMEM;
  json_t *settings = json_pack(
      "{s:b, s:i, s:i, s:f, s:f, s:f, s:f, s:I, s:f, s:f}", "quick", r->quick,
      "threads", r->threads, "samples", r->hcfg.samples, "min_sample_s",
      r->hcfg.min_sample_s, "warmup_s", r->hcfg.warmup_s, "cv_threshold",
      r->hcfg.cv_threshold, "ci_level", r->hcfg.ci_level, "seed",
      (json_int_t)r->seed, "budget_scale", r->budget_scale,
      "timer_resolution_s", cal_timer_resolution());
  if (!settings)
    return CAL_ENOMEM;
  json_object_set_new(r->root, "settings", settings);
  return 0;
}

static void profile_finish(cal_run_t *r, double elapsed) {
  json_object_set_new(r->root, "gflops", top_number(r->sgemm_best[1]));
  json_object_set_new(r->root, "gflops_per_core", top_number(r->sgemm_best[0]));
  json_object_set_new(r->root, "quality",
                  json_pack("{s:b, s:i, s:i, s:f, s:O}", "noisy", r->unstable > 0,
                            "unstable_points", r->unstable, "failed_points",
                            r->failed, "elapsed_s", elapsed, "warnings",
                            r->warnings));
}

static void print_table(cal_run_t *r, FILE *out) {
  const cal_hwinfo_t *hw = &r->hw;
  fprintf(out, "\ncalibrate %s  %s, %d usable core%s, %s %s (%s kernels)\n",
          cal_version, hw->brand, hw->usable_cores,
          hw->usable_cores == 1 ? "" : "s", hw->blas_library, hw->blas_version,
          hw->blas_coretype);
  json_t *gemm = json_object_get(r->root, "gemm");
  if (gemm) {
    fprintf(out, "\nGEMM (C = A*B, square n)      1 thread, pinned       %d threads\n",
            r->threads);
    const char *dt;
    json_t *d;
    json_object_foreach(json_object_get(gemm, "dtypes"), dt, d) {
      const char *st = json_string_value(json_object_get(d, "status"));
      if (st && strcmp(st, "unsupported") == 0) {
        fprintf(out, "  %-5s unsupported: %s\n", dt,
                json_string_value(json_object_get(d, "reason")));
        continue;
      }
      fprintf(out, "  %-5s best GFLOPS          ", dt);
      size_t i;
      json_t *s;
      int col = 0;
      json_array_foreach(json_object_get(gemm, "sweeps"), i, s) {
        if (strcmp(json_string_value(json_object_get(s, "dtype")), dt))
          continue;
        fprintf(out, "%s%9.1f at n=%-6lld", col++ ? "   " : "",
                json_number_value(json_object_get(s, "best_gflops")),
                (long long)json_integer_value(json_object_get(s, "best_n")));
      }
      fprintf(out, "\n");
    }
    fprintf(out, "  size sweep (GFLOPS):\n");
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(gemm, "sweeps"), i, s) {
      const char *sdt = json_string_value(json_object_get(s, "dtype"));
      int th = (int)json_integer_value(json_object_get(s, "threads"));
      fprintf(out, "    %-5s t=%-3d", sdt, th);
      size_t j;
      json_t *p;
      json_array_foreach(json_object_get(gemm, "points"), j, p) {
        if (strcmp(json_string_value(json_object_get(p, "dtype")), sdt) ||
            json_integer_value(json_object_get(p, "threads")) != th)
          continue;
        const char *pst = json_string_value(json_object_get(p, "status"));
        if (strcmp(pst, "ok") == 0)
          fprintf(out, " %lld:%.0f%s",
                  (long long)json_integer_value(json_object_get(p, "n")),
                  json_number_value(json_object_get(p, "gflops")),
                  json_is_true(json_object_get(json_object_get(p, "stats"),
                                               "unstable")) ? "~" : "");
        else
          fprintf(out, " %lld:%s",
                  (long long)json_integer_value(json_object_get(p, "n")), pst);
      }
      fprintf(out, "  [%s]\n", json_string_value(json_object_get(s, "stop_reason")));
    }
  }
  json_t *sc = json_object_get(r->root, "scaling");
  if (sc) {
    fprintf(out, "\nScaling (n=%lld)   threads  GFLOPS   speedup  efficiency\n",
            (long long)json_integer_value(json_object_get(sc, "n")));
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(sc, "points"), i, p) {
      if (strcmp(json_string_value(json_object_get(p, "status")), "ok"))
        continue;
      fprintf(out, "  %-5s            %5lld  %7.1f  %6.2fx  %8.0f%%\n",
              json_string_value(json_object_get(p, "dtype")),
              (long long)json_integer_value(json_object_get(p, "threads")),
              json_number_value(json_object_get(p, "gflops")),
              json_number_value(json_object_get(p, "speedup")),
              100.0 * json_number_value(json_object_get(p, "efficiency")));
    }
  }
  json_t *q = json_object_get(r->root, "quality");
  fprintf(out, "\nQuality: %d unstable point%s (CV > %.0f%%, marked ~), %d failed\n",
          r->unstable, r->unstable == 1 ? "" : "s", 100 * r->hcfg.cv_threshold,
          r->failed);
  size_t i;
  json_t *w;
  json_array_foreach(json_object_get(q, "warnings"), i, w)
    fprintf(out, "  warning: %s\n", json_string_value(w));
}

int cal_run_main(cal_run_t *r, int (*const *sections)(cal_run_t *),
                 size_t nsections);

int cal_run_main(cal_run_t *r, int (*const *sections)(cal_run_t *),
                 size_t nsections) {
  int rc, exit_code = CAL_EXIT_OK;
  char err[512];
  r->t_start = cal_now();
  if ((rc = profile_begin(r)) < 0)
    goto internal;
  if (strcmp(r->hw.blas_coretype_source, "calibrate") == 0)
    cal_run_warn(r, "OpenBLAS chose %s kernels for this CPU; calibrate ran it "
                    "with OPENBLAS_CORETYPE=%s, which the CPU's features support",
                 r->hw.blas_coretype_library, r->hw.blas_coretype);
  if (r->hw.governor[0] && strcmp(r->hw.governor, "performance") != 0)
    cal_run_warn(r, "frequency governor is '%s', not 'performance': clocks may "
                    "vary during the run", r->hw.governor);
  for (size_t i = 0; i < nsections; i++) {
    if ((rc = sections[i](r)) < 0)
      goto internal;
  }
  cal_progress_done(r);
  if (!cal_threads_pinned(r->thr))
    cal_run_warn(r, "threads could not be pinned to cores (binding refused)");
  profile_finish(r, cal_now() - r->t_start);
  if (r->unstable)
    cal_run_warn(r, "%d point%s had a coefficient of variation above %.0f%%: "
                    "the machine was busy or its clock varied",
                 r->unstable, r->unstable == 1 ? "" : "s",
                 100 * r->hcfg.cv_threshold);
  if ((rc = cal_json_write_atomic(r->root, r->out_path, err, sizeof err)) < 0) {
    fprintf(stderr, "calibrate: %s\n", err);
    return CAL_EXIT_USAGE;
  }
  print_table(r, r->table);
  if (strcmp(r->out_path, "-") != 0)
    fprintf(r->table, "\nProfile written to %s\n", r->out_path);
  if (r->failed) {
    fprintf(stderr, "calibrate: %d measurement%s failed verification\n",
            r->failed, r->failed == 1 ? "" : "s");
    exit_code = CAL_EXIT_VERIFY;
  }
  return exit_code;
internal:
  cal_progress_done(r);
  fprintf(stderr, "calibrate: %s\n", cal_strerror(rc));
  return CAL_EXIT_INTERNAL;
}

/* Parse the options every measuring command shares.  Returns -1 to go on,
 * else an exit code. */
int cal_run_parse(cal_run_t *r, int argc, char **argv, const char *cmd);

int cal_run_parse(cal_run_t *r, int argc, char **argv, const char *cmd) {
  enum { O_SAMPLES = 256, O_MINTIME, O_CV, O_SEED, O_NOPROG, O_BUDGET };
  static const struct option opts[] = {
      {"output", required_argument, NULL, 'o'},
      {"quick", no_argument, NULL, 'q'},
      {"threads", required_argument, NULL, 't'},
      {"samples", required_argument, NULL, O_SAMPLES},
      {"min-time", required_argument, NULL, O_MINTIME},
      {"cv-threshold", required_argument, NULL, O_CV},
      {"budget-scale", required_argument, NULL, O_BUDGET},
      {"seed", required_argument, NULL, O_SEED},
      {"no-progress", no_argument, NULL, O_NOPROG},
      {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  long samples = -1, threads = -1;
  double min_time = -1, cv = -1;
  const char *out = NULL;
  int no_progress = 0, c;
  r->cmd = cmd;
  r->seed = 42;
  r->budget_scale = 1.0;
  opterr = 0;
  optind = 0;
  while ((c = getopt_long(argc, argv, ":o:qt:vh", opts, NULL)) != -1) {
    switch (c) {
    case 'o': out = optarg; break;
    case 'q': r->quick = 1; break;
    case 't':
      if (cal_parse_long(optarg, 1, 1 << 20, &threads) < 0)
        return cal_usage(cmd, "--threads needs a whole number of at least 1, "
                              "not '%s'", optarg);
      break;
    case O_SAMPLES:
      if (cal_parse_long(optarg, 1, 10000, &samples) < 0)
        return cal_usage(cmd, "--samples needs a whole number from 1 to 10000, "
                              "not '%s'", optarg);
      break;
    case O_MINTIME:
      if (cal_parse_double(optarg, 1e-6, 60, &min_time) < 0)
        return cal_usage(cmd, "--min-time needs seconds between 1e-6 and 60, "
                              "not '%s'", optarg);
      break;
    case O_CV:
      if (cal_parse_fraction(optarg, &cv) < 0 || cv <= 0)
        return cal_usage(cmd, "--cv-threshold needs a fraction like 5%% or "
                              "0.05, not '%s'", optarg);
      break;
    case O_BUDGET:
      if (cal_parse_double(optarg, 0.01, 100, &r->budget_scale) < 0)
        return cal_usage(cmd, "--budget-scale needs a factor between 0.01 and "
                              "100, not '%s'", optarg);
      break;
    case O_SEED:
      if (cal_parse_u64(optarg, &r->seed) < 0)
        return cal_usage(cmd, "--seed needs a non-negative integer, not '%s'",
                         optarg);
      break;
    case O_NOPROG: no_progress = 1; break;
    case 'v': r->verbose = 1; break;
    case 'h': return -2;
    default: return cal_bad_option(cmd, c, argv);
    }
  }
  if (optind < argc)
    return cal_usage(cmd, "unexpected argument '%s'", argv[optind]);

  int rc = cal_hwinfo_read(&r->hw);
  if (rc < 0) {
    fprintf(stderr, "calibrate: cannot read the machine: %s\n", cal_strerror(rc));
    return CAL_EXIT_INTERNAL;
  }
  if (threads > r->hw.usable_cores)
    return cal_usage(cmd, "--threads %ld is more than the %d usable core%s",
                     threads, r->hw.usable_cores,
                     r->hw.usable_cores == 1 ? "" : "s");
  r->threads = threads > 0 ? (int)threads : r->hw.usable_cores;

  char why[512];
  if (out) {
    if (cal_check_writable(out, why, sizeof why) < 0)
      return cal_usage(cmd, "cannot write the profile: %s", why);
    snprintf(r->out_path, sizeof r->out_path, "%s", out);
  } else {
    default_path(&r->hw, r->out_path, sizeof r->out_path);
    if (cal_check_writable(r->out_path, why, sizeof why) < 0)
      return cal_usage(cmd, "cannot write the profile: %s (use -o FILE)", why);
  }
  cal_harness_defaults(&r->hcfg, r->quick);
  if (samples > 0)
    r->hcfg.samples = (int)samples;
  if (min_time > 0)
    r->hcfg.min_sample_s = min_time;
  if (cv > 0)
    r->hcfg.cv_threshold = cv;
  /* leave a tenth of available memory to the rest of the system */
  r->hcfg.mem_avail_bytes = 0.9 * (double)r->hw.mem_available_bytes;
  r->progress = !no_progress && cal_stderr_is_tty();
  r->table = strcmp(r->out_path, "-") == 0 ? stderr : stdout;
  if ((rc = cal_threads_init(&r->thr)) < 0) {
    fprintf(stderr, "calibrate: cannot read the topology: %s\n", cal_strerror(rc));
    return CAL_EXIT_INTERNAL;
  }
  return -1;
}

void cal_run_free(cal_run_t *r);
void cal_run_free(cal_run_t *r) {
  cal_threads_free(r->thr);
  json_decref(r->root);
  json_decref(r->warnings);
}

int cal_cmd_run(int argc, char **argv) {
  cal_run_t r;
  memset(&r, 0, sizeof r);
  int rc = cal_run_parse(&r, argc, argv, "run");
  if (rc == -2) {
    run_help();
    rc = CAL_EXIT_OK;
  }
  if (rc >= 0) {
    cal_run_free(&r);
    return rc;
  }
  r.sections = CAL_SEC_GEMM | CAL_SEC_SCALING;
  static int (*const sections[])(cal_run_t *) = {cal_section_gemm,
                                                 cal_section_scaling};
  rc = cal_run_main(&r, sections, sizeof sections / sizeof sections[0]);
  cal_run_free(&r);
  return rc;
}
