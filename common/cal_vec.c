#include "cal_vec.h"

#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

int cal_grow(void *parr, size_t n, size_t *cap, size_t size, size_t first) {
  void *old, *v;
  if (n < *cap)
    return 0;
  size_t ncap = *cap ? 2 * *cap : first;
  memcpy(&old, parr, sizeof old);
  if (!(v = realloc(old, ncap * size)))
    return CAL_ENOMEM;
  memcpy(parr, &v, sizeof v);
  *cap = ncap;
  return 0;
}

int cal_strv_push(char ***v, size_t *n, const char *s) {
  char **w = realloc(*v, (*n + 1) * sizeof *w);
  if (!w)
    return CAL_ENOMEM;
  *v = w;
  if (!(w[*n] = strdup(s)))
    return CAL_ENOMEM;
  (*n)++;
  return 0;
}
