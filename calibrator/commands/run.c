/* calibrate [run]: measure the machine and write the profile. */
#include <stdio.h>

#include "measure.h"
#include "subcommands.h"

static void run_help(void) {
  printf(
      "Usage: calibrate [run] [options]\n\n"
      "Measure what this machine does for ML work and write a calibrated\n"
      "profile (JSON) plus a readable table: GEMM per dtype at one pinned\n"
      "thread and all usable threads with its size sweep and thread scaling,\n"
      "attention kernels, the FMA peak and clock, memory bandwidth per cache\n"
      "level, the roofline, and with --sweep-batch the throughput-versus-batch\n"
      "curve of the model's step (training, prefill, decode) with its peak.\n\n"
      "Options:\n"
      "  -o, --output FILE   write the profile to FILE ('-': standard output;\n"
      "                      the table then goes to standard error); default:\n"
      "                      <host>-<UTC time>.json in the current directory\n"
      "                      (results/ of the source tree for an\n"
      "                      uninstalled build; $CALIBRATE_RESULTS_DIR)\n"
      "  -q, --quick         short run (under 20 s on 2 cores), fewer sizes\n"
      "      --ci            preset for CI regression runs on noisy shared runners:\n"
      "                      a few fixed points (under 20 s on 2 cores, so runs can\n"
      "                      be repeated: compare several per side), 2 interleaved\n"
      "                      rounds of 4 samples per point, with a short batch sweep\n"
      "      --rounds N      measure every point in N interleaved rounds\n"
      "  -t, --threads N     threads for the all-core runs (1..usable cores)\n"
      "      --samples N     timed samples per point (default 7, at least 1)\n"
      "      --min-time S    minimum seconds per sample (default 0.05, quick 0.01)\n"
      "      --cv-threshold F  mark points unstable above this CV (default 5%%)\n"
      "      --budget-scale F  multiply every section's time budget by F\n"
      "      --seed N        seed of the input data (default 42)\n"
      "      --no-progress   no progress on standard error (by default a\n"
      "                      live line on a terminal, else one line per\n"
      "                      finished section)\n"
      "      --plots DIR     draw the charts (gnuplot) into DIR after the run\n"
      "      --gemm-engine E auto (default: every engine that offers a dtype;\n"
      "                      the best verified one is the headline), openblas\n"
      "                      or onednn (only that one)\n"
      "  -v, --verbose       say which kernel variants ran, and warnings\n"
      "      --sections LIST only these sections, e.g. gemm,peak (gemm,\n"
      "                      scaling, attention, peak, bandwidth, roofline,\n"
      "                      batch); --sweep-batch adds batch\n"
      "      --allow-busy    keep the figures of points measured while other\n"
      "                      processes took the cores (marked contaminated)\n"
      "      --partial       on SIGINT/SIGTERM stop measuring and write the\n"
      "                      sections that finished, marked incomplete\n"
      "      --no-wait       refuse (exit 5) instead of waiting when another\n"
      "                      calibrate run is measuring this machine\n"
      "  -h, --help          show this help\n"
      "  -V, --version       show the version\n\n"
      "Batch sweep (the throughput-versus-batch curve of the model's step):\n"
      "      --sweep-batch   also run the batch sweep\n"
      "      --preset NAME   model shape (default qwen2-0.5b; 'list' lists them)\n"
      "      --hidden N, --heads N, --kv-heads N, --ffn N, --seq N\n"
      "                      override the preset's sizes (seq: prefill length\n"
      "                      and decode KV-cache length)\n"
      "      --mode M        prefill, decode, train, both (prefill and\n"
      "                      decode), all (the default; --ci: both), or a\n"
      "                      list: a,b\n"
      "      --layers N      the model's decoder layers (default: the\n"
      "                      preset's depth); train measures the whole\n"
      "                      stack where it fits the memory budget, else\n"
      "                      one layer scaled\n"
      "      --batches LIST  e.g. 1,2,4,8 or 1-256*2 (default 1,4,16,64,\n"
      "                      extended while throughput rises)\n"
      "      --no-extend     do not extend past the list\n"
      "      --max-batch N   never extend past N (default 4096)\n"
      "      --optimize P    throughput (the peak) or knee (default throughput)\n"
      "      --tolerance F   knee and shape tolerance (default 3%%)\n"
      "      --target-effective-batch N  recommend batch x accumulation steps\n"
      "      --dtype D       fp32, bf16 or auto (default: bf16 where the CPU\n"
      "                      has a native bf16 matrix path, else fp32): the\n"
      "                      layer's weights and matrix products' inputs\n"
      "      --memory-budget SIZE  memory a point may use, e.g. 512M, 8G\n"
      "                      (default: 90%% of available memory)\n\n"
      CAL_HELP_EXIT_MEASURE
      "A point is contaminated when other processes or the hypervisor took\n"
      "more than 10%% of the usable cores while it was measured (read from\n"
      "/proc/stat); it is measured again after a short wait, and if still\n"
      "disturbed its samples are kept as evidence but never used as a figure.\n"
      "One run measures at a time: a run waits for the machine-wide lock\n"
      "($CALIBRATE_LOCK, else /run/lock/calibrate.lock or /tmp/calibrate.lock).\n"
      "Environment: OPENBLAS_CORETYPE chooses OpenBLAS kernels (by default\n"
      "calibrate picks them from the CPU's features when the library's own\n"
      "choice is older; CALIBRATE_KEEP_BLAS_CORETYPE=1 keeps the library's);\n"
      "CALIBRATE_ISA=scalar|avx2|avx512 caps our own kernels' SIMD variant;\n"
      "CALIBRATE_GEMM_ENGINE sets --gemm-engine (the flag wins);\n"
      "DNNL_MAX_CPU_ISA caps oneDNN's instruction set (oneDNN's own variable).\n");
}

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
  static const cal_measure_cmd_t mc = {"run", run_help, 1,
                                       cal_measure_default_sections};
  return cal_measure_main(&mc, argc, argv, NULL);
}
