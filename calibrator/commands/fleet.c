/* calibrate fleet: every node of an MPI job calibrated once, the links
 * between them and the all-reduce curve, one fleet profile (fleet.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_exit.h"
#include "cli.h"
#include "fleet.h"
#include "measure.h"
#include "options.h"
#include "subcommands.h"

#define CMD "fleet"

static void fleet_help(void) {
  printf(
      "Usage: calibrate fleet [options]\n"
      "  started by your MPI launcher, e.g.\n"
      "  mpirun -np N --host a,b --bind-to none calibrate fleet [options]\n\n"
      "Calibrate a fleet of machines in one MPI job (started by your own\n"
      "launcher): every host is measured once, by its lowest rank (ranks on\n"
      "one host, told apart by hostname and boot id, share its cores: the\n"
      "others sleep until it is done), then the links: point-to-point\n"
      "latency and bandwidth (ping-pong, 8 B to 64 MiB) for every ordered\n"
      "pair of hosts, and the all-reduce (sum, fp32) time and bus bandwidth\n"
      "(busbw = algbw x 2(n-1)/n, as nccl-tests and OSU) from 1 KiB to 256 MiB\n"
      "over all ranks, every sum verified.  With one host the links are\n"
      "measured between its ranks (shared memory) and the profile says so.\n"
      "Rank 0 writes one fleet profile (schema calibrate-fleet/1) holding\n"
      "each node's profile, the link matrix and the all-reduce curve, and\n"
      "prints a table.  `calibrate plan FLEET.json --model-params P` adds the\n"
      "network to the data-parallel plan.\n"
      "--bind-to none lets the measuring rank use every core of its host\n"
      "(Open MPI binds each rank to one core by default).\n\n"
      "Options of the fleet:\n"
      "  -o, --output FILE      the fleet profile ('-': standard output, the\n"
      "                         fleet profile alone; the nodes' and the fleet's\n"
      "                         tables go to standard error); default:\n"
      "                         fleet-<UTC time>.json in rank 0's current\n"
      "                         directory (results/ of the source tree for an\n"
      "                         uninstalled build; $CALIBRATE_RESULTS_DIR)\n"
      "      --timeout S        longest wait of a rank for the others at one\n"
      "                         step of the link measurements (default 300)\n"
      "      --node-timeout S   longest wait for the hosts' measuring runs\n"
      "                         (default 3600)\n"
      "      --p2p-max SIZE     largest point-to-point message (default 64M)\n"
      "      --allreduce-max SIZE  largest all-reduce message (default 256M)\n"
      "      --compare-plain    also time the same operations in a bare MPI\n"
      "                         loop (MPI_Sendrecv, MPI_Allreduce) and print\n"
      "                         ours against it (a benchmark of the harness)\n"
      "  -h, --help             show this help\n"
      "  -V, --version          show the version\n"
      "Every other option is a run option for the nodes (see 'calibrate run\n"
      "--help'): --quick, --sections LIST, --allow-busy, --sweep-batch, ...\n\n"
      "Exit status (the same on every rank): 0 success, 2 usage or input\n"
      "error or a build without MPI, 3 a result failed verification (a node's\n"
      "measurement or an all-reduce sum), 4 internal error or a rank that\n"
      "died or stopped answering (--timeout), 5 a node was busy (its headline\n"
      "figures withheld; the fleet profile is written).  On any failure but\n"
      "5 no fleet profile is written.\n"
      "mpirun needs --allow-run-as-root to run as root (CI containers only)\n"
      "and --oversubscribe for more ranks than cores.\n"
      "Test hooks: CALIBRATE_FLEET_FAIL_RANK=R makes rank R's all-reduce input\n"
      "wrong, so the job must end with exit 3 and no fleet profile;\n"
      "CALIBRATE_FLEET_DIE_RANK=R makes rank R exit before measuring, and\n"
      "CALIBRATE_FLEET_HANG_RANK=R makes it stop answering, so the job must\n"
      "end non-zero with no fleet profile (the hang at the others' deadline;\n"
      "CALIBRATE_FLEET_HANG_AT=links: it stops before the all-reduce).\n");
}

#ifdef CAL_HAVE_MPI

/* A node's run of the run options (a cal_opts_t). */
static int measure(void *opts, FILE *table, json_t **profile) {
  return cal_measure_node(opts, table, profile);
}
#endif

/* The value of a fleet option: "--name=V" or the next argument. */
static const char *value(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=')
    return argv[*i] + n + 1;
  if (strcmp(argv[*i], name) != 0)
    return NULL;
  if (*i + 1 >= argc)
    return "";
  return argv[++*i];
}

int cal_cmd_fleet(int argc, char **argv) {
  cal_fleet_args_t a = {.timeout_s = 300, .node_timeout_s = 3600,
                        .p2p_max = 64u << 20, .ar_max = 256u << 20};
  cal_opts_t o;
  memset(&o, 0, sizeof o); /* freed at the end, parsed or not */
  char **rest = calloc((size_t)argc + 1, sizeof *rest);
  if (!rest)
    return CAL_EXIT_INTERNAL;
  int nrest = 0, rc = CAL_EXIT_OK;
  rest[nrest++] = CMD;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i], *v;
    double d;
    if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
      fleet_help();
      goto out;
    } else if (strcmp(s, "-V") == 0 || strcmp(s, "--version") == 0) {
      rc = cal_print_version();
      goto out;
    } else if (strcmp(s, "--compare-plain") == 0) {
      a.compare_plain = 1;
    } else if ((v = value(argc, argv, &i, "--timeout")) ||
               (v = value(argc, argv, &i, "--node-timeout"))) {
      if (cal_parse_double(v, 1, 1e6, &d) < 0) {
        rc = cal_usage(CMD, "%s needs seconds from 1 to 1e6, not '%s'", s, v);
        goto out;
      }
      *(strncmp(s, "--timeout", 9) == 0 ? &a.timeout_s : &a.node_timeout_s) = d;
    } else if ((v = value(argc, argv, &i, "--p2p-max")) ||
               (v = value(argc, argv, &i, "--allreduce-max"))) {
      int p2p = strncmp(s, "--p2p-max", 9) == 0;
      double lo = p2p ? 8 : 1024;
      if (cal_parse_size(v, &d) < 0 || d < lo || d > (1u << 30)) {
        rc = cal_usage(CMD, "%s needs a size from %s to 1G, not '%s'", s,
                       p2p ? "8" : "1K", v);
        goto out;
      }
      uint64_t b = (uint64_t)d;
      if (!p2p)
        b -= b % 4; /* whole fp32 values */
      *(p2p ? &a.p2p_max : &a.ar_max) = b;
    } else if ((v = value(argc, argv, &i, "--output")) ||
               (v = value(argc, argv, &i, "-o"))) {
      if (!*v) {
        rc = cal_usage(CMD, "%s needs a file name", s);
        goto out;
      }
      a.out_path = v;
    } else {
      if (strcmp(s, "-q") == 0 || strcmp(s, "--quick") == 0 ||
          strcmp(s, "--ci") == 0)
        a.quick = 1;
      rest[nrest++] = argv[i];
    }
  }
  /* the run options checked here, before MPI starts: a bad one is one
   * line and exit 2 on every rank, and no job is started */
  cal_opts_action_t action;
  rc = cal_opts_parse(&o, nrest, rest, CMD, &action);
  if (rc != 0)
    goto out;
  if (action != CAL_OPTS_RUN) {
    rc = action == CAL_OPTS_HELP
             ? (fleet_help(), CAL_EXIT_OK)
             : cal_usage(CMD, "--preset list belongs to 'calibrate run'");
    goto out;
  }
#ifdef CAL_HAVE_MPI
  a.measure = measure;
  a.measure_arg = &o;
  rc = cal_fleet_main(&a);
#else
  rc = cal_usage(CMD, "this calibrate was built without MPI (install "
                      "libopenmpi-dev and openmpi-bin, and build again)");
#endif
out:
  cal_opts_free(&o);
  free(rest);
  return rc;
}
