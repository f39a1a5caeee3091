/* What each known CPU core does per cycle: one row per microarchitecture
 * (vendor, CPUID family and model ranges, and for the few where CPUID
 * cannot tell the SKUs apart, words of the brand string), its FMA pipes
 * and their width, whether a 512-bit operation is split over two 256-bit
 * pipes, the rates of its dot products and fp16 FMA relative to the FMA,
 * its matrix engine, and the sources the row rests on.  Pure data and
 * lookup: the caller identifies the CPU (libcpuid, CPUID) and passes what
 * it read.  A CPU no row knows has no theoretical peak: see
 * cal_theory_init (roofline.h). */
#ifndef CAL_UARCH_H
#define CAL_UARCH_H

#include <stddef.h>

#define CAL_UARCH_MAX_RANGES 6

typedef struct cal_uarch_range {
  int lo, hi; /* CPUID display model, inclusive */
} cal_uarch_range_t;

typedef struct cal_uarch {
  const char *id;     /* unique row id, e.g. "amd-zen4" */
  const char *name;   /* the microarchitecture, e.g. "Zen 4" */
  const char *vendor; /* CPUID vendor string: "GenuineIntel", "AuthenticAMD" */
  int family;         /* CPUID display family (base + extended) */
  cal_uarch_range_t models[CAL_UARCH_MAX_RANGES];
  int nmodels;
  /* NULL: any brand; else '|'-separated words, one of which the brand
   * string must contain (SKUs CPUID cannot tell apart) */
  const char *brand_has;
  int fma_pipes;      /* FMA pipes per core; 0: the row knows no FMA rate */
  int fma_bits;       /* width of each pipe: 128, 256 or 512 */
  int split512;       /* a 512-bit operation occupies two 256-bit pipes */
  /* instructions per cycle of vdpbf16ps, vpdpbusd (AVX512_VNNI or
   * AVX-VNNI) and vfmadd231ph relative to the FMA's at the same width;
   * 0: none or not documented (no theory for that dtype) */
  double bf16_rel, vnni_rel, fp16_rel;
  /* matrix engine (AMX): operations per cycle per core, 0: none */
  double amx_bf16_ops, amx_int8_ops;
  const char *uncertain; /* NULL, or what the row is not sure of */
  const char *source;    /* where the figures come from */
} cal_uarch_t;

/* The table and its size. */
const cal_uarch_t *cal_uarch_table(size_t *n);

/* The row for this CPU: the first whose vendor, family, model range and
 * brand words match; NULL when none does (then *why, when not NULL, says
 * what was not known). */
const cal_uarch_t *cal_uarch_lookup(const char *vendor, int family, int model,
                                    const char *brand, const char **why);

/* FMA instructions per cycle per core on vectors of `bits` (0: scalar)
 * under row u: fma_pipes when the vector fits a pipe, half as many per
 * doubling of the width when split512 lets it span pipes, else 0. */
double cal_uarch_fma_ipc(const cal_uarch_t *u, int bits);

#endif
