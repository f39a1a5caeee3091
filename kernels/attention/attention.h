/* Attention forward, fp32 and bf16: O = softmax(Q·Kᵀ/√D + mask)·V.
 *
 * Layout (row-major, contiguous):
 *   Q, O [batch][heads][nq][head_dim]
 *   K, V [batch][kv_heads][nk][head_dim]
 * Grouped-query attention: heads is a multiple of kv_heads and query head h
 * reads kv head h / (heads / kv_heads) (kv_heads == heads: MHA, 1: MQA).
 * Causal: query i sits at absolute position nk - nq + i and attends keys
 * 0 .. nk - nq + i, so nq <= nk and no row is ever fully masked (every
 * row sees at least key 0).  Decode is nq = 1 against a KV cache of nk.
 *
 * Two implementations: a straightforward reference that materialises each
 * row of scores (fp32 or fp64 accumulation; the fp64 one is the oracle),
 * and a fused kernel tiled over keys with an online softmax, in scalar,
 * AVX2+FMA and AVX-512 variants chosen at run time.  Both parallelise with
 * OpenMP over omp_get_max_threads() threads (cal_attn_fused_team: over the
 * calling team).  Neither does I/O.  A bf16 fused kernel (below) takes
 * Q, K and V in bf16. */
#ifndef CAL_ATTENTION_H
#define CAL_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

/* Largest head dimension either implementation accepts (any D in 1..max). */
#define CAL_ATTN_MAX_HEAD_DIM 256

typedef struct cal_attn_shape {
  int64_t batch, heads, kv_heads, nq, nk, head_dim;
  int causal;
} cal_attn_shape_t;

/* The shape fields of a kernel's params, and back (the other fields of p
 * are left as they are). */
void cal_attn_shape_from_params(const cal_params_t *p, cal_attn_shape_t *s);
void cal_attn_shape_to_params(const cal_attn_shape_t *s, cal_params_t *p);

/* Validate a shape before anything is allocated.  CAL_EINVAL for a zero or
 * negative size, heads not a multiple of kv_heads, head_dim above
 * CAL_ATTN_MAX_HEAD_DIM or causal with nq > nk; CAL_ETOOBIG when the
 * buffers of the larger of the two kernels (attn_fused: Q, K, V, O and the
 * packed K) exceed mem_avail_bytes (<= 0: no memory check) or size_t.
 * On error writes a one-line reason (no newline) to why when why != NULL. */
int cal_attn_check_shape(const cal_params_t *p, double mem_avail_bytes,
                         char *why, size_t whylen);

/* Analytic work: 4·B·H·D·Σ_i (keys query i attends), exact for causal. */
double cal_attn_flops(const cal_attn_shape_t *s);

/* ---- reference ---------------------------------------------------------- */

/* Scratch bytes cal_attn_ref() needs for `threads` threads. */
size_t cal_attn_ref_scratch_bytes(const cal_attn_shape_t *s, int threads,
                                  int fp64);
/* Reference attention; fp64 != 0 accumulates scores, softmax and P·V in
 * double.  scratch (owned by the caller) must hold
 * cal_attn_ref_scratch_bytes(s, scratch_threads, fp64) bytes; the call
 * uses at most scratch_threads threads.  scratch == NULL: allocates its own
 * (CAL_ENOMEM).  CAL_EINVAL for an invalid shape. */
int cal_attn_ref(const cal_attn_shape_t *s, const float *q, const float *k,
                 const float *v, float *o, int fp64, void *scratch,
                 int scratch_threads);
/* One output row (batch b, query head h, query i) in double: out[head_dim]
 * gets the output, scale[head_dim] (may be NULL) gets Σ p_j·|v_jd| / Σ p_j
 * (the magnitude the row's rounding errors scale with), *logit_abs (may
 * be NULL) the largest Σ_d |q_d·k_d| / √D over attended keys.  p holds nk
 * doubles of scratch.  Single-threaded, no allocation. */
void cal_attn_ref_row(const cal_attn_shape_t *s, const float *q,
                      const float *k, const float *v, int64_t b, int64_t h,
                      int64_t i, double *out, double *scale,
                      double *logit_abs, double *p);

/* Check o against cal_attn_ref_row() on the four corner rows ((b,h) first
 * and last × i first and last) and `checks` rows drawn from seed: 0, or
 * CAL_EVERIFY when an element is off by more than
 * (2e-5 + 8·√D·2^-24·A)·max_d scale_d (see cal_attn_ref_row()), or
 * non-finite; CAL_ENOMEM.  Allocates nk doubles. */
int cal_attn_verify_output(const cal_attn_shape_t *s, const float *q,
                           const float *k, const float *v, const float *o,
                           uint64_t seed, int checks);

/* ---- fused -------------------------------------------------------------- */

/* Workspace bytes cal_attn_fused() needs (any variant); may be 0. */
size_t cal_attn_fused_workspace_bytes(const cal_attn_shape_t *s);
/* Fused attention with the variant `variant` (CAL_VARIANT_AUTO: the best
 * the CPU runs, capped by CALIBRATE_ISA).  ws (owned by the caller) holds
 * cal_attn_fused_workspace_bytes(s) bytes, 64-byte aligned; ws == NULL:
 * allocates its own.  CAL_EUNSUPP when the CPU lacks the variant,
 * CAL_EINVAL for an invalid shape or variant, CAL_ENOMEM.  *ran (may be
 * NULL) gets the variant that ran. */
int cal_attn_fused(const cal_attn_shape_t *s, const float *q, const float *k,
                   const float *v, float *o, int variant, void *ws, int *ran);

/* Decode-shaped fused attention (nq <= 4: K and V read in place, no
 * workspace, no allocation) shared by the calling OpenMP team: every
 * thread of the enclosing parallel region calls it with the same
 * arguments and takes a share of the (batch, kv head) groups; it returns
 * after the team's barrier.  Called outside a parallel region, the
 * calling thread does all of it.  The same arithmetic as cal_attn_fused
 * with that variant.  CAL_EINVAL for an invalid shape or nq > 4,
 * CAL_EUNSUPP when the CPU lacks the variant: the same answer on every
 * thread, before any work (then nobody waits at the barrier). */
int cal_attn_fused_team(const cal_attn_shape_t *s, const float *q,
                        const float *k, const float *v, float *o,
                        int variant);

/* ---- fused, bf16 -------------------------------------------------------- */

/* Q, K and V (the KV cache in decode) in bf16, the layout above; scores,
 * the online softmax and O in fp32.  Both products run on bf16 dot
 * products with fp32 accumulation: vdpbf16ps (AVX512_BF16) or TDPBF16PS
 * tiles (AMX-BF16), Q·Kᵀ on the inputs as given and P·V on the step's
 * probabilities rounded to bf16 (decode, nq <= 4: the query heads of a
 * kv head together, both products on vdpbf16ps, P·V on pairs of keys;
 * the portable variant's P·V in fp32 on V widened exactly).
 * Its own variants, chosen like the fp32 ones: */
typedef enum {
  CAL_ATTN_BF16_SCALAR = 0, /* portable: the AMX algorithm, tiles emulated */
  CAL_ATTN_BF16_AVX512 = 1, /* vdpbf16ps */
  CAL_ATTN_BF16_AMX = 2,    /* TDPBF16PS tiles (decode: vdpbf16ps) */
  CAL_ATTN_BF16_COUNT
} cal_attn_bf16_variant_t;

/* "scalar", "avx512_bf16", "amx"; "auto" otherwise.  Static storage. */
const char *cal_attn_bf16_variant_name(int variant);
/* The bf16 variant for a requested SIMD variant (cal_isa_variant_t):
 * CAL_VARIANT_AUTO: amx where the CPU has AMX-BF16 and the kernel grants
 * the tile state, else avx512_bf16 where it has AVX512_BF16 (both capped
 * by CALIBRATE_ISA); avx512: avx512_bf16; scalar: scalar.  CAL_EUNSUPP
 * (avx2, or a CPU without the instructions) or CAL_EINVAL with *why a
 * static one-line reason. */
int cal_attn_bf16_resolve(int requested, int *variant, const char **why);
/* Workspace bytes cal_attn_fused_bf16() needs (any variant); may be 0. */
size_t cal_attn_fused_bf16_workspace_bytes(const cal_attn_shape_t *s);
/* Fused bf16 attention with the bf16 variant `variant`
 * (cal_attn_bf16_variant_t, or CAL_VARIANT_AUTO), ws as for
 * cal_attn_fused().  CAL_EUNSUPP when the CPU or build lacks the variant,
 * CAL_EINVAL, CAL_ENOMEM.  *ran (may be NULL) gets the variant. */
int cal_attn_fused_bf16(const cal_attn_shape_t *s, const uint16_t *q,
                        const uint16_t *k, const uint16_t *v, float *o,
                        int variant, void *ws, int *ran);
/* Decode-shaped bf16 attention shared by the calling team, as
 * cal_attn_fused_team(). */
int cal_attn_fused_bf16_team(const cal_attn_shape_t *s, const uint16_t *q,
                             const uint16_t *k, const uint16_t *v, float *o,
                             int variant);
/* cal_attn_verify_output() for the bf16 kernel: q, k, v the bf16 inputs
 * widened to fp32 (exact), and the bound
 *   |got - ref| <= (2^-8 + 2e-5 + 2^-24·(2·D·A + 2·nk)) · max_d scale_d:
 * 2^-8 for the probabilities rounded to bf16 for P·V (each weight off by
 * at most that relative amount, so the row by at most that part of
 * scale_d), the logits' fp32 sums of D products (2·D·u·A, worst case) and
 * the fp32 sums over at most nk keys. */
int cal_attn_verify_output_bf16(const cal_attn_shape_t *s, const float *q,
                                const float *k, const float *v,
                                const float *o, uint64_t seed, int checks);

#endif
