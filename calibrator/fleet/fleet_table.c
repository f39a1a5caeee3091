/* The fleet's table on rank 0: hosts, the link matrix, the all-reduce
 * curve. */
#include <jansson.h>
#include <stdio.h>

#include "cal_esc.h"
#include "fleet_mpi.h"

static void size_str(uint64_t b, char *s, size_t len) {
  if (b >= (1u << 20))
    snprintf(s, len, "%llu MiB", (unsigned long long)(b >> 20));
  else if (b >= 1024)
    snprintf(s, len, "%llu KiB", (unsigned long long)(b >> 10));
  else
    snprintf(s, len, "%llu B", (unsigned long long)b);
}

/* What carried link L, under its rows. */
static void transport_row(const cal_fleet_link_t *L, FILE *out) {
  const cal_fleet_transport_t *t = &L->tr;
  fprintf(out, "  %-14s transport: %s%s%s; %s\n", "",
          *t->kind ? t->kind : "unknown", *t->iface ? " over " : "", t->iface,
          L->from_host == L->to_host ? "the same host (its CPUs shared)"
                                     : "different hosts");
}

static void fleet_table(const void *arg, FILE *out) {
  const cal_fleet_t *f = arg;
  fprintf(out, "\nFleet: %d rank%s on %d host%s\n", f->nranks,
          f->nranks == 1 ? "" : "s", f->nhosts, f->nhosts == 1 ? "" : "s");
  if (*f->mpi.library)
    fprintf(out, "MPI: %s (pml %s, btl %s)\n", f->mpi.library,
            !f->mpi.cvars ? "unknown" : *f->mpi.pml ? f->mpi.pml : "any",
            !f->mpi.cvars ? "unknown" : *f->mpi.btl ? f->mpi.btl : "any");
  fprintf(out, "  %-24s %-8s %-10s %12s %14s\n", "host", "ranks", "measured",
          "GEMM GFLOPS", "throughput/s");
  for (int h = 0; h < f->nhosts; h++) {
    const cal_fleet_host_t *H = &f->hosts[h];
    json_t *p = H->profile ? json_loadb(H->profile, H->profile_len, 0, NULL)
                           : NULL;
    json_t *g = json_object_get(p, "gflops"), *t = json_object_get(p, "throughput");
    char gs[32] = "-", ts[32] = "-", ms[32];
    if (json_is_number(g))
      snprintf(gs, sizeof gs, "%.1f", json_number_value(g));
    if (json_is_number(t))
      snprintf(ts, sizeof ts, "%.1f", json_number_value(t));
    snprintf(ms, sizeof ms, "rank %d", H->measuring_rank);
    fprintf(out, "  %-24s %-8d %-10s %12s %14s\n", H->name, H->nranks, ms, gs, ts);
    json_decref(p);
  }
  if (f->nranks < 2)
    fprintf(out, "\nNo links: a job of one rank (start it with mpirun -np N, "
                 "N >= 2).\n");
  if (f->nlinks) {
    fprintf(out, "\nPoint to point (ping-pong, one-way; %s):\n",
            f->intra_host ? "one host: between its ranks" : "between hosts");
    fprintf(out, "  %-14s %-12s %14s %14s %16s\n", "from -> to", "size",
                 "latency us", "spread (MAD)", "bandwidth GB/s");
    for (size_t l = 0; l < f->nlinks; l++) {
      const cal_fleet_link_t *L = &f->links[l];
      for (size_t k = 0; k < L->npts; k++) {
        const cal_fleet_point_t *p = &L->pts[k];
        char s[32], pair[32];
        size_str(p->bytes, s, sizeof s);
        snprintf(pair, sizeof pair, "%d -> %d", L->from_rank, L->to_rank);
        fprintf(out, "  %-14s %-12s %14.2f %14.2f %16.3f\n", k ? "" : pair, s,
                p->time_us.median, p->time_us.mad, p->gbps.median);
      }
      transport_row(L, out);
    }
  }
  if (f->nar) {
    fprintf(out, "\nAll-reduce (sum, fp32, %d ranks; busbw = algbw x 2(n-1)/n; "
                 "%s):\n", f->nranks,
            f->ar_verified ? "every sum verified" : "NOT verified");
    fprintf(out, "  %-12s %14s %14s %12s %12s\n", "size", "time us",
            "spread (MAD)", "algbw GB/s", "busbw GB/s");
    for (size_t k = 0; k < f->nar; k++) {
      const cal_fleet_point_t *p = &f->ar[k];
      char s[32];
      size_str(p->bytes, s, sizeof s);
      fprintf(out, "  %-12s %14.1f %14.1f %12.3f %12.3f\n", s, p->time_us.median,
              p->time_us.mad, p->gbps.median, p->busbw_gbps.median);
    }
  }
  for (size_t i = 0; i < f->nplain; i++) {
    const cal_fleet_plain_t *p = &f->plain[i];
    char s[32];
    size_str(p->bytes, s, sizeof s);
    fprintf(out, "%s  %-16s %-8s ours %.3f %s, plain MPI loop %.3f %s (%.0f%%)\n",
            i ? "" : "\nCompared with a plain MPI loop (same iterations and "
                     "samples, in turn):\n",
            p->what, s, p->ours, p->unit, p->plain, p->unit,
            p->plain > 0 ? 100 * (p->unit[0] == 'u' ? p->plain / p->ours
                                                     : p->ours / p->plain)
                         : 0.0);
  }
}

/* Printed escaped, lines kept: host names and the MPI library's strings
 * come from the hosts. */
void cal_fleet_table(const cal_fleet_t *f, FILE *out) {
  cal_esc_layout(out, fleet_table, f);
}
