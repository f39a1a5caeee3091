/* Entry points of the subcommands, listed in commands.c. */
#ifndef CAL_SUBCOMMANDS_H
#define CAL_SUBCOMMANDS_H

int cal_cmd_run(int argc, char **argv);
int cal_cmd_info(int argc, char **argv);
int cal_cmd_attention(int argc, char **argv);
int cal_cmd_peak_flops(int argc, char **argv);
int cal_cmd_bandwidth(int argc, char **argv);
int cal_cmd_peak(int argc, char **argv);
int cal_cmd_compare(int argc, char **argv);
int cal_cmd_export(int argc, char **argv);
int cal_cmd_plan(int argc, char **argv);
int cal_cmd_plot(int argc, char **argv);
int cal_cmd_report(int argc, char **argv);
int cal_cmd_fleet(int argc, char **argv);

#endif
