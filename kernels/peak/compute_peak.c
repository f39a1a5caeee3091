/* Register-resident peak kernels: fma_f64, fma_f32 (every variant), the
 * native dot products dp_bf16 (AVX512_BF16) and dp_int8 (AVX512_VNNI or
 * AVX-VNNI), and fma_fp16 (AVX512_FP16).  Each thread of an OpenMP team runs its own independent
 * accumulator chains (fma_body.h); the exact final value of every lane is
 * known, so verify() checks all of them.  params.n sets the steps per run
 * (0: a default sized to take about 1 ms); params.bytes is unused. */
#include <omp.h>
#include <string.h>

#include "cal_isa.h"
#include "cal_mem.h"
#include "compute_peak.h"
#include "fma_rep.h"
#include "kernel.h"

#ifndef CAL_HAVE_X86_SIMD
/* no x86 SIMD files in this build: those variants are never supported, and
 * these only satisfy the linker */
void cal_fma_f64_avx512(int64_t n, double o, double c, double *out) { cal_fma_f64_scalar(n, o, c, out); }
void cal_fma_f32_avx512(int64_t n, float o, float c, float *out) { cal_fma_f32_scalar(n, o, c, out); }
void cal_fma_f64_avx2(int64_t n, double o, double c, double *out) { cal_fma_f64_scalar(n, o, c, out); }
void cal_fma_f32_avx2(int64_t n, float o, float c, float *out) { cal_fma_f32_scalar(n, o, c, out); }
void cal_dp_bf16_avx512(int64_t n, uint32_t a, uint32_t b, float *out) { (void)n; (void)a; (void)b; (void)out; }
void cal_dp_int8_avx512(int64_t n, uint32_t a, uint32_t b, int32_t *out) { (void)n; (void)a; (void)b; (void)out; }
void cal_dp_int8_avxvnni(int64_t n, uint32_t a, uint32_t b, int32_t *out) { (void)n; (void)a; (void)b; (void)out; }
#endif
#ifndef CAL_HAVE_AVX512FP16
void cal_fma_f16_avx512(int64_t n, float o, float c, float *out) { (void)n; (void)o; (void)c; (void)out; }
uint64_t cal_clock_chain_avx512(int64_t n, uint64_t x) { return cal_clock_chain_scalar(n, x); }
uint64_t cal_clock_chain_avx2(int64_t n, uint64_t x) { return cal_clock_chain_scalar(n, x); }
#endif

typedef enum { FMA_F64, FMA_F32, DP_BF16, DP_INT8, FMA_F16 } fma_kind_t;

/* bytes of output per thread, padded so threads share no cache line */
#define OUT_STRIDE (CAL_FMA_OUT_MAX * 8)
/* steps per run by default: about 1 ms at 3 GHz with 2 vector ops/cycle */
#define DEFAULT_OPS_PER_RUN 6000000
/* bf16 pairs (0.5, 0.5) · (1, 1) and int8 bytes all 1 */
#define BF16_A 0x3F003F00u
#define BF16_B 0x3F803F80u
#define INT8_A 0x01010101u
#define INT8_B 0x01010101u

typedef struct {
  int chains, lanes;  /* per thread; 0 chains: no such loop */
  double ops_per_lane; /* flops (or int ops) per lane per step */
  double inc;          /* what one step adds to a lane */
  int64_t max_iters;   /* largest step count whose result stays exact */
  int64_t round;       /* chains restart every `round` steps (0: never) */
} fma_shape_t;

/* [kind][variant] */
static const fma_shape_t shapes[5][CAL_VARIANT_COUNT] = {
    [FMA_F64] = {{CAL_FMA_CHAINS_SCALAR, 1, 2, 1, INT64_C(1) << 50, 0},
                 {CAL_FMA_CHAINS_256, 4, 2, 1, INT64_C(1) << 50, 0},
                 {CAL_FMA_CHAINS_512, 8, 2, 1, INT64_C(1) << 50, 0}},
    /* fp32 holds integers exactly up to 2^24; chains start at most at 15 */
    [FMA_F32] = {{CAL_FMA_CHAINS_SCALAR, 1, 2, 1, INT64_C(1) << 23, 0},
                 {CAL_FMA_CHAINS_256, 8, 2, 1, INT64_C(1) << 23, 0},
                 {CAL_FMA_CHAINS_512, 16, 2, 1, INT64_C(1) << 23, 0}},
    /* two bf16 products and their sum into each fp32 lane: 2 flops a pair */
    [DP_BF16] = {{0, 0, 0, 0, 0, 0},
                 {0, 0, 0, 0, 0, 0},
                 {CAL_FMA_CHAINS_512, 16, 4, 1, INT64_C(1) << 23, 0}},
    /* four u8·s8 products into each int32 lane: 2 ops a pair; +4 a step */
    [DP_INT8] = {{0, 0, 0, 0, 0, 0},
                 {CAL_FMA_CHAINS_256, 8, 8, 4, INT64_C(1) << 28, 0},
                 {CAL_FMA_CHAINS_512, 16, 8, 4, INT64_C(1) << 28, 0}},
    /* 32 fp16 lanes, counted in rounds into fp32 totals (compute_peak.h) */
    [FMA_F16] = {{0, 0, 0, 0, 0, 0},
                 {0, 0, 0, 0, 0, 0},
                 {CAL_FMA_CHAINS_512, 32, 2, 1, INT64_C(1) << 23,
                  CAL_FP16_ROUND}},
};

typedef struct {
  fma_kind_t kind;
  int variant;
  int threads;
  int64_t iters;
  unsigned char *out; /* threads × OUT_STRIDE bytes */
} fma_state_t;

/* Whether this CPU runs `kind` in `variant`; why says what is missing. */
static int kind_native(fma_kind_t kind, int variant, const char **why) {
  uint32_t f = cal_isa_features();
  if (!cal_variant_supported(variant)) {
    *why = "the CPU lacks the requested SIMD variant";
    return 0;
  }
  switch (kind) {
  case DP_BF16:
    if (variant == CAL_VARIANT_AVX512 && (f & CAL_ISA_AVX512BF16))
      return 1;
    *why = variant == CAL_VARIANT_AVX512
               ? "CPU has no AVX512_BF16 (vdpbf16ps)"
               : "bf16 dot products need the avx512 variant with AVX512_BF16";
    return 0;
  case DP_INT8:
    if (variant == CAL_VARIANT_AVX512 && (f & CAL_ISA_AVX512VNNI))
      return 1;
    if (variant == CAL_VARIANT_AVX2 && (f & CAL_ISA_AVXVNNI))
      return 1;
    *why = variant == CAL_VARIANT_SCALAR
               ? "int8 dot products need AVX512_VNNI or AVX-VNNI"
               : variant == CAL_VARIANT_AVX512 ? "CPU has no AVX512_VNNI"
                                               : "CPU has no AVX-VNNI";
    return 0;
  case FMA_F16:
    if (variant == CAL_VARIANT_AVX512 && (f & CAL_ISA_AVX512FP16))
      return 1;
    *why = !(f & CAL_ISA_AVX512FP16)
               ? "CPU has no AVX512_FP16 (vfmadd231ph)"
               : "fp16 FMAs need the avx512 variant (the variant asked for "
                 "or CALIBRATE_ISA is below it)";
    return 0;
  default: return 1;
  }
}

/* The variant to run: the requested one, or for AUTO the widest one at or
 * below the best (CALIBRATE_ISA caps it) that runs `kind` natively. */
static int pick(fma_kind_t kind, int requested, int *variant,
                const char **why) {
  int v, rc = cal_variant_resolve(requested, &v);
  *why = "";
  if (rc < 0) {
    *why = rc == CAL_EUNSUPP ? "the CPU lacks the requested SIMD variant"
                             : "unknown SIMD variant";
    return rc;
  }
  if (requested != CAL_VARIANT_AUTO) {
    if (!kind_native(kind, v, why))
      return CAL_EUNSUPP;
    *variant = v;
    return 0;
  }
  const char *first_why = NULL;
  for (; v >= 0; v--) {
    if (kind_native(kind, v, why)) {
      *variant = v;
      return 0;
    }
    if (!first_why)
      first_why = *why;
  }
  *why = first_why;
  return CAL_EUNSUPP;
}

static int64_t steps(const fma_shape_t *sh, const cal_params_t *p) {
  if (p->n > 0)
    return p->n;
  int64_t n = DEFAULT_OPS_PER_RUN / sh->chains;
  return n - n % CAL_FMA_UNROLL;
}

static int nthreads(const cal_params_t *p) { return p->threads > 0 ? p->threads : 1; }

static double kind_flops(fma_kind_t kind, const cal_params_t *p) {
  int v;
  const char *why;
  if (pick(kind, p->variant, &v, &why) < 0)
    return 0.0;
  const fma_shape_t *sh = &shapes[kind][v];
  return (double)nthreads(p) * (double)steps(sh, p) * sh->chains * sh->lanes *
         sh->ops_per_lane;
}

static double fma_mem(const cal_params_t *p) {
  return (double)sizeof(fma_state_t) + (double)nthreads(p) * OUT_STRIDE;
}

static int kind_supported(fma_kind_t kind, const cal_params_t *p,
                          const char **why) {
  int v;
  return pick(kind, p->variant, &v, why);
}

static void fma_teardown(void *state) {
  fma_state_t *s = state;
  if (!s)
    return;
  cal_free(s->out);
  cal_free(s);
}

static int kind_setup(fma_kind_t kind, const cal_params_t *p, void **state) {
  int v, rc;
  const char *why;
  if ((rc = pick(kind, p->variant, &v, &why)) < 0)
    return rc;
  const fma_shape_t *sh = &shapes[kind][v];
  int64_t n = steps(sh, p);
  if (n < 1 || n > sh->max_iters || p->threads < 0)
    return CAL_EINVAL;
  fma_state_t *s = cal_alloc(sizeof *s);
  if (!s)
    return CAL_ENOMEM;
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->variant = v;
  s->threads = nthreads(p);
  s->iters = n;
  s->out = cal_alloc((size_t)s->threads * OUT_STRIDE);
  if (!s->out) {
    fma_teardown(s);
    return CAL_ENOMEM;
  }
  memset(s->out, 0xff, (size_t)s->threads * OUT_STRIDE);
  *state = s;
  return 0;
}

/* The portable reference: multiply then add, two roundings (both exact
 * here), no FMA instruction needed. */
#define SDECL(i, T) T x##i = (T)(i);
#define SSTEP(i, T) x##i = x##i * one + c;
#define SSTORE(i, T) out[i] = x##i;
#define SCALAR_LOOP(T)                                                       \
  CAL_REP12(SDECL, T)                                                        \
  for (int64_t i = 0; i < iters; i++) {                                      \
    CAL_REP12(SSTEP, T)                                                      \
  }                                                                          \
  CAL_REP12(SSTORE, T)

void cal_fma_f64_scalar(int64_t iters, double one, double c, double *out) {
  SCALAR_LOOP(double)
}

void cal_fma_f32_scalar(int64_t iters, float one, float c, float *out) {
  SCALAR_LOOP(float)
}

/* `one` and `c` pass through an opaque barrier so the compiler cannot see
 * that the multiply is by 1 and fold it away. */
static double opaque(double x) {
  volatile double v = x;
  return v;
}

static void run_thread(const fma_state_t *s, unsigned char *out) {
  const double one = opaque(1.0), c = opaque(1.0);
  switch (s->kind) {
  case FMA_F64:
    if (s->variant == CAL_VARIANT_AVX512)
      cal_fma_f64_avx512(s->iters, one, c, (double *)out);
    else if (s->variant == CAL_VARIANT_AVX2)
      cal_fma_f64_avx2(s->iters, one, c, (double *)out);
    else
      cal_fma_f64_scalar(s->iters, one, c, (double *)out);
    break;
  case FMA_F32:
    if (s->variant == CAL_VARIANT_AVX512)
      cal_fma_f32_avx512(s->iters, (float)one, (float)c, (float *)out);
    else if (s->variant == CAL_VARIANT_AVX2)
      cal_fma_f32_avx2(s->iters, (float)one, (float)c, (float *)out);
    else
      cal_fma_f32_scalar(s->iters, (float)one, (float)c, (float *)out);
    break;
  case DP_BF16:
    cal_dp_bf16_avx512(s->iters, BF16_A, BF16_B, (float *)out);
    break;
  case DP_INT8:
    if (s->variant == CAL_VARIANT_AVX512)
      cal_dp_int8_avx512(s->iters, INT8_A, INT8_B, (int32_t *)out);
    else
      cal_dp_int8_avxvnni(s->iters, INT8_A, INT8_B, (int32_t *)out);
    break;
  case FMA_F16:
    cal_fma_f16_avx512(s->iters, (float)one, (float)c, (float *)out);
    break;
  }
}

static int fma_run(void *state) {
  fma_state_t *s = state;
  /* poison first: a thread that does not run leaves its slot failing */
  memset(s->out, 0xff, (size_t)s->threads * OUT_STRIDE);
#pragma omp parallel num_threads(s->threads)
  {
    int t = omp_get_thread_num();
    if (t < s->threads)
      run_thread(s, s->out + (size_t)t * OUT_STRIDE);
  }
  return 0;
}

static int fma_verify(void *state) {
  const fma_state_t *s = state;
  const fma_shape_t *sh = &shapes[s->kind][s->variant];
  double add = (double)s->iters * sh->inc;
  /* chains that restart every `round` steps start at i once per round */
  double starts = sh->round ? (double)((s->iters + sh->round - 1) / sh->round)
                            : 1.0;
  for (int t = 0; t < s->threads; t++) {
    const unsigned char *o = s->out + (size_t)t * OUT_STRIDE;
    for (int i = 0; i < sh->chains; i++)
      for (int l = 0; l < sh->lanes; l++) {
        size_t k = (size_t)i * (size_t)sh->lanes + (size_t)l;
        double got = s->kind == FMA_F64   ? ((const double *)o)[k]
                     : s->kind == DP_INT8 ? (double)((const int32_t *)o)[k]
                                          : (double)((const float *)o)[k];
        if (!(got == starts * i + add))
          return CAL_EVERIFY;
      }
  }
  return 0;
}

static const char *fma_variant_name(const void *state) {
  const fma_state_t *s = state;
  if (s->kind == DP_INT8 && s->variant == CAL_VARIANT_AVX2)
    return "avx-vnni";
  return cal_variant_name(s->variant);
}

void cal_fma_test_corrupt(void *state) {
  fma_state_t *s = state;
  /* the last lane of the last chain of the last thread, +1 ulp or so */
  const fma_shape_t *sh = &shapes[s->kind][s->variant];
  size_t k = (size_t)sh->chains * (size_t)sh->lanes - 1;
  unsigned char *o = s->out + (size_t)(s->threads - 1) * OUT_STRIDE;
  if (s->kind == FMA_F64)
    ((double *)o)[k] += 1.0;
  else if (s->kind == DP_INT8)
    ((int32_t *)o)[k] += 1;
  else
    ((float *)o)[k] += 1.0f;
}

/* The clock's dependent integer chain, portable form: each add waits for
 * the one before; the empty asm keeps the compiler from folding them. */
#if defined(__GNUC__) && defined(__x86_64__)
#define ADD1 "add %[inc], %[x]\n\t"
#define ADD8 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1
uint64_t cal_clock_chain_scalar(int64_t iters, uint64_t x) {
  const uint64_t inc = 1;
  for (int64_t i = 0; i < iters; i++)
    __asm__ volatile(ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8
                     : [x] "+r"(x) : [inc] "r"(inc) : "cc");
  return x;
}
#else
uint64_t cal_clock_chain_scalar(int64_t iters, uint64_t x) {
  for (int64_t i = 0; i < iters; i++)
    for (int j = 0; j < CAL_CLOCK_CHAIN_LEN; j++) {
      x += 1;
      __asm__ volatile("" : "+r"(x));
    }
  return x;
}
#endif

/* One table entry per kind (kernel.h). */
#define FMA_KERNEL(sym, kname, kdtype, kind)                                 \
  CAL_KIND_KERNEL(sym, kname, CAL_FAMILY_FMA, kdtype, kind, fma)

FMA_KERNEL(cal_kernel_fma_f64, "fma_f64", CAL_DTYPE_FP64, FMA_F64)
FMA_KERNEL(cal_kernel_fma_f32, "fma_f32", CAL_DTYPE_FP32, FMA_F32)
FMA_KERNEL(cal_kernel_dp_bf16, "dp_bf16", CAL_DTYPE_BF16, DP_BF16)
FMA_KERNEL(cal_kernel_dp_int8, "dp_int8", CAL_DTYPE_INT8, DP_INT8)
FMA_KERNEL(cal_kernel_fma_fp16, "fma_fp16", CAL_DTYPE_FP16, FMA_F16)
