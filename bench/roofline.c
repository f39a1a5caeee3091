#include "roofline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "kind.h"

static const char *const dtype_names[CAL_DT_COUNT] = {"fp64", "fp32", "bf16",
                                                       "int8", "fp16"};

const char *cal_ceiling_dtype_name(int dt) {
  return dt >= 0 && dt < CAL_DT_COUNT ? dtype_names[dt] : "?";
}

int cal_ceiling_dtype_of(int kdtype) {
  static const int of[CAL_DTYPE_COUNT] = {
      [CAL_DTYPE_FP64] = CAL_DT_FP64, [CAL_DTYPE_FP32] = CAL_DT_FP32,
      [CAL_DTYPE_BF16] = CAL_DT_BF16, [CAL_DTYPE_INT8] = CAL_DT_INT8,
      [CAL_DTYPE_FP16] = CAL_DT_FP16,
  };
  return kdtype >= 0 && kdtype < CAL_DTYPE_COUNT ? of[kdtype] : -1;
}

int cal_ceiling_dtype_parse(const char *name, int *dt) {
  for (int i = 0; i < CAL_DT_COUNT; i++)
    if (strcmp(name, dtype_names[i]) == 0) {
      *dt = i;
      return 0;
    }
  return CAL_EINVAL;
}

double cal_ops_per_instr(int dt, int bits) {
  if (bits < 0)
    return 0.0;
  if (bits == 0) /* scalar: one lane */
    return dt == CAL_DT_FP64 || dt == CAL_DT_FP32 ? 2.0 : 0.0;
  switch (dt) {
  case CAL_DT_FP64: return bits / 64.0 * 2.0;
  case CAL_DT_FP32: return bits / 32.0 * 2.0;
  case CAL_DT_BF16: return bits / 32.0 * 2.0 * 2.0;
  case CAL_DT_INT8: return bits / 32.0 * 4.0 * 2.0;
  case CAL_DT_FP16: return bits / 16.0 * 2.0;
  default: return 0.0;
  }
}

/* AMX, per core and cycle: one 16x16 tile multiply-add with K = 32 bf16
 * (16x16x32 multiply-adds, 16384 flops) or K = 64 int8 (32768 ops) every
 * 16 cycles: Intel's published TDPBF16PS / TDPBSSD throughput on Sapphire
 * Rapids (Intel 64 and IA-32 Architectures Optimization Reference Manual,
 * the AMX chapter: 1024 bf16 flops and 2048 int8 ops per cycle per core). */
#define AMX_BF16_OPS_PER_CYCLE 1024.0
#define AMX_INT8_OPS_PER_CYCLE 2048.0

static void matrix_rates(cal_theory_t *m, uint32_t f) {
  if (!(f & CAL_ISA_AMX_TILE))
    return;
  if (f & CAL_ISA_AMX_BF16)
    m->matrix_ops_per_cycle[CAL_DT_BF16] = AMX_BF16_OPS_PER_CYCLE;
  if (f & CAL_ISA_AMX_INT8)
    m->matrix_ops_per_cycle[CAL_DT_INT8] = AMX_INT8_OPS_PER_CYCLE;
  if (m->matrix_ops_per_cycle[CAL_DT_BF16] > 0 ||
      m->matrix_ops_per_cycle[CAL_DT_INT8] > 0)
    m->matrix_engine = "amx";
}

/* The assumption sentence: what every rate above rests on. */
static void describe(cal_theory_t *m) {
  size_t len = (size_t)snprintf(
      m->assumption, sizeof m->assumption,
      "%d-bit vectors (0: scalar); assumed 2 FMA units per core%s%s%s",
      m->vector_bits,
      m->ipc[CAL_DT_BF16] > 0 ? "; vdpbf16ps 1 per 2 cycles" : "",
      m->ipc[CAL_DT_INT8] > 0 ? "; vpdpbusd 2 per cycle" : "",
      m->ipc[CAL_DT_FP16] > 0 ? "; vfmadd231ph 2 per cycle (2 FMA units x 32 "
                                "fp16 lanes, AVX512_FP16)"
                              : "");
  if (!m->matrix_engine || len >= sizeof m->assumption)
    return;
  snprintf(m->assumption + len, sizeof m->assumption - len,
           "; AMX per core: %s%s%s (Intel's published Sapphire Rapids "
           "throughput: one 16x16x32 TDPBF16PS or 16x16x64 TDPBSSD per 16 "
           "cycles), at the clock measured under vector load",
           m->matrix_ops_per_cycle[CAL_DT_BF16] > 0
               ? "1024 bf16 flops per cycle" : "",
           m->matrix_ops_per_cycle[CAL_DT_BF16] > 0 &&
                   m->matrix_ops_per_cycle[CAL_DT_INT8] > 0
               ? ", " : "",
           m->matrix_ops_per_cycle[CAL_DT_INT8] > 0
               ? "2048 int8 ops per cycle" : "");
}

int cal_theory_init(cal_theory_t *m, int variant, uint32_t f,
                        double ghz, int cores) {
  memset(m, 0, sizeof *m);
  if (!(ghz > 0) || cores < 1)
    return CAL_EINVAL;
  switch (variant) {
  case CAL_VARIANT_AVX512: m->vector_bits = 512; break;
  case CAL_VARIANT_AVX2: m->vector_bits = 256; break;
  case CAL_VARIANT_SCALAR: m->vector_bits = 0; break;
  default: return CAL_EINVAL;
  }
  m->ghz = ghz;
  m->cores = cores;
  m->ipc[CAL_DT_FP64] = m->ipc[CAL_DT_FP32] = 2.0;
  if (variant == CAL_VARIANT_AVX512 && (f & CAL_ISA_AVX512BF16))
    m->ipc[CAL_DT_BF16] = 0.5;
  if ((variant == CAL_VARIANT_AVX512 && (f & CAL_ISA_AVX512VNNI)) ||
      (variant == CAL_VARIANT_AVX2 && (f & CAL_ISA_AVXVNNI)))
    m->ipc[CAL_DT_INT8] = 2.0;
  if (variant == CAL_VARIANT_AVX512 && (f & CAL_ISA_AVX512FP16))
    m->ipc[CAL_DT_FP16] = 2.0;
  matrix_rates(m, f);
  describe(m);
  return 0;
}

double cal_theory_refine(cal_theory_t *m, int dt, double measured) {
  if (dt < 0 || dt >= CAL_DT_COUNT)
    return 0.0;
  double per_cycle = cal_ops_per_instr(dt, m->vector_bits) * m->ghz;
  if (!(measured > 0) || !(per_cycle > 0) || m->ipc[dt] <= 0)
    return m->ipc[dt];
  double ipc = round(measured / per_cycle * 2.0) / 2.0;
  if (ipc < 0.5)
    ipc = 0.5;
  if (ipc != m->ipc[dt]) {
    size_t len = strlen(m->assumption);
    snprintf(m->assumption + len, sizeof m->assumption - len,
             "; %s measured %.3g instructions/cycle, so %.1f, not %.1f",
             cal_ceiling_dtype_name(dt), measured / per_cycle, ipc, m->ipc[dt]);
    m->ipc[dt] = ipc;
  }
  return m->ipc[dt];
}

double cal_theory_gflops_core(const cal_theory_t *m, int dt) {
  if (dt < 0 || dt >= CAL_DT_COUNT)
    return 0.0;
  return cal_ops_per_instr(dt, m->vector_bits) * m->ipc[dt] * m->ghz;
}

double cal_theory_gflops(const cal_theory_t *m, int dt) {
  return cal_theory_gflops_core(m, dt) * m->cores;
}

double cal_theory_matrix_gflops_core(const cal_theory_t *m, int dt) {
  if (dt < 0 || dt >= CAL_DT_COUNT)
    return 0.0;
  return m->matrix_ops_per_cycle[dt] * m->ghz;
}

double cal_theory_matrix_gflops(const cal_theory_t *m, int dt) {
  return cal_theory_matrix_gflops_core(m, dt) * m->cores;
}

double cal_ridge_point(double peak, double gbps) {
  if (!(peak > 0) || !(gbps > 0))
    return 0.0;
  return peak / gbps;
}

double cal_attainable_gflops(double peak, double gbps, double intensity) {
  if (!(peak > 0) || !(gbps > 0) || !(intensity > 0))
    return 0.0;
  double mem = gbps * intensity;
  return mem < peak ? mem : peak;
}

const char *cal_bound_name(int bound) {
  return bound == CAL_BOUND_COMPUTE ? "compute" : "memory";
}

int cal_roofline_classify(double peak, double gbps, double intensity,
                          double achieved, cal_bound_t *bound,
                          double *efficiency) {
  if (!(peak > 0) || !(gbps > 0) || !(intensity > 0) || !(achieved >= 0))
    return CAL_EINVAL;
  *bound = intensity < cal_ridge_point(peak, gbps) ? CAL_BOUND_MEMORY
                                                   : CAL_BOUND_COMPUTE;
  *efficiency = achieved / cal_attainable_gflops(peak, gbps, intensity);
  return 0;
}

int cal_roofline_add_compute(cal_roofline_t *r, int dt, double gflops,
                             const char *kernel) {
  if (dt < 0 || dt >= CAL_DT_COUNT || !isfinite(gflops))
    return CAL_EINVAL;
  if (gflops > r->compute_gflops[dt]) {
    r->compute_gflops[dt] = gflops;
    r->compute_kernel[dt] = kernel;
  }
  return 0;
}

int cal_roofline_add_matrix(cal_roofline_t *r, int dt, double gflops,
                            const char *kernel) {
  int rc = cal_roofline_add_compute(r, dt, gflops, kernel);
  if (rc < 0)
    return rc;
  if (gflops > r->matrix_gflops[dt]) {
    r->matrix_gflops[dt] = gflops;
    r->matrix_kernel[dt] = kernel;
  }
  return 0;
}

int cal_roofline_add_bandwidth(cal_roofline_t *r, const char *level,
                               double gbps, const char *kernel) {
  if (!level || !isfinite(gbps))
    return CAL_EINVAL;
  size_t i;
  for (i = 0; i < r->nlevels; i++)
    if (strcmp(r->level[i], level) == 0)
      break;
  if (i == r->nlevels) {
    if (r->nlevels == CAL_ROOF_MAX_LEVELS)
      return CAL_EINVAL;
    r->level[i] = level;
    r->gbps[i] = 0.0;
    r->bandwidth_kernel[i] = NULL;
    r->nlevels++;
  }
  if (gbps > r->gbps[i]) {
    r->gbps[i] = gbps;
    r->bandwidth_kernel[i] = kernel;
  }
  return 0;
}

double cal_roofline_gbps(const cal_roofline_t *r, const char *level) {
  for (size_t i = 0; i < r->nlevels; i++)
    if (strcmp(r->level[i], level) == 0)
      return r->gbps[i];
  return 0.0;
}
