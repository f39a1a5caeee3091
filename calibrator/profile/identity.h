/* What a profile was measured on, in two parts.  The machine: the CPU
 * (vendor, brand, family, model, stepping, instruction sets), its caches,
 * the usable cores and the memory; profiles of different machines cannot
 * be compared, since a difference of speed between them would not mean a
 * change of code.  The environment: the tool's version and build, the
 * BLAS and oneDNN (versions, kernels chosen, threading), where the
 * hypervisor placed the threads (their cache-line round trip); a difference
 * there is the kind of change compare exists to judge, so it is listed
 * beside the verdict, never refused. */
#ifndef CAL_IDENTITY_H
#define CAL_IDENTITY_H

#include <jansson.h>
#include <stddef.h>

/* The identity keys, as dotted paths ("machine.cpu.brand"): the machine's
 * first (indices below CAL_NMACHINE_KEYS), then the environment's. */
#define CAL_NMACHINE_KEYS 9
#define CAL_NIDENTITY_KEYS 20
extern const char *const cal_identity_keys[CAL_NIDENTITY_KEYS];

/* 1 when identity key i is of the environment, 0 of the machine. */
int cal_identity_is_environment(size_t i);

/* The value of identity key i in a profile tree (borrowed), NULL when the
 * profile does not hold it. */
const json_t *cal_profile_identity(const json_t *root, size_t i);

/* 1 when two values of identity key i name the same thing: equal JSON,
 * and for the memory totals within an eighth of each other (the kernel's
 * share of memory moves with its version and boot options), for the
 * threads' round trips within a factor of 2.5. */
int cal_identity_same(size_t i, const json_t *a, const json_t *b);

#endif
