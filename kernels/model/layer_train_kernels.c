/* The training step's kernel-table entries, layer_train and
 * layer_train_bf16: a stack of p->layers layers (layer_train.h) set up,
 * re-shaped for another batch, stepped, verified and torn down. */
#include "layer_train.h"

#include "cal_err.h"
#include "forward_kernels.h"

static void shape_of(const cal_params_t *p, int bf16, cal_layer_shape_t *s) {
  cal_layer_shape_from_params(p, s);
  s->decode = 0;
  s->bf16 = bf16;
}

static int layers_of(const cal_params_t *p) {
  return p->layers > 1 ? (int)p->layers : 1;
}

static double train_flops(const cal_params_t *p) {
  cal_layer_shape_t s;
  shape_of(p, 0, &s);
  return (double)layers_of(p) * cal_train_flops(&s);
}

/* the weights, masters and moments read and written once, the saved
 * activations written and read once */
static double bytes_of(const cal_params_t *p, int bf16) {
  cal_layer_shape_t s;
  shape_of(p, bf16, &s);
  return (double)layers_of(p) *
         (cal_layer_weight_bytes(&s) * (bf16 ? 2.0 : 1.0) * 8.0 +
          2.0 * cal_train_saved_bytes(&s));
}

static double train_bytes_as(const cal_params_t *p, int bf16) {
  return bytes_of(p, bf16);
}

static double train_mem_as(const cal_params_t *p, int bf16) {
  cal_layer_shape_t s;
  shape_of(p, bf16, &s);
  return cal_train_stack_mem_bytes(&s, layers_of(p));
}

/* decode does not apply: a training step runs the prefill shape */
static int train_setup_as(const cal_params_t *p, void **st, int decode,
                          int bf16) {
  (void)decode;
  cal_layer_shape_t s;
  shape_of(p, bf16, &s);
  if (p->layers < 0 || p->layers > 4096)
    return CAL_EINVAL;
  return cal_train_stack_create(&s, layers_of(p), p->seed, p->engine,
                                (cal_train_stack_t **)st);
}
static int train_reshape(void *st, const cal_params_t *p) {
  return cal_train_stack_reshape(st, p->batch);
}
static int train_run(void *st) { return cal_train_stack_step(st); }
static int train_verify(void *st) { return cal_train_stack_verify(st); }
static void train_teardown(void *st) { cal_train_stack_free(st); }
static const char *train_impl(const void *st) {
  return ((const cal_train_stack_t *)st)->T[0]->impl;
}
/* no SIMD variant of its own: the products are the engine's */
static const char *train_variant(const void *st) {
  (void)st;
  return "";
}

static cal_engine_t train_engine(const void *st) {
  return ((const cal_train_stack_t *)st)->T[0]->engine;
}

CAL_LAYER_KERNEL(train, layer_train, CAL_DTYPE_FP32, NULL, 0, 0);
CAL_LAYER_KERNEL(train, layer_train_bf16, CAL_DTYPE_BF16,
                 cal_forward_bf16_supported, 0, 1);
