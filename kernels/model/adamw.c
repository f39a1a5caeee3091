/* The AdamW pass of the training step (train_vec.h) as a kernel of its
 * own, so that its bytes over time can be held against the memory's rate:
 * adamw (fp32 masters, moments and gradients) and adamw_bf16 (the same,
 * also writing the new masters rounded to bf16, as a bf16 step does).
 * cal_params_t.n is the elements (parameters); each run is one step from
 * one set of masters and moments into the other (double-buffered, as the
 * layer's and the LM head's), on the OpenMP team.  Bytes: 28 an element
 * (read masters, both moments and the gradient, write masters and both
 * moments), 30 with the bf16 copy; FLOPs not counted. */
#include <math.h>
#include <stdlib.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_mem.h"
#include "kernel.h"
#include "layer_train.h"
#include "train_vec.h"

typedef struct adamw_st {
  size_t n;
  int bf16, cur;
  int64_t step;
  float *p[2], *m[2], *v[2], *g;
  uint16_t *p16;
  const cal_train_vec_t *vec;
} adamw_st_t;

static double bytes_of(const cal_params_t *p, int bf16) {
  return (double)p->n * cal_adamw_bytes(bf16);
}
static double bytes32(const cal_params_t *p) { return bytes_of(p, 0); }
static double bytes16(const cal_params_t *p) { return bytes_of(p, 1); }
static double mem32(const cal_params_t *p) {
  return (double)sizeof(adamw_st_t) + 28.0 * (double)p->n;
}
static double mem16(const cal_params_t *p) {
  return mem32(p) + 2.0 * (double)p->n;
}

static void teardown(void *st) {
  adamw_st_t *s = st;
  if (!s)
    return;
  cal_adamw_sets_free(s->p, s->m, s->v);
  cal_free(s->g);
  cal_free(s->p16);
  cal_free(s);
}

static int setup_as(const cal_params_t *p, void **out, int bf16) {
  *out = NULL;
  if (p->n < 16 || p->n > ((int64_t)1 << 36))
    return CAL_EINVAL;
  adamw_st_t *s = cal_zalloc(sizeof *s);
  if (!s)
    return CAL_ENOMEM;
  s->n = (size_t)p->n, s->bf16 = bf16, s->vec = cal_train_vec();
  int ok = cal_adamw_sets_alloc(s->p, s->m, s->v, s->n) == 0 &&
           (s->g = cal_alloc(4 * s->n)) &&
           (!bf16 || (s->p16 = cal_alloc(2 * s->n)));
  if (!ok) {
    teardown(s);
    return CAL_ENOMEM;
  }
  /* every array written here, so that none is first touched in a run */
  cal_rng_t r;
  cal_rng_seed(&r, p->seed ^ 0xada3ULL);
  cal_fill_f32(s->p[0], s->n, -0.1f, 0.1f, &r);
  cal_fill_f32(s->m[0], s->n, -1e-3f, 1e-3f, &r);
  cal_fill_f32(s->v[0], s->n, 0.0f, 1e-6f, &r);
  cal_fill_f32(s->g, s->n, -1e-2f, 1e-2f, &r);
  /* the set a run writes NaN (all ones) until it does */
  cal_memset_team(s->p[1], 0xff, 4 * s->n);
  cal_memset_team(s->m[1], 0xff, 4 * s->n);
  cal_memset_team(s->v[1], 0xff, 4 * s->n);
  if (bf16)
    cal_memset_team(s->p16, 0xff, 2 * s->n);
  *out = s;
  return 0;
}
static int setup32(const cal_params_t *p, void **out) { return setup_as(p, out, 0); }
static int setup16(const cal_params_t *p, void **out) { return setup_as(p, out, 1); }

static const cal_adamw_t *opt(void) { return &cal_train_adamw_default; }

static cal_adamw_k_t consts(int64_t step) {
  const cal_adamw_t *h = opt();
  return cal_adamw_consts(h->lr, h->beta1, h->beta2, h->eps, h->weight_decay,
                          step);
}

static int run(void *st) {
  adamw_st_t *s = st;
  int c = s->cur, nx = 1 - c;
  s->step++;
  const cal_adamw_k_t k = consts(s->step);
  cal_adamw_pass(s->vec, &k, s->p[c], s->m[c], s->v[c], s->g, s->p[nx],
                 s->m[nx], s->v[nx], s->p16, s->n);
  s->cur = nx;
  return 0;
}

/* The last step at 4099 elements spread over the arrays (the first and
 * last included) against the formula in double from the set it read:
 * each result within 1e-6 of the sizes of its terms (a few fp32
 * roundings of each; a wrong constant or operand moves it by far more),
 * and the bf16 copy exactly the new masters rounded. */
static int verify(void *st) {
  const adamw_st_t *s = st;
  if (s->step < 1)
    return CAL_EVERIFY;
  const int c = s->cur, pr = 1 - c;
  const cal_adamw_t *h = opt();
  const double c1 = 1.0 / (1.0 - pow(h->beta1, (double)s->step));
  const double c2 = 1.0 / (1.0 - pow(h->beta2, (double)s->step));
  for (size_t j = 0; j < 4099; j++) {
    size_t i = j * (s->n - 1) / 4098;
    double g = s->g[i], m0 = h->beta1 * s->m[pr][i], m1 = (1.0 - h->beta1) * g;
    double m = m0 + m1;
    double v = h->beta2 * s->v[pr][i] + (1.0 - h->beta2) * g * g;
    double p0 = s->p[pr][i] * (1.0 - h->lr * h->weight_decay);
    double up = h->lr * m * c1 / (sqrt(v * c2) + h->eps);
    double p = p0 - up;
    if (!(fabs(s->m[c][i] - m) <= 1e-6 * (fabs(m0) + fabs(m1)) + 1e-30) ||
        !(fabs(s->v[c][i] - v) <= 1e-6 * v + 1e-30) ||
        !(fabs(s->p[c][i] - p) <= 1e-6 * (fabs(p0) + fabs(up)) + 1e-30) ||
        (s->p16 && s->p16[i] != cal_f32_to_bf16(s->p[c][i])))
      return CAL_EVERIFY;
  }
  return 0;
}

static const char *variant_name(const void *st) {
  return ((const adamw_st_t *)st)->vec->name;
}

const cal_kernel_t cal_kernel_adamw = {
    .name = "adamw", .family = CAL_FAMILY_STREAM, .dtype = CAL_DTYPE_FP32,
    .bytes = bytes32, .mem_bytes = mem32, .setup = setup32, .run = run,
    .verify = verify, .teardown = teardown, .variant_name = variant_name,
};

const cal_kernel_t cal_kernel_adamw_bf16 = {
    .name = "adamw_bf16", .family = CAL_FAMILY_STREAM, .dtype = CAL_DTYPE_BF16,
    .bytes = bytes16, .mem_bytes = mem16, .setup = setup16, .run = run,
    .verify = verify, .teardown = teardown, .variant_name = variant_name,
};
