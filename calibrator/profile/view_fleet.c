/* The fleet profile's view (view.h, schema calibrate-fleet/1). */
#include "view_read.h"

#include "cal_err.h"

#define CAL_VT cal_vfleet_point_t
static const cal_vkey_t point_keys[] = {
    CAL_VN(bytes) CAL_VN(iters_per_sample) CAL_VN(time_us)
    CAL_VN(bandwidth_gbps) CAL_VN(algbw_gbps) CAL_VN(busbw_gbps)
};
#undef CAL_VT

static void read_fpoint(cal_vbuild_t *b, void *dst, const json_t *o) {
  cal_vfleet_point_t *p = dst;
  p->time_stats = cal_vstats_of(o, "time_stats");
  p->samples_us = cal_vsamples_of(b->a, o, "samples_us");
  p->bandwidth_stats = cal_vstats_of(o, "bandwidth_stats");
  p->algbw_stats = cal_vstats_of(o, "algbw_stats");
  p->busbw_stats = cal_vstats_of(o, "busbw_stats");
}

static const cal_velems_t fpoints =
    CAL_VELEMS(cal_vfleet_point_t, point_keys, CAL_VNO_KEY, read_fpoint);

#define CAL_VT cal_vfleet_host_t
static const cal_vkey_t host_keys[] = {
    CAL_VS(host) CAL_VS(boot_id) CAL_VS(hostname) CAL_VS(id_source)
    CAL_VN(measuring_rank) CAL_VN(exit_code)
};
#undef CAL_VT
#define CAL_VT cal_vfleet_wait_t
static const cal_vkey_t wait_keys[] = {
    CAL_VN(rank) CAL_VN(wait_s) CAL_VN(cpu_s)
};
#undef CAL_VT

static const cal_velems_t waits =
    CAL_VELEMS(cal_vfleet_wait_t, wait_keys, CAL_VNO_KEY, NULL);

static void read_host(cal_vbuild_t *b, void *dst, const json_t *o) {
  cal_vfleet_host_t *h = dst;
  const json_t *prof = json_object_get(o, "profile");
  h->ranks = cal_vnums_of(b->a, o, "ranks", &h->nranks);
  h->profile = json_is_object(prof) ? prof : NULL;
  h->malformed =
      !json_is_object(o) || (prof && !h->profile && !json_is_null(prof));
  h->waiting = cal_vread_each(b, o, "waiting_ranks", &waits, &h->nwaiting);
}
static const cal_velems_t hosts =
    CAL_VELEMS(cal_vfleet_host_t, host_keys, CAL_VNO_KEY, read_host);

#define CAL_VT cal_vfleet_link_t
static const cal_vkey_t link_keys[] = {
    CAL_VN(from_rank) CAL_VN(to_rank) CAL_VS(from_host) CAL_VS(to_host)
    CAL_VB(same_host) CAL_VHAS(transport)
#define CAL_VIN transport
    CAL_VSI(kind) CAL_VSI(interface) CAL_VSI(basis)
    CAL_VNI(interface_sent_bytes) CAL_VNI(interface_received_bytes)
    CAL_VNI(payload_bytes) CAL_VBI(mpi_same_node)
#undef CAL_VIN
};
#undef CAL_VT
#define CAL_VT cal_fleet_view_t
static const cal_vkey_t fleet_keys[] = {
    CAL_VS(schema) CAL_VS(created) CAL_VN(ranks) CAL_VN(host_count)
    CAL_VN(links_elapsed_s) CAL_VN(elapsed_s) CAL_VHAS(links)
    CAL_VHAS(allreduce)
#define CAL_VIN links
    CAL_VBI(intra_host) CAL_VSI(note) CAL_VSI(convention)
#undef CAL_VIN
#define CAL_VIN allreduce
    CAL_VSI(op) CAL_VSI(dtype) CAL_VSI(placement) CAL_VSI(busbw_convention)
    CAL_VNI(ranks) CAL_VNI(checked_values) CAL_VBI(verified)
#undef CAL_VIN
    CAL_VHAS(mpi)
#define CAL_VIN mpi
    CAL_VSI(library) CAL_VSI(pml) CAL_VSI(btl) CAL_VSI(mtl)
    CAL_VSI(btl_tcp_if_include)
#undef CAL_VIN
};
#undef CAL_VT
#define CAL_VT cal_vfleet_plain_t
static const cal_vkey_t plain_keys[] = {
    CAL_VS(what) CAL_VS(unit) CAL_VN(bytes) CAL_VN(ours) CAL_VN(plain)
    CAL_VN(ours_over_plain)
};
#undef CAL_VT

static void read_link(cal_vbuild_t *b, void *dst, const json_t *o) {
  cal_vfleet_link_t *l = dst;
  l->points = cal_vread_each(b, o, "points", &fpoints, &l->npoints);
}
static const cal_velems_t links =
    CAL_VELEMS(cal_vfleet_link_t, link_keys, CAL_VNO_KEY, read_link);
static const cal_velems_t plains =
    CAL_VELEMS(cal_vfleet_plain_t, plain_keys, CAL_VNO_KEY, NULL);

int cal_fleet_view_build(const json_t *root, cal_fleet_view_t **out) {
  cal_varena_t *a = NULL;
  cal_fleet_view_t *v = cal_varena_first(sizeof *v, &a);
  const json_t *ar = json_object_get(root, "allreduce");
  cal_vbuild_t b = {a, NULL, NULL, NULL};
  *out = NULL;
  if (!v)
    return CAL_ENOMEM;
  v->arena = a;
  CAL_VREAD(v, fleet_keys, root);
  cal_vtool_read(&v->tool, json_object_get(root, "tool"));
  v->has_hosts = json_is_array(json_object_get(root, "hosts"));
  v->hosts = cal_vread_each(&b, root, "hosts", &hosts, &v->nhosts);
  v->links.pairs = cal_vread_each(&b, json_object_get(root, "links"), "pairs",
                                  &links, &v->links.npairs);
  v->allreduce.has_points = json_is_array(json_object_get(ar, "points"));
  v->allreduce.points =
      cal_vread_each(&b, ar, "points", &fpoints, &v->allreduce.npoints);
  v->plain = cal_vread_each(&b, root, "compare_plain", &plains, &v->nplain);
  *out = cal_varena_finish(a, v);
  return *out ? 0 : CAL_ENOMEM;
}

void cal_fleet_view_free(cal_fleet_view_t *v) {
  if (v)
    cal_varena_free(v->arena);
}
