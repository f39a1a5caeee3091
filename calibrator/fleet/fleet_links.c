/* The links of the fleet: point-to-point ping-pong between every ordered
 * pair of endpoints and the all-reduce curve, each a median of timed
 * samples (fleet_json.h states the conventions). */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cal_err.h"
#include "fleet_mpi.h"
#include "fleet_transport.h"

enum { TAG_ITERS = 11, TAG_PING = 12 };

void cal_fleet_wait(MPI_Request *rq, double timeout_s, const char *what) {
  double t0 = MPI_Wtime();
  long ns = 100000; /* 0.1 ms, doubling to 10 ms */
  for (;;) {
    int done = 0;
    MPI_Test(rq, &done, MPI_STATUS_IGNORE);
    if (done)
      return;
    if (MPI_Wtime() - t0 > timeout_s) {
      int me = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &me);
      fprintf(stderr,
              "calibrate fleet: rank %d waited %.0f s for the other ranks "
              "(%s): a rank died or hangs, or a link is down; ending the "
              "job (--timeout, --node-timeout)\n",
              me, timeout_s, what);
      fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    if (ns < 10000000)
      ns *= 2;
  }
}

static char watch_msg[1024];
static size_t watch_len;

static void on_alarm(int sig) {
  (void)sig;
  if (write(STDERR_FILENO, watch_msg, watch_len) < 0) {
  }
  _exit(4);
}

void cal_fleet_watchdog(double timeout_s, const char *what) {
  if (!(timeout_s > 0)) {
    alarm(0);
    return;
  }
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  int len = snprintf(watch_msg, sizeof watch_msg,
                     "calibrate fleet: rank %d spent over %.0f s on one step "
                     "of %s: a rank died or hangs, or the link is down; "
                     "ending the job (--timeout)\n", me, timeout_s, what);
  watch_len = len < 0 ? 0 : (size_t)len < sizeof watch_msg ? (size_t)len
                                                           : sizeof watch_msg - 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  alarm((unsigned)ceil(timeout_s));
}

void cal_fleet_barrier(double timeout_s, const char *what) {
  MPI_Request rq;
  MPI_Ibarrier(MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, timeout_s, what);
}

/* Message sizes from lo by factor up to max, max itself the last. */
static size_t sizes(uint64_t lo, uint64_t factor, uint64_t max, uint64_t *out,
                    size_t cap) {
  size_t n = 0;
  for (uint64_t s = lo; s < max && n < cap - 1; s *= factor)
    out[n++] = s;
  out[n++] = max;
  return n;
}

/* Operations per sample so that one lasts min_time, from one timed op. */
static long iters_for(double t1, double min_time) {
  if (!(t1 > 0))
    return 1;
  double k = ceil(min_time / t1);
  return k < 1 ? 1 : k > 1e6 ? 1000000 : (long)k;
}

/* Rank a's side of one size: iterations announced to b before each
 * sample (outside the timing); a 0 ends the size. */
static void ping_a(char *buf, int bytes, int b, long iters) {
  long k = iters;
  MPI_Send(&k, 1, MPI_LONG, b, TAG_ITERS, MPI_COMM_WORLD);
}

static double pingpong_a(char *buf, int bytes, int b, long iters) {
  ping_a(buf, bytes, b, iters);
  char *rbuf = buf + bytes; /* send and receive buffers apart, as OSU */
  double t = MPI_Wtime();
  for (long i = 0; i < iters; i++) { /* the reply's receive posted first */
    MPI_Request rq;
    MPI_Irecv(rbuf, bytes, MPI_BYTE, b, TAG_PING, MPI_COMM_WORLD, &rq);
    MPI_Send(buf, bytes, MPI_BYTE, b, TAG_PING, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
  }
  return MPI_Wtime() - t;
}

/* Rank b echoes until a says 0. */
static void pingpong_b(char *buf, int bytes, int a) {
  for (;;) {
    long iters = 0;
    MPI_Recv(&iters, 1, MPI_LONG, a, TAG_ITERS, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (iters == 0)
      return;
    for (long i = 0; i < iters; i++) {
      MPI_Recv(buf + bytes, bytes, MPI_BYTE, a, TAG_PING, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, a, TAG_PING, MPI_COMM_WORLD);
    }
  }
}

/* One size from a's side: warm-up, iterations from one timed op, the
 * samples (one-way microseconds) into t_us; returns the iterations and
 * adds the bytes a sent to *sent. */
static long measure_size_a(const cal_fleet_plan_t *pl, char *buf, int bytes,
                           int b, double *t_us, double *sent) {
  pingpong_a(buf, bytes, b, 2); /* warm-up */
  long iters = iters_for(pingpong_a(buf, bytes, b, 1), pl->min_time_s);
  for (int s = 0; s < pl->samples; s++)
    t_us[s] = pingpong_a(buf, bytes, b, iters) / (2.0 * iters) * 1e6;
  ping_a(buf, bytes, b, 0);
  *sent += (double)bytes * (3.0 + (double)pl->samples * (double)iters);
  return iters;
}

/* The pair a -> b on a: every size into res (iterations, then the
 * samples), and what carried the bytes (the interfaces' counters around
 * it) into *tr. */
static void pair_a(const cal_fleet_plan_t *pl, char *buf, const uint64_t *sz,
                   size_t ns, int b, int same_node, const cal_fleet_t *f,
                   double *res, cal_fleet_transport_t *tr) {
  int S = pl->samples;
  cal_netdev_t before[CAL_NETDEV_MAX], after[CAL_NETDEV_MAX];
  double sent = 0;
  int nb = cal_netdev_read("/proc/net/dev", before, CAL_NETDEV_MAX);
  for (size_t k = 0; k < ns; k++)
    res[k * (1 + S)] = (double)measure_size_a(pl, buf, (int)sz[k], b,
                                              &res[k * (1 + S) + 1], &sent);
  int na = cal_netdev_read("/proc/net/dev", after, CAL_NETDEV_MAX);
  cal_fleet_transport_judge(&f->mpi, same_node, before, nb, after, na, sent, tr);
}

/* The link's figures from a's results (every rank). */
static int link_fill(cal_fleet_link_t *L, const uint64_t *sz, size_t ns,
                     const double *res, int S) {
  int rc = 0;
  if (!(L->pts = calloc(ns, sizeof *L->pts)))
    return CAL_ENOMEM;
  L->npts = ns;
  for (size_t k = 0; k < ns; k++) {
    cal_fleet_point_t *p = &L->pts[k];
    p->bytes = sz[k];
    p->iters = (long)res[k * (1 + S)];
    p->n = (size_t)S;
    if (!(p->t_us = malloc((size_t)S * sizeof *p->t_us))) {
      rc = CAL_ENOMEM;
      continue;
    }
    memcpy(p->t_us, &res[k * (1 + S) + 1], (size_t)S * sizeof *p->t_us);
    if (rc == 0)
      rc = cal_fleet_point_summarize(p, 0);
  }
  return rc;
}

int cal_fleet_p2p(const cal_fleet_plan_t *pl, const int *endpoints, int n,
                  const int *host_of, const int *node_of, cal_fleet_t *f) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  uint64_t sz[32];
  size_t ns = sizes(8, 8, pl->p2p_max, sz, 32);
  size_t npairs = (size_t)n * (size_t)(n - 1);
  int S = pl->samples;
  size_t per = ns * (size_t)(1 + S); /* iters + samples per size */
  double *res = malloc(per * sizeof *res);
  char *buf = malloc(2 * pl->p2p_max); /* send, then receive buffer */
  f->links = calloc(npairs, sizeof *f->links);
  if (!res || !buf || !f->links) {
    free(res);
    free(buf);
    return CAL_ENOMEM;
  }
  memset(buf, 1, 2 * pl->p2p_max); /* pages touched before any timing */
  int rc = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (i == j)
        continue;
      int a = endpoints[i], b = endpoints[j];
      cal_fleet_link_t *L = &f->links[f->nlinks++];
      char what[600];
      snprintf(what, sizeof what, "the point-to-point link %d -> %d (%s -> %s)",
               a, b, f->hosts[host_of[a]].name, f->hosts[host_of[b]].name);
      cal_fleet_watchdog(pl->timeout_s, what);
      if (me == a)
        pair_a(pl, buf, sz, ns, b, node_of[a] == node_of[b], f, res, &L->tr);
      else if (me == b)
        for (size_t k = 0; k < ns; k++)
          pingpong_b(buf, (int)sz[k], a);
      /* everyone learns a's figures; the ranks not in the pair sleep */
      MPI_Request rq[2];
      MPI_Ibcast(res, (int)per, MPI_DOUBLE, a, MPI_COMM_WORLD, &rq[0]);
      cal_fleet_wait(&rq[0], pl->timeout_s, what);
      MPI_Ibcast(&L->tr, (int)sizeof L->tr, MPI_BYTE, a, MPI_COMM_WORLD, &rq[1]);
      cal_fleet_wait(&rq[1], pl->timeout_s, what);
      L->from_rank = a;
      L->to_rank = b;
      L->from_host = host_of[a];
      L->to_host = host_of[b];
      int lrc = link_fill(L, sz, ns, res, S);
      if (rc == 0)
        rc = lrc;
    }
  free(res);
  free(buf);
  return rc;
}

/* The input of rank r at index i: small integers, so every sum of up to
 * thousands of ranks is exact in fp32. */
static float ar_value(int r, size_t i) {
  return (float)((i * 13u + (unsigned)r * 7u) % 97u);
}

/* Time of `iters` all-reduces on the slowest rank (all ranks get it). */
static double ar_time(const float *in, float *out, int count, long iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (long i = 0; i < iters; i++)
    MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  t = MPI_Wtime() - t;
  double worst = 0;
  MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

int cal_fleet_allreduce(const cal_fleet_plan_t *pl, cal_fleet_t *f,
                        uint64_t *bad_bytes) {
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  *bad_bytes = 0;
  uint64_t sz[32];
  size_t ns = sizes(1024, 4, pl->ar_max, sz, 32);
  size_t maxc = pl->ar_max / sizeof(float);
  float *in = malloc(maxc * sizeof *in), *out = malloc(maxc * sizeof *out);
  f->ar = calloc(ns, sizeof *f->ar);
  if (!in || !out || !f->ar) {
    free(in);
    free(out);
    return CAL_ENOMEM;
  }
  for (size_t i = 0; i < maxc; i++)
    in[i] = ar_value(me, i);
  if (me == pl->fail_rank) /* test hook: a wrong input on this rank */
    in[0] += 1.0f;
  int rc = 0;
  double factor = 2.0 * (n - 1) / n;
  for (size_t k = 0; k < ns && rc == 0; k++) {
    int count = (int)(sz[k] / sizeof(float));
    cal_fleet_watchdog(pl->timeout_s, "the all-reduce measurements");
    cal_fleet_point_t *p = &f->ar[f->nar++];
    p->bytes = sz[k];
    p->n = (size_t)pl->samples;
    if (!(p->t_us = malloc(p->n * sizeof *p->t_us))) {
      rc = CAL_ENOMEM;
      break;
    }
    memset(out, 0xff, (size_t)count * sizeof *out); /* NaN until written */
    ar_time(in, out, count, 1); /* warm-up */
    p->iters = iters_for(ar_time(in, out, count, 1), pl->min_time_s);
    for (size_t s = 0; s < p->n; s++)
      p->t_us[s] = ar_time(in, out, count, p->iters) / p->iters * 1e6;
    /* the result of the timed calls, element by element */
    for (size_t i = 0; i < (size_t)count; i++) {
      float want = 0;
      for (int r = 0; r < n; r++)
        want += ar_value(r, i);
      if (out[i] != want) {
        if (!*bad_bytes)
          *bad_bytes = sz[k];
        break;
      }
    }
    f->ar_checked_values += (uint64_t)count;
    rc = cal_fleet_point_summarize(p, factor);
  }
  free(in);
  free(out);
  return rc;
}

/* One sample of the bare loop, one-way microseconds on a: a sends with
 * MPI_Sendrecv from sbuf into rbuf, b echoes. */
static double plain_p2p(char *sbuf, char *rbuf, int bytes, int a, int b,
                        long iters, int me) {
  double t0 = MPI_Wtime();
  if (me == a)
    for (long i = 0; i < iters; i++)
      MPI_Sendrecv(sbuf, bytes, MPI_BYTE, b, TAG_PING, rbuf, bytes, MPI_BYTE,
                   b, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else if (me == b)
    for (long i = 0; i < iters; i++) {
      MPI_Recv(rbuf, bytes, MPI_BYTE, a, TAG_PING, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(rbuf, bytes, MPI_BYTE, a, TAG_PING, MPI_COMM_WORLD);
    }
  return (MPI_Wtime() - t0) / (2.0 * iters) * 1e6;
}

/* One sample of the measured path (pingpong_a / pingpong_b). */
static double ours_p2p(char *buf, int bytes, int a, int b, long iters, int me) {
  double t = 0;
  if (me == a) {
    t = pingpong_a(buf, bytes, b, iters) / (2.0 * iters) * 1e6;
    ping_a(buf, bytes, b, 0);
  } else if (me == b) {
    pingpong_b(buf, bytes, a);
  }
  return t;
}

/* Our path and the bare loop, sample by sample in turn (so both see the
 * same machine), after a warm-up of each: the two medians on a. */
static void p2p_pair(const cal_fleet_plan_t *pl, char *ours, char *sbuf,
                     char *rbuf, int bytes, int a, int b, long iters, int me,
                     double med[2]) {
  double to[64], tp[64];
  int S = pl->samples < 64 ? pl->samples : 64;
  ours_p2p(ours, bytes, a, b, 1, me);
  plain_p2p(sbuf, rbuf, bytes, a, b, 1, me);
  for (int s = 0; s < S; s++) { /* which goes first alternates */
    if (s % 2 == 0)
      to[s] = ours_p2p(ours, bytes, a, b, iters, me);
    tp[s] = plain_p2p(sbuf, rbuf, bytes, a, b, iters, me);
    if (s % 2 == 1)
      to[s] = ours_p2p(ours, bytes, a, b, iters, me);
  }
  med[0] = cal_median(to, (size_t)S);
  med[1] = cal_median(tp, (size_t)S);
}

int cal_fleet_compare_plain(const cal_fleet_plan_t *pl, int a, int b,
                            cal_fleet_t *f) {
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  /* the link a -> b as measured above: its iterations per sample */
  const cal_fleet_link_t *L = NULL;
  for (size_t l = 0; l < f->nlinks; l++)
    if (f->links[l].from_rank == a && f->links[l].to_rank == b)
      L = &f->links[l];
  if (!L || L->npts == 0 || f->nar == 0)
    return 0;
  size_t m = pl->p2p_max;
  char *ours = malloc(2 * m), *sbuf = malloc(m), *rbuf = malloc(m);
  if (!ours || !sbuf || !rbuf) {
    free(ours);
    free(sbuf);
    free(rbuf);
    return CAL_ENOMEM;
  }
  memset(ours, 1, 2 * m); /* pages touched before any timing */
  memset(sbuf, 1, m);
  memset(rbuf, 2, m);
  const cal_fleet_point_t *small = &L->pts[0], *big = &L->pts[L->npts - 1];
  double v[4] = {0, 0, 0, 0};
  cal_fleet_watchdog(pl->timeout_s, "the plain loop");
  p2p_pair(pl, ours, sbuf, rbuf, (int)small->bytes, a, b, small->iters, me, v);
  p2p_pair(pl, ours, sbuf, rbuf, (int)big->bytes, a, b, big->iters, me, v + 2);
  free(ours);
  free(sbuf);
  free(rbuf);
  MPI_Request rq;
  MPI_Ibcast(v, 4, MPI_DOUBLE, a, MPI_COMM_WORLD, &rq);
  cal_fleet_wait(&rq, pl->timeout_s, "the plain loop");
  f->plain[0] = (cal_fleet_plain_t){"p2p_latency", small->bytes, v[0], v[1], "us"};
  f->plain[1] = (cal_fleet_plain_t){"p2p_bandwidth", big->bytes,
                                    (double)big->bytes / (v[2] * 1e3),
                                    (double)big->bytes / (v[3] * 1e3), "GB/s"};
  f->nplain = 2;
  /* all-reduce at 64 MiB (or the largest size below it) */
  const cal_fleet_point_t *ap = &f->ar[0];
  for (size_t k = 0; k < f->nar; k++)
    if (f->ar[k].bytes <= (64u << 20))
      ap = &f->ar[k];
  int count = (int)(ap->bytes / sizeof(float));
  float *in = malloc((size_t)count * sizeof *in),
        *out = malloc((size_t)count * sizeof *out);
  if (!in || !out) {
    free(in);
    free(out);
    return CAL_ENOMEM;
  }
  for (int i = 0; i < count; i++)
    in[i] = ar_value(me, (size_t)i);
  memset(out, 0, (size_t)count * sizeof *out);
  double to[64], tp[64];
  int S = pl->samples < 64 ? pl->samples : 64;
  cal_fleet_watchdog(pl->timeout_s, "the plain loop");
  ar_time(in, out, count, 1); /* warm-up */
  for (int s = 0; s < S; s++) { /* which goes first alternates */
    if (s % 2 == 0)
      to[s] = ar_time(in, out, count, ap->iters) / ap->iters * 1e6;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < ap->iters; i++)
      MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double dt = MPI_Wtime() - t0, worst;
    MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    tp[s] = worst / ap->iters * 1e6;
    if (s % 2 == 1)
      to[s] = ar_time(in, out, count, ap->iters) / ap->iters * 1e6;
  }
  free(in);
  free(out);
  double bus = 2.0 * (n - 1) / n * (double)ap->bytes / 1e3;
  f->plain[2] = (cal_fleet_plain_t){"allreduce_busbw", ap->bytes,
                                    bus / cal_median(to, (size_t)S),
                                    bus / cal_median(tp, (size_t)S), "GB/s"};
  f->nplain = 3;
  return 0;
}
