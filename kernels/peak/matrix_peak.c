/* Tile-resident peak kernels of the matrix engine: amx_bf16 (TDPBF16PS)
 * and amx_int8 (TDPBSSD), family "matrix", variant "amx".  Portable code
 * (no AMX flags): the table entries, the permission request, the reasons,
 * the inputs and the closed-form check; the loops are in amx_tile.c.
 *
 * Every thread of an OpenMP team runs its own four accumulator tiles
 * (amx.h) for params.n steps (0: a default of about half a millisecond).
 * All elements of A0, A1 are a0 = 1, a1 = -3 and of B0, B1 b0 = 1, b1 = 2
 * (bf16 or s8), so one step adds K · ai · bj to every element of Cij
 * (K = 32 bf16 or 64 int8 products per element and instruction), and the
 * accumulators start at distinct small integers (tile t, row r, column c:
 * 256t + 16r + c), so a swapped tile, row or column shows too.  Every
 * partial sum is an integer below 2^24 (bf16 into fp32) or 2^31 (int8),
 * so the result is exact in any order of summation and verify() checks
 * every element of every thread's four tiles. */
#include <errno.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "amx.h"
#include "cal_mem.h"
#include "kernel.h"

#ifdef CAL_HAVE_AMX
int cal_amx_compiled(void) { return 1; }
#else
/* no tile loops in this build: cal_amx_why_not() refuses every AMX point,
 * so these are never called; they only satisfy the linker */
int cal_amx_compiled(void) { return 0; }
void cal_tile_dp_bf16_amx(const cal_amx_tiles_t *t, int64_t n, void *o) { (void)t; (void)n; (void)o; }
void cal_tile_dp_int8_amx(const cal_amx_tiles_t *t, int64_t n, void *o) { (void)t; (void)n; (void)o; }
#endif

/* ---- permission and reasons */

/* <asm/prctl.h>, <asm/fpu/xstate.h>: not every libc installs them */
#define CAL_ARCH_REQ_XCOMP_PERM 0x1023
#define CAL_XFEATURE_XTILEDATA 18

static pthread_once_t perm_once = PTHREAD_ONCE_INIT;
static int perm_err;

static void request_once(void) {
#if defined(__linux__) && defined(__x86_64__) && defined(SYS_arch_prctl)
  perm_err = syscall(SYS_arch_prctl, CAL_ARCH_REQ_XCOMP_PERM,
                     CAL_XFEATURE_XTILEDATA) == 0
                 ? 0
                 : errno;
#else
  perm_err = ENOSYS;
#endif
}

int cal_amx_request_permission(void) {
  pthread_once(&perm_once, request_once);
  return perm_err;
}

static const struct {
  uint32_t bit;
  const char *name;
} amx_bits[] = {{CAL_ISA_AMX_TILE, "amx_tile"},
                {CAL_ISA_AMX_BF16, "amx_bf16"},
                {CAL_ISA_AMX_INT8, "amx_int8"}};

const char *cal_amx_why_not(uint32_t f, uint32_t need, int err, char *buf,
                            size_t len) {
  uint32_t missing = need & ~f;
  if (missing) {
    size_t n = (size_t)snprintf(buf, len, "%s (",
                                (missing & CAL_ISA_AMX_TILE)
                                    ? "CPU has no AMX"
                                    : "CPU has AMX but not this dtype");
    for (size_t i = 0; i < sizeof amx_bits / sizeof amx_bits[0]; i++)
      if ((missing & amx_bits[i].bit) && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s%s",
                              buf[n - 1] == '(' ? "" : ", ", amx_bits[i].name);
    if (n < len)
      snprintf(buf + n, len - n, " absent)");
    return buf;
  }
  if (!cal_amx_compiled()) {
    snprintf(buf, len, "this build has no AMX code (the compiler lacked "
                       "-mamx-tile -mamx-bf16 -mamx-int8)");
    return buf;
  }
  if (err) {
    /* EINVAL: no such request or no tile state in XCR0 (Linux before 5.16,
     * or a hypervisor that hides it); ENOSPC: an installed sigaltstack is
     * too small for the larger signal frame (AddressSanitizer installs
     * one per thread) */
    snprintf(buf, len, "the kernel refused the AMX tile state (arch_prctl: "
                       "%s%s)",
             strerror(err),
             err == EINVAL   ? "; Linux 5.16 or later with the tile state "
                               "enabled is needed"
             : err == ENOSPC ? "; a signal alternate stack is too small for "
                               "the tile state"
                             : "");
    return buf;
  }
  return NULL;
}

int cal_amx_usable(uint32_t need, const char **why) {
  /* one buffer per loop; the text depends only on the CPU and the kernel's
   * one answer, so it is the same on every call */
  static char reasons[2][256];
  uint32_t f = cal_isa_features();
  int err = 0;
  if ((need & ~f) == 0 && cal_amx_compiled())
    err = cal_amx_request_permission();
  char *buf = reasons[need == CAL_AMX_NEED_INT8];
  const char *r = cal_amx_why_not(f, need, err, buf, sizeof reasons[0]);
  *why = r ? r : "";
  return r == NULL;
}

_Static_assert(sizeof(cal_amx_cfg_t) == 64, "LDTILECFG reads 64 bytes");

void cal_amx_config(cal_amx_cfg_t *cfg) {
  memset(cfg, 0, sizeof *cfg); /* reserved bytes and tmm8..15 must be 0 */
  cfg->palette_id = 1;
  cfg->start_row = 0;
  for (int t = 0; t < 8; t++) {
    cfg->colsb[t] = CAL_AMX_ROW_BYTES;
    cfg->rows[t] = CAL_AMX_ROWS;
  }
}

/* ---- the kernels */

typedef enum { AMX_BF16, AMX_INT8 } amx_kind_t;

#define OUT_BYTES (CAL_AMX_ACCS * CAL_AMX_TILE_BYTES) /* per thread */
#define ELEMS (CAL_AMX_TILE_BYTES / 4)                 /* per tile */
#define DEFAULT_STEPS 32768 /* ~0.6 ms at 1024 flops/cycle and 3.5 GHz */
#define INIT_MAX (CAL_AMX_ACCS * ELEMS)                /* 256t+16r+c < this */

static const int a_val[2] = {1, -3}, b_val[2] = {1, 2};
#define MAX_ABS_PROD 6

static const struct {
  uint32_t need;
  int k;              /* products per element per instruction */
  double exact_limit; /* every partial sum's magnitude stays below */
} kinds[2] = {
    [AMX_BF16] = {CAL_AMX_NEED_BF16, 32, 16777216.0},  /* 2^24 */
    [AMX_INT8] = {CAL_AMX_NEED_INT8, 64, 2147483647.0}, /* 2^31 - 1 */
};

typedef struct {
  amx_kind_t kind;
  int threads;
  int64_t iters;
  cal_amx_cfg_t *cfg;  /* 64-byte aligned (cal_alloc) */
  unsigned char *in;   /* a0, a1, b0, b1, c0[0..3]: 8 tiles */
  unsigned char *out;  /* threads x OUT_BYTES */
  cal_amx_tiles_t tiles;
} amx_state_t;

static int nthreads(const cal_params_t *p) { return p->threads > 0 ? p->threads : 1; }

static int64_t steps(const cal_params_t *p) { return p->n > 0 ? p->n : DEFAULT_STEPS; }

/* The most steps whose every partial sum stays exact. */
static int64_t max_steps(amx_kind_t kind) {
  return (int64_t)((kinds[kind].exact_limit - INIT_MAX) /
                   ((double)kinds[kind].k * MAX_ABS_PROD));
}

static int kind_supported(amx_kind_t kind, const cal_params_t *p,
                          const char **why) {
  if (p->variant != CAL_VARIANT_AUTO) {
    *why = "the AMX loops have one variant (amx): ask for auto";
    return CAL_EUNSUPP;
  }
  return cal_amx_usable(kinds[kind].need, why) ? 0 : CAL_EUNSUPP;
}

static double kind_flops(amx_kind_t kind, const cal_params_t *p) {
  const char *why;
  if (kind_supported(kind, p, &why) < 0)
    return 0.0;
  double per_instr = 16.0 * 16.0 * kinds[kind].k * 2.0;
  return (double)nthreads(p) * (double)steps(p) * CAL_AMX_ACCS * per_instr;
}

static double amx_mem(const cal_params_t *p) {
  return (double)sizeof(amx_state_t) + sizeof(cal_amx_cfg_t) +
         8.0 * CAL_AMX_TILE_BYTES + (double)nthreads(p) * OUT_BYTES;
}

static void amx_teardown(void *state) {
  amx_state_t *s = state;
  if (s)
    cal_free_each(s->cfg, s->in, s->out, s);
}

static uint16_t bf16_of(int v) { /* exact for small integers */
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16);
}

/* Fill tile `tile` of s->in with `v` in every element (bf16 or s8). */
static void fill_input(amx_state_t *s, int tile, int v) {
  unsigned char *t = s->in + (size_t)tile * CAL_AMX_TILE_BYTES;
  if (s->kind == AMX_INT8) {
    memset(t, (unsigned char)(int8_t)v, CAL_AMX_TILE_BYTES);
    return;
  }
  uint16_t b = bf16_of(v);
  for (size_t i = 0; i < CAL_AMX_TILE_BYTES / 2; i++)
    memcpy(t + 2 * i, &b, 2);
}

static void fill_inputs(amx_state_t *s) {
  for (int i = 0; i < 2; i++) {
    fill_input(s, i, a_val[i]);     /* A0, A1: tiles 0, 1 of in */
    fill_input(s, 2 + i, b_val[i]); /* B0, B1: tiles 2, 3 */
  }
  for (int t = 0; t < CAL_AMX_ACCS; t++) {
    unsigned char *c = s->in + (size_t)(4 + t) * CAL_AMX_TILE_BYTES;
    for (int e = 0; e < ELEMS; e++) {
      int32_t iv = t * ELEMS + e; /* 256t + 16r + c */
      float fv = (float)iv;
      memcpy(c + 4 * e, s->kind == AMX_INT8 ? (void *)&iv : (void *)&fv, 4);
    }
  }
  for (int i = 0; i < 2; i++) {
    s->tiles.a[i] = s->in + (size_t)i * CAL_AMX_TILE_BYTES;
    s->tiles.b[i] = s->in + (size_t)(2 + i) * CAL_AMX_TILE_BYTES;
  }
  for (int t = 0; t < CAL_AMX_ACCS; t++)
    s->tiles.c0[t] = s->in + (size_t)(4 + t) * CAL_AMX_TILE_BYTES;
  s->tiles.cfg = s->cfg;
}

static int kind_setup(amx_kind_t kind, const cal_params_t *p, void **state) {
  const char *why;
  int rc = kind_supported(kind, p, &why);
  if (rc < 0)
    return rc;
  if (p->n < 0 || steps(p) > max_steps(kind) || p->threads < 0)
    return CAL_EINVAL;
  amx_state_t *s = cal_zalloc(sizeof *s);
  if (!s)
    return CAL_ENOMEM;
  s->kind = kind;
  s->threads = nthreads(p);
  s->iters = steps(p);
  s->cfg = cal_alloc(sizeof *s->cfg);
  s->in = cal_alloc(8 * CAL_AMX_TILE_BYTES);
  s->out = cal_alloc((size_t)s->threads * OUT_BYTES);
  if (!s->cfg || !s->in || !s->out) {
    amx_teardown(s);
    return CAL_ENOMEM;
  }
  cal_amx_config(s->cfg);
  fill_inputs(s);
  memset(s->out, 0xff, (size_t)s->threads * OUT_BYTES);
  *state = s;
  return 0;
}

static int amx_run(void *state) {
  amx_state_t *s = state;
  /* poison first: a thread that does not run leaves its tiles failing */
  memset(s->out, 0xff, (size_t)s->threads * OUT_BYTES);
#pragma omp parallel num_threads(s->threads)
  {
    int t = omp_get_thread_num();
    unsigned char *o = s->out + (size_t)t * OUT_BYTES;
    if (t < s->threads) {
      if (s->kind == AMX_BF16)
        cal_tile_dp_bf16_amx(&s->tiles, s->iters, o);
      else
        cal_tile_dp_int8_amx(&s->tiles, s->iters, o);
    }
  }
  return 0;
}

static int amx_verify(void *state) {
  const amx_state_t *s = state;
  for (int th = 0; th < s->threads; th++)
    for (int t = 0; t < CAL_AMX_ACCS; t++) {
      const unsigned char *o =
          s->out + (size_t)th * OUT_BYTES + (size_t)t * CAL_AMX_TILE_BYTES;
      /* accumulator t = 2i + j holds Ai . Bj */
      int64_t add = s->iters * kinds[s->kind].k * a_val[t / 2] * b_val[t % 2];
      for (int e = 0; e < ELEMS; e++) {
        int64_t want = (int64_t)(t * ELEMS + e) + add;
        if (s->kind == AMX_INT8) {
          int32_t got;
          memcpy(&got, o + 4 * e, 4);
          if (got != want)
            return CAL_EVERIFY;
        } else {
          float got;
          memcpy(&got, o + 4 * e, 4);
          if (!((double)got == (double)want))
            return CAL_EVERIFY;
        }
      }
    }
  return 0;
}

static const char *amx_variant_name(const void *state) {
  (void)state;
  return "amx";
}

void cal_amx_test_corrupt(void *state) {
  amx_state_t *s = state;
  /* the last element of the last accumulator of the last thread */
  unsigned char *o = s->out + (size_t)s->threads * OUT_BYTES - 4;
  if (s->kind == AMX_INT8) {
    int32_t v;
    memcpy(&v, o, 4);
    v += 1;
    memcpy(o, &v, 4);
  } else {
    float v;
    memcpy(&v, o, 4);
    v += 1.0f;
    memcpy(o, &v, 4);
  }
}

/* One table entry per kind (kernel.h). */
#define AMX_KERNEL(sym, kname, kdtype, kind)                                 \
  CAL_KIND_KERNEL(sym, kname, CAL_FAMILY_MATRIX, kdtype, kind, amx)

AMX_KERNEL(cal_kernel_amx_bf16, "amx_bf16", CAL_DTYPE_BF16, AMX_BF16)
AMX_KERNEL(cal_kernel_amx_int8, "amx_int8", CAL_DTYPE_INT8, AMX_INT8)
