#include "commands.h"

#include <stddef.h>

#include "subcommands.h"

/* One line per subcommand; `run` is also what a bare `calibrate` does.
 * A row without a summary is a former name, run but not listed. */
const cal_command_t cal_commands[] = {
    {"run", "measure the machine and write a profile (the default)", cal_cmd_run},
    {"info", "print what the machine is (--json for JSON)", cal_cmd_info},
    {"attention", "measure only attention (default shapes or one given by flags)",
     cal_cmd_attention},
    {"peak-flops", "measure only the compute peak (FMA, BF16, INT8, FP16, AMX) and the clock",
     cal_cmd_peak_flops},
    {"bandwidth", "measure only memory bandwidth per cache level",
     cal_cmd_bandwidth},
    {"curve", "peak, knee and shape of throughput-versus-batch curves (CSV)",
     cal_cmd_curve},
    {"compare", "compare two profiles; exit 1 on a regression", cal_cmd_compare},
    {"export", "write a profile as Bencher BMF or github-action-benchmark JSON",
     cal_cmd_export},
    {"plan", "split work across machines by measured throughput; batch and "
             "memory fit", cal_cmd_plan},
    {"plot", "draw gnuplot charts of one or more profiles", cal_cmd_plot},
    {"report", "one self-contained HTML page of one or more profiles",
     cal_cmd_report},
    {"fleet", "under mpirun: every node, the links between them, one fleet "
              "profile", cal_cmd_fleet},
    /* former names, not listed */
    {"peak", NULL, cal_cmd_curve},
    {NULL, NULL, NULL},
};
