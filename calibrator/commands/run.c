/* calibrate [run]: measure the machine and write the profile. */
#include <stdio.h>

#include "measure.h"
#include "subcommands.h"

/* Usage and description, before the run's option rows. */
static const char run_head[] =
    "Usage: calibrate [run] [options]\n\n"
    "Measure what this machine does for ML work and write a calibrated\n"
    "profile (JSON) plus a readable table: GEMM per dtype at one pinned\n"
    "thread and all usable threads with its size sweep and thread scaling,\n"
    "attention kernels, the FMA peak and clock, memory bandwidth per cache\n"
    "level, the roofline, and with --sweep-batch the throughput-versus-batch\n"
    "curve of the model's step (training, prefill, decode) with its peak.\n\n"
    "Options:\n";

static const char run_tail[] =
    "\n" CAL_HELP_EXIT_MEASURE
    "A point is contaminated when other processes or the hypervisor took\n"
    "more than 10%% of the usable cores while it was measured (read from\n"
    "/proc/stat); it is measured again after a short wait, and if still\n"
    "disturbed its samples are kept as evidence but never used as a figure.\n"
    "One run measures at a time: a run waits for the machine-wide lock\n"
    "($CALIBRATE_LOCK, else /run/lock/calibrate.lock or /tmp/calibrate.lock;\n"
    "an existing file is used only when it is a regular file with one link\n"
    "holding nothing or a pid, else refused).\n"
    "Environment: OPENBLAS_CORETYPE chooses OpenBLAS kernels (by default\n"
    "calibrate picks them from the CPU's features when the library's own\n"
    "choice is older; CALIBRATE_KEEP_BLAS_CORETYPE=1 keeps the library's);\n"
    "CALIBRATE_ISA=scalar|avx2|avx512 caps our own kernels' SIMD variant;\n"
    "OMP_THREAD_LIMIT or OMP_MAX_ACTIVE_LEVELS=0 below the threads the run\n"
    "measures with (--threads, else the usable cores) is refused (exit 2):\n"
    "narrow the CPUs with taskset, or lower --threads, instead;\n"
    "CALIBRATE_GEMM_ENGINE sets --gemm-engine (the flag wins);\n"
    "DNNL_MAX_CPU_ISA caps oneDNN's instruction set (oneDNN's own variable).\n";

/* The run's table: the shared rows, help and version, the batch sweep. */
const cal_opt_cmd_t cal_run_opts = {
    "run",
    run_head,
    {{cal_opts_run_rows, 22, 0},
     {cal_opt_help_rows, 22, 0},
     {cal_opts_sweep_rows, 22, 0}},
    run_tail,
};

/* The default run: GEMM with its thread scaling (--ci: the scaling curve
 * would repeat the 1- and all-thread GEMM points, so the batch sweep runs
 * instead), attention, the machine's limits and the roofline: every
 * section but the batch sweep, which --sweep-batch and --ci add. */
int cal_measure_default_sections(cal_opts_t *o, void *arg) {
  unsigned off = CAL_SEC_BATCH | (o->ci ? CAL_SEC_SCALING : 0);
  if (o->sections_asked)
    o->sections |= o->sections_asked;
  else
    o->sections |= (CAL_SEC_ALL & ~off) | (o->ci ? CAL_SEC_BATCH : 0);
  return 0;
}

int cal_cmd_run(int argc, char **argv) {
  static const cal_measure_cmd_t mc = {&cal_run_opts, 1,
                                       cal_measure_default_sections};
  return cal_measure_main(&mc, argc, argv, NULL);
}
