#include "roofline.h"

#include <math.h>
#include <stdarg.h>
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

/* The matrix engine of row u where the feature bits have it (AMX: one
 * 16x16 tile multiply-add with K = 32 bf16 or K = 64 int8 every 16 cycles
 * on Sapphire Rapids and later: 1024 bf16 flops, 2048 int8 ops per cycle
 * per core, in the row). */
static void matrix_rates(cal_theory_t *m, const cal_uarch_t *u, uint32_t f) {
  if (!(f & CAL_ISA_AMX_TILE))
    return;
  if (f & CAL_ISA_AMX_BF16)
    m->matrix_ops_per_cycle[CAL_DT_BF16] = u->amx_bf16_ops;
  if (f & CAL_ISA_AMX_INT8)
    m->matrix_ops_per_cycle[CAL_DT_INT8] = u->amx_int8_ops;
  if (m->matrix_ops_per_cycle[CAL_DT_BF16] > 0 ||
      m->matrix_ops_per_cycle[CAL_DT_INT8] > 0)
    m->matrix_engine = "amx";
}

__attribute__((format(printf, 3, 4))) static size_t
put(cal_theory_t *m, size_t len, const char *fmt, ...) {
  if (len >= sizeof m->assumption)
    return len;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(m->assumption + len, sizeof m->assumption - len, fmt, ap);
  va_end(ap);
  return k > 0 ? len + (size_t)k : len;
}

/* The assumption sentence: the row and what every rate rests on. */
static void describe(cal_theory_t *m) {
  const cal_uarch_t *u = m->uarch;
  size_t len = (size_t)snprintf(
      m->assumption, sizeof m->assumption,
      "%s (row %s): %d FMA pipes of %d bits%s; at %d bits (0: scalar) ",
      u->name, u->id, u->fma_pipes, u->fma_bits,
      u->split512 ? ", a 512-bit operation split over two" : "",
      m->vector_bits);
  len = put(m, len, "%.2g FMA per cycle", m->ipc[CAL_DT_FP32]);
  if (m->ipc[CAL_DT_BF16] > 0)
    len = put(m, len, ", vdpbf16ps %.2g per cycle", m->ipc[CAL_DT_BF16]);
  if (m->ipc[CAL_DT_INT8] > 0)
    len = put(m, len, ", vpdpbusd %.2g per cycle", m->ipc[CAL_DT_INT8]);
  if (m->ipc[CAL_DT_FP16] > 0)
    len = put(m, len, ", vfmadd231ph %.2g per cycle", m->ipc[CAL_DT_FP16]);
  if (m->matrix_ops_per_cycle[CAL_DT_BF16] > 0)
    len = put(m, len, "; AMX %.0f bf16 flops per cycle",
              m->matrix_ops_per_cycle[CAL_DT_BF16]);
  if (m->matrix_ops_per_cycle[CAL_DT_INT8] > 0)
    len = put(m, len, ", %.0f int8 ops per cycle",
              m->matrix_ops_per_cycle[CAL_DT_INT8]);
  if (len < sizeof m->assumption)
    snprintf(m->assumption + len, sizeof m->assumption - len,
             "; at the clock measured under vector load; source: %s%s%s",
             u->source, u->uncertain ? "; uncertain: " : "",
             u->uncertain ? u->uncertain : "");
}

int cal_theory_init(cal_theory_t *m, const cal_uarch_t *u, int variant,
                    uint32_t f, double ghz, int cores) {
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
  m->uarch = u;
  if (!u) {
    snprintf(m->assumption, sizeof m->assumption,
             "theory unknown: no row of the microarchitecture table knows "
             "this CPU; efficiencies are against the measured peak");
    return 0;
  }
  double fma = cal_uarch_fma_ipc(u, m->vector_bits);
  int v512 = variant == CAL_VARIANT_AVX512;
  m->ipc[CAL_DT_FP64] = m->ipc[CAL_DT_FP32] = fma;
  if (v512 && (f & CAL_ISA_AVX512BF16))
    m->ipc[CAL_DT_BF16] = fma * u->bf16_rel;
  if ((v512 && (f & CAL_ISA_AVX512VNNI)) ||
      (variant == CAL_VARIANT_AVX2 && (f & CAL_ISA_AVXVNNI)))
    m->ipc[CAL_DT_INT8] = fma * u->vnni_rel;
  if (v512 && (f & CAL_ISA_AVX512FP16))
    m->ipc[CAL_DT_FP16] = fma * u->fp16_rel;
  matrix_rates(m, u, f);
  describe(m);
  return 0;
}

int cal_theory_check(const cal_theory_t *m, int dt, double measured,
                     char *note, size_t len) {
  if (note && len)
    note[0] = '\0';
  if (dt < 0 || dt >= CAL_DT_COUNT || !m->uarch || !(m->ipc[dt] > 0) ||
      !(measured > 0))
    return CAL_THEORY_AGREES;
  double per_instr = cal_ops_per_instr(dt, m->vector_bits) * m->ghz;
  if (!(per_instr > 0))
    return CAL_THEORY_AGREES;
  double ipc = measured / per_instr;
  int v = ipc <= 0.6 * m->ipc[dt]    ? CAL_THEORY_SLOWER
          : ipc > 1.25 * m->ipc[dt] ? CAL_THEORY_FASTER
                                    : CAL_THEORY_AGREES;
  int fma = dt == CAL_DT_FP64 || dt == CAL_DT_FP32;
  if (v != CAL_THEORY_AGREES && note && len)
    snprintf(note, len,
             "the %s loop on %d-bit vectors ran %.2f instructions per cycle "
             "where row %s says %.2g: the row's %s (%d x %d bits%s) look%s "
             "wrong for this CPU",
             cal_ceiling_dtype_name(dt), m->vector_bits, ipc, m->uarch->id,
             m->ipc[dt],
             fma ? "FMA pipes or their width" : "rate for it relative to the "
                                                "FMA, or its FMA pipes",
             m->uarch->fma_pipes, m->uarch->fma_bits,
             m->uarch->split512 ? ", 512-bit split" : "", fma ? "" : "s");
  return v;
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
