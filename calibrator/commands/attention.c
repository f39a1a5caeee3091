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

static void attention_help(void) {
  printf(
      "Usage: calibrate attention [shape options] [run options]\n\n"
      "Measure only attention: the fused kernel (tiled, online softmax) at one\n"
      "pinned thread and all threads, GFLOPS and GB/s, against the reference\n"
      "and the fp32 GEMM of the same run, and write a profile with its\n"
      "attention section.  Without shape options: the default shapes (short\n"
      "and long causal prefill, non-causal, decode; D = 64 and 128; GQA).\n\n"
      "Shape options (any of them selects one shape; unset ones default to\n"
      "batch 1, heads 8, kv-heads = heads, seq 1024, head-dim 128, causal):\n"
      "      --batch N       batch size B\n"
      "      --heads N       query heads H\n"
      "      --kv-heads N    key/value heads (H must be a multiple; 1 = MQA)\n"
      "      --seq N         query and key length (prefill)\n"
      "      --nq N, --nk N  query length and key length separately\n"
      "      --decode        one query against a KV cache of --nk (or --seq)\n"
      "      --head-dim N    head dimension D (1..%d)\n"
      "      --causal, --no-causal   mask (default causal)\n"
      "      --with-reference  also time the reference kernel\n"
      "      --variant V     force the SIMD variant: scalar, avx2, avx512\n"
      "                      (default: the best the CPU runs)\n\n"
      "Run options: -o FILE ('-': standard output), --quick, --threads N,\n"
      "--samples N, --min-time S, --seed N, --no-progress, --verbose,\n"
      "--allow-busy, --no-wait, --partial (see calibrate run --help).\n"
      "  -h, --help     show this help\n"
      "  -V, --version  show the version\n\n" CAL_HELP_EXIT_MEASURE,
      CAL_ATTN_MAX_HEAD_DIM);
}

/* Take the shape flags out of argv; what is left goes to cal_run_parse. */
static int take_shape(cal_attn_opts_t *r, int argc, char **argv, char **rest,
                      int *nrest) {
  static const char *const valued[] = {"--batch", "--heads", "--kv-heads",
                                       "--seq", "--nq", "--nk", "--head-dim",
                                       "--variant"};
  long v[7] = {1, 8, 0, 1024, 0, 0, 128}; /* batch heads kv seq nq nk d */
  int set[7] = {0}, causal = 1, decode = 0, custom = 0;
  *nrest = 0;
  rest[(*nrest)++] = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      while (i < argc)
        rest[(*nrest)++] = argv[i++];
      break;
    }
    int k = -1;
    const char *val = NULL;
    for (int j = 0; j < 8; j++) {
      size_t n = strlen(valued[j]);
      if (strncmp(a, valued[j], n) == 0 && (a[n] == '\0' || a[n] == '=')) {
        k = j;
        if (a[n] == '=')
          val = a + n + 1;
        else if (i + 1 < argc)
          val = argv[++i];
        else
          return cal_usage("attention", "option '%s' needs a value", a);
        break;
      }
    }
    if (k == 7) {
      if (cal_variant_parse(val, &r->variant) < 0)
        return cal_usage("attention", "--variant is scalar, avx2, avx512 or "
                                      "auto, not '%s'", val);
      if (r->variant >= 0 && !cal_variant_supported(r->variant))
        return cal_usage("attention", "this CPU cannot run the %s variant", val);
      continue;
    }
    if (k >= 0) {
      if (cal_parse_long(val, -(1L << 40), 1L << 40, &v[k]) < 0)
        return cal_usage("attention", "%s needs a whole number, not '%s'",
                         valued[k], val);
      set[k] = 1;
      custom = 1;
      continue;
    }
    if (strcmp(a, "--causal") == 0) { causal = 1; custom = 1; continue; }
    if (strcmp(a, "--no-causal") == 0) { causal = 0; custom = 1; continue; }
    if (strcmp(a, "--decode") == 0) { decode = 1; custom = 1; continue; }
    if (strcmp(a, "--with-reference") == 0) { r->with_ref = 1; continue; }
    rest[(*nrest)++] = argv[i];
  }
  rest[*nrest] = NULL;
  if (!custom)
    return -1;
  cal_params_t *p = &r->shape;
  memset(p, 0, sizeof *p);
  p->batch = v[0];
  p->heads = v[1];
  p->kv_heads = set[2] ? v[2] : v[1];
  p->nk = set[5] ? v[5] : v[3];
  p->nq = set[4] ? v[4] : (decode ? 1 : v[3]);
  p->head_dim = v[6];
  p->causal = causal;
  r->custom = 1;
  return -1;
}

/* After the run options: the shape flags taken first, checked against
 * the thread count and memory now known. */
static int prepare(cal_opts_t *o, void *arg) {
  o->attn = *(const cal_attn_opts_t *)arg;
  if (o->sections_asked)
    return cal_usage("attention", "--sections belongs to 'calibrate run' "
                                  "(this command measures one section)");
  if (o->sections & CAL_SEC_BATCH)
    return cal_usage("attention", "--sweep-batch belongs to 'calibrate run' "
                                  "(this command measures one section)");
  o->sections = CAL_SEC_ATTENTION;
  if (o->attn.custom) {
    char why[256];
    o->attn.shape.threads = o->threads;
    if (cal_attn_check_shape(&o->attn.shape, o->hcfg.mem_avail_bytes, why,
                             sizeof why) < 0)
      return cal_usage("attention", "invalid shape: %s", why);
  }
  return 0;
}

int cal_cmd_attention(int argc, char **argv) {
  static const cal_measure_cmd_t mc = {"attention", attention_help, 0, prepare};
  cal_attn_opts_t a;
  memset(&a, 0, sizeof a);
  a.variant = -1; /* CAL_VARIANT_AUTO */
  char **rest = calloc((size_t)argc + 1, sizeof *rest);
  if (!rest)
    return CAL_EXIT_INTERNAL;
  int nrest = 0;
  int rc = take_shape(&a, argc, argv, rest, &nrest);
  if (rc < 0)
    rc = cal_measure_main(&mc, nrest, rest, &a);
  free(rest);
  return rc;
}
