/* The fleet profile's JSON (schema calibrate-fleet/1, documented in
 * results/schema/calibrate-fleet-1.schema.json). */
#include "fleet_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build_info.h"
#include "cal_err.h"
#include "profile.h"

int cal_fleet_point_summarize(cal_fleet_point_t *p, double busbw_factor) {
  if (p->n == 0)
    return CAL_EINVAL;
  double *g = malloc(p->n * sizeof *g);
  if (!g)
    return CAL_ENOMEM;
  int rc = cal_summarize(p->t_us, p->n, 0.95, &p->time_us);
  for (size_t i = 0; rc == 0 && i < p->n; i++)
    g[i] = (double)p->bytes / (p->t_us[i] * 1e3); /* bytes/us/1e3 = GB/s */
  if (rc == 0)
    rc = cal_summarize(g, p->n, 0.95, &p->gbps);
  if (rc == 0 && busbw_factor > 0) {
    for (size_t i = 0; i < p->n; i++)
      g[i] *= busbw_factor;
    rc = cal_summarize(g, p->n, 0.95, &p->busbw_gbps);
  }
  free(g);
  return rc;
}

static json_t *samples_json(const cal_fleet_point_t *p) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < p->n; i++)
    json_array_append_new(a, json_real(p->t_us[i]));
  return a;
}

/* One measured size: its figures as medians beside their stats. */
static json_t *point_json(const cal_fleet_point_t *p, int allreduce) {
  json_t *o = json_pack(
      "{s:I, s:I, s:f, s:o, s:f, s:o, s:o}", "bytes", (json_int_t)p->bytes,
      "iters_per_sample", (json_int_t)p->iters, "time_us", p->time_us.median,
      "time_stats", cal_stats_json(&p->time_us, 0),
      allreduce ? "algbw_gbps" : "bandwidth_gbps", p->gbps.median,
      allreduce ? "algbw_stats" : "bandwidth_stats", cal_stats_json(&p->gbps, 0),
      "samples_us", samples_json(p));
  if (o && allreduce) {
    json_object_set_new(o, "busbw_gbps", json_real(p->busbw_gbps.median));
    json_object_set_new(o, "busbw_stats", cal_stats_json(&p->busbw_gbps, 0));
  }
  return o;
}

static json_t *hosts_json(const cal_fleet_t *f, char *err, size_t errlen) {
  json_t *a = json_array();
  for (int h = 0; a && h < f->nhosts; h++) {
    const cal_fleet_host_t *H = &f->hosts[h];
    json_t *ranks = json_array(), *waits = json_array();
    for (int r = 0; ranks && r < H->nranks; r++)
      json_array_append_new(ranks, json_integer(H->ranks[r]));
    for (int r = 0; waits && H->wait_s && r < H->nranks; r++)
      if (H->ranks[r] != H->measuring_rank)
        json_array_append_new(
            waits, json_pack("{s:i, s:f, s:f}", "rank", H->ranks[r], "wait_s",
                             H->wait_s[r], "cpu_s", H->wait_cpu_s[r]));
    json_t *prof = json_null();
    if (H->profile) {
      json_error_t je;
      json_decref(prof);
      prof = json_loadb(H->profile, H->profile_len, 0, &je);
      if (!prof) {
        snprintf(err, errlen, "the profile of host %s does not parse: %s",
                 H->name, je.text);
        json_decref(ranks);
        json_decref(waits);
        json_decref(a);
        return NULL;
      }
    }
    json_array_append_new(
        a, json_pack("{s:s, s:s, s:s, s:s, s:o, s:i, s:o, s:i, s:o}", "host",
                     H->name, "hostname", H->hostname, "id_source",
                     H->id_override ? "CALIBRATE_HOST_ID" : "hostname and boot id",
                     "boot_id", H->boot_id, "ranks", ranks, "measuring_rank",
                     H->measuring_rank, "waiting_ranks", waits, "exit_code",
                     H->exit_code, "profile", prof));
  }
  return a;
}

/* s, or NULL (JSON null through "s?") when empty */
#define NONEMPTY(s) (*(s) ? (s) : NULL)

/* What carried one link (fleet_json.h: cal_fleet_transport_t). */
static json_t *transport_json(const cal_fleet_transport_t *t) {
  return json_pack("{s:s, s:s?, s:f, s:f, s:f, s:b, s:s}", "kind",
                   *t->kind ? t->kind : "unknown", "interface",
                   NONEMPTY(t->iface), "interface_sent_bytes", t->sent,
                   "interface_received_bytes", t->received, "payload_bytes",
                   t->payload, "mpi_same_node", t->mpi_same_node, "basis",
                   t->basis);
}

/* The MPI library and its component selection. */
static json_t *mpi_json(const cal_fleet_mpi_t *m) {
  int c = m->cvars;
  return json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?}", "library",
                   NONEMPTY(m->library), "pml", c ? m->pml : NULL, "btl",
                   c ? m->btl : NULL, "mtl", c ? m->mtl : NULL,
                   "btl_tcp_if_include", c ? m->btl_tcp_if : NULL);
}

json_t *cal_fleet_json(const cal_fleet_t *f, char *err, size_t errlen) {
  char created[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  json_t *hosts = hosts_json(f, err, errlen);
  if (!hosts)
    return NULL;
  json_t *links = json_array();
  for (size_t l = 0; links && l < f->nlinks; l++) {
    const cal_fleet_link_t *L = &f->links[l];
    json_t *pts = json_array();
    for (size_t i = 0; pts && i < L->npts; i++)
      json_array_append_new(pts, point_json(&L->pts[i], 0));
    json_array_append_new(
        links, json_pack("{s:i, s:i, s:s, s:s, s:b, s:o, s:o}", "from_rank",
                         L->from_rank, "to_rank", L->to_rank, "from_host",
                         f->hosts[L->from_host].name, "to_host",
                         f->hosts[L->to_host].name, "same_host",
                         L->from_host == L->to_host, "transport",
                         transport_json(&L->tr), "points", pts));
  }
  json_t *ar = json_array();
  for (size_t i = 0; ar && i < f->nar; i++)
    json_array_append_new(ar, point_json(&f->ar[i], 1));
  json_t *plain = json_array();
  for (size_t i = 0; plain && i < f->nplain; i++) {
    const cal_fleet_plain_t *p = &f->plain[i];
    json_array_append_new(
        plain, json_pack("{s:s, s:I, s:s, s:f, s:f, s:f}", "what", p->what,
                         "bytes", (json_int_t)p->bytes, "unit", p->unit,
                         "ours", p->ours, "plain", p->plain, "ours_over_plain",
                         p->plain > 0 ? p->ours / p->plain : 0.0));
  }
  json_t *root = json_pack(
      "{s:s, s:{s:s, s:s, s:s}, s:s, s:i, s:i, s:o,"
      " s:{s:b, s:s, s:s, s:o},"
      " s:{s:s, s:s, s:s, s:i, s:s, s:b, s:I, s:o},"
      " s:o, s:f, s:f}",
      "schema", CAL_FLEET_SCHEMA, "tool", "name", "calibrate", "version",
      cal_version, "git", cal_git, "created", created, "ranks", f->nranks,
      "host_count", f->nhosts, "hosts", hosts,
      "links", "intra_host", f->intra_host, "note",
      f->nranks < 2  ? "one rank: no links to measure"
      : f->intra_host ? "one host: the links are between its ranks, which "
                        "share its CPUs; each pair's transport says what "
                        "carried it"
                      : "one measuring rank per host; every ordered pair of "
                        "hosts",
      "convention",
      "ping-pong (IMB PingPong, OSU osu_latency): one-way time = round trip "
      "/ 2; bandwidth_gbps = bytes / one-way time / 1e9; from_rank sends first",
      "pairs", links,
      "allreduce", "op", "sum", "dtype", "fp32", "placement", "out of place",
      "ranks", f->nranks, "busbw_convention",
      "busbw = algbw x 2(n-1)/n, n = ranks (nccl-tests, OSU); algbw = bytes / "
      "time; time = the slowest rank's time per call",
      "verified", f->ar_verified, "checked_values",
      (json_int_t)f->ar_checked_values, "points", ar,
      "compare_plain", plain, "links_elapsed_s", f->elapsed_links_s,
      "elapsed_s", f->elapsed_s);
  if (root)
    json_object_set_new(root, "mpi", mpi_json(&f->mpi));
  if (!root)
    snprintf(err, errlen, "out of memory building the fleet profile");
  return root;
}

static void point_free(cal_fleet_point_t *p) { free(p->t_us); }

void cal_fleet_free(cal_fleet_t *f) {
  if (!f)
    return;
  for (int h = 0; f->hosts && h < f->nhosts; h++) {
    free(f->hosts[h].ranks);
    free(f->hosts[h].profile);
    free(f->hosts[h].wait_s);
    free(f->hosts[h].wait_cpu_s);
  }
  free(f->hosts);
  for (size_t l = 0; l < f->nlinks; l++) {
    for (size_t i = 0; i < f->links[l].npts; i++)
      point_free(&f->links[l].pts[i]);
    free(f->links[l].pts);
  }
  free(f->links);
  for (size_t i = 0; i < f->nar; i++)
    point_free(&f->ar[i]);
  free(f->ar);
  memset(f, 0, sizeof *f);
}
