/* What carried a link (fleet_transport.h). */
#include "fleet_transport.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

int cal_netdev_read(const char *path, cal_netdev_t *dev, int cap) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char line[512];
  int n = 0, lineno = 0, bad = 0;
  while (fgets(line, sizeof line, f)) {
    if (++lineno <= 2) /* the two header lines */
      continue;
    char *colon = strchr(line, ':');
    unsigned long long v[9];
    if (!colon || sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu",
                         &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                         &v[7], &v[8]) != 9) {
      bad = 1;
      break;
    }
    if (n == cap)
      continue;
    *colon = '\0';
    const char *name = line + strspn(line, " ");
    snprintf(dev[n].name, sizeof dev[n].name, "%s", name);
    dev[n].rx = v[0];
    dev[n].tx = v[8];
    n++;
  }
  fclose(f);
  return bad || lineno < 2 ? -1 : n;
}

int cal_fleet_mca_allows(const char *list, const char *comp) {
  if (!list || !*list)
    return 1;
  int exclude = list[0] == '^', found = 0;
  size_t len = strlen(comp);
  for (const char *p = list + exclude; *p;) {
    size_t k = strcspn(p, ",");
    if (k == len && strncmp(p, comp, len) == 0)
      found = 1;
    p += k + (p[k] == ',');
  }
  return exclude ? !found : found;
}

/* The interface whose counters moved most, both ways, if at least 90% of
 * the payload; -1: none. */
static int carrier(const cal_netdev_t *before, int nb, const cal_netdev_t *after,
                   int na, double payload, double *sent, double *received) {
  int best = -1;
  double best_min = 0.9 * payload;
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++) {
      if (strcmp(after[i].name, before[j].name) != 0)
        continue;
      double tx = (double)(after[i].tx - before[j].tx);
      double rx = (double)(after[i].rx - before[j].rx);
      if (after[i].tx < before[j].tx || after[i].rx < before[j].rx)
        break; /* a counter reset: no evidence */
      double m = tx < rx ? tx : rx;
      if (m >= best_min) {
        best = i;
        best_min = m;
        *sent = tx;
        *received = rx;
      }
      break;
    }
  return best;
}

/* Open MPI may carry this link over TCP: its ob1 with the tcp btl, or
 * UCX (whose tcp transport is TCP too). */
static int tcp_allowed(const cal_fleet_mpi_t *m) {
  return (cal_fleet_mca_allows(m->pml, "ob1") &&
          cal_fleet_mca_allows(m->btl, "tcp")) ||
         cal_fleet_mca_allows(m->pml, "ucx");
}

/* Open MPI may carry it through shared memory: its vader or sm btl, or
 * UCX (which uses shared memory within a node). */
static int shm_allowed(const cal_fleet_mpi_t *m) {
  return (cal_fleet_mca_allows(m->pml, "ob1") &&
          (cal_fleet_mca_allows(m->btl, "vader") ||
           cal_fleet_mca_allows(m->btl, "sm"))) ||
         cal_fleet_mca_allows(m->pml, "ucx");
}

/* The selection as text for a basis: "pml X, btl Y" ("any" when unset). */
static void selection(const cal_fleet_mpi_t *m, char *s, size_t len) {
  if (!m->cvars)
    snprintf(s, len, "its component selection could not be read");
  else
    snprintf(s, len, "pml %s, btl %s", *m->pml ? m->pml : "any",
             *m->btl ? m->btl : "any");
}

static void judge_carried(const cal_fleet_mpi_t *mpi, cal_fleet_transport_t *t,
                          const char *sel) {
  int tcp = mpi->open_mpi && mpi->cvars && tcp_allowed(mpi);
  snprintf(t->kind, sizeof t->kind, "%s", tcp ? "tcp" : "unknown");
  snprintf(t->basis, sizeof t->basis,
           "interface %s sent %.0f and received %.0f bytes while the "
           "ping-pong sent %.0f each way; %s (%.160s)%s", t->iface, t->sent,
           t->received, t->payload, mpi->open_mpi ? "Open MPI" : "the MPI library",
           sel, tcp ? ": TCP over that interface"
                    : ": which of its transports used the interface is not known");
}

void cal_fleet_transport_judge(const cal_fleet_mpi_t *mpi, int mpi_same_node,
                               const cal_netdev_t *before, int nb,
                               const cal_netdev_t *after, int na,
                               double payload, cal_fleet_transport_t *t) {
  memset(t, 0, sizeof *t);
  t->payload = payload;
  t->mpi_same_node = mpi_same_node;
  char sel[400];
  selection(mpi, sel, sizeof sel);
  if (nb < 0 || na < 0 || !(payload > 0)) {
    snprintf(t->kind, sizeof t->kind, "unknown");
    snprintf(t->basis, sizeof t->basis, "the network interfaces' counters "
             "(/proc/net/dev) could not be read");
    return;
  }
  int i = carrier(before, nb, after, na, payload, &t->sent, &t->received);
  if (i >= 0) {
    snprintf(t->iface, sizeof t->iface, "%s", after[i].name);
    judge_carried(mpi, t, sel);
    return;
  }
  const char *kind = "unknown";
  if (mpi->open_mpi && mpi->cvars && mpi_same_node && shm_allowed(mpi))
    kind = "shared memory";
  else if (mpi->open_mpi && mpi->cvars && !mpi_same_node)
    kind = "fabric";
  snprintf(t->kind, sizeof t->kind, "%s", kind);
  snprintf(t->basis, sizeof t->basis,
           "no network interface carried the %.0f bytes sent each way; MPI "
           "puts the ranks on %s node%s; %s (%.160s)", payload,
           mpi_same_node ? "one" : "different", mpi_same_node ? "" : "s",
           mpi->open_mpi ? "Open MPI" : "the MPI library", sel);
}

/* Control variable `name` as a string into out ("" when absent); 0 when
 * it was read. */
static int cvar_string(const char *name, char *out, size_t len) {
  int idx, count = 0, verb, bind, scope, nlen = 0, dlen = 0;
  MPI_Datatype dt;
  MPI_T_enum en;
  MPI_T_cvar_handle h;
  char buf[4096];
  out[0] = '\0';
  if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS ||
      MPI_T_cvar_get_info(idx, NULL, &nlen, &verb, &dt, &en, NULL, &dlen,
                          &bind, &scope) != MPI_SUCCESS ||
      dt != MPI_CHAR)
    return -1;
  if (MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
    return -1;
  int rc = -1;
  if (count >= 0 && (size_t)count < sizeof buf) {
    memset(buf, 0, sizeof buf);
    if (MPI_T_cvar_read(h, buf) == MPI_SUCCESS) {
      snprintf(out, len, "%.*s", (int)len - 1, buf);
      rc = 0;
    }
  }
  MPI_T_cvar_handle_free(&h);
  return rc;
}

void cal_fleet_mpi_info(cal_fleet_mpi_t *m) {
  memset(m, 0, sizeof *m);
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(v, &len) == MPI_SUCCESS) {
    v[len < (int)sizeof v ? len : (int)sizeof v - 1] = '\0';
    v[strcspn(v, "\n")] = '\0';
    snprintf(m->library, sizeof m->library, "%.*s",
             (int)sizeof m->library - 1, v);
    m->open_mpi = strstr(v, "Open MPI") != NULL;
  }
  int provided;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
    return;
  /* the selection variables exist wherever the library has them */
  m->cvars = cvar_string("pml", m->pml, sizeof m->pml) == 0 &&
             cvar_string("btl", m->btl, sizeof m->btl) == 0;
  cvar_string("mtl", m->mtl, sizeof m->mtl);
  cvar_string("btl_tcp_if_include", m->btl_tcp_if, sizeof m->btl_tcp_if);
  MPI_T_finalize();
}
