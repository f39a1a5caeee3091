/* The identity of the machine a profile was measured on: the machine, its
 * BLAS and engines, and the tool.  compare refuses (or lists) profiles
 * whose identity differs, since a difference of speed between them would
 * not mean a change of code. */
#ifndef CAL_IDENTITY_H
#define CAL_IDENTITY_H

#include <jansson.h>
#include <stddef.h>

/* The identity keys, as dotted paths ("machine.cpu.brand"). */
#define CAL_NIDENTITY_KEYS 14
extern const char *const cal_identity_keys[CAL_NIDENTITY_KEYS];

/* The value of identity key i in a profile tree (borrowed), NULL when the
 * profile does not hold it. */
const json_t *cal_profile_identity(const json_t *root, size_t i);

#endif
