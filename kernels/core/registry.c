#include <string.h>

#include "kernel.h"
#include "kernel_list.h"

#define CAL_KERNEL_DECL_(name) extern const cal_kernel_t cal_kernel_##name;
CAL_KERNEL_LIST(CAL_KERNEL_DECL_)
#undef CAL_KERNEL_DECL_

static const cal_kernel_t *const registry[] = {
#define CAL_KERNEL_REF_(name) &cal_kernel_##name,
    CAL_KERNEL_LIST(CAL_KERNEL_REF_)
#undef CAL_KERNEL_REF_
};

size_t cal_kernel_count(void) { return sizeof registry / sizeof registry[0]; }

const cal_kernel_t *cal_kernel_at(size_t i) {
  return i < cal_kernel_count() ? registry[i] : NULL;
}

const cal_kernel_t *cal_kernel_find(const char *name) {
  for (size_t i = 0; i < cal_kernel_count(); i++)
    if (strcmp(registry[i]->name, name) == 0)
      return registry[i];
  return NULL;
}

const char *cal_kernel_engine(const cal_kernel_t *k) {
  return cal_engine_name(k->engine);
}

static int same_path(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

int cal_params_same_but_batch(const cal_params_t *a, const cal_params_t *b) {
  return a->threads == b->threads && a->seed == b->seed &&
         a->variant == b->variant && a->m == b->m && a->n == b->n &&
         a->k == b->k && a->heads == b->heads && a->kv_heads == b->kv_heads &&
         a->nq == b->nq && a->nk == b->nk && a->head_dim == b->head_dim &&
         a->causal == b->causal && a->hidden == b->hidden &&
         a->ffn == b->ffn && a->seq == b->seq && a->decode == b->decode &&
         a->layers == b->layers && a->depth == b->depth && a->gen == b->gen &&
         a->lora_rank == b->lora_rank && a->engine == b->engine &&
         same_path(a->path, b->path) && a->bytes == b->bytes;
}
