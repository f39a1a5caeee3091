/* Machine limits as plain arithmetic: theoretical peak from the vector
 * width, the FMA pipes of the CPU's microarchitecture row and the measured
 * clock (and, for a matrix
 * engine such as AMX, its documented operations per cycle); roofline ceilings,
 * ridge points, attainable performance and a kernel point's bound.
 * Nothing here measures or allocates; every function is unit-testable. */
#ifndef CAL_ROOFLINE_H
#define CAL_ROOFLINE_H

#include <stddef.h>
#include <stdint.h>

#include "uarch.h"

typedef enum {
  CAL_DT_FP64 = 0,
  CAL_DT_FP32,
  CAL_DT_BF16, /* bf16 pairs dotted into fp32 (vdpbf16ps) */
  CAL_DT_INT8, /* u8·s8 quads dotted into int32 (vpdpbusd); ops, not flops */
  CAL_DT_FP16, /* fp16 FMA (vfmadd231ph, AVX512_FP16) */
  CAL_DT_COUNT
} cal_dtype_t;

/* "fp64", "fp32", "bf16", "int8", "fp16"; static storage ("?" when out of
 * range). */
const char *cal_ceiling_dtype_name(int dt);
/* CAL_EINVAL for an unknown name. */
int cal_ceiling_dtype_parse(const char *name, int *dt);
/* The ceiling dtype of a kernel's dtype (cal_kdtype_t); -1 when none. */
int cal_ceiling_dtype_of(int kdtype);

/* What the theoretical peak of one core rests on. */
typedef struct cal_theory {
  int vector_bits;  /* 512, 256; 0 for the scalar variant (one lane) */
  double ghz;       /* measured clock under vector load */
  int cores;        /* usable cores */
  /* the microarchitecture row the rates come from (uarch.h); NULL: no
   * row knows this CPU, the theory is unknown and every rate is 0 */
  const cal_uarch_t *uarch;
  /* instructions per cycle per core of the dtype's multiply-add (FMA for
   * fp64/fp32, vdpbf16ps, vpdpbusd, vfmadd231ph); 0 when the CPU has none
   * or its row does not say */
  double ipc[CAL_DT_COUNT];
  /* the matrix engine: operations (flops; int8 ops) per cycle per core of
   * its tile multiply-add per dtype, 0 when it has none; engine NULL when
   * the CPU has no matrix engine */
  const char *matrix_engine; /* "amx"; static storage */
  double matrix_ops_per_cycle[CAL_DT_COUNT];
  char assumption[640]; /* how ipc and the matrix rates were chosen */
} cal_theory_t;

/* Operations one multiply-add instruction does on a vector of `bits`:
 * fp64 bits/64·2, fp32 bits/32·2, bf16 bits/32·2 pairs·2, int8 bits/32·4
 * pairs·2, fp16 bits/16·2; bits 0 means scalar (one lane: fp64/fp32 2,
 * others 0).
 * 0 for an unknown dtype or bits < 0. */
double cal_ops_per_instr(int dt, int vector_bits);

/* Fill a model from the microarchitecture row `u` (cal_uarch_lookup; NULL
 * when none knows the CPU: the model then has no rates and its assumption
 * says the theory is unknown), the SIMD variant (cal_isa_variant_t), the
 * feature bits (cal_isa_features()), the clock and usable cores.  Rates:
 * the FMA's instructions per cycle at the variant's width
 * (cal_uarch_fma_ipc: pipes, their width, 512-bit operations split or
 * not), the dot products and fp16 FMA at the row's rate relative to it
 * where the feature bits have the instruction (vdpbf16ps and vfmadd231ph
 * need AVX-512; vpdpbusd AVX512_VNNI, or AVX-VNNI on 256 bits), and the
 * matrix engine's operations per cycle where the row has one and the
 * feature bits say so (AMX: amx_tile with amx_bf16 / amx_int8).  The rates
 * describe the hardware; whether the kernel lets this process use AMX is
 * the peak points' business.  CAL_EINVAL for a bad variant, ghz <= 0 or
 * cores < 1. */
int cal_theory_init(cal_theory_t *m, const cal_uarch_t *u, int variant,
                    uint32_t features, double ghz, int cores);

/* The cross-check of a row against a measured one-thread loop of `dt`
 * (measured GFLOPS of one core) on vectors of the model's width:
 * CAL_THEORY_AGREES, CAL_THEORY_SLOWER (the loop ran at most 0.6 of the
 * row's rate: at the rate of half as many or half as wide pipes, e.g. a
 * 512-bit loop at the 256-bit rate) or CAL_THEORY_FASTER (more than 1.25
 * times the row's rate: the pipes are wider or more than the row says).
 * `note` (may be NULL) gets one sentence for the warning and the profile.
 * CAL_THEORY_AGREES as well when the model has no rate for dt or the
 * figure is not positive. */
enum { CAL_THEORY_AGREES = 0, CAL_THEORY_SLOWER, CAL_THEORY_FASTER };
int cal_theory_check(const cal_theory_t *m, int dt, double measured_core,
                     char *note, size_t len);

/* Theoretical GFLOPS (GOPS for int8) of the vector units of one core and
 * of all usable cores; 0 when the dtype has no native instruction. */
double cal_theory_gflops_core(const cal_theory_t *m, int dt);
double cal_theory_gflops(const cal_theory_t *m, int dt);
/* The same for the matrix engine; 0 when it has no such dtype. */
double cal_theory_matrix_gflops_core(const cal_theory_t *m, int dt);
double cal_theory_matrix_gflops(const cal_theory_t *m, int dt);

/* Roofline: the arithmetic intensity (FLOP/byte) at which a bandwidth of
 * `gbps` stops limiting a compute ceiling of `peak_gflops`; 0 when either
 * is not positive. */
double cal_ridge_point(double peak_gflops, double gbps);
/* min(peak, gbps · intensity); 0 for non-positive inputs. */
double cal_attainable_gflops(double peak_gflops, double gbps,
                             double intensity);

typedef enum { CAL_BOUND_MEMORY = 0, CAL_BOUND_COMPUTE } cal_bound_t;
/* "memory", "compute"; static storage. */
const char *cal_bound_name(int bound);

/* A measured kernel point against one compute and one bandwidth ceiling:
 * its bound (memory when its intensity is below the ridge point) and its
 * efficiency = achieved / attainable at its intensity.  CAL_EINVAL for
 * non-positive ceilings or intensity, or a negative achieved figure. */
int cal_roofline_classify(double peak_gflops, double gbps, double intensity,
                          double achieved_gflops, cal_bound_t *bound,
                          double *efficiency);

/* Ceilings of one roofline: compute per dtype and bandwidth per level, all
 * for the same thread count.  Strings are borrowed (static or owned by the
 * caller for the roofline's lifetime). */
#define CAL_ROOF_MAX_LEVELS 8
typedef struct cal_roofline {
  int threads;
  double compute_gflops[CAL_DT_COUNT]; /* 0: not measured; the best of
                                          every engine, matrix included */
  const char *compute_kernel[CAL_DT_COUNT];
  double matrix_gflops[CAL_DT_COUNT];  /* the matrix engine's alone */
  const char *matrix_kernel[CAL_DT_COUNT];
  size_t nlevels;
  const char *level[CAL_ROOF_MAX_LEVELS];
  double gbps[CAL_ROOF_MAX_LEVELS];
  const char *bandwidth_kernel[CAL_ROOF_MAX_LEVELS];
} cal_roofline_t;

/* Raise the compute ceiling of dt / the bandwidth ceiling of `level` to
 * `value` if higher (adding the level when new).  CAL_EINVAL for a bad
 * dtype, a non-finite value or more than CAL_ROOF_MAX_LEVELS levels. */
int cal_roofline_add_compute(cal_roofline_t *r, int dt, double gflops,
                             const char *kernel);
/* A matrix-engine figure: raises the matrix ceiling of dt and, through
 * cal_roofline_add_compute, the compute ceiling.  Errors as above. */
int cal_roofline_add_matrix(cal_roofline_t *r, int dt, double gflops,
                            const char *kernel);
int cal_roofline_add_bandwidth(cal_roofline_t *r, const char *level,
                               double gbps, const char *kernel);
/* The bandwidth ceiling of `level`, 0 when absent. */
double cal_roofline_gbps(const cal_roofline_t *r, const char *level);

#endif
