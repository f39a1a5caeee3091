/* The kernel table: every benchmarked kernel is described by data.
 *
 * A kernel knows nothing of timing or output.  The harness asks a kernel
 * for its analytic work (flops, bytes moved) and memory need, sets it up,
 * runs it as often as it likes, verifies the result of the last run, and
 * tears it down.  Rates are computed only from this metadata. */
#ifndef CAL_KERNEL_H
#define CAL_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "cal_err.h"
#include "kind.h"

/* Parameters of one kernel invocation, grouped by the family that reads
 * them; each family reads its own group and the first one and ignores the
 * rest.  Zero-initialise and fill what applies.  (Groups, not a union: the
 * layer reads the attention group's batch and heads, the LM head the GEMM
 * group's n.) */
typedef struct cal_params {
  /* every family: the threads the kernel may use (the harness sets the
   * runtime to this), the seed of its inputs (the same seed gives the same
   * inputs), the ISA variant (cal_isa_variant_t, CAL_VARIANT_AUTO for the
   * best one) */
  struct {
    int threads;
    uint64_t seed;
    int variant;
  };
  /* gemm: C[m×n] = A[m×k] · B[k×n]; lm_head: n is the vocabulary */
  struct {
    int64_t m, n, k;
  };
  /* attention: batch, query heads, key/value heads, query and key length,
   * head dimension, causal mask (0/1); layer and lm_head read batch,
   * heads and kv_heads (head_dim = hidden / heads) */
  struct {
    int64_t batch, heads, kv_heads, nq, nk, head_dim;
    int causal;
  };
  /* layer (prefill, decode, train) and lm_head */
  struct {
    /* hidden size, MLP width, sequence length (prefill) or KV-cache
     * length (decode), decode (0/1) */
    int64_t hidden, ffn, seq;
    int decode;
    /* the training step: decoder layers of the stack (0 or 1: one);
     * the model's forward step: its distinct layers, and depth the layer
     * passes a step runs over them (0: layers); the inference workload:
     * the tokens generated after the prefill (gen decode steps; a model
     * decode step's cache grows to seq + gen, layer.h) */
    int64_t layers, depth, gen;
    /* the training step: LoRA adapters' rank on a frozen base (0: every
     * weight trained) */
    int64_t lora_rank;
    /* the engine of the products; CAL_ENGINE_BUILTIN (zero) for the
     * kernel's default */
    cal_engine_t engine;
    /* decode: "gemv" (the one-team matrix-vector path) or "blas" (the
     * engine's GEMM) forced; NULL for the default rule */
    const char *path;
  };
  /* stream: the working set in bytes */
  struct {
    int64_t bytes;
  };
} cal_params_t;

typedef struct cal_kernel {
  const char *name;   /* unique, e.g. "sgemm" */
  cal_family_t family; /* names in core/kind.c */
  cal_kdtype_t dtype;
  /* the library that does the work; CAL_ENGINE_BUILTIN (zero) for our
   * own code */
  cal_engine_t engine;
  /* analytic floating-point operations of one run */
  double (*flops)(const cal_params_t *p);
  /* bytes one run moves to/from memory (0 when not meaningful) */
  double (*bytes)(const cal_params_t *p);
  /* bytes setup() will allocate, checked against available memory first */
  double (*mem_bytes)(const cal_params_t *p);
  /* CAL_EUNSUPP (with *why set to a static string) when this machine or
   * library cannot run the kernel natively; NULL means always supported */
  int (*supported)(const cal_params_t *p, const char **why);
  /* allocate and fill inputs; *state is freed by teardown() */
  int (*setup)(const cal_params_t *p, void **state);
  /* one run; must not allocate */
  int (*run)(void *state);
  /* check the output of the last run: 0 or CAL_EVERIFY */
  int (*verify)(void *state);
  /* frees everything setup() allocated; accepts NULL */
  void (*teardown)(void *state);
  /* optional (NULL: none): make a set-up state run p, whose parameters
   * differ from those it last ran in the batch alone (the caller checks,
   * cal_params_same_but_batch), keeping what does not depend on the batch
   * (weights, optimizer state) and re-making what does (activations, KV
   * cache, workspace, the engine's products bound to them), the new
   * inputs drawn as setup(p) draws them.  The batch sweep keeps one model
   * a mode this way.  0: the state now runs p; CAL_EUNSUPP: it cannot
   * (another layout, say), the state unchanged; any other error: the
   * state may only be torn down. */
  int (*reshape)(void *state, const cal_params_t *p);
  /* name of the variant that setup() chose (may be NULL: "default") */
  const char *(*variant_name)(const void *state);
  /* the engine's own name for the implementation setup() chose (oneDNN's
   * impl_info_str, e.g. "brg:avx512_core_bf16"); may be NULL (none),
   * the string belongs to the state */
  const char *(*impl_name)(const void *state);
  /* the engine setup() chose for the products (the layer's and the
   * training step's); NULL: the kernel's engine */
  cal_engine_t (*engine_used)(const void *state);
} cal_kernel_t;

/* A kernel that is one kind of several sharing their functions (the
 * compute peak's loops, the matrix engine's): defines the table entry
 * `sym` of kind `kind`, its flops, supported and setup being the file's
 * static kind_flops, kind_supported and kind_setup of that kind, and its
 * mem_bytes, run, verify, teardown and variant_name the file's base##_mem,
 * base##_run, base##_verify, base##_teardown and base##_variant_name. */
#define CAL_KIND_KERNEL(sym, kname, fam, kdtype, kind, base)                 \
  static double sym##_flops(const cal_params_t *p) {                         \
    return kind_flops(kind, p);                                              \
  }                                                                          \
  static int sym##_supported(const cal_params_t *p, const char **why) {      \
    return kind_supported(kind, p, why);                                     \
  }                                                                          \
  static int sym##_setup(const cal_params_t *p, void **st) {                 \
    return kind_setup(kind, p, st);                                          \
  }                                                                          \
  const cal_kernel_t sym = {                                                 \
      .name = kname, .family = fam, .dtype = kdtype, .flops = sym##_flops,   \
      .mem_bytes = base##_mem, .supported = sym##_supported,                 \
      .setup = sym##_setup, .run = base##_run, .verify = base##_verify,      \
      .teardown = base##_teardown, .variant_name = base##_variant_name,      \
  };

/* Whether a and b are the same parameters but for the batch. */
int cal_params_same_but_batch(const cal_params_t *a, const cal_params_t *b);

/* The name of a kernel's engine ("builtin" for our own code). */
const char *cal_kernel_engine(const cal_kernel_t *k);

/* The registry, in kernels/core/registry.c.  Entries belong to the library. */
const cal_kernel_t *cal_kernel_find(const char *name);
size_t cal_kernel_count(void);
const cal_kernel_t *cal_kernel_at(size_t i);

#endif
