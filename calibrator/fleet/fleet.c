/* `calibrate fleet` on every rank: find the hosts, calibrate each once,
 * measure the links, and let rank 0 write the fleet profile. */
#include "fleet.h"

#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "cal_err.h"
#include "cal_exit.h"
#include "cal_out.h"
#include "cal_paths.h"
#include "cli.h"
#include "fleet_mpi.h"
#include "profile.h"

#define ID_LEN 320 /* hostname '\n' boot id */

/* This host's identity: the hostname and the kernel's boot id (two
 * containers or VMs may share a name; a boot id tells them apart). */
static void host_id(char *id, char *name, size_t nlen, char *boot, size_t blen) {
  memset(id, 0, ID_LEN);
  if (gethostname(name, nlen) != 0)
    snprintf(name, nlen, "unknown");
  name[nlen - 1] = '\0';
  snprintf(boot, blen, "unknown");
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    if (fgets(boot, (int)blen, f))
      boot[strcspn(boot, "\n")] = '\0';
    fclose(f);
  }
  snprintf(id, ID_LEN, "%s\n%s", name, boot);
}

/* CPU seconds this process has used (user and system). */
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* A measuring rank bound to fewer cores than the host has measures only
 * those: say so (Open MPI binds each rank to one core by default). */
static void warn_bound(int me) {
  cpu_set_t set;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && online > 0 &&
      CPU_COUNT(&set) < online)
    fprintf(stderr, "calibrate fleet: warning: rank %d is bound to %d of the "
                    "host's %ld cores and measures only those (mpirun "
                    "--bind-to none lets it measure the whole host)\n",
            me, CPU_COUNT(&set), online);
}

/* Measure this node through the measuring path into an anonymous memory
 * file; its profile text into *prof (owned). */
static int measure_node(const cal_fleet_args_t *a, char **prof, size_t *len) {
  *prof = NULL;
  *len = 0;
  int fd = memfd_create("calibrate-node-profile", 0);
  if (fd < 0) {
    fprintf(stderr, "calibrate fleet: cannot create a memory file for the "
                    "node's profile\n");
    return CAL_EXIT_INTERNAL;
  }
  char path[64];
  snprintf(path, sizeof path, "/dev/fd/%d", fd);
  int argc = a->run_argc + 2;
  char **argv = calloc((size_t)argc + 1, sizeof *argv);
  if (!argv) {
    close(fd);
    return CAL_EXIT_INTERNAL;
  }
  for (int i = 0; i < a->run_argc; i++)
    argv[i] = a->run_argv[i];
  argv[a->run_argc] = "-o";
  argv[a->run_argc + 1] = path;
  /* the fleet profile on standard output: the node's table goes to
   * standard error, as a run's does with -o - */
  int to_err = a->out_path && strcmp(a->out_path, "-") == 0, saved = -1;
  fflush(stdout);
  if (to_err && (saved = dup(STDOUT_FILENO)) >= 0)
    dup2(STDERR_FILENO, STDOUT_FILENO);
  int rc = a->measure(argc, argv);
  fflush(stdout);
  if (saved >= 0) {
    dup2(saved, STDOUT_FILENO);
    close(saved);
  }
  free(argv);
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size > 0 && (*prof = malloc((size_t)st.st_size))) {
    *len = (size_t)pread(fd, *prof, (size_t)st.st_size, 0);
    if (*len != (size_t)st.st_size) {
      free(*prof);
      *prof = NULL;
      *len = 0;
    }
  }
  close(fd);
  return rc;
}

/* The default fleet profile name: results/fleet-<UTC time>.json. */
static void default_path(char *out, size_t len) {
  const char *dir = cal_results_default_dir();
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  snprintf(out, len, "%s/fleet-%s.json", dir, stamp);
}

/* Whether an exit code of a node's run ends the job: a usage error,
 * failed verification, an internal error or a signal.  Busy (5) keeps
 * the profile (its headline figures withheld) and the job goes on. */
static int fatal_code(int rc) { return rc != CAL_EXIT_OK && rc != CAL_EXIT_BUSY; }

static int run(const cal_fleet_args_t *a, int me, int n, double t_start) {
  cal_fleet_t f;
  memset(&f, 0, sizeof f);
  int rc = CAL_EXIT_OK;
  char path[4096] = "";
  char *prof = NULL;
  char *ids = NULL;
  int *host_of = NULL, *endpoints = NULL;
  long long *meta = NULL;
  double *waits = NULL;
  int *counts = NULL, *displs = NULL;
  char *all = NULL;
  json_t *root = NULL;
  const char *fail = getenv("CALIBRATE_FLEET_FAIL_RANK");
  cal_fleet_plan_t pl = {
      .samples = a->quick ? 5 : 9,
      .min_time_s = a->quick ? 0.002 : 0.01,
      .p2p_max = a->p2p_max,
      .ar_max = a->ar_max,
      .timeout_s = a->timeout_s,
      .fail_rank = fail && *fail ? atoi(fail) : -1,
  };

  /* rank 0 checks the output before anyone measures */
  int out_ok = 1;
  if (me == 0) {
    char why[512];
    if (a->out_path)
      snprintf(path, sizeof path, "%s", a->out_path);
    else
      default_path(path, sizeof path);
    if (cal_check_writable(path, why, sizeof why) < 0) {
      cal_usage("fleet", "cannot write %s: %s", path, why);
      out_ok = 0;
    }
  }
  MPI_Request rq;
  MPI_Ibcast(&out_ok, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, a->timeout_s, "the output check");
  if (!out_ok)
    return CAL_EXIT_USAGE;

  /* the hosts: ranks with the same hostname and boot id share a node */
  char id[ID_LEN], name[256], boot[64];
  host_id(id, name, sizeof name, boot, sizeof boot);
  if (!(ids = malloc((size_t)n * ID_LEN)) ||
      !(host_of = malloc((size_t)n * sizeof *host_of)) ||
      !(endpoints = malloc((size_t)n * sizeof *endpoints)) ||
      !(f.hosts = calloc((size_t)n, sizeof *f.hosts)))
    goto nomem;
  MPI_Iallgather(id, ID_LEN, MPI_CHAR, ids, ID_LEN, MPI_CHAR, MPI_COMM_WORLD,
                 &rq);
  cal_fleet_wait(&rq, a->timeout_s, "finding the hosts");
  f.nranks = n;
  for (int r = 0; r < n; r++) {
    int h = 0;
    while (h < f.nhosts &&
           memcmp(ids + (size_t)r * ID_LEN,
                  ids + (size_t)f.hosts[h].measuring_rank * ID_LEN, ID_LEN) != 0)
      h++;
    cal_fleet_host_t *H = &f.hosts[h];
    if (h == f.nhosts) {
      f.nhosts++;
      H->measuring_rank = r;
      if (!(H->ranks = calloc((size_t)n, sizeof *H->ranks)))
        goto nomem;
      const char *s = ids + (size_t)r * ID_LEN;
      const char *nl = strchr(s, '\n');
      snprintf(H->name, sizeof H->name, "%.*s", (int)(nl ? nl - s : 0), s);
      snprintf(H->boot_id, sizeof H->boot_id, "%s", nl ? nl + 1 : "");
    }
    H->ranks[H->nranks++] = r;
    host_of[r] = h;
  }
  int mine = host_of[me], leader = f.hosts[mine].measuring_rank == me;
  /* test hook: this rank dies without a word (the launcher must end the
   * job; the others never write a fleet profile) */
  const char *die = getenv("CALIBRATE_FLEET_DIE_RANK");
  if (die && *die && atoi(die) == me)
    _exit(CAL_EXIT_INTERNAL);
  /* test hook: this rank stops answering (the others must give up at
   * their deadline, not hang) */
  const char *hang = getenv("CALIBRATE_FLEET_HANG_RANK");
  const char *at = getenv("CALIBRATE_FLEET_HANG_AT");
  int hang_links = at && strcmp(at, "links") == 0;
  if (hang && *hang && atoi(hang) == me && !hang_links)
    for (;;)
      pause();

  /* each host measured by one rank; the others sleep until it is done */
  size_t len = 0;
  long long my[2] = {0, 0};
  double w0 = MPI_Wtime(), c0 = cpu_s();
  if (leader) {
    warn_bound(me);
    my[0] = measure_node(a, &prof, &len);
    my[1] = (long long)len;
  }
  if (!(meta = malloc(2 * (size_t)n * sizeof *meta)) ||
      !(waits = malloc(2 * (size_t)n * sizeof *waits)))
    goto nomem;
  MPI_Iallgather(my, 2, MPI_LONG_LONG, meta, 2, MPI_LONG_LONG, MPI_COMM_WORLD,
                 &rq);
  cal_fleet_wait(&rq, a->node_timeout_s, "the nodes' measuring runs");
  /* what waiting cost the ranks that did not measure */
  double mw[2] = {leader ? 0 : MPI_Wtime() - w0, leader ? 0 : cpu_s() - c0};
  MPI_Iallgather(mw, 2, MPI_DOUBLE, waits, 2, MPI_DOUBLE, MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, a->timeout_s, "the nodes' measuring runs");
  for (int h = 0; h < f.nhosts; h++) {
    cal_fleet_host_t *H = &f.hosts[h];
    if (!(H->wait_s = calloc((size_t)H->nranks, sizeof *H->wait_s)) ||
        !(H->wait_cpu_s = calloc((size_t)H->nranks, sizeof *H->wait_cpu_s)))
      goto nomem;
    for (int k = 0; k < H->nranks; k++) {
      H->wait_s[k] = waits[2 * H->ranks[k]];
      H->wait_cpu_s[k] = waits[2 * H->ranks[k] + 1];
    }
  }
  for (int h = 0; h < f.nhosts; h++) {
    int r = f.hosts[h].measuring_rank;
    f.hosts[h].exit_code = (int)meta[2 * r];
    if (fatal_code(f.hosts[h].exit_code) && !fatal_code(rc))
      rc = f.hosts[h].exit_code;
    else if (meta[2 * r + 1] == 0 && !fatal_code(rc))
      rc = CAL_EXIT_INTERNAL; /* measured, yet no profile */
    else if (f.hosts[h].exit_code == CAL_EXIT_BUSY && rc == CAL_EXIT_OK)
      rc = CAL_EXIT_BUSY; /* kept, and the job's exit says so */
    if (fatal_code(rc)) {
      /* a usage error was said on one line by the run itself */
      if (me == 0 && rc != CAL_EXIT_USAGE)
        fprintf(stderr, "calibrate fleet: host %s (rank %d) could not be "
                      "calibrated (its run exited %d): no fleet profile\n",
                f.hosts[h].name, r, f.hosts[h].exit_code);
      break;
    }
  }
  if (fatal_code(rc))
    goto out;
  /* the profiles to rank 0 */
  if (!(counts = calloc((size_t)n, sizeof *counts)) ||
      !(displs = calloc((size_t)n, sizeof *displs)))
    goto nomem;
  size_t total = 0;
  for (int r = 0; r < n; r++) {
    counts[r] = (int)meta[2 * r + 1];
    displs[r] = (int)total;
    total += (size_t)counts[r];
  }
  if (me == 0 && !(all = malloc(total ? total : 1)))
    goto nomem;
  MPI_Igatherv(prof, (int)len, MPI_CHAR, all, counts, displs, MPI_CHAR, 0,
               MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, a->timeout_s, "gathering the node profiles");
  if (me == 0)
    for (int h = 0; h < f.nhosts; h++) {
      int r = f.hosts[h].measuring_rank;
      if (!(f.hosts[h].profile = malloc((size_t)counts[r] + 1)))
        goto nomem;
      memcpy(f.hosts[h].profile, all + displs[r], (size_t)counts[r]);
      f.hosts[h].profile_len = (size_t)counts[r];
    }
  int node_rc = rc;

  /* the links: one rank per host; one host: between its ranks */
  double t_links = MPI_Wtime();
  int ne = 0;
  f.intra_host = f.nhosts == 1;
  if (f.nhosts > 1)
    for (int h = 0; h < f.nhosts; h++)
      endpoints[ne++] = f.hosts[h].measuring_rank;
  else
    for (int r = 0; r < n; r++)
      endpoints[ne++] = r;
  cal_fleet_barrier(a->timeout_s, "the start of the link measurements");
  uint64_t bad = 0;
  int lrc = 0;
  if (n > 1) {
    if (ne > 1)
      lrc = cal_fleet_p2p(&pl, endpoints, ne, host_of, &f);
    cal_fleet_watchdog(0, NULL);
    if (hang_links && atoi(hang) == me) /* test hook, as above */
      for (;;)
        pause();
    if (lrc == 0)
      lrc = cal_fleet_allreduce(&pl, &f, &bad);
    if (lrc == 0 && a->compare_plain && ne > 1)
      lrc = cal_fleet_compare_plain(&pl, endpoints[0], endpoints[1], &f);
  }
  cal_fleet_watchdog(0, NULL);
  /* every rank's verdict: a wrong sum anywhere fails everyone */
  long long v[2] = {bad, lrc != 0}, *vs = NULL;
  if (!(vs = malloc(2 * (size_t)n * sizeof *vs)))
    goto nomem;
  MPI_Iallgather(v, 2, MPI_LONG_LONG, vs, 2, MPI_LONG_LONG, MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, a->timeout_s, "the all-reduce verification");
  for (int r = 0; r < n; r++) {
    if (vs[2 * r] && rc != CAL_EXIT_VERIFY) {
      rc = CAL_EXIT_VERIFY;
      if (me == 0)
        fprintf(stderr, "calibrate fleet: the all-reduce sum at %lld bytes was "
                        "wrong (first seen on rank %d): a result failed "
                        "verification; no fleet profile\n", vs[2 * r], r);
    } else if (vs[2 * r + 1] && !fatal_code(rc)) {
      rc = CAL_EXIT_INTERNAL;
      if (me == 0)
        fprintf(stderr, "calibrate fleet: rank %d could not measure the links "
                        "(out of memory); no fleet profile\n", r);
    }
  }
  free(vs);
  if (fatal_code(rc))
    goto out;
  f.ar_verified = n > 1 && f.nar > 0;
  f.elapsed_links_s = MPI_Wtime() - t_links;
  f.elapsed_s = MPI_Wtime() - t_start;

  /* rank 0 writes the fleet profile and prints the table */
  int wrc = CAL_EXIT_OK;
  if (me == 0) {
    char err[600];
    if (!(root = cal_fleet_json(&f, err, sizeof err)) ||
        cal_json_write_atomic(root, path, err, sizeof err) < 0) {
      wrc = cal_fail("fleet", root ? CAL_EXIT_USAGE : CAL_EXIT_INTERNAL, "%s",
                     err);
    } else {
      FILE *t = strcmp(path, "-") == 0 ? stderr : stdout;
      cal_fleet_table(&f, t);
      if (strcmp(path, "-") != 0)
        fprintf(t, "\nFleet profile written to %s\n", path);
      fflush(t);
    }
  }
  MPI_Ibcast(&wrc, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, a->timeout_s, "writing the fleet profile");
  rc = wrc != CAL_EXIT_OK ? wrc : node_rc;
  goto out;
nomem:
  fprintf(stderr, "calibrate fleet: out of memory on rank %d\n", me);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, CAL_EXIT_INTERNAL);
out:
  json_decref(root);
  cal_fleet_free(&f);
  free(prof);
  free(ids);
  free(host_of);
  free(endpoints);
  free(meta);
  free(waits);
  free(counts);
  free(displs);
  free(all);
  return rc;
}

int cal_fleet_main(const cal_fleet_args_t *a) {
  int provided = 0, me = 0, n = 1;
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS) {
    fprintf(stderr, "calibrate fleet: MPI could not start (is this run by "
                    "mpirun?)\n");
    return CAL_EXIT_INTERNAL;
  }
  double t0 = MPI_Wtime();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int rc = run(a, me, n, t0);
  MPI_Finalize();
  return rc;
}
