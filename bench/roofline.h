/* Machine limits as plain arithmetic: theoretical peak from the vector
 * width, the FMA units per core and the measured clock (and, for a matrix
 * engine such as AMX, its documented operations per cycle); roofline ceilings,
 * ridge points, attainable performance and a kernel point's bound.
 * Nothing here measures or allocates; every function is unit-testable. */
#ifndef CAL_ROOFLINE_H
#define CAL_ROOFLINE_H

#include <stddef.h>
#include <stdint.h>

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
  /* instructions per cycle per core of the dtype's multiply-add (FMA for
   * fp64/fp32, vdpbf16ps, vpdpbusd, vfmadd231ph); 0 when the CPU has none */
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

/* Fill a model from the SIMD variant (cal_isa_variant_t), the feature bits
 * (cal_isa_features()), the clock and usable cores.  Assumed issue rates:
 * 2 FMAs per cycle (two FMA ports, server Intel and recent AMD); vdpbf16ps
 * one per 2 cycles (it is 2 FMA-port uops on Intel server cores);
 * vpdpbusd 2 per cycle (AVX512_VNNI, else AVX-VNNI on 256 bits);
 * vfmadd231ph 2 per cycle on 32 fp16 lanes (AVX512_FP16, the same two FMA
 * units).  The matrix engine, from the feature bits: AMX (amx_tile with
 * amx_bf16 / amx_int8) does one 16x16x32 TDPBF16PS or 16x16x64 TDPBSSD per
 * 16 cycles per core, i.e. 1024 bf16 flops and 2048 int8 ops per cycle
 * (Intel's published Sapphire Rapids figures).  The rates describe the
 * hardware; whether the kernel lets this process use AMX is the peak
 * points' business.  CAL_EINVAL for a bad variant, ghz <= 0 or cores < 1. */
int cal_theory_init(cal_theory_t *m, int variant, uint32_t features,
                        double ghz, int cores);

/* Revise the assumed rate of `dt` from a measured single-core figure: the
 * measured instructions per cycle rounded to the nearest half replaces the
 * assumption when it differs (e.g. a core with one FMA-512 port measures
 * ~1, not 2), and the assumption text says so.  Returns the rate kept. */
double cal_theory_refine(cal_theory_t *m, int dt,
                             double measured_gflops_core);

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
