/* The fleet profile's view (view.h, schema calibrate-fleet/1). */
#include "view_read.h"

#include "cal_err.h"

#define P cal_vfleet_point_t
static const cal_vkey_t point_keys[] = {
    CAL_VNUM(P, bytes),      CAL_VNUM(P, iters_per_sample),
    CAL_VNUM(P, time_us),    CAL_VNUM(P, bandwidth_gbps),
    CAL_VNUM(P, algbw_gbps), CAL_VNUM(P, busbw_gbps),
};
#undef P

static void read_fpoint(cal_varena_t *a, cal_vfleet_point_t *p,
                        const json_t *o) {
  CAL_VREAD(p, point_keys, o);
  p->time_stats = cal_vstats_of(o, "time_stats");
  p->samples_us = cal_vsamples_of(a, o, "samples_us");
  p->bandwidth_stats = cal_vstats_of(o, "bandwidth_stats");
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

#define H cal_vfleet_host_t
static const cal_vkey_t host_keys[] = {
    CAL_VSTR(H, host), CAL_VSTR(H, boot_id), CAL_VNUM(H, measuring_rank),
    CAL_VNUM(H, exit_code),
};
#undef H
#define W cal_vfleet_wait_t
static const cal_vkey_t wait_keys[] = {
    CAL_VNUM(W, rank), CAL_VNUM(W, wait_s), CAL_VNUM(W, cpu_s),
};
#undef W

static void read_host(cal_varena_t *a, cal_vfleet_host_t *h, const json_t *o) {
  const json_t *waits = json_object_get(o, "waiting_ranks"), *x;
  const json_t *prof = json_object_get(o, "profile");
  size_t i;
  CAL_VREAD(h, host_keys, o);
  h->ranks = cal_vnums_of(a, o, "ranks", &h->nranks);
  h->profile = json_is_null(prof) ? NULL : prof;
  h->waiting = cal_varena_alloc(a, json_array_size(waits), sizeof *h->waiting);
  if (h->waiting)
    json_array_foreach(waits, i, x) CAL_VREAD(&h->waiting[h->nwaiting++], wait_keys, x);
}

#define L cal_vfleet_link_t
static const cal_vkey_t link_keys[] = {
    CAL_VNUM(L, from_rank), CAL_VNUM(L, to_rank), CAL_VSTR(L, from_host),
    CAL_VSTR(L, to_host),
};
#undef L
#define F cal_fleet_view_t
static const cal_vkey_t links_keys[] = {
    CAL_VBOOL_K(F, links.intra_host, "intra_host"),
    CAL_VSTR_K(F, links.note, "note"),
    CAL_VSTR_K(F, links.convention, "convention"),
};
static const cal_vkey_t allreduce_keys[] = {
    CAL_VSTR_K(F, allreduce.op, "op"),
    CAL_VSTR_K(F, allreduce.dtype, "dtype"),
    CAL_VSTR_K(F, allreduce.placement, "placement"),
    CAL_VSTR_K(F, allreduce.busbw_convention, "busbw_convention"),
    CAL_VNUM_K(F, allreduce.ranks, "ranks"),
    CAL_VNUM_K(F, allreduce.checked_values, "checked_values"),
    CAL_VBOOL_K(F, allreduce.verified, "verified"),
};
static const cal_vkey_t fleet_keys[] = {
    CAL_VSTR(F, schema),          CAL_VSTR(F, created),
    CAL_VNUM(F, ranks),           CAL_VNUM(F, host_count),
    CAL_VNUM(F, links_elapsed_s), CAL_VNUM(F, elapsed_s),
};
#undef F
#define P cal_vfleet_plain_t
static const cal_vkey_t plain_keys[] = {
    CAL_VSTR(P, what), CAL_VSTR(P, unit),  CAL_VNUM(P, bytes),
    CAL_VNUM(P, ours), CAL_VNUM(P, plain), CAL_VNUM(P, ours_over_plain),
};
#undef P

static void read_links(cal_varena_t *a, cal_fleet_view_t *v, const json_t *o) {
  const json_t *pairs = json_object_get(o, "pairs"), *x;
  size_t i;
  v->links.has = json_is_object(o);
  CAL_VREAD(v, links_keys, o);
  v->links.pairs = cal_varena_alloc(a, json_array_size(pairs), sizeof *v->links.pairs);
  if (v->links.pairs)
    json_array_foreach(pairs, i, x) {
      cal_vfleet_link_t *l = &v->links.pairs[v->links.npairs++];
      CAL_VREAD(l, link_keys, x);
      l->points = read_fpoints(a, x, "points", &l->npoints);
    }
}

int cal_fleet_view_build(const json_t *root, cal_fleet_view_t **out) {
  cal_varena_t *a = NULL;
  cal_fleet_view_t *v = cal_varena_first(sizeof *v, &a);
  const json_t *hosts = json_object_get(root, "hosts");
  const json_t *ar = json_object_get(root, "allreduce");
  const json_t *plain = json_object_get(root, "compare_plain"), *x;
  size_t i;
  *out = NULL;
  if (!v)
    return CAL_ENOMEM;
  v->arena = a;
  CAL_VREAD(v, fleet_keys, root);
  cal_vtool_read(&v->tool, json_object_get(root, "tool"));
  v->has_hosts = json_is_array(hosts);
  v->hosts = cal_varena_alloc(a, json_array_size(hosts), sizeof *v->hosts);
  if (v->hosts)
    json_array_foreach(hosts, i, x) read_host(a, &v->hosts[v->nhosts++], x);
  read_links(a, v, json_object_get(root, "links"));
  v->allreduce.has = json_is_object(ar);
  CAL_VREAD(v, allreduce_keys, ar);
  v->allreduce.has_points = json_is_array(json_object_get(ar, "points"));
  v->allreduce.points = read_fpoints(a, ar, "points", &v->allreduce.npoints);
  v->plain = cal_varena_alloc(a, json_array_size(plain), sizeof *v->plain);
  if (v->plain)
    json_array_foreach(plain, i, x) CAL_VREAD(&v->plain[v->nplain++], plain_keys, x);
  *out = cal_varena_finish(a, v);
  return *out ? 0 : CAL_ENOMEM;
}

void cal_fleet_view_free(cal_fleet_view_t *v) {
  if (v)
    cal_varena_free(v->arena);
}
