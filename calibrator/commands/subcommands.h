/* Entry points of the subcommands, listed in commands.c. */
#ifndef CAL_SUBCOMMANDS_H
#define CAL_SUBCOMMANDS_H

/* Each takes the arguments after its name and returns the exit code. */
typedef int cal_cmd_fn(int argc, char **argv);

cal_cmd_fn cal_cmd_run, cal_cmd_info, cal_cmd_attention, cal_cmd_peak_flops,
    cal_cmd_bandwidth, cal_cmd_curve, cal_cmd_compare, cal_cmd_export,
    cal_cmd_plan, cal_cmd_plot, cal_cmd_report, cal_cmd_fleet;

#endif
