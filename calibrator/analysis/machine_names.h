/* What a plan, a chart or a report calls each machine: a name that tells
 * it apart from the others given with it, by file or host, never by a
 * brand string two machines share.
 *
 * A machine's own name (a profile's device_name, a fleet's host name, a
 * curve's machine column) is kept when no other machine has it.  A
 * device_name is the CPU's brand string, so two machines of one model
 * share it: a shared name becomes the input file's name without its
 * folder and extension ("host-a" for "runs/host-a.json"), or the path as
 * given when that is also another machine's file name or name.  Standard
 * input ("-") has no file name and keeps its own.  A machine without a
 * name (NULL or "") is named by its file the same way. */
#ifndef CAL_MACHINE_NAMES_H
#define CAL_MACHINE_NAMES_H

#include <stddef.h>

/* The names of n machines, names[i] their own (may be NULL) and paths[i]
 * where each was read from, into *out: an array of n strings, owned by
 * the caller and freed with cal_machine_names_free.  0 or CAL_ENOMEM
 * (*out NULL). */
int cal_machine_names(const char *const *names, const char *const *paths,
                      size_t n, char ***out);

/* Frees what cal_machine_names made; accepts NULL. */
void cal_machine_names_free(char **names, size_t n);

#endif
