/* GEMM kernels over oneDNN's matmul primitive (the engine PyTorch and ONNX
 * Runtime use on CPUs): C = A·B, row-major (plain "ab" layouts, so the
 * operation is the same as cblas_?gemm's), beta = 0, in fp32, bf16 inputs
 * with fp32 accumulation and output, and u8 × s8 → s32.
 *
 * setup() creates the primitive once, for the thread count the harness has
 * set (Debian's oneDNN runs on the same OpenMP runtime as OpenBLAS and our
 * kernels), with a user-provided scratchpad so that run() allocates
 * nothing; run() executes it and waits.  The implementation oneDNN chose
 * (impl_info_str, e.g. "brg:avx512_core_amx") is the kernel's impl name.
 * Inputs and verification are shared with the other engines
 * (gemm_data.c). */
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <string.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "engine.h"
#include "gemm_data.h"
#include "gemm_onednn.h"
#include "kernel.h"
#include "onednn_release.h"

enum { ARG_A, ARG_B, ARG_C, ARG_SCRATCH, NARGS };

struct cal_onednn_mm {
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  dnnl_primitive_t prim;
  dnnl_memory_t mem[NARGS];
  dnnl_exec_arg_t args[NARGS];
  int nargs;
  char impl[96];
};

typedef struct {
  cal_gemm_data_t d; /* first: cal_gemm_test_corrupt reads it */
  cal_onednn_mm_t *mm;
} onednn_state_t;

static int status_err(dnnl_status_t st) {
  switch (st) {
  case dnnl_success: return 0;
  case dnnl_out_of_memory: return CAL_ENOMEM;
  case dnnl_unimplemented: return CAL_EUNSUPP;
  default: return CAL_EINVAL;
  }
}

static void dtypes_of(cal_gemm_dt_t dt, dnnl_data_type_t t[3]) {
  switch (dt) {
  case CAL_GEMM_BF16: t[0] = t[1] = dnnl_bf16; t[2] = dnnl_f32; break;
  case CAL_GEMM_U8S8: t[0] = dnnl_u8; t[1] = dnnl_s8; t[2] = dnnl_s32; break;
  default: t[0] = t[1] = t[2] = dnnl_f32; break;
  }
}

/* The primitive descriptor of C[m×n] = A[m×k]·B[k×n] (C += with
 * CAL_ONEDNN_MM_ACCUMULATE: oneDNN's sum post-op) in dtype dt, row-major
 * layouts (A or B stored transposed, "ba", as flags say), strict fp32
 * math (no down-conversion even when DNNL_DEFAULT_FPMATH_MODE asks for
 * it) and a user scratchpad. */
static dnnl_status_t make_pd(dnnl_engine_t eng, cal_gemm_dt_t dt, int64_t m,
                             int64_t n, int64_t k, unsigned flags,
                             dnnl_primitive_desc_t *pd) {
  dnnl_data_type_t t[3];
  dnnl_memory_desc_t md[3];
  dnnl_dims_t dims[3] = {{m, k}, {k, n}, {m, n}};
  const dnnl_format_tag_t tags[3] = {
      flags & CAL_ONEDNN_MM_TRANS_A ? dnnl_ba : dnnl_ab,
      flags & CAL_ONEDNN_MM_TRANS_B ? dnnl_ba : dnnl_ab, dnnl_ab};
  dnnl_matmul_desc_t mm;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t ops = NULL;
  dnnl_status_t st;
  dtypes_of(dt, t);
  for (int i = 0; i < 3; i++)
    if ((st = dnnl_memory_desc_init_by_tag(&md[i], 2, dims[i], t[i], tags[i])))
      return st;
  if ((st = dnnl_matmul_desc_init(&mm, &md[0], &md[1], NULL, &md[2])) ||
      (st = dnnl_primitive_attr_create(&attr)))
    return st;
  if ((st = dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_strict)) ||
      (st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user)))
    goto out;
  if ((flags & CAL_ONEDNN_MM_ACCUMULATE) &&
      ((st = dnnl_post_ops_create(&ops)) ||
       (st = dnnl_post_ops_append_sum(ops, 1.0f)) ||
       (st = dnnl_primitive_attr_set_post_ops(attr, ops))))
    goto out;
  st = dnnl_primitive_desc_create(pd, &mm, attr, eng, NULL);
out:
  if (ops)
    dnnl_post_ops_destroy(ops);
  dnnl_primitive_attr_destroy(attr);
  return st;
}

int cal_onednn_supported(cal_gemm_dt_t dt, const char **why) {
  if (dnnl_engine_get_count(dnnl_cpu) < 1) {
    *why = "oneDNN has no CPU engine";
    return CAL_EUNSUPP;
  }
  if (dt == CAL_GEMM_BF16) {
    /* oneDNN would emulate bf16 on older ISAs; we measure native paths */
    if (!(cal_isa_features() & (CAL_ISA_AVX512BF16 | CAL_ISA_AMX_BF16))) {
      *why = "CPU has no native BF16 instructions (AVX512_BF16 or AMX-BF16)";
      return CAL_EUNSUPP;
    }
    if ((dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core_bf16) !=
        dnnl_cpu_isa_avx512_core_bf16) {
      *why = "oneDNN is limited below AVX512_BF16 (DNNL_MAX_CPU_ISA)";
      return CAL_EUNSUPP;
    }
  }
  dnnl_engine_t eng = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_status_t st = dnnl_engine_create(&eng, dnnl_cpu, 0);
  if (st == dnnl_success)
    st = make_pd(eng, dt, 16, 16, 16, 0, &pd);
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (eng)
    dnnl_engine_destroy(eng);
  if (st != dnnl_success) {
    *why = "oneDNN has no matmul implementation for this dtype on this CPU";
    return CAL_EUNSUPP;
  }
  return 0;
}

/* bf16 through the engine table's check (the one bf16 check), the other
 * dtypes directly. */
static int dt_supported(cal_gemm_dt_t dt, const char **why) {
  return dt == CAL_GEMM_BF16 ? cal_bf16_supported(CAL_ENGINE_ONEDNN, why)
                             : cal_onednn_supported(dt, why);
}

void cal_onednn_mm_free(cal_onednn_mm_t *mm) {
  if (!mm)
    return;
  cal_onednn_release(mm->mem, NARGS, mm->prim, mm->strm, mm->eng);
  cal_free(mm);
}

static void onednn_teardown(void *state) {
  if (state)
    cal_onednn_mm_free(((onednn_state_t *)state)->mm);
  cal_gemm_state_free(state);
}

/* Add one execution argument: memory of descriptor md over buf (NULL:
 * oneDNN allocates it). */
static dnnl_status_t add_arg(cal_onednn_mm_t *s, int slot, int arg,
                             const dnnl_memory_desc_t *md, void *buf) {
  dnnl_status_t st = dnnl_memory_create(&s->mem[slot], md, s->eng,
                                        buf ? buf : DNNL_MEMORY_ALLOCATE);
  if (st == dnnl_success)
    s->args[s->nargs++] = (dnnl_exec_arg_t){arg, s->mem[slot]};
  return st;
}

/* The primitive, its memories over bufs (A, B, C) and its implementation
 * name. */
static dnnl_status_t build(cal_onednn_mm_t *s, cal_gemm_dt_t dt, int64_t m,
                           int64_t n, int64_t k, unsigned flags,
                           void *const bufs[3]) {
  static const int args[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  dnnl_primitive_desc_t pd = NULL;
  const char *impl = NULL;
  dnnl_status_t st;
  if ((st = dnnl_engine_create(&s->eng, dnnl_cpu, 0)) ||
      (st = dnnl_stream_create(&s->strm, s->eng, dnnl_stream_default_flags)) ||
      (st = make_pd(s->eng, dt, m, n, k, flags, &pd)))
    return st;
  if ((st = dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl)))
    goto out;
  snprintf(s->impl, sizeof s->impl, "%s", impl ? impl : "unknown");
  for (int i = 0; i < 3; i++) {
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(
        pd, dnnl_query_exec_arg_md, args[i]);
    if ((st = add_arg(s, i, args[i], md, bufs[i])))
      goto out;
  }
  const dnnl_memory_desc_t *sp =
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  if (sp && dnnl_memory_desc_get_size(sp) > 0 &&
      (st = add_arg(s, ARG_SCRATCH, DNNL_ARG_SCRATCHPAD, sp, NULL)))
    goto out;
  st = dnnl_primitive_create(&s->prim, pd);
out:
  dnnl_primitive_desc_destroy(pd);
  return st;
}

int cal_onednn_mm_create_ex(cal_gemm_dt_t dt, int64_t m, int64_t n, int64_t k,
                            unsigned flags, void *a, void *b, void *c,
                            cal_onednn_mm_t **out) {
  void *const bufs[3] = {a, b, c};
  const unsigned known = CAL_ONEDNN_MM_TRANS_A | CAL_ONEDNN_MM_TRANS_B |
                         CAL_ONEDNN_MM_ACCUMULATE;
  const char *why = NULL;
  *out = NULL;
  if (m <= 0 || n <= 0 || k <= 0 || !a || !b || !c || (flags & ~known))
    return CAL_EINVAL;
  if (cal_onednn_supported(dt, &why) < 0)
    return CAL_EUNSUPP;
  cal_onednn_mm_t *mm = cal_zalloc(sizeof *mm);
  if (!mm)
    return CAL_ENOMEM;
  int rc = status_err(build(mm, dt, m, n, k, flags, bufs));
  if (rc < 0) {
    cal_onednn_mm_free(mm);
    return rc;
  }
  *out = mm;
  return 0;
}

int cal_onednn_mm_create(cal_gemm_dt_t dt, int64_t m, int64_t n, int64_t k,
                         void *a, void *b, void *c, cal_onednn_mm_t **out) {
  return cal_onednn_mm_create_ex(dt, m, n, k, 0, a, b, c, out);
}

int cal_onednn_mm_bind(cal_onednn_mm_t *mm, void *a, void *b, void *c) {
  void *const bufs[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (bufs[i] &&
        dnnl_memory_set_data_handle(mm->mem[i], bufs[i]) != dnnl_success)
      return CAL_EINVAL;
  return 0;
}

int cal_onednn_mm_run(cal_onednn_mm_t *mm) {
  dnnl_status_t st = dnnl_primitive_execute(mm->prim, mm->strm, mm->nargs, mm->args);
  if (st == dnnl_success)
    st = dnnl_stream_wait(mm->strm);
  return status_err(st);
}

const char *cal_onednn_mm_impl(const cal_onednn_mm_t *mm) { return mm->impl; }

void cal_onednn_mm_impl_append(const cal_onednn_mm_t *mm, char *buf,
                               size_t len) {
  size_t used = strlen(buf);
  if (!strstr(buf, mm->impl))
    snprintf(buf + used, len - used, "%s%s", strchr(buf, ' ') ? "," : " ",
             mm->impl);
}

static int onednn_setup(const cal_params_t *p, void **state, cal_gemm_dt_t dt) {
  void *v = NULL;
  int rc = cal_gemm_state_new(p, dt, sizeof(onednn_state_t), &v);
  onednn_state_t *s = v;
  if (rc == 0)
    rc = cal_onednn_mm_create(dt, p->m, p->n, p->k, s->d.a, s->d.b, s->d.c,
                              &s->mm);
  if (rc < 0)
    onednn_teardown(s);
  else
    *state = s;
  return rc;
}

static int onednn_run(void *state) {
  return cal_onednn_mm_run(((onednn_state_t *)state)->mm);
}

static int onednn_verify(void *state) {
  return cal_gemm_data_verify(&((const onednn_state_t *)state)->d);
}

static const char *onednn_impl(const void *state) {
  return cal_onednn_mm_impl(((const onednn_state_t *)state)->mm);
}

/* One table entry per dtype: its supported, setup and bytes functions
 * (<pfx>_*) are the shared ones above applied to its cal_gemm_dt_t. */
#define ONEDNN_KERNEL(sym, kname, kdtype, gdt, pfx)                          \
  static int pfx##_supported(const cal_params_t *p, const char **why) {      \
    return dt_supported(gdt, why);                                           \
  }                                                                          \
  static int pfx##_setup(const cal_params_t *p, void **st) {                 \
    return onednn_setup(p, st, gdt);                                         \
  }                                                                          \
  static double pfx##_bytes(const cal_params_t *p) {                         \
    return cal_gemm_bytes(p, gdt);                                           \
  }                                                                          \
  const cal_kernel_t sym = {                                                 \
      .name = kname, .family = CAL_FAMILY_GEMM, .dtype = kdtype,             \
      .engine = CAL_ENGINE_ONEDNN, .flops = cal_gemm_flops,                  \
      .bytes = pfx##_bytes, .mem_bytes = pfx##_bytes,                        \
      .supported = pfx##_supported, .setup = pfx##_setup, .run = onednn_run, \
      .verify = onednn_verify, .teardown = onednn_teardown,                  \
      .impl_name = onednn_impl,                                              \
  };

ONEDNN_KERNEL(cal_kernel_onednn_sgemm, "onednn_sgemm", CAL_DTYPE_FP32,
              CAL_GEMM_F32, f32)
ONEDNN_KERNEL(cal_kernel_onednn_bf16gemm, "onednn_bf16gemm", CAL_DTYPE_BF16,
              CAL_GEMM_BF16, bf16)
ONEDNN_KERNEL(cal_kernel_onednn_u8s8gemm, "onednn_u8s8gemm", CAL_DTYPE_INT8,
              CAL_GEMM_U8S8, u8s8)

void cal_onednn_info(cal_onednn_info_t *info) {
  static const struct { unsigned isa; const char *name; } isas[] = {
      {dnnl_cpu_isa_avx512_core_amx, "avx512_core_amx"},
      {dnnl_cpu_isa_avx512_core_bf16, "avx512_core_bf16"},
      {dnnl_cpu_isa_avx512_core_vnni, "avx512_core_vnni"},
      {dnnl_cpu_isa_avx512_core, "avx512_core"},
      {dnnl_cpu_isa_avx2_vnni, "avx2_vnni"},
      {dnnl_cpu_isa_avx2, "avx2"},
      {dnnl_cpu_isa_avx, "avx"},
      {dnnl_cpu_isa_sse41, "sse41"},
  };
  const dnnl_version_t *v = dnnl_version();
  unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
  snprintf(info->version, sizeof info->version, "%d.%d.%d", v->major,
           v->minor, v->patch);
  info->threading = v->cpu_runtime == DNNL_RUNTIME_OMP          ? "OpenMP"
                    : v->cpu_runtime == DNNL_RUNTIME_TBB        ? "TBB"
                    : v->cpu_runtime == DNNL_RUNTIME_SEQ        ? "sequential"
                    : v->cpu_runtime == DNNL_RUNTIME_THREADPOOL ? "threadpool"
                                                                : "other";
  info->max_isa = "unknown";
  /* the first (widest) ISA whose bits the effective one all has */
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
    if ((isa & isas[i].isa) == isas[i].isa) {
      info->max_isa = isas[i].name;
      break;
    }
}
