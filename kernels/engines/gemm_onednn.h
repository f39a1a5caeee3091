/* What the oneDNN library under the onednn_* GEMM kernels is (the kernels
 * themselves are rows of the kernel table, gemm_onednn.c), and one oneDNN
 * matmul over the caller's buffers, for kernels built of several products
 * (the model-shaped layer, the LM head). */
#ifndef CAL_GEMM_ONEDNN_H
#define CAL_GEMM_ONEDNN_H

#include <stddef.h>
#include <stdint.h>

#include "gemm_data.h"

typedef struct cal_onednn_info {
  char version[32];         /* "2.6.3" */
  const char *threading;    /* "OpenMP", "TBB", "sequential", "threadpool",
                               "other"; static */
  const char *max_isa;      /* the widest ISA it may dispatch to on this CPU
                               (its effective ISA, after DNNL_MAX_CPU_ISA),
                               e.g. "avx512_core_amx"; static */
} cal_onednn_info_t;

void cal_onednn_info(cal_onednn_info_t *info);

/* 0 when this oneDNN runs dtype dt natively on this CPU, else CAL_EUNSUPP
 * with *why (static).  bf16 needs AVX512_BF16 or AMX-BF16: oneDNN would
 * emulate it on older ISAs, and we measure native paths only. */
int cal_onednn_supported(cal_gemm_dt_t dt, const char **why);

/* C[m×n] = A[m×k]·B[k×n] in dtype dt (plain row-major, beta = 0, strict
 * fp32 math) over the caller's buffers, which must outlive it.  The
 * primitive is created once, for the OpenMP thread count in force now;
 * run() allocates nothing.  Not safe to run from two threads at once. */
typedef struct cal_onednn_mm cal_onednn_mm_t;

/* 0, CAL_EINVAL (a dimension < 1 or a NULL buffer), CAL_EUNSUPP, CAL_ENOMEM. */
int cal_onednn_mm_create(cal_gemm_dt_t dt, int64_t m, int64_t n, int64_t k,
                         void *a, void *b, void *c, cal_onednn_mm_t **mm);

/* The same with flags: A stored transposed (given as k×m row-major), B
 * stored transposed (given as n×k row-major), C += A·B instead of C = A·B
 * (C's dtype).  Flags 0 is cal_onednn_mm_create. */
enum {
  CAL_ONEDNN_MM_TRANS_A = 1,
  CAL_ONEDNN_MM_TRANS_B = 2,
  CAL_ONEDNN_MM_ACCUMULATE = 4,
};
int cal_onednn_mm_create_ex(cal_gemm_dt_t dt, int64_t m, int64_t n, int64_t k,
                            unsigned flags, void *a, void *b, void *c,
                            cal_onednn_mm_t **mm);
/* Point the primitive's A, B, C at other buffers of the same shapes and
 * layouts (NULL keeps one), so one primitive serves many blocks of a
 * larger array.  Allocates nothing.  0 or CAL_EINVAL. */
int cal_onednn_mm_bind(cal_onednn_mm_t *mm, void *a, void *b, void *c);
int cal_onednn_mm_run(cal_onednn_mm_t *mm);
/* oneDNN's implementation name (impl_info_str); belongs to mm. */
const char *cal_onednn_mm_impl(const cal_onednn_mm_t *mm);
/* Append mm's implementation name to the list in buf ("ENGINE impl,impl"),
 * unless the list has it already. */
void cal_onednn_mm_impl_append(const cal_onednn_mm_t *mm, char *buf,
                               size_t len);
/* Accepts NULL. */
void cal_onednn_mm_free(cal_onednn_mm_t *mm);

#endif
