/* The one memory model (mem_model.h). */
#include "mem_model.h"

#include <math.h>
#include <string.h>

#include "cal_err.h"

void cal_mem_param_bytes(double weight_bytes, cal_mem_role_t role,
                         cal_mem_param_t *out) {
  memset(out, 0, sizeof *out);
  out->weights = weight_bytes;
  if (role != CAL_MEM_FROZEN) {
    out->master = weight_bytes < 4 ? 4 : 0;
    out->gradients = role == CAL_MEM_TRAINED ? 4 : 0;
    out->optimizer = 8;
  }
  out->total = out->weights + out->master + out->gradients + out->optimizer;
}

static int shape_ok(const cal_act_shape_t *s) {
  return s->hidden >= 1 && s->heads >= 1 && s->kv_heads >= 1 &&
         s->head_dim >= 1 && s->ffn >= 1 && s->seq >= 1 && s->layers >= 1 &&
         s->vocab >= 0 && s->heads % s->kv_heads == 0;
}

int cal_act_model(const cal_act_shape_t *s, double bpe, int64_t rank,
                  cal_act_est_t *out) {
  memset(out, 0, sizeof *out);
  if (!shape_ok(s) || !(bpe > 0) || !isfinite(bpe) || rank < 0)
    return CAL_EINVAL;
  /* products in double: the figures may be near 2^63 */
  const double h = (double)s->hidden,
               q = (double)s->heads * (double)s->head_dim,
               kv = (double)s->kv_heads * (double)s->head_dim, f = (double)s->ffn,
               seq = (double)s->seq, L = (double)s->layers;
  const double A = seq * (4 * h + 2 + 2 * q + 2 * kv + (double)s->heads + 3 * f) +
                   seq * 7 * (double)rank;
  const double v = (double)s->vocab,
               H = v > 0 ? seq * (h + fmin(v, CAL_MEM_HEAD_CHUNK)) : 0;
  const double B = s->bf16_inputs ? seq * 2 * (2 * h + q + f) : 0;
  out->layer_elements = A;
  out->head_elements = H;
  out->layer_bf16_elements = B;
  out->full_bytes = (L * A + H) * bpe + L * B * 2;
  out->checkpointed_bytes = (L * seq * h + A + H) * bpe + B * 2;
  out->inference_bytes = (L * 2 * seq * kv + A) * bpe;
  return 0;
}

double cal_lora_params(const cal_act_shape_t *s, int64_t rank) {
  if (!shape_ok(s) || rank < 1)
    return 0;
  /* products in double: the figures may be near 2^63 */
  const double h = (double)s->hidden,
               q = (double)s->heads * (double)s->head_dim,
               kv = (double)s->kv_heads * (double)s->head_dim, f = (double)s->ffn;
  return (double)s->layers * (double)rank *
         (7 * h + 2 * q + 2 * kv + 3 * f);
}
