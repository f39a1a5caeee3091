/* The fleet profile's view (view.h, schema calibrate-fleet/1). */
#include "view_read.h"

#include "cal_err.h"

static void read_fpoint(cal_varena_t *a, cal_vfleet_point_t *p,
                        const json_t *o) {
  p->bytes = cal_vnum_of(o, "bytes");
  p->iters_per_sample = cal_vnum_of(o, "iters_per_sample");
  p->time_us = cal_vnum_of(o, "time_us");
  p->time_stats = cal_vstats_of(o, "time_stats");
  p->samples_us = cal_vsamples_of(a, o, "samples_us");
  p->bandwidth_gbps = cal_vnum_of(o, "bandwidth_gbps");
  p->bandwidth_stats = cal_vstats_of(o, "bandwidth_stats");
  p->algbw_gbps = cal_vnum_of(o, "algbw_gbps");
  p->busbw_gbps = cal_vnum_of(o, "busbw_gbps");
  p->algbw_stats = cal_vstats_of(o, "algbw_stats");
  p->busbw_stats = cal_vstats_of(o, "busbw_stats");
}

/* The points of the array under k of o. */
static cal_vfleet_point_t *read_fpoints(cal_varena_t *a, const json_t *o,
                                        const char *k, size_t *n) {
  const json_t *arr = json_object_get(o, k), *x;
  cal_vfleet_point_t *p = cal_varena_alloc(a, json_array_size(arr), sizeof *p);
  size_t i;
  *n = p ? json_array_size(arr) : 0;
  if (p)
    json_array_foreach(arr, i, x) read_fpoint(a, &p[i], x);
  return p;
}

static void read_host(cal_varena_t *a, cal_vfleet_host_t *h, const json_t *o) {
  const json_t *waits = json_object_get(o, "waiting_ranks"), *x;
  const json_t *prof = json_object_get(o, "profile");
  size_t i;
  h->host = cal_vstr_of(o, "host");
  h->boot_id = cal_vstr_of(o, "boot_id");
  h->ranks = cal_vnums_of(a, o, "ranks", &h->nranks);
  h->measuring_rank = cal_vnum_of(o, "measuring_rank");
  h->exit_code = cal_vnum_of(o, "exit_code");
  h->profile = json_is_null(prof) ? NULL : prof;
  h->waiting = cal_varena_alloc(a, json_array_size(waits), sizeof *h->waiting);
  if (h->waiting)
    json_array_foreach(waits, i, x) {
      cal_vfleet_wait_t *w = &h->waiting[h->nwaiting++];
      w->rank = cal_vnum_of(x, "rank");
      w->wait_s = cal_vnum_of(x, "wait_s");
      w->cpu_s = cal_vnum_of(x, "cpu_s");
    }
}

static void read_links(cal_varena_t *a, cal_fleet_view_t *v, const json_t *o) {
  const json_t *pairs = json_object_get(o, "pairs"), *x;
  size_t i;
  v->links.has = json_is_object(o);
  v->links.intra_host = cal_vbool_of(o, "intra_host");
  v->links.note = cal_vstr_of(o, "note");
  v->links.convention = cal_vstr_of(o, "convention");
  v->links.pairs = cal_varena_alloc(a, json_array_size(pairs), sizeof *v->links.pairs);
  if (v->links.pairs)
    json_array_foreach(pairs, i, x) {
      cal_vfleet_link_t *l = &v->links.pairs[v->links.npairs++];
      l->from_rank = cal_vnum_of(x, "from_rank");
      l->to_rank = cal_vnum_of(x, "to_rank");
      l->from_host = cal_vstr_of(x, "from_host");
      l->to_host = cal_vstr_of(x, "to_host");
      l->points = read_fpoints(a, x, "points", &l->npoints);
    }
}

static void read_allreduce(cal_varena_t *a, cal_fleet_view_t *v,
                           const json_t *o) {
  v->allreduce.has = json_is_object(o);
  v->allreduce.op = cal_vstr_of(o, "op");
  v->allreduce.dtype = cal_vstr_of(o, "dtype");
  v->allreduce.placement = cal_vstr_of(o, "placement");
  v->allreduce.busbw_convention = cal_vstr_of(o, "busbw_convention");
  v->allreduce.ranks = cal_vnum_of(o, "ranks");
  v->allreduce.checked_values = cal_vnum_of(o, "checked_values");
  v->allreduce.verified = cal_vbool_of(o, "verified");
  v->allreduce.has_points = json_is_array(json_object_get(o, "points"));
  v->allreduce.points = read_fpoints(a, o, "points", &v->allreduce.npoints);
}

static void read_plain(cal_varena_t *a, cal_fleet_view_t *v,
                       const json_t *arr) {
  const json_t *x;
  size_t i;
  v->plain = cal_varena_alloc(a, json_array_size(arr), sizeof *v->plain);
  if (v->plain)
    json_array_foreach(arr, i, x) {
      cal_vfleet_plain_t *p = &v->plain[v->nplain++];
      p->what = cal_vstr_of(x, "what");
      p->unit = cal_vstr_of(x, "unit");
      p->bytes = cal_vnum_of(x, "bytes");
      p->ours = cal_vnum_of(x, "ours");
      p->plain = cal_vnum_of(x, "plain");
      p->ours_over_plain = cal_vnum_of(x, "ours_over_plain");
    }
}

int cal_fleet_view_build(const json_t *root, cal_fleet_view_t **out) {
  cal_varena_t *a = cal_varena_new();
  cal_fleet_view_t *v = a ? cal_varena_alloc(a, 1, sizeof *v) : NULL;
  const json_t *tool = json_object_get(root, "tool");
  const json_t *hosts = json_object_get(root, "hosts"), *x;
  size_t i;
  *out = NULL;
  if (!v) {
    cal_varena_free(a);
    return CAL_ENOMEM;
  }
  v->arena = a;
  v->schema = cal_vstr_of(root, "schema");
  v->created = cal_vstr_of(root, "created");
  v->tool.name = cal_vstr_of(tool, "name");
  v->tool.version = cal_vstr_of(tool, "version");
  v->tool.git = cal_vstr_of(tool, "git");
  v->ranks = cal_vnum_of(root, "ranks");
  v->host_count = cal_vnum_of(root, "host_count");
  v->links_elapsed_s = cal_vnum_of(root, "links_elapsed_s");
  v->elapsed_s = cal_vnum_of(root, "elapsed_s");
  v->has_hosts = json_is_array(hosts);
  v->hosts = cal_varena_alloc(a, json_array_size(hosts), sizeof *v->hosts);
  if (v->hosts)
    json_array_foreach(hosts, i, x) read_host(a, &v->hosts[v->nhosts++], x);
  read_links(a, v, json_object_get(root, "links"));
  read_allreduce(a, v, json_object_get(root, "allreduce"));
  read_plain(a, v, json_object_get(root, "compare_plain"));
  if (a->failed) {
    cal_varena_free(a);
    return CAL_ENOMEM;
  }
  *out = v;
  return 0;
}

void cal_fleet_view_free(cal_fleet_view_t *v) {
  if (v)
    cal_varena_free(v->arena);
}
