/* Fused attention in bf16: the variant choice, the dispatch, the portable
 * scalar variant (the tile algorithm of the AMX variant with the tile
 * product emulated in C, so its blocking and layout are checked on any
 * CPU) and that emulation. */
#include <stdint.h>

#include "amx.h"
#include "attention.h"
#include "attention_bf16_internal.h"
#include "cal_bf16.h"
#include "cal_isa.h"
#include "cal_mem.h"

#include "attention_vec_scalar.h"

/* Eight partial sums (a chain of D dependent additions kept decode's
 * portable attention at a tenth of the vector variant's speed), added
 * pairwise at the end. */
static inline float scalar_bf_dot(const uint16_t *q, const uint16_t *k,
                                  int64_t D) {
  float acc[8] = {0.0f};
  int64_t d = 0;
  for (; d + 8 <= D; d += 8)
    for (int l = 0; l < 8; l++)
      acc[l] += cal_bf16_to_f32(q[d + l]) * cal_bf16_to_f32(k[d + l]);
  for (; d < D; d++)
    acc[d % 8] += cal_bf16_to_f32(q[d]) * cal_bf16_to_f32(k[d]);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
         ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static inline void scalar_bf_axpy(float *acc, float p, const uint16_t *v,
                                  int64_t D) {
  for (int64_t d = 0; d < D; d++)
    acc[d] += p * cal_bf16_to_f32(v[d]);
}

static inline void scalar_bf_cvt32(uint16_t *dst, const float *src) {
  for (int x = 0; x < 32; x++)
    dst[x] = cal_f32_to_bf16(src[x]);
}

#define BF_DOT scalar_bf_dot
#define BF_AXPY scalar_bf_axpy
#define BF_CVT32 scalar_bf_cvt32
#define BF_TILES 1
#define TILE_BEGIN() ((void)0)
#define TILE_END() ((void)0)
#define TILE_QK cal_attn_tile_qk_emu
#define TILE_PV cal_attn_tile_pv_emu
#define SFX _scalar

#include "attention_bf16_impl.h"

/* ---- the emulated tile product */

/* C[16][16] (rows ldc floats apart) += A[16][32 bf16] · B[16][16 pairs],
 * in TDPBF16PS's order. */
static void tdpbf16ps_emu(float *c, int64_t ldc, const uint16_t *a,
                          const uint32_t *b) {
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 16; n++) {
      float t = c[m * ldc + n];
      for (int kk = 0; kk < 16; kk++) {
        uint32_t pr = b[kk * 16 + n];
        t += cal_bf16_to_f32(a[m * 32 + 2 * kk]) *
             cal_bf16_to_f32((uint16_t)(pr & 0xffffu));
        t += cal_bf16_to_f32(a[m * 32 + 2 * kk + 1]) *
             cal_bf16_to_f32((uint16_t)(pr >> 16));
      }
      c[m * ldc + n] = t;
    }
}

static void zero_tile(float *c, int64_t ldc) {
  for (int m = 0; m < 16; m++)
    memset(c + m * ldc, 0, 16 * sizeof(float));
}

void cal_attn_tile_qk_emu(const uint16_t *qp, const uint32_t *k0,
                          const uint32_t *k1, int nch, float *S) {
  zero_tile(S, 32);
  zero_tile(S + 16, 32);
  for (int c = 0; c < nch; c++) {
    tdpbf16ps_emu(S, 32, qp + 512 * c, k0 + 256 * c);
    tdpbf16ps_emu(S + 16, 32, qp + 512 * c, k1 + 256 * c);
  }
}

void cal_attn_tile_pv_emu(const uint16_t *p16, const uint32_t *vp, int ne,
                          float *out, int64_t ldo) {
  for (int e = 0; e < ne; e++) {
    zero_tile(out + 16 * e, ldo);
    tdpbf16ps_emu(out + 16 * e, ldo, p16, vp + 256 * e);
  }
}

/* ---- variants and dispatch */

static const char *const bf16_names[CAL_ATTN_BF16_COUNT] = {
    "scalar", "avx512_bf16", "amx"};

const char *cal_attn_bf16_variant_name(int variant) {
  if (variant < 0 || variant >= CAL_ATTN_BF16_COUNT)
    return "auto";
  return bf16_names[variant];
}

/* The CPU runs vdpbf16ps (with the AVX-512 the rest of the loop uses). */
static int have_avx512_bf16(void) {
  return cal_variant_supported(CAL_VARIANT_AVX512) &&
         (cal_isa_features() & CAL_ISA_AVX512BF16);
}

static int amx_ok(void) {
#ifdef CAL_HAVE_AMX
  const char *why;
  return have_avx512_bf16() && cal_amx_usable(CAL_AMX_NEED_BF16, &why);
#else
  return 0;
#endif
}

int cal_attn_bf16_resolve(int requested, int *variant, const char **why) {
  static const char no_bf16[] =
      "bf16 attention needs AVX512_BF16 (vdpbf16ps) or AMX-BF16, which "
      "this CPU lacks";
  int v = requested;
  *why = "";
  if (requested == CAL_VARIANT_AUTO) {
    int rc = cal_variant_best(&v);
    if (rc < 0) {
      *why = "CALIBRATE_ISA names an unknown or unsupported variant";
      return rc;
    }
    if (v == CAL_VARIANT_AVX512 && amx_ok()) {
      *variant = CAL_ATTN_BF16_AMX;
      return 0;
    }
  }
  switch (v) {
  case CAL_VARIANT_SCALAR:
    *variant = CAL_ATTN_BF16_SCALAR;
    return 0;
  case CAL_VARIANT_AVX2:
    *why = no_bf16;
    return CAL_EUNSUPP;
  case CAL_VARIANT_AVX512:
    if (!have_avx512_bf16()) {
      *why = no_bf16;
      return CAL_EUNSUPP;
    }
    *variant = CAL_ATTN_BF16_AVX512;
    return 0;
  default:
    *why = "unknown SIMD variant";
    return CAL_EINVAL;
  }
}

size_t cal_attn_fused_bf16_workspace_bytes(const cal_attn_shape_t *s) {
  if (s->nq <= CAL_ATTN_DIRECT_MAX_NQ)
    return 0;
  int64_t steps = (s->nk + CAL_ATTN_BF16_KS - 1) / CAL_ATTN_BF16_KS;
  /* K and V, 64·Dp bytes a step each */
  return (size_t)(s->batch * s->kv_heads) *
         (size_t)(steps * 128 * cal_attn_bf16_dp(s->head_dim));
}

typedef int (*bf16_run_fn)(const cal_attn_shape_t *, const uint16_t *,
                           const uint16_t *, const uint16_t *, float *,
                           void *);
typedef void (*bf16_direct_fn)(const cal_attn_shape_t *, const uint16_t *,
                               const uint16_t *, const uint16_t *, float *);

/* The variant's two paths; 0 when this build lacks it. */
static int variant_fns(int variant, bf16_run_fn *run, bf16_direct_fn *dir) {
  switch (variant) {
  case CAL_ATTN_BF16_SCALAR:
    *run = cal_attn_bf16_tiles_scalar;
    *dir = cal_attn_bf16_direct_scalar;
    return 1;
#ifdef CAL_ATTN_X86
  case CAL_ATTN_BF16_AVX512:
    *run = cal_attn_bf16_run_avx512bf16;
    *dir = cal_attn_bf16_direct_avx512bf16;
    return 1;
#ifdef CAL_HAVE_AMX
  case CAL_ATTN_BF16_AMX: /* decode has no pairs of rows to fill a tile */
    *run = cal_attn_bf16_tiles_amx;
    *dir = cal_attn_bf16_direct_avx512bf16;
    return 1;
#endif
#endif
  default: return 0;
  }
}

/* Shape and variant checks shared by both entry points. */
static int prepare(const cal_attn_shape_t *s, int variant, int *v_ran,
                   bf16_run_fn *run, bf16_direct_fn *dir) {
  const char *why;
  cal_params_t p = {.batch = s->batch, .heads = s->heads,
                    .kv_heads = s->kv_heads, .nq = s->nq, .nk = s->nk,
                    .head_dim = s->head_dim, .causal = s->causal};
  if (cal_attn_check_shape(&p, 0, NULL, 0) < 0)
    return CAL_EINVAL;
  if (variant == CAL_VARIANT_AUTO) {
    int rc = cal_attn_bf16_resolve(CAL_VARIANT_AUTO, &variant, &why);
    if (rc < 0)
      return rc;
  }
  if (variant < 0 || variant >= CAL_ATTN_BF16_COUNT)
    return CAL_EINVAL;
  if ((variant == CAL_ATTN_BF16_AVX512 && !have_avx512_bf16()) ||
      (variant == CAL_ATTN_BF16_AMX && !amx_ok()) ||
      !variant_fns(variant, run, dir))
    return CAL_EUNSUPP;
  *v_ran = variant;
  return 0;
}

int cal_attn_fused_bf16(const cal_attn_shape_t *s, const uint16_t *q,
                        const uint16_t *k, const uint16_t *v, float *o,
                        int variant, void *ws, int *ran) {
  bf16_run_fn run;
  bf16_direct_fn dir;
  int v_ran, rc = prepare(s, variant, &v_ran, &run, &dir);
  if (rc < 0)
    return rc;
  if (s->nq <= CAL_ATTN_DIRECT_MAX_NQ) {
#pragma omp parallel
    dir(s, q, k, v, o);
  } else {
    void *own = NULL;
    if (!ws && !(ws = own = cal_alloc(cal_attn_fused_bf16_workspace_bytes(s))))
      return CAL_ENOMEM;
    run(s, q, k, v, o, ws);
    cal_free(own);
  }
  if (ran)
    *ran = v_ran;
  return 0;
}

int cal_attn_fused_bf16_team(const cal_attn_shape_t *s, const uint16_t *q,
                             const uint16_t *k, const uint16_t *v, float *o,
                             int variant) {
  bf16_run_fn run;
  bf16_direct_fn dir;
  int v_ran, rc;
  if (s->nq > CAL_ATTN_DIRECT_MAX_NQ)
    return CAL_EINVAL;
  if ((rc = prepare(s, variant, &v_ran, &run, &dir)) < 0)
    return rc;
  dir(s, q, k, v, o);
  return 0;
}
