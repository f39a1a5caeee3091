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
#include "layer.h"
#include "curve.h"
#include "commands.h"
#include "plot.h"
#include "profile.h"
#include "run.h"
#include "subcommands.h"
#include "timer.h"

extern const char cal_results_dir[];

static void run_help(void) {
  printf(
      "Usage: calibrate [run] [options]\n\n"
      "Measure what this machine does for ML work and write a calibrated\n"
      "profile (JSON) plus a readable table: GEMM per dtype at one pinned\n"
      "thread and all usable threads with its size sweep and thread scaling,\n"
      "attention kernels, the FMA peak and clock, memory bandwidth per cache\n"
      "level, the roofline, and with --sweep-batch the throughput-versus-batch\n"
      "curve of a transformer layer with its peak.\n\n"
      "Options:\n"
      "  -o, --output FILE   write the profile to FILE ('-': standard output;\n"
      "                      the table then goes to standard error); default:\n"
      "                      results/<host>-<UTC time>.json\n"
      "  -q, --quick         short run (under 20 s on 2 cores), fewer sizes\n"
      "      --ci            preset for CI regression runs on noisy shared runners:\n"
      "                      fixed GEMM sizes and batch list, 3 interleaved rounds\n"
      "                      of 5 samples per point, with the batch sweep\n"
      "      --rounds N      measure every point in N interleaved rounds\n"
      "  -t, --threads N     threads for the all-core runs (1..usable cores)\n"
      "      --samples N     timed samples per point (default 7, at least 1)\n"
      "      --min-time S    minimum seconds per sample (default 0.05, quick 0.01)\n"
      "      --cv-threshold F  mark points unstable above this CV (default 5%%)\n"
      "      --budget-scale F  multiply every section's time budget by F\n"
      "      --seed N        seed of the input data (default 42)\n"
      "      --no-progress   no progress line on standard error\n"
      "      --plots DIR     draw the charts (gnuplot) into DIR after the run\n"
      "  -v, --verbose       say which kernel variants ran, and warnings\n"
      "  -h, --help          show this help\n\n"
      "Batch sweep (the throughput-versus-batch curve of a decoder layer):\n"
      "      --sweep-batch   also run the batch sweep\n"
      "      --preset NAME   model shape (default qwen2-0.5b; 'list' lists them)\n"
      "      --hidden N, --heads N, --kv-heads N, --ffn N, --seq N\n"
      "                      override the preset's sizes (seq: prefill length\n"
      "                      and decode KV-cache length)\n"
      "      --mode M        prefill, decode or both (default both)\n"
      "      --batches LIST  e.g. 1,2,4,8 or 1-256*2 (default powers of two\n"
      "                      from 1 to 32, extended while throughput rises)\n"
      "      --no-extend     do not extend past the list\n"
      "      --max-batch N   never extend past N (default 4096)\n"
      "      --optimize P    throughput (the peak) or knee (default throughput)\n"
      "      --tolerance F   knee and shape tolerance (default 3%%)\n"
      "      --target-effective-batch N  recommend batch x accumulation steps\n"
      "      --memory-budget SIZE  memory a point may use, e.g. 512M, 8G\n"
      "                      (default: 90%% of available memory)\n\n"
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
  r->section_times = json_object();
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
  if (!r->root || !r->warnings || !r->section_times)
    return CAL_ENOMEM;
  json_t *settings = json_pack(
      "{s:b, s:b, s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:I, s:f, s:f}", "quick",
      r->quick, "ci", r->ci, "rounds", r->rounds > 1 ? r->rounds : 1,
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
  /* only the GEMM sweep measures the best fp32 GEMM; a single-section run
   * leaves these null rather than report a one-size figure */
  if (r->sections & CAL_SEC_GEMM) {
    json_object_set_new(r->root, "gflops", top_number(r->sgemm_best[1]));
    json_object_set_new(r->root, "gflops_per_core", top_number(r->sgemm_best[0]));
  }
  json_object_set_new(r->root, "quality",
                  json_pack("{s:b, s:i, s:i, s:f, s:O, s:O}", "noisy", r->unstable > 0,
                            "unstable_points", r->unstable, "failed_points",
                            r->failed, "elapsed_s", elapsed, "section_times_s",
                            r->section_times, "warnings", r->warnings));
}

static void cal_layer_presets_print(FILE *out) {
  fprintf(out, "%-14s %7s %6s %9s %7s %5s  %s\n", "preset", "hidden", "heads",
          "kv-heads", "ffn", "seq", "");
  const cal_layer_preset_t *p;
  for (size_t i = 0; (p = cal_layer_preset_at(i)); i++)
    fprintf(out, "%-14s %7lld %6lld %9lld %7lld %5lld  %s\n", p->name,
            (long long)p->hidden, (long long)p->heads, (long long)p->kv_heads,
            (long long)p->ffn, (long long)p->seq, p->description);
}

static void print_sweep(cal_run_t *r, FILE *out) {
  json_t *bs = json_object_get(r->root, "batch_sweep");
  if (!bs)
    return;
  json_t *model = json_object_get(bs, "model");
  fprintf(out, "\nBatch sweep: %s layer (hidden %lld, %lld heads, %lld kv heads, "
               "ffn %lld), seq %lld, %d thread%s\n",
          json_string_value(json_object_get(model, "preset")),
          (long long)json_integer_value(json_object_get(model, "hidden")),
          (long long)json_integer_value(json_object_get(model, "heads")),
          (long long)json_integer_value(json_object_get(model, "kv_heads")),
          (long long)json_integer_value(json_object_get(model, "ffn")),
          (long long)json_integer_value(json_object_get(model, "seq")),
          r->threads, r->threads == 1 ? "" : "s");
  const char *mode;
  json_t *m;
  json_object_foreach(json_object_get(bs, "modes"), mode, m) {
    const char *st = json_string_value(json_object_get(m, "status"));
    if (st && strcmp(st, "measured") != 0) {
      fprintf(out, "  %s: %s: %s\n", mode, st,
              json_string_value(json_object_get(m, "reason")));
      continue;
    }
    double peak = json_number_value(json_object_get(m, "peak_examples_per_s"));
    json_int_t pb = json_integer_value(json_object_get(m, "peak_batch_size"));
    json_int_t kb = json_integer_value(json_object_get(m, "knee_batch_size"));
    json_int_t ob = json_integer_value(json_object_get(m, "optimal_batch_size"));
    fprintf(out, "  %s    batch   examples/s      tokens/s   step ms  %%peak\n", mode);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(m, "points"), i, p) {
      json_int_t b = json_integer_value(json_object_get(p, "batch_size"));
      const char *ps = json_string_value(json_object_get(p, "status"));
      if (strcmp(ps, "ok") != 0) {
        fprintf(out, "  %12lld   %s: %s\n", (long long)b, ps,
                json_string_value(json_object_get(p, "reason")));
        continue;
      }
      double ex = json_number_value(json_object_get(p, "examples_per_s"));
      char mark[64] = "";
      if (b == pb)
        strcat(mark, " <- peak");
      if (b == kb)
        strcat(mark, b == pb ? ", knee" : " <- knee");
      if (b == ob && ob != pb && ob != kb)
        strcat(mark, " <- optimal");
      fprintf(out, "  %12lld %12.2f %13.1f %9.2f %5.0f%%%s%s\n", (long long)b, ex,
              json_number_value(json_object_get(p, "tokens_per_s")),
              json_number_value(json_object_get(p, "latency_ms")),
              peak > 0 ? 100.0 * ex / peak : 0.0,
              json_is_true(json_object_get(json_object_get(p, "stats"), "unstable"))
                  ? " ~" : "",
              mark);
    }
    const char *shape = json_string_value(json_object_get(m, "shape"));
    fprintf(out, "    peak batch %lld (%.2f examples/s), knee %lld, optimal %lld; "
                 "shape %s",
            (long long)pb, peak, (long long)kb, (long long)ob, shape ? shape : "?");
    json_t *deg = json_object_get(m, "degradation_pct");
    if (shape && strcmp(shape, "peaked") == 0 && json_is_number(deg))
      fprintf(out, " (%.1f%% lower at the largest batch)", json_number_value(deg));
    fprintf(out, "; sweep ended: %s\n",
            json_string_value(json_object_get(m, "stop_reason")));
    json_t *rec = json_object_get(m, "recommendation");
    if (json_is_object(rec))
      fprintf(out, "    target effective batch %lld: batch %lld x %lld accumulation "
                   "steps (%s)\n",
              (long long)json_integer_value(json_object_get(rec, "target_effective_batch")),
              (long long)json_integer_value(json_object_get(rec, "batch_size")),
              (long long)json_integer_value(json_object_get(rec, "accumulation_steps")),
              json_string_value(json_object_get(rec, "note")));
  }
}

static void print_attention(cal_run_t *r, FILE *out) {
  json_t *at = json_object_get(r->root, "attention");
  if (!at)
    return;
  fprintf(out, "\nAttention (fused unless marked)        threads  variant   GFLOPS"
               "    GB/s  of GEMM  vs ref\n");
  size_t i;
  json_t *p;
  json_array_foreach(json_object_get(at, "points"), i, p) {
    char shape[96];
    snprintf(shape, sizeof shape, "%s b%lld h%lld/%lld q%lld k%lld d%lld%s",
             json_string_value(json_object_get(p, "kernel")) &&
                     strcmp(json_string_value(json_object_get(p, "kernel")), "attn_ref") == 0
                 ? "ref" : "",
             (long long)json_integer_value(json_object_get(p, "batch")),
             (long long)json_integer_value(json_object_get(p, "heads")),
             (long long)json_integer_value(json_object_get(p, "kv_heads")),
             (long long)json_integer_value(json_object_get(p, "nq")),
             (long long)json_integer_value(json_object_get(p, "nk")),
             (long long)json_integer_value(json_object_get(p, "head_dim")),
             json_is_true(json_object_get(p, "causal")) ? " causal" : "");
    const char *st = json_string_value(json_object_get(p, "status"));
    if (strcmp(st, "ok") != 0) {
      fprintf(out, "  %-36s %s: %s\n", shape, st,
              json_string_value(json_object_get(p, "reason")));
      continue;
    }
    fprintf(out, "  %-36s %7lld  %-8s %7.1f %7.1f %7.0f%%", shape,
            (long long)json_integer_value(json_object_get(p, "threads")),
            json_string_value(json_object_get(p, "variant")),
            json_number_value(json_object_get(p, "gflops")),
            json_number_value(json_object_get(p, "gbps")),
            100.0 * json_number_value(json_object_get(p, "ratio_to_gemm")));
    json_t *sp = json_object_get(p, "speedup_vs_reference");
    if (json_is_number(sp))
      fprintf(out, "  %5.1fx", json_number_value(sp));
    fprintf(out, "%s\n",
            json_is_true(json_object_get(json_object_get(p, "stats"), "unstable"))
                ? " ~" : "");
  }
}

static void print_limits(cal_run_t *r, FILE *out) {
  json_t *pk = json_object_get(r->root, "peak");
  if (pk) {
    json_t *clk = json_object_get(pk, "clock");
    fprintf(out, "\nPeak (register-resident multiply-add)");
    if (json_is_number(json_object_get(clk, "ghz")))
      fprintf(out, ", clock %.2f GHz under vector load",
              json_number_value(json_object_get(clk, "ghz")));
    fprintf(out, "\n  kernel    variant  threads   measured  theoretical  of theory\n");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(pk, "points"), i, p) {
      const char *st = json_string_value(json_object_get(p, "status"));
      const char *kn = json_string_value(json_object_get(p, "kernel"));
      if (strcmp(st, "ok") != 0) {
        fprintf(out, "  %-9s %s: %s\n", kn, st,
                json_string_value(json_object_get(p, "reason")));
        continue;
      }
      const char *metric = json_string_value(json_object_get(p, "metric"));
      double v = json_number_value(json_object_get(p, metric));
      json_t *eff = json_object_get(p, "efficiency");
      int th = (int)json_integer_value(json_object_get(p, "threads"));
      fprintf(out, "  %-9s %-8s %7d %8.1f %-5s", kn,
              json_string_value(json_object_get(p, "variant")), th, v,
              strcmp(metric, "gops") == 0 ? "GOPS" : "GF/s");
      if (json_is_number(eff) && json_number_value(eff) > 0)
        fprintf(out, " %8.1f %6.0f%%", v / json_number_value(eff),
                100 * json_number_value(eff));
      fprintf(out, "%s\n",
              json_is_true(json_object_get(json_object_get(p, "stats"), "unstable"))
                  ? " ~" : "");
    }
    json_t *model = json_object_get(pk, "model");
    if (json_is_string(json_object_get(model, "assumption")))
      fprintf(out, "  theoretical: %s\n",
              json_string_value(json_object_get(model, "assumption")));
  }
  json_t *bw = json_object_get(r->root, "bandwidth");
  if (bw) {
    fprintf(out, "\nBandwidth (GB/s, STREAM byte counts)   level   working set  threads  GB/s\n");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(bw, "points"), i, p) {
      if (!json_is_string(json_object_get(p, "level")))
        continue; /* the staircase is for the plot */
      const char *st = json_string_value(json_object_get(p, "status"));
      double ws = json_number_value(json_object_get(p, "working_set_bytes"));
      fprintf(out, "  %-36s %-7s %9.1f %s %4lld  ",
              json_string_value(json_object_get(p, "kernel")),
              json_string_value(json_object_get(p, "level")),
              ws >= 1048576.0 ? ws / 1048576.0 : ws / 1024.0,
              ws >= 1048576.0 ? "MiB" : "KiB",
              (long long)json_integer_value(json_object_get(p, "threads")));
      if (strcmp(st, "ok") == 0)
        fprintf(out, "%6.1f%s\n", json_number_value(json_object_get(p, "gbps")),
                json_is_true(json_object_get(json_object_get(p, "stats"), "unstable"))
                    ? " ~" : "");
      else
        fprintf(out, "%s: %s\n", st, json_string_value(json_object_get(p, "reason")));
    }
  }
  json_t *rf = json_object_get(r->root, "roofline");
  if (rf) {
    json_t *ridge = json_object_get(json_object_get(rf, "ridge_flop_per_byte"), "fp32");
    json_t *mem = json_object_get(ridge, "memory");
    if (json_is_number(mem))
      fprintf(out, "\nRoofline (%lld threads): fp32 ridge point %.1f FLOP/byte "
                   "against memory\n",
              (long long)json_integer_value(json_object_get(rf, "threads")),
              json_number_value(mem));
    json_t *eff = json_object_get(rf, "efficiencies");
    const char *k;
    json_t *v;
    json_object_foreach(eff, k, v)
      fprintf(out, "  %-36s %5.0f%%\n", k, 100 * json_number_value(v));
  }
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
        if (json_object_get(p, "confirms"))
          fprintf(out, " | again");
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
  print_attention(r, out);
  print_limits(r, out);
  print_sweep(r, out);
  json_t *q = json_object_get(r->root, "quality");
  fprintf(out, "\nQuality: %d unstable point%s (CV > %.0f%%, marked ~), %d failed\n",
          r->unstable, r->unstable == 1 ? "" : "s", 100 * r->hcfg.cv_threshold,
          r->failed);
  size_t i;
  json_t *w;
  json_array_foreach(json_object_get(q, "warnings"), i, w)
    fprintf(out, "  warning: %s\n", json_string_value(w));
}


int cal_run_main(cal_run_t *r, int (**sections)(cal_run_t *),
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
  cal_progress_end(r);
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
  if (r->plots_dir) {
    /* the profile is safe on disk; a missing gnuplot only costs the charts */
    const char *paths[1] = {r->out_path};
    int prc = cal_plot_profiles(paths, 1, r->plots_dir, "png", err, sizeof err);
    if (prc < 0)
      fprintf(stderr, "calibrate: no charts: %s\n", err);
    else
      fprintf(r->table, "Charts written to %s\n", r->plots_dir);
  }
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

int cal_run_parse(cal_run_t *r, int argc, char **argv, const char *cmd) {
  enum { O_SAMPLES = 256, O_MINTIME, O_CV, O_SEED, O_NOPROG, O_BUDGET,
         O_SWEEP, O_PRESET, O_HIDDEN, O_HEADS, O_KVHEADS, O_FFN, O_SEQ, O_MODE,
         O_BATCHES, O_NOEXT, O_MAXB, O_OPT, O_TOL, O_TEB, O_MEMB, O_CI,
         O_ROUNDS, O_PLOTS };
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
      {"sweep-batch", no_argument, NULL, O_SWEEP},
      {"ci", no_argument, NULL, O_CI},
      {"plots", required_argument, NULL, O_PLOTS},
      {"rounds", required_argument, NULL, O_ROUNDS},
      {"preset", required_argument, NULL, O_PRESET},
      {"hidden", required_argument, NULL, O_HIDDEN},
      {"heads", required_argument, NULL, O_HEADS},
      {"kv-heads", required_argument, NULL, O_KVHEADS},
      {"ffn", required_argument, NULL, O_FFN},
      {"seq", required_argument, NULL, O_SEQ},
      {"mode", required_argument, NULL, O_MODE},
      {"batches", required_argument, NULL, O_BATCHES},
      {"no-extend", no_argument, NULL, O_NOEXT},
      {"max-batch", required_argument, NULL, O_MAXB},
      {"optimize", required_argument, NULL, O_OPT},
      {"tolerance", required_argument, NULL, O_TOL},
      {"target-effective-batch", required_argument, NULL, O_TEB},
      {"memory-budget", required_argument, NULL, O_MEMB},
      {NULL, 0, NULL, 0},
  };
  long samples = -1, threads = -1, rounds = -1;
  long shape[5] = {0, 0, 0, 0, 0}; /* hidden heads kv-heads ffn seq */
  cal_sweep_opts_t *sw = &r->sweep;
  const char *preset = NULL;
  char err[256];
  double min_time = -1, cv = -1;
  const char *out = NULL;
  int no_progress = 0, c;
  r->cmd = cmd;
  r->seed = 42;
  r->budget_scale = 1.0;
  sw->modes = 3;
  sw->extend = 1;
  sw->max_batch = 4096;
  sw->tolerance = 0.03;
  sw->policy = CAL_OPTIMIZE_THROUGHPUT;
  r->attn_variant = -1; /* CAL_VARIANT_AUTO */
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
    case O_SWEEP: r->sections |= CAL_SEC_BATCH; break;
    case O_CI: r->ci = 1; break;
    case O_PLOTS: r->plots_dir = optarg; break;
    case O_ROUNDS:
      if (cal_parse_long(optarg, 1, 100, &rounds) < 0)
        return cal_usage(cmd, "--rounds needs a whole number from 1 to 100, "
                              "not '%s'", optarg);
      break;
    case O_PRESET:
      if (strcmp(optarg, "list") == 0)
        return -3;
      if (!cal_layer_preset_find(optarg))
        return cal_usage(cmd, "unknown preset '%s' (--preset list shows them)",
                         optarg);
      preset = optarg;
      break;
    case O_HIDDEN: case O_HEADS: case O_KVHEADS: case O_FFN: case O_SEQ: {
      static const char *const names[] = {"--hidden", "--heads", "--kv-heads",
                                          "--ffn", "--seq"};
      int i = c - O_HIDDEN;
      if (cal_parse_long(optarg, 1, 1L << 22, &shape[i]) < 0)
        return cal_usage(cmd, "%s needs a whole number of at least 1, not '%s'",
                         names[i], optarg);
      break;
    }
    case O_MODE:
      if (strcmp(optarg, "prefill") == 0) sw->modes = 1;
      else if (strcmp(optarg, "decode") == 0) sw->modes = 2;
      else if (strcmp(optarg, "both") == 0) sw->modes = 3;
      else
        return cal_usage(cmd, "--mode is prefill, decode or both, not '%s'", optarg);
      break;
    case O_BATCHES:
      free(sw->batches);
      sw->batches = NULL;
      if (cal_batches_parse(optarg, &sw->batches, &sw->nbatches, err, sizeof err) < 0)
        return cal_usage(cmd, "--batches: %s", err);
      break;
    case O_NOEXT: sw->extend = 0; break;
    case O_MAXB: {
      long v;
      if (cal_parse_long(optarg, 1, CAL_BATCH_MAX, &v) < 0)
        return cal_usage(cmd, "--max-batch needs a whole number of at least 1, "
                              "not '%s'", optarg);
      sw->max_batch = v;
      break;
    }
    case O_OPT: {
      cal_curve_policy_t pol;
      if (cal_curve_policy_parse(optarg, &pol) < 0)
        return cal_usage(cmd, "--optimize is throughput or knee, not '%s'", optarg);
      sw->policy = pol;
      break;
    }
    case O_TOL:
      if (cal_parse_fraction(optarg, &sw->tolerance) < 0)
        return cal_usage(cmd, "--tolerance needs a fraction like 3%% or 0.03, "
                              "not '%s'", optarg);
      break;
    case O_TEB: {
      long v;
      if (cal_parse_long(optarg, 1, CAL_BATCH_MAX, &v) < 0)
        return cal_usage(cmd, "--target-effective-batch needs a whole number of "
                              "at least 1, not '%s'", optarg);
      sw->target_effective_batch = v;
      break;
    }
    case O_MEMB:
      if (cal_parse_size(optarg, &sw->memory_budget) < 0 || sw->memory_budget <= 0)
        return cal_usage(cmd, "--memory-budget needs a size like 512M or 8G, "
                              "not '%s'", optarg);
      break;
    case 'v': r->verbose = 1; break;
    case 'h': return -2;
    default: return cal_bad_option(cmd, c, argv);
    }
  }
  if (optind < argc)
    return cal_usage(cmd, "unexpected argument '%s'", argv[optind]);

  /* the layer shape: preset, then flag-by-flag overrides */
  const cal_layer_preset_t *ps =
      cal_layer_preset_find(preset ? preset : "qwen2-0.5b");
  snprintf(sw->preset, sizeof sw->preset, "%s", ps->name);
  sw->hidden = shape[0] ? shape[0] : ps->hidden;
  sw->heads = shape[1] ? shape[1] : ps->heads;
  sw->kv_heads = shape[2] ? shape[2] : ps->kv_heads;
  sw->ffn = shape[3] ? shape[3] : ps->ffn;
  sw->seq = shape[4] ? shape[4] : (r->quick && !preset ? ps->seq / 2 : ps->seq);
  if (shape[0] || shape[1] || shape[2] || shape[3])
    snprintf(sw->preset, sizeof sw->preset, "custom");
  cal_layer_shape_t ls = {sw->hidden, sw->heads, sw->kv_heads, sw->ffn, sw->seq,
                          1, 0};
  if (cal_layer_check_shape(&ls, err, sizeof err) < 0)
    return cal_usage(cmd, "invalid layer shape: %s", err);

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
  if (r->ci) {
    /* noisy shared runners: 3 interleaved rounds of 5 samples per point
     * (15 in all: the rank test can reach p < 1e-6), fixed point lists so
     * two runs measure the same points, a small layer for the sweep */
    r->rounds = 3;
    r->hcfg.samples = 5;
    r->hcfg.min_sample_s = 0.02;
    r->hcfg.warmup_s = 0.05;
    r->hcfg.cv_threshold = 0.10;
    if (!sw->batches) {
      if (cal_batches_parse("1,2,4,8,16", &sw->batches, &sw->nbatches, err,
                            sizeof err) < 0)
        return CAL_EXIT_INTERNAL;
    }
    sw->extend = 0;
    if (!shape[4])
      sw->seq = 64;
  }
  if (rounds > 0)
    r->rounds = (int)rounds;
  if (r->plots_dir && strcmp(r->out_path, "-") == 0)
    return cal_usage(cmd, "--plots needs the profile in a file, not -o -");
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

void cal_run_free(cal_run_t *r) {
  free(r->sweep.batches);
  for (size_t i = 0; r->peak_pts && i < r->npeak; i++)
    cal_point_free(&r->peak_pts[i]);
  for (size_t i = 0; r->bw_pts && i < r->nbw; i++)
    cal_point_free(&r->bw_pts[i]);
  free(r->peak_pts);
  free(r->bw_pts);
  free(r->bw_levels);
  cal_threads_free(r->thr);
  json_decref(r->root);
  json_decref(r->warnings);
  json_decref(r->section_times);
}

int cal_cmd_run(int argc, char **argv) {
  cal_run_t r;
  memset(&r, 0, sizeof r);
  int rc = cal_run_parse(&r, argc, argv, "run");
  if (rc == -2) {
    run_help();
    rc = CAL_EXIT_OK;
  } else if (rc == -3) {
    cal_layer_presets_print(stdout);
    rc = CAL_EXIT_OK;
  }
  if (rc >= 0) {
    cal_run_free(&r);
    return rc;
  }
  /* --ci: the scaling curve repeats the 1- and all-thread GEMM points */
  r.sections |= CAL_SEC_GEMM | (r.ci ? CAL_SEC_BATCH : CAL_SEC_SCALING);
  int (*sections[10])(cal_run_t *);
  size_t n = 0;
  sections[n++] = cal_section_gemm;
  if (r.sections & CAL_SEC_SCALING)
    sections[n++] = cal_section_scaling;
  sections[n++] = cal_section_attention;
  sections[n++] = cal_section_peak;
  sections[n++] = cal_section_bandwidth;
  r.sections |= CAL_SEC_ATTENTION | CAL_SEC_PEAK | CAL_SEC_BANDWIDTH |
                CAL_SEC_ROOFLINE;
  if (r.sections & CAL_SEC_BATCH)
    sections[n++] = cal_section_batch;
  sections[n++] = cal_section_roofline;
  rc = cal_run_main(&r, sections, n);
  cal_run_free(&r);
  return rc;
}
