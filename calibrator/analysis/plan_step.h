/* The data-parallel step of a plan with the all-reduce of its gradients
 * over a fleet's measured curve (plan_net.h): the "network" part of the
 * typed plan (plan.h). */
#ifndef CAL_PLAN_STEP_H
#define CAL_PLAN_STEP_H

#include <stddef.h>

#include "plan.h"

/* The step of the machines in p's split (p->nsplit > 0) training the
 * model of o (whose gradients are base->gradients_bytes) over o->net:
 * *out (free its machines, then it) borrows from p's machines and o->net.
 * Each machine computes at its training-step throughput: the top-level
 * figure when it is the train mode's, else the train curve's optimum when
 * the profile has one, else the top-level (inference) figure with a note.
 * 0, or CAL_EINVAL (no usable curve or machine) / CAL_ENOMEM with err
 * filled. */
int cal_plan_step(const cal_plan_opts_t *o, const cal_plan_t *p,
                  const cal_mem_need_t *base, cal_plan_network_t **out,
                  char *err, size_t errlen);

/* Where machine m's compute figure for a training step comes from. */
cal_step_src_t cal_step_source(const cal_plan_machine_t *m);

#endif
