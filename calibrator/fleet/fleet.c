/* `calibrate fleet` on every rank: find the hosts, calibrate each once,
 * measure the links, and let rank 0 write the fleet profile. */
#include "fleet.h"

#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "cal_err.h"
#include "cal_esc.h"
#include "cal_exit.h"
#include "cal_out.h"
#include "cal_paths.h"
#include "cli.h"
#include "fleet_mpi.h"
#include "fleet_transport.h"
#include "profile.h"
#include "threads.h"

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
  if (cal_usable_cpu_set(&set) == 0 && online > 0 &&
      CPU_COUNT(&set) < online)
    fprintf(stderr, "calibrate fleet: warning: rank %d is bound to %d of the "
                    "host's %ld cores and measures only those (mpirun "
                    "--bind-to none lets it measure the whole host)\n",
            me, CPU_COUNT(&set), online);
}

/* Measure this node through the measuring path; its profile text into
 * *prof (owned, sent to rank 0).  Returns the node run's exit code. */
static int measure_node(const cal_fleet_args_t *a, char **prof, size_t *len) {
  *prof = NULL;
  *len = 0;
  /* the fleet profile on standard output: the node's table goes to
   * standard error, as a run's does with -o - */
  FILE *table = a->out_path && strcmp(a->out_path, "-") == 0 ? stderr : stdout;
  json_t *root = NULL;
  fflush(stdout);
  int rc = a->measure(a->measure_arg, table, &root);
  fflush(table);
  if (root && (*prof = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10))))
    *len = strlen(*prof);
  json_decref(root);
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

/* The test hooks, from the environment (fleet --help lists them). */
typedef struct hooks {
  int fail_rank;  /* CALIBRATE_FLEET_FAIL_RANK: its all-reduce input wrong */
  int die_rank;   /* CALIBRATE_FLEET_DIE_RANK: exits before measuring */
  int hang_rank;  /* CALIBRATE_FLEET_HANG_RANK: stops answering ... */
  int hang_links; /* ... before the all-reduce (CALIBRATE_FLEET_HANG_AT=links)
                     instead of before measuring */
} hooks_t;

/* The rank an environment variable names; -1: unset or empty. */
static int env_rank(const char *name) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : -1;
}

static void read_hooks(hooks_t *hk) {
  const char *at = getenv("CALIBRATE_FLEET_HANG_AT");
  hk->fail_rank = env_rank("CALIBRATE_FLEET_FAIL_RANK");
  hk->die_rank = env_rank("CALIBRATE_FLEET_DIE_RANK");
  hk->hang_rank = env_rank("CALIBRATE_FLEET_HANG_RANK");
  hk->hang_links = at && strcmp(at, "links") == 0;
}

/* One rank's view of the job. */
typedef struct job {
  const cal_fleet_args_t *a;
  int me, n;
  hooks_t hk;
  cal_fleet_t f;
  cal_fleet_rank_t *ranks; /* what every rank brought (fleet_start.c) */
  int *host_of;      /* each rank's host (index into f.hosts) */
  int *node_of;      /* each rank's MPI node (MPI_COMM_TYPE_SHARED) */
  char path[4096];   /* rank 0: where the fleet profile goes */
  char *prof;        /* a measuring rank: its node's profile text, owned */
  size_t len;
  long long *meta;   /* per rank: its node run's exit code, profile bytes */
} job_t;

static void nomem(int me) __attribute__((noreturn));
static void nomem(int me) {
  fprintf(stderr, "calibrate fleet: out of memory on rank %d\n", me);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, CAL_EXIT_INTERNAL);
  exit(CAL_EXIT_INTERNAL);
}

/* Zeroed memory, or the job ends (out of memory on one rank ends all). */
static void *need(const job_t *j, size_t bytes) {
  void *p = calloc(1, bytes ? bytes : 1);
  if (!p)
    nomem(j->me);
  return p;
}

/* The lowest rank of this rank's MPI node (MPI_COMM_TYPE_SHARED: the
 * ranks the MPI library places on one node), under the watchdog. */
static int mpi_node(const job_t *j) {
  MPI_Comm shm;
  int node = j->me;
  cal_fleet_watchdog(j->a->timeout_s, "finding the MPI nodes");
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                          MPI_INFO_NULL, &shm) == MPI_SUCCESS) {
    MPI_Group g, w;
    int zero = 0;
    MPI_Comm_group(shm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, 1, &zero, w, &node);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    MPI_Comm_free(&shm);
  }
  cal_fleet_watchdog(0, NULL);
  return node;
}

/* Every rank's record on every rank (rank 0 checks the output before
 * anyone measures), then the check of them all: exit 2 on every rank
 * when the output cannot be written or the ranks disagree. */
static int start(job_t *j) {
  cal_fleet_rank_t self;
  cal_fleet_rank_self(j->a, &self);
  cal_fleet_mpi_info(&j->f.mpi);
  self.mpi_node = mpi_node(j);
  self.out_ok = 1;
  if (j->me == 0) {
    char why[512];
    if (j->a->out_path)
      snprintf(j->path, sizeof j->path, "%s", j->a->out_path);
    else
      default_path(j->path, sizeof j->path);
    if (cal_check_writable(j->path, why, sizeof why) < 0) {
      cal_usage("fleet", "cannot write %s: %s", j->path, why);
      self.out_ok = 0;
    }
  }
  j->ranks = need(j, (size_t)j->n * sizeof *j->ranks);
  MPI_Request rq;
  MPI_Iallgather(&self, (int)sizeof self, MPI_BYTE, j->ranks, (int)sizeof self,
                 MPI_BYTE, MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, j->a->timeout_s, "the start of the job");
  return cal_fleet_ranks_check(j->ranks, j->n, j->me);
}

/* The hosts: ranks with the same identity (cal_fleet_same_host) share a
 * node, the lowest of them measures it. */
static void find_hosts(job_t *j) {
  cal_fleet_t *f = &j->f;
  j->host_of = need(j, (size_t)j->n * sizeof *j->host_of);
  j->node_of = need(j, (size_t)j->n * sizeof *j->node_of);
  f->hosts = need(j, (size_t)j->n * sizeof *f->hosts);
  f->nranks = j->n;
  for (int r = 0; r < j->n; r++) {
    const cal_fleet_rank_t *R = &j->ranks[r];
    int h = 0;
    while (h < f->nhosts &&
           !cal_fleet_same_host(R, &j->ranks[f->hosts[h].measuring_rank]))
      h++;
    cal_fleet_host_t *H = &f->hosts[h];
    if (h == f->nhosts) {
      f->nhosts++;
      H->measuring_rank = r;
      H->ranks = need(j, (size_t)j->n * sizeof *H->ranks);
      snprintf(H->name, sizeof H->name, "%s", R->name);
      snprintf(H->hostname, sizeof H->hostname, "%s", R->hostname);
      snprintf(H->boot_id, sizeof H->boot_id, "%s", R->boot_id);
      H->id_override = R->id_override > 0;
    }
    H->ranks[H->nranks++] = r;
    j->host_of[r] = h;
    j->node_of[r] = R->mpi_node;
  }
}

/* Test hooks before measuring: this rank dies without a word (the
 * launcher must end the job; the others never write a fleet profile), or
 * stops answering (the others must give up at their deadline, not hang). */
static void hooks_before_measuring(const job_t *j) {
  if (j->hk.die_rank == j->me)
    _exit(CAL_EXIT_INTERNAL);
  if (j->hk.hang_rank == j->me && !j->hk.hang_links)
    for (;;)
      pause();
}

/* What waiting cost the ranks that did not measure, into their hosts. */
static void gather_waits(job_t *j, int leader, double w0, double c0) {
  double mw[2] = {leader ? 0 : MPI_Wtime() - w0, leader ? 0 : cpu_s() - c0};
  double *waits = need(j, 2 * (size_t)j->n * sizeof *waits);
  MPI_Request rq;
  MPI_Iallgather(mw, 2, MPI_DOUBLE, waits, 2, MPI_DOUBLE, MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, j->a->timeout_s, "the nodes' measuring runs");
  for (int h = 0; h < j->f.nhosts; h++) {
    cal_fleet_host_t *H = &j->f.hosts[h];
    H->wait_s = need(j, (size_t)H->nranks * sizeof *H->wait_s);
    H->wait_cpu_s = need(j, (size_t)H->nranks * sizeof *H->wait_cpu_s);
    for (int k = 0; k < H->nranks; k++) {
      H->wait_s[k] = waits[2 * H->ranks[k]];
      H->wait_cpu_s[k] = waits[2 * H->ranks[k] + 1];
    }
  }
  free(waits);
}

/* The job's code after the nodes' runs: the first host whose run failed
 * ends it (rank 0 says which), a busy host makes it 5. */
static int nodes_code(job_t *j) {
  int rc = CAL_EXIT_OK;
  for (int h = 0; h < j->f.nhosts; h++) {
    int r = j->f.hosts[h].measuring_rank;
    j->f.hosts[h].exit_code = (int)j->meta[2 * r];
    if (fatal_code(j->f.hosts[h].exit_code) && !fatal_code(rc))
      rc = j->f.hosts[h].exit_code;
    else if (j->meta[2 * r + 1] == 0 && !fatal_code(rc))
      rc = CAL_EXIT_INTERNAL; /* measured, yet no profile */
    else if (j->f.hosts[h].exit_code == CAL_EXIT_BUSY && rc == CAL_EXIT_OK)
      rc = CAL_EXIT_BUSY; /* kept, and the job's exit says so */
    if (fatal_code(rc)) {
      /* a usage error was said on one line by the run itself */
      if (j->me == 0 && rc != CAL_EXIT_USAGE)
        cal_esc_line(stderr, "calibrate fleet: host %s (rank %d) could not be "
                             "calibrated (its run exited %d): no fleet profile",
                j->f.hosts[h].name, r, j->f.hosts[h].exit_code);
      break;
    }
  }
  return rc;
}

/* Each host measured by one rank; the others sleep until it is done.
 * Returns the job's code so far. */
static int measure_nodes(job_t *j) {
  int leader = j->f.hosts[j->host_of[j->me]].measuring_rank == j->me;
  long long my[2] = {0, 0};
  double w0 = MPI_Wtime(), c0 = cpu_s();
  if (leader) {
    warn_bound(j->me);
    my[0] = measure_node(j->a, &j->prof, &j->len);
    my[1] = (long long)j->len;
  }
  j->meta = need(j, 2 * (size_t)j->n * sizeof *j->meta);
  MPI_Request rq;
  MPI_Iallgather(my, 2, MPI_LONG_LONG, j->meta, 2, MPI_LONG_LONG,
                 MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, j->a->node_timeout_s, "the nodes' measuring runs");
  gather_waits(j, leader, w0, c0);
  return nodes_code(j);
}

/* The node profiles to rank 0. */
static void gather_profiles(job_t *j) {
  int *counts = need(j, (size_t)j->n * sizeof *counts);
  int *displs = need(j, (size_t)j->n * sizeof *displs);
  size_t total = 0;
  for (int r = 0; r < j->n; r++) {
    counts[r] = (int)j->meta[2 * r + 1];
    displs[r] = (int)total;
    total += (size_t)counts[r];
  }
  char *all = j->me == 0 ? need(j, total) : NULL;
  MPI_Request rq;
  MPI_Igatherv(j->prof, (int)j->len, MPI_CHAR, all, counts, displs, MPI_CHAR,
               0, MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, j->a->timeout_s, "gathering the node profiles");
  for (int h = 0; j->me == 0 && h < j->f.nhosts; h++) {
    int r = j->f.hosts[h].measuring_rank;
    j->f.hosts[h].profile = need(j, (size_t)counts[r] + 1);
    memcpy(j->f.hosts[h].profile, all + displs[r], (size_t)counts[r]);
    j->f.hosts[h].profile_len = (size_t)counts[r];
  }
  free(counts);
  free(displs);
  free(all);
}

/* Every rank's verdict on the links: a wrong sum anywhere fails everyone.
 * Returns rc, or the code that ends the job (rank 0 says why). */
static int links_verdict(const job_t *j, uint64_t bad, int lrc, int rc) {
  long long v[2] = {(long long)bad, lrc != 0};
  long long *vs = need(j, 2 * (size_t)j->n * sizeof *vs);
  MPI_Request rq;
  MPI_Iallgather(v, 2, MPI_LONG_LONG, vs, 2, MPI_LONG_LONG, MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, j->a->timeout_s, "the all-reduce verification");
  for (int r = 0; r < j->n; r++) {
    if (vs[2 * r] && rc != CAL_EXIT_VERIFY) {
      rc = CAL_EXIT_VERIFY;
      if (j->me == 0)
        fprintf(stderr, "calibrate fleet: the all-reduce sum at %lld bytes was "
                        "wrong (first seen on rank %d): a result failed "
                        "verification; no fleet profile\n", vs[2 * r], r);
    } else if (vs[2 * r + 1] && !fatal_code(rc)) {
      rc = CAL_EXIT_INTERNAL;
      if (j->me == 0)
        fprintf(stderr, "calibrate fleet: rank %d could not measure the links "
                        "(out of memory); no fleet profile\n", r);
    }
  }
  free(vs);
  return rc;
}

/* The links: one rank per host; one host: between its ranks.  Returns rc,
 * or the code that ends the job. */
static int measure_links(job_t *j, int rc) {
  const cal_fleet_args_t *a = j->a;
  cal_fleet_t *f = &j->f;
  cal_fleet_plan_t pl = {
      .samples = a->quick ? 5 : 9,
      .min_time_s = a->quick ? 0.002 : 0.01,
      .p2p_max = a->p2p_max,
      .ar_max = a->ar_max,
      .timeout_s = a->timeout_s,
      .fail_rank = j->hk.fail_rank,
  };
  double t_links = MPI_Wtime();
  int *endpoints = need(j, (size_t)j->n * sizeof *endpoints), ne = 0;
  f->intra_host = f->nhosts == 1;
  for (int i = 0; i < (f->nhosts > 1 ? f->nhosts : j->n); i++)
    endpoints[ne++] = f->nhosts > 1 ? f->hosts[i].measuring_rank : i;
  cal_fleet_barrier(a->timeout_s, "the start of the link measurements");
  uint64_t bad = 0;
  int lrc = 0;
  if (j->n > 1) {
    if (ne > 1)
      lrc = cal_fleet_p2p(&pl, endpoints, ne, j->host_of, j->node_of, f);
    cal_fleet_watchdog(0, NULL);
    if (j->hk.hang_links && j->hk.hang_rank == j->me) /* test hook */
      for (;;)
        pause();
    if (lrc == 0)
      lrc = cal_fleet_allreduce(&pl, f, &bad);
    if (lrc == 0 && a->compare_plain && ne > 1)
      lrc = cal_fleet_compare_plain(&pl, endpoints[0], endpoints[1], f);
  }
  cal_fleet_watchdog(0, NULL);
  free(endpoints);
  rc = links_verdict(j, bad, lrc, rc);
  f->ar_verified = j->n > 1 && f->nar > 0;
  f->elapsed_links_s = MPI_Wtime() - t_links;
  return rc;
}

/* Rank 0 writes the fleet profile and prints the table; every rank
 * returns its code (a failed write, else the nodes' code). */
static int write_fleet(job_t *j, int node_rc) {
  int wrc = CAL_EXIT_OK;
  if (j->me == 0) {
    char err[600];
    json_t *root = cal_fleet_json(&j->f, err, sizeof err);
    if (!root || cal_json_write_atomic(root, j->path, err, sizeof err) < 0) {
      wrc = cal_fail("fleet", root ? CAL_EXIT_USAGE : CAL_EXIT_INTERNAL, "%s",
                     err);
    } else {
      FILE *t = strcmp(j->path, "-") == 0 ? stderr : stdout;
      cal_fleet_table(&j->f, t);
      if (strcmp(j->path, "-") != 0) {
        fputc('\n', t);
        cal_esc_line(t, "Fleet profile written to %s", j->path);
      }
      fflush(t);
    }
    json_decref(root);
  }
  MPI_Request rq;
  MPI_Ibcast(&wrc, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, j->a->timeout_s, "writing the fleet profile");
  return wrc != CAL_EXIT_OK ? wrc : node_rc;
}

static int run(const cal_fleet_args_t *a, int me, int n, double t_start) {
  job_t j;
  memset(&j, 0, sizeof j);
  j.a = a;
  j.me = me;
  j.n = n;
  read_hooks(&j.hk);
  int rc = start(&j);
  if (rc == CAL_EXIT_OK) {
    find_hosts(&j);
    hooks_before_measuring(&j);
    rc = measure_nodes(&j);
  }
  if (!fatal_code(rc)) {
    gather_profiles(&j);
    int node_rc = rc;
    rc = measure_links(&j, rc);
    j.f.elapsed_s = MPI_Wtime() - t_start;
    if (!fatal_code(rc))
      rc = write_fleet(&j, node_rc);
  }
  cal_fleet_free(&j.f);
  free(j.prof);
  free(j.ranks);
  free(j.node_of);
  free(j.host_of);
  free(j.meta);
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
  if (n > 1)
    cal_fleet_watch_launcher();
  int rc = run(a, me, n, t0);
  MPI_Finalize();
  return rc;
}
