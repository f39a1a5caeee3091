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
