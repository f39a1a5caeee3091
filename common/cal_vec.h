/* Growable arrays: an array pointer, a count and a capacity, grown by
 * doubling.  The array belongs to its owner (free() it). */
#ifndef CAL_VEC_H
#define CAL_VEC_H

#include <stddef.h>

/* Room for one more element in the array *parr (the address of the array
 * pointer) holding n of *cap elements of `size` bytes; the first
 * allocation holds `first`.  0, or CAL_ENOMEM with the array as it was. */
int cal_grow(void *parr, size_t n, size_t *cap, size_t size, size_t first);

/* Append a copy of s to the string list *v of *n strings (each owned,
 * free() them and the list).  0, or CAL_ENOMEM with the list as it was. */
int cal_strv_push(char ***v, size_t *n, const char *s);

#endif
