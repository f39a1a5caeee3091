/* gemm_loop: plain timing loops over oneDNN matmul and cblas_sgemm, the
 * reference the GEMM section's headlines are compared with.  Nothing of
 * calibrate's harness is used: inputs are allocated and filled, one
 * primitive is created per size with oneDNN's defaults (plain row-major
 * layouts, as in calibrate), then the operation runs back to back for
 * --seconds, each run timed on its own.  Prints, per engine, dtype, size
 * and thread count, the median of the runs' rates, the mean rate (total
 * work over total time: what a plain loop delivers, and what compares
 * with calibrate's samples, each of which times many runs back to back)
 * and oneDNN's implementation name.
 *
 * Built by CMake, not run by ctest.  For comparable figures run it in the
 * same minutes as `calibrate`, with the same OPENBLAS_CORETYPE as the
 * profile's blas.coretype and threads pinned like calibrate pins them:
 *   OMP_PROC_BIND=close OMP_PLACES=cores gemm_loop --threads 1 ...  */
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onednn_release.h"

typedef enum { DT_FP32, DT_BF16, DT_INT8 } dt_t;
static const char *const dt_names[] = {"fp32", "bf16", "int8"};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Fill n elements of size es with bytes that are valid inputs of every
 * dtype used here: fp32 in [-1, 1), bf16 the top halves of such floats,
 * u8 in [0, 127] and s8 for int8. */
static void fill(void *x, size_t n, dt_t dt, int second, uint64_t *seed) {
  for (size_t i = 0; i < n; i++) {
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    uint32_t r = (uint32_t)(*seed >> 33);
    float f = (float)r / 2147483648.0f * 2.0f - 1.0f;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (dt == DT_FP32)
      ((float *)x)[i] = f;
    else if (dt == DT_BF16)
      ((uint16_t *)x)[i] = (uint16_t)(u >> 16);
    else if (second)
      ((int8_t *)x)[i] = (int8_t)(r & 0xff);
    else
      ((uint8_t *)x)[i] = (uint8_t)(r & 0x7f);
  }
}

typedef struct {
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  dnnl_primitive_t prim;
  dnnl_memory_t mem[3];
  dnnl_exec_arg_t args[3];
  char impl[96];
} dnnl_mm_t;

static int dnnl_mm_create(dnnl_mm_t *mm, dt_t dt, int64_t n, void *a, void *b,
                          void *c) {
  static const dnnl_data_type_t types[3][3] = {
      {dnnl_f32, dnnl_f32, dnnl_f32},
      {dnnl_bf16, dnnl_bf16, dnnl_f32},
      {dnnl_u8, dnnl_s8, dnnl_s32}};
  static const int argk[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  void *bufs[3] = {a, b, c};
  dnnl_dims_t dims = {n, n};
  dnnl_memory_desc_t md[3];
  dnnl_matmul_desc_t desc;
  dnnl_primitive_desc_t pd = NULL;
  const char *impl = NULL;
  memset(mm, 0, sizeof *mm);
  if (dnnl_engine_create(&mm->eng, dnnl_cpu, 0) ||
      dnnl_stream_create(&mm->strm, mm->eng, dnnl_stream_default_flags))
    return -1;
  for (int i = 0; i < 3; i++)
    if (dnnl_memory_desc_init_by_tag(&md[i], 2, dims, types[dt][i], dnnl_ab))
      return -1;
  if (dnnl_matmul_desc_init(&desc, &md[0], &md[1], NULL, &md[2]) ||
      dnnl_primitive_desc_create(&pd, &desc, NULL, mm->eng, NULL))
    return -1;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  snprintf(mm->impl, sizeof mm->impl, "%s", impl ? impl : "?");
  int rc = dnnl_primitive_create(&mm->prim, pd) ? -1 : 0;
  dnnl_primitive_desc_destroy(pd);
  for (int i = 0; rc == 0 && i < 3; i++) {
    if (dnnl_memory_create(&mm->mem[i], &md[i], mm->eng, bufs[i]))
      rc = -1;
    else
      mm->args[i] = (dnnl_exec_arg_t){argk[i], mm->mem[i]};
  }
  return rc;
}

static void dnnl_mm_destroy(dnnl_mm_t *mm) {
  cal_onednn_release(mm->mem, 3, mm->prim, mm->strm, mm->eng);
}

/* Run one engine/dtype/size for `seconds` and print its line. */
static int loop(const char *engine, dt_t dt, int64_t n, int threads,
                double seconds) {
  size_t es = dt == DT_FP32 ? 4 : dt == DT_BF16 ? 2 : 1, nn = (size_t)(n * n);
  void *a = aligned_alloc(64, (es * nn + 63) / 64 * 64);
  void *b = aligned_alloc(64, (es * nn + 63) / 64 * 64);
  void *c = aligned_alloc(64, 4 * nn);
  size_t cap = 1 << 20, runs = 0;
  double *t = malloc(cap * sizeof *t);
  dnnl_mm_t mm;
  int onednn = strcmp(engine, "onednn") == 0, rc = -1;
  memset(&mm, 0, sizeof mm);
  if (!a || !b || !c || !t)
    goto out;
  uint64_t seed = 42 + (uint64_t)n;
  fill(a, nn, dt, 0, &seed);
  fill(b, nn, dt, 1, &seed);
  if (onednn && dnnl_mm_create(&mm, dt, n, a, b, c) < 0) {
    printf("%-8s %-4s n=%-6lld t=%-3d not available in this oneDNN\n", engine,
           dt_names[dt], (long long)n, threads);
    rc = 0;
    goto out;
  }
  double start = now();
  for (int warm = 1; runs < cap; warm = 0) {
    double t0 = now();
    if (onednn) {
      if (dnnl_primitive_execute(mm.prim, mm.strm, 3, mm.args) ||
          dnnl_stream_wait(mm.strm))
        goto out;
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)n,
                  (blasint)n, (blasint)n, 1.0f, a, (blasint)n, b, (blasint)n,
                  0.0f, c, (blasint)n);
    }
    double t1 = now();
    if (!warm) /* the first run is discarded */
      t[runs++] = t1 - t0;
    if (t1 - start > seconds && runs >= 3)
      break;
  }
  double sum = 0, work = 2.0 * (double)n * (double)n * (double)n;
  for (size_t i = 0; i < runs; i++)
    sum += t[i];
  qsort(t, runs, sizeof *t, cmp_double);
  double med = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
  printf("%-8s %-4s n=%-6lld t=%-3d median %9.1f %s  mean %9.1f  runs %-6zu %s\n",
         engine, dt_names[dt], (long long)n, threads, work / med * 1e-9,
         dt == DT_INT8 ? "GOPS  " : "GFLOPS", work * (double)runs / sum * 1e-9,
         runs, onednn ? mm.impl : "cblas_sgemm");
  rc = 0;
out:
  dnnl_mm_destroy(&mm);
  free(a);
  free(b);
  free(c);
  free(t);
  return rc;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: gemm_loop [--threads N] [--seconds S] [--sizes N,N,...]\n"
          "                 [--dtypes fp32,bf16,int8] [--engines onednn,openblas]\n"
          "Plain timing loops over oneDNN matmul (fp32, bf16->fp32, u8*s8->s32)\n"
          "and cblas_sgemm (fp32), square n, row-major.  Defaults: all usable\n"
          "OpenMP threads, 3 s per line, sizes 1024,2048,3072,4096, every dtype\n"
          "and engine.  Pin like calibrate: OMP_PROC_BIND=close OMP_PLACES=cores.\n");
}

int main(int argc, char **argv) {
  int threads = omp_get_max_threads();
  double seconds = 3.0;
  const char *sizes = "1024,2048,3072,4096", *dtypes = "fp32,bf16,int8";
  const char *engines = "onednn,openblas";
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (v && strcmp(argv[i], "--threads") == 0) {
      threads = atoi(v), i++;
    } else if (v && strcmp(argv[i], "--seconds") == 0) {
      seconds = atof(v), i++;
    } else if (v && strcmp(argv[i], "--sizes") == 0) {
      sizes = v, i++;
    } else if (v && strcmp(argv[i], "--dtypes") == 0) {
      dtypes = v, i++;
    } else if (v && strcmp(argv[i], "--engines") == 0) {
      engines = v, i++;
    } else {
      fprintf(stderr, "gemm_loop: bad argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (threads < 1 || !(seconds > 0)) {
    fprintf(stderr, "gemm_loop: --threads and --seconds must be positive\n");
    return 2;
  }
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  char list[256];
  snprintf(list, sizeof list, "%s", sizes);
  for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    int64_t n = atoll(tok);
    if (n < 1) {
      fprintf(stderr, "gemm_loop: bad size '%s'\n", tok);
      return 2;
    }
    for (int d = 0; d < 3; d++) {
      if (!strstr(dtypes, dt_names[d]))
        continue;
      if (strstr(engines, "onednn") && loop("onednn", (dt_t)d, n, threads, seconds) < 0)
        return 4;
      if (d == DT_FP32 && strstr(engines, "openblas") &&
          loop("openblas", DT_FP32, n, threads, seconds) < 0)
        return 4;
    }
  }
  return 0;
}
