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

/* The fleet's own options as written, the sizes before rounding. */
typedef struct fleet_parse {
  cal_fleet_args_t a;
  double p2p, ar;
} fleet_parse_t;

#define OFF(field) offsetof(fleet_parse_t, field)

static const cal_opt_t fleet_rows[] = {
    {.type = CAL_OPT_STRING, .name = "output", .letter = 'o', .arg = "FILE",
     .off = OFF(a.out_path),
     .help = "the fleet profile ('-': standard output, the\n"
             "fleet profile alone; the nodes' and the fleet's\n"
             "tables go to standard error); default:\n"
             "fleet-<UTC time>.json in rank 0's current\n"
             "directory (results/ of the source tree for an\n"
             "uninstalled build; $CALIBRATE_RESULTS_DIR)"},
    {.type = CAL_OPT_DOUBLE, .name = "timeout", .arg = "S", .min = 1,
     .max = 1e6, .def = "300", .off = OFF(a.timeout_s),
     .bad = "%o needs seconds from 1 to 1e6, not '%s'",
     .help = "longest wait of a rank for the others at one\n"
             "step of the link measurements (default 300)"},
    {.type = CAL_OPT_DOUBLE, .name = "node-timeout", .arg = "S", .min = 1,
     .max = 1e6, .def = "3600", .off = OFF(a.node_timeout_s),
     .bad = "%o needs seconds from 1 to 1e6, not '%s'",
     .help = "longest wait for the hosts' measuring runs\n(default 3600)"},
    {.type = CAL_OPT_SIZE, .name = "p2p-max", .arg = "SIZE", .min = 8,
     .max = 1 << 30, .def = "64M", .off = OFF(p2p),
     .bad = "%o needs a size from 8 to 1G, not '%s'",
     .help = "largest point-to-point message (default 64M)"},
    {.type = CAL_OPT_SIZE, .name = "allreduce-max", .arg = "SIZE", .min = 1024,
     .max = 1 << 30, .def = "256M", .off = OFF(ar),
     .bad = "%o needs a size from 1K to 1G, not '%s'",
     .help = "largest all-reduce message (default 256M)"},
    {.type = CAL_OPT_FLAG, .name = "compare-plain", .off = OFF(a.compare_plain),
     .help = "also time the same operations in a bare MPI\n"
             "loop (MPI_Sendrecv, MPI_Allreduce) and print\n"
             "ours against it (a benchmark of the harness)"},
    {.type = CAL_OPT_END},
};

static const cal_opt_cmd_t fleet_opts = {
      CMD,
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
      "measured between its ranks.  Each link records what carried it (tcp\n"
      "over an interface, shared memory, a fabric, or unknown), from the\n"
      "interfaces' byte counters and the MPI library's component selection.\n"
      "CALIBRATE_HOST_ID (1 to 63 letters, digits, '.', '_', ':', '-') names a\n"
      "rank's host instead: hosts that share a kernel (network namespaces,\n"
      "containers of one node) but are to be treated as separate machines.\n"
      "Every rank must be started with the same fleet options (exit 2).\n"
      "Rank 0 writes one fleet profile (schema calibrate-fleet/1) holding\n"
      "each node's profile, the link matrix and the all-reduce curve, and\n"
      "prints a table.  `calibrate plan FLEET.json --model-params P` adds the\n"
      "network to the data-parallel plan.\n"
      "--bind-to none lets the measuring rank use every core of its host\n"
      "(Open MPI binds each rank to one core by default).\n\n"
      "Options of the fleet:\n",
      {{fleet_rows, 25, CAL_OPT_NOPARSE}, /* taken by cal_cmd_fleet's own scan */
       {cal_opt_help_rows, 25, 0},
       {cal_opts_run_rows, 0, 0},
       {cal_opts_sweep_rows, 0, 0}},
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
      "CALIBRATE_FLEET_HANG_AT=links: it stops before the all-reduce).\n",
};

/* The fleet's own rows alone, for its scan of argv. */
static const cal_opt_cmd_t fleet_own = {CMD, NULL, {{fleet_rows, 0, 0}}, NULL};

static void fleet_help(void) { cal_opt_help(&fleet_opts, stdout); }

#ifdef CAL_HAVE_MPI

/* A node's run of the run options (a cal_opts_t). */
static int measure(void *opts, FILE *table, json_t **profile) {
  return cal_measure_node(opts, table, profile);
}
#endif

/* The fleet's option at argv[*i] (exact names, "--name=V" or the value
 * in the next argument, "" when there is none); -2 when it is not one
 * (a run option for the nodes), -1 taken, else the exit code. */
static int fleet_option(int argc, char **argv, int *i, fleet_parse_t *f) {
  const char *s = argv[*i], *eq = strchr(s, '=');
  char name[64];
  size_t len = eq ? (size_t)(eq - s) : strlen(s);
  if (len >= sizeof name)
    return -2;
  memcpy(name, s, len);
  name[len] = '\0';
  const cal_opt_t *row = cal_opt_find(&fleet_own, name);
  if (!row || (eq && !cal_opt_takes_value(row)))
    return -2;
  if (!cal_opt_takes_value(row))
    return cal_opt_take(&fleet_own, row, f, NULL, s);
  const char *v = eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : "";
  if (row->off == OFF(a.out_path) && !*v)
    return cal_usage(CMD, "%s needs a file name", s);
  return cal_opt_take(&fleet_own, row, f, v, s);
}

int cal_cmd_fleet(int argc, char **argv) {
  fleet_parse_t f = {{0}, 0, 0};
  cal_fleet_args_t *ap = &f.a;
  cal_opts_t o;
  memset(&o, 0, sizeof o); /* freed at the end, parsed or not */
  char **rest = calloc((size_t)argc + 1, sizeof *rest);
  if (!rest)
    return CAL_EXIT_INTERNAL;
  int nrest = 0, rc = CAL_EXIT_OK;
  cal_opt_defaults(&fleet_own, &f);
  rest[nrest++] = CMD;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    int taken;
    if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
      fleet_help();
      goto out;
    } else if (strcmp(s, "-V") == 0 || strcmp(s, "--version") == 0) {
      rc = cal_print_version();
      goto out;
    } else if ((taken = fleet_option(argc, argv, &i, &f)) >= 0) {
      rc = taken;
      goto out;
    } else if (taken == -2) {
      if (strcmp(s, "-q") == 0 || strcmp(s, "--quick") == 0 ||
          strcmp(s, "--ci") == 0)
        ap->quick = 1;
      rest[nrest++] = argv[i];
    }
  }
  ap->p2p_max = (uint64_t)f.p2p;
  ap->ar_max = (uint64_t)f.ar - (uint64_t)f.ar % 4; /* whole fp32 values */
  cal_fleet_args_t a = f.a;
  /* the run options checked here, before MPI starts: a bad one is one
   * line and exit 2 on every rank, and no job is started */
  cal_opts_action_t action;
  rc = cal_opts_parse(&o, nrest, rest, &fleet_opts, &action);
  if (rc != 0 || action == CAL_OPTS_DONE)
    goto out;
  if (action != CAL_OPTS_RUN) {
    rc = cal_usage(CMD, "--preset list belongs to 'calibrate run'");
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
