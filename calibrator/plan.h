/* `calibrate plan PROFILE...`: split work across machines in proportion to
 * their measured throughput, choose batch size and gradient accumulation,
 * and say whether a model fits each machine or must be sharded.
 * Output: table (default), markdown, or JSON of schema "calibrate-plan/1".
 * The arithmetic lives in plan_math.h. */
#ifndef CAL_PLAN_H
#define CAL_PLAN_H

#define CAL_PLAN_SCHEMA "calibrate-plan/1"

/* argv[0] is "plan"; returns a CAL_EXIT_* code. */
int cal_cmd_plan(int argc, char **argv);

#endif
