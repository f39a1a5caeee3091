/* The start of the job: what each rank brings (its host's identity, its
 * MPI node, the fleet options it was started with), gathered on every
 * rank and checked before anything is measured. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cal_exit.h"
#include "cli.h"
#include "fleet_mpi.h"

/* The fleet options every rank must share, as written on the command
 * line, and where each sits in the record and in the arguments (the same
 * field name in both). */
typedef struct shared_opt {
  const char *name;
  size_t off, arg_off;
  char kind; /* 'u' uint64_t, 'd' double, 'i' int (a flag) */
} shared_opt_t;

#define SO(name, f, kind)                                                    \
  {name, offsetof(cal_fleet_rank_t, f), offsetof(cal_fleet_args_t, f), kind}
static const shared_opt_t shared_opts[] = {
    SO("--p2p-max", p2p_max, 'u'),
    SO("--allreduce-max", ar_max, 'u'),
    SO("--timeout", timeout_s, 'd'),
    SO("--node-timeout", node_timeout_s, 'd'),
    SO("--quick", quick, 'i'),
    SO("--compare-plain", compare_plain, 'i'),
};
#undef SO
#define NSHARED (sizeof shared_opts / sizeof *shared_opts)

/* CALIBRATE_HOST_ID: 1 to 63 of letters, digits and . _ : - */
static int valid_id(const char *s) {
  size_t n = strlen(s);
  return n >= 1 && n <= 63 &&
         strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789._:-") == n;
}

void cal_fleet_rank_self(const cal_fleet_args_t *a, cal_fleet_rank_t *r) {
  memset(r, 0, sizeof *r);
  if (gethostname(r->hostname, sizeof r->hostname) != 0)
    snprintf(r->hostname, sizeof r->hostname, "unknown");
  r->hostname[sizeof r->hostname - 1] = '\0';
  snprintf(r->boot_id, sizeof r->boot_id, "unknown");
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    if (fgets(r->boot_id, (int)sizeof r->boot_id, f))
      r->boot_id[strcspn(r->boot_id, "\n")] = '\0';
    fclose(f);
  }
  const char *id = getenv("CALIBRATE_HOST_ID");
  snprintf(r->name, sizeof r->name, "%s", r->hostname);
  if (id && *id) {
    r->id_override = valid_id(id) ? 1 : -1;
    if (r->id_override > 0)
      snprintf(r->name, sizeof r->name, "%s", id);
  }
  for (size_t i = 0; i < NSHARED; i++) {
    const shared_opt_t *o = &shared_opts[i];
    size_t n = o->kind == 'u' ? sizeof(uint64_t)
               : o->kind == 'd' ? sizeof(double) : sizeof(int);
    memcpy((char *)r + o->off, (const char *)a + o->arg_off, n);
  }
}

int cal_fleet_same_host(const cal_fleet_rank_t *x, const cal_fleet_rank_t *y) {
  return x->id_override == y->id_override && strcmp(x->name, y->name) == 0 &&
         (x->id_override || strcmp(x->boot_id, y->boot_id) == 0);
}

/* Option o of record r as text. */
static void opt_text(const shared_opt_t *o, const cal_fleet_rank_t *r,
                     char *s, size_t len) {
  const char *p = (const char *)r + o->off;
  if (o->kind == 'u')
    snprintf(s, len, "%llu", (unsigned long long)*(const uint64_t *)p);
  else if (o->kind == 'd')
    snprintf(s, len, "%g", *(const double *)p);
  else
    snprintf(s, len, "%s", *(const int *)p ? "given" : "not given");
}

/* The first shared option in which rank r differs from rank 0; NULL when
 * none does. */
static const shared_opt_t *differs(const cal_fleet_rank_t *r0,
                                   const cal_fleet_rank_t *r) {
  for (size_t i = 0; i < NSHARED; i++) {
    const shared_opt_t *o = &shared_opts[i];
    char x[64], y[64];
    opt_text(o, r0, x, sizeof x);
    opt_text(o, r, y, sizeof y);
    if (strcmp(x, y) != 0)
      return o;
  }
  return NULL;
}

int cal_fleet_ranks_check(const cal_fleet_rank_t *all, int n, int me) {
  if (!all[0].out_ok)
    return CAL_EXIT_USAGE; /* rank 0 said why */
  for (int r = 0; r < n; r++) {
    const shared_opt_t *o = differs(&all[0], &all[r]);
    if (all[r].id_override < 0) {
      if (me == 0)
        cal_usage("fleet", "CALIBRATE_HOST_ID of rank %d is not 1 to 63 "
                           "letters, digits, '.', '_', ':' or '-'", r);
      return CAL_EXIT_USAGE;
    }
    if (o) {
      char x[64], y[64];
      opt_text(o, &all[0], x, sizeof x);
      opt_text(o, &all[r], y, sizeof y);
      if (me == 0 && o->kind == 'i')
        cal_usage("fleet", "rank %d was started %s %s and rank 0 %s it: "
                           "every rank needs the same fleet options", r,
                  strcmp(y, "given") == 0 ? "with" : "without", o->name,
                  strcmp(x, "given") == 0 ? "with" : "without");
      else if (me == 0)
        cal_usage("fleet", "rank %d was started with %s %s and rank 0 with "
                           "%s: every rank needs the same fleet options", r,
                  o->name, y, x);
      return CAL_EXIT_USAGE;
    }
  }
  return CAL_EXIT_OK;
}

/* The launcher's watch: the process that started this rank (mpirun, or
 * the launcher's daemon on its host) at the start. */
static pid_t launcher;

static void *watch_launcher(void *arg) {
  static const char msg[] = "calibrate fleet: the MPI launcher that started "
                            "this rank is gone (killed?); ending the rank\n";
  (void)arg;
  for (;;) {
    sleep(1);
    if (getppid() != launcher) {
      if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
      }
      _exit(CAL_EXIT_INTERNAL);
    }
  }
  return NULL;
}

void cal_fleet_watch_launcher(void) {
  pthread_t t;
  pthread_attr_t at;
  launcher = getppid();
  if (pthread_attr_init(&at) != 0)
    return;
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_create(&t, &at, watch_launcher, NULL);
  pthread_attr_destroy(&at);
}
