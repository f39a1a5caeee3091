/* calibrate attention: only the attention section, on the default shapes
 * or on one shape given by flags. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "cli.h"
#include "cal_exit.h"
#include "measure.h"
#include "subcommands.h"

#define AOFF(field) offsetof(cal_opts_t, attn.field)

/* A shape flag: the shape is the one given, not the default shapes. */
static int shape_given(void *obj, const cal_opt_t *row, const char *val,
                       const char *cmd) {
  cal_attn_opts_t *a = &((cal_opts_t *)obj)->attn;
  if (row->off >= AOFF(given_shape) && row->off < AOFF(given))
    a->given |= 1u << ((row->off - AOFF(given_shape)) / sizeof(long));
  a->custom = 1;
  return -1;
}

static int variant_opt(void *obj, const cal_opt_t *row, const char *val,
                       const char *cmd) {
  cal_attn_opts_t *a = &((cal_opts_t *)obj)->attn;
  if (cal_variant_parse(val, &a->variant) < 0)
    return cal_usage(cmd, "--variant is scalar, avx2, avx512 or auto, not "
                          "'%s'", val);
  if (a->variant >= 0 && !cal_variant_supported(a->variant))
    return cal_usage(cmd, "this CPU cannot run the %s variant", val);
  return -1;
}

/* the parser takes only these; dtype_opt maps them */
static const cal_opt_choice_t attn_dtypes[] = {
    {"fp32", 0}, {"bf16", 0}, {"all", 0}, {NULL, 0}};

static int dtype_opt(void *obj, const cal_opt_t *row, const char *val,
                     const char *cmd) {
  cal_attn_opts_t *a = &((cal_opts_t *)obj)->attn;
  (void)row;
  if (strcmp(val, "fp32") == 0)
    a->dtypes = CAL_ATTN_DT_FP32;
  else if (strcmp(val, "bf16") == 0)
    a->dtypes = CAL_ATTN_DT_BF16;
  else if (strcmp(val, "all") == 0)
    a->dtypes = 0;
  else
    return cal_usage(cmd, "--dtype is fp32, bf16 or all, not '%s'", val);
  return -1;
}

#define DIM(n, i, d, h)                                                        \
  {.type = CAL_OPT_LONG, .name = n, .arg = "N", .min = -(1L << 40),          \
   .max = 1L << 40, .off = AOFF(given_shape[i]), .def = d,                   \
   .bad = "--" n " needs a whole number, not '%s'", .set = shape_given,      \
   .help = h, .help_num = CAL_ATTN_MAX_HEAD_DIM}

static const cal_opt_t shape_rows[] = {
    {.type = CAL_OPT_TEXT,
     .help = "Shape options (any of them selects one shape; unset ones "
             "default to\nbatch 1, heads 8, kv-heads = heads, seq 1024, "
             "head-dim 128, causal):\n"},
    DIM("batch", 0, "1", "batch size B"),
    DIM("heads", 1, "8", "query heads H"),
    DIM("kv-heads", 2, NULL, "key/value heads (H must be a multiple; 1 = MQA)"),
    DIM("seq", 3, "1024", "query and key length (prefill)"),
    {.type = CAL_OPT_LONG, .name = "nq", .arg = "N", .min = -(1L << 40),
     .max = 1L << 40, .off = AOFF(given_shape[4]),
     .bad = "--nq needs a whole number, not '%s'", .set = shape_given,
     .label = "      --nq N, --nk N", .help = "query length and key length "
                                            "separately"},
    DIM("nk", 5, NULL, NULL),
    {.type = CAL_OPT_FLAG, .name = "decode", .off = AOFF(decode),
     .set = shape_given,
     .help = "one query against a KV cache of --nk (or --seq)"},
    DIM("head-dim", 6, "128", "head dimension D (1..%g)"),
    {.type = CAL_OPT_FLAG, .name = "causal", .off = AOFF(causal), .def = "",
     .set = shape_given, .label = "      --causal, --no-causal",
     .help = " mask (default causal)"},
    {.type = CAL_OPT_CLEAR, .name = "no-causal", .off = AOFF(causal),
     .set = shape_given},
    {.type = CAL_OPT_FLAG, .name = "with-reference", .off = AOFF(with_ref),
     .help = "also time the reference kernel"},
    {.type = CAL_OPT_CALL, .name = "variant", .arg = "V", .set = variant_opt,
     .help = "force the SIMD variant: scalar, avx2, avx512\n"
             "(default: the best the CPU runs; bf16: amx where the CPU has\n"
             "AMX-BF16, else avx512_bf16)"},
    {.type = CAL_OPT_CALL, .name = "dtype", .arg = "T", .set = dtype_opt,
     .choices = attn_dtypes,
     .bad = "--dtype is fp32, bf16 or all, not '%s'",
     .help = "the fused kernels timed: fp32, bf16 or all (default)"},
    {.type = CAL_OPT_TEXT,
     .help = "\nRun options: -o FILE ('-': standard output), --quick, "
             "--threads N,\n--samples N, --min-time S, --seed N, "
             "--no-progress, --verbose,\n--allow-busy, --no-wait, --partial "
             "(see calibrate run --help).\n"},
    {.type = CAL_OPT_END},
};

static const cal_opt_cmd_t attention_opts = {
    "attention",
    "Usage: calibrate attention [shape options] [run options]\n\n"
    "Measure only attention: the fused kernels (tiled, online softmax; "
    "fp32\nand bf16) at one pinned thread and all threads, GFLOPS and GB/s, "
    "against\nthe reference and the GEMM of the same dtype in the same run, "
    "and write a\nprofile with its attention section.  Without shape options: the default shapes "
    "(short\nand long causal prefill, non-causal, decode; D = 64 and 128; "
    "GQA).\n\n",
    {{shape_rows, 22, 0},
     {cal_opts_run_rows, 0, 0},
     {cal_opts_sweep_rows, 0, 0},
     {cal_opt_help_rows, 17, 0}},
    "\n" CAL_HELP_EXIT_MEASURE,
};

/* The shape the flags give: unset sizes from the defaults (kv-heads =
 * heads, nq = nk = seq, decode: nq = 1). */
static void shape_of(cal_attn_opts_t *r) {
  const long *v = r->given_shape;
  cal_params_t *p = &r->shape;
  memset(p, 0, sizeof *p);
  p->batch = v[0];
  p->heads = v[1];
  p->kv_heads = r->given & 4 ? v[2] : v[1];
  p->nk = r->given & 32 ? v[5] : v[3];
  p->nq = r->given & 16 ? v[4] : (r->decode ? 1 : v[3]);
  p->head_dim = v[6];
  p->causal = r->causal;
}

/* After the run options: the shape flags taken first, checked against
 * the thread count and memory now known. */
static int prepare(cal_opts_t *o, void *arg) {
  if (o->sections_asked)
    return cal_usage("attention", "--sections belongs to 'calibrate run' "
                                  "(this command measures one section)");
  if (o->sections & CAL_SEC_BATCH)
    return cal_usage("attention", "--sweep-batch belongs to 'calibrate run' "
                                  "(this command measures one section)");
  o->sections = CAL_SEC_ATTENTION;
  if (o->attn.custom) {
    char why[256];
    shape_of(&o->attn);
    o->attn.shape.threads = o->threads;
    if (cal_attn_check_shape(&o->attn.shape, o->hcfg.mem_avail_bytes, why,
                             sizeof why) < 0)
      return cal_usage("attention", "invalid shape: %s", why);
  }
  return 0;
}

int cal_cmd_attention(int argc, char **argv) {
  static const cal_measure_cmd_t mc = {&attention_opts, 0, prepare};
  return cal_measure_main(&mc, argc, argv, NULL);
}
