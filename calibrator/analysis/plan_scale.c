/* A plan for another model than the one a profile measured: its
 * throughput scaled by FLOPs per token (plan.h, cal_plan_scale). */
#include <math.h>
#include <stdio.h>

#include "cal_err.h"
#include "plan.h"

/* Multiply every figure of m's throughput by r. */
static void scale_by(cal_plan_machine_t *m, double r) {
  m->measured_throughput = m->throughput;
  m->flops_ratio = r;
  m->throughput *= r;
  m->ci_low *= r;
  m->ci_high *= r;
}

/* A profile's machine for the plan's model: scaled where the profile
 * records the model it measured; 0, or CAL_EINVAL with err filled for a
 * one-layer figure without its shape. */
static int scale_profile(const cal_plan_opts_t *o, cal_plan_machine_t *m,
                         char *err, size_t errlen) {
  if (!(m->flops_params > 0) && m->one_layer) {
    snprintf(err, errlen,
             "%s: its throughput is one decoder layer's forward pass and the "
             "profile does not record the layer's shape: it cannot be scaled "
             "to the plan's %.3g-parameter model (measure the model with "
             "--sweep-batch, or plan without --model-params)", m->path,
             o->params);
    return CAL_EINVAL;
  }
  if (!(m->flops_params > 0)) {
    m->basis = "the profile does not record the model it measured: taken "
               "as the plan's model's";
    return 0;
  }
  if (isfinite(m->throughput))
    scale_by(m, m->flops_params / o->params);
  if (m->train_throughput > 0 && m->train_flops_params > 0)
    m->train_throughput *= m->train_flops_params / o->params;
  else
    m->train_throughput = 0; /* its model not recorded: no step to use */
  m->basis = m->one_layer
                 ? "one decoder layer's forward pass (its "
                   "weights may have stayed in the cache: an upper "
                   "bound), scaled by FLOPs per token to the plan's model"
                 : "the measured model's step, scaled by FLOPs per token to "
                   "the plan's model";
  return 0;
}

int cal_plan_scale(const cal_plan_opts_t *o, cal_plan_machine_t *ms, size_t n,
                   char *err, size_t errlen) {
  for (size_t i = 0; i < n; i++) {
    cal_plan_machine_t *m = &ms[i];
    if (!(o->params > 0)) {
      if (m->one_layer)
        m->basis = "one decoder layer's forward pass, "
                   "not a model's step: its times are that layer's; give "
                   "--model-params to scale it to a model";
      continue;
    }
    if (m->source != CAL_PLAN_SRC_PROFILE) {
      m->basis = "a measured curve, which does not say which model it "
                 "measured: taken as the plan's model's";
      continue;
    }
    int rc = scale_profile(o, m, err, errlen);
    if (rc < 0)
      return rc;
  }
  return 0;
}
