/* A plan (analysis/plan.h) in a trainer's own words: per machine in the
 * split, the micro-batch and gradient accumulation the plan chose (its
 * optimal batch from the curve; with --target-effective-batch, the
 * micro-batch x accumulation that makes the target) and whether it
 * measured in bf16.
 *
 * hf: one JSON object keyed by machine name, each value holding exactly
 * Hugging Face TrainingArguments' keys, so `TrainingArguments(**doc[name],
 * ...)` takes it:
 *   {"NAME": {"per_device_train_batch_size": B,
 *             "gradient_accumulation_steps": A, "bf16": true|false}}
 * env: shell assignments, four a machine, safe to source:
 *   CALIBRATE_<M>_NAME='NAME'  CALIBRATE_<M>_BATCH_SIZE=B
 *   CALIBRATE_<M>_GRAD_ACCUM=A  CALIBRATE_<M>_BF16=1|0
 * where <M> is the name in capitals with every other character than A-Z
 * and 0-9 as '_' (cal_env_ident); two machines that would share an <M>
 * get their position in the plan appended (_1, _2, ...).  The quoted
 * name shows a control character as \xNN and a quote as '\''. */
#ifndef CAL_PLAN_TRAINER_H
#define CAL_PLAN_TRAINER_H

#include <stddef.h>
#include <stdio.h>

#include "plan.h"

/* Reporters (reporter.h): `in` is a cal_plan_t, variant unused.  0, or
 * CAL_ENOMEM / CAL_EINVAL (a name that is not UTF-8, for hf) with err
 * filled. */
int cal_plan_render_hf(const void *in, int variant, FILE *out, char *err,
                       size_t errlen);
int cal_plan_render_env(const void *in, int variant, FILE *out, char *err,
                        size_t errlen);

/* The <M> of a machine name into dst (always NUL-terminated, cut short
 * when full; "MACHINE" for a name with no letter or digit); returns its
 * length. */
size_t cal_env_ident(char *dst, size_t len, const char *name);

/* name single-quoted for a POSIX shell, control characters as \xNN. */
void cal_shell_quote(FILE *out, const char *name);

#endif
