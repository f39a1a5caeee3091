/* The typed views of a profile (profile/view.h): every field read the way
 * a reader of the tree would read it, on the reference profile, the test
 * profiles and small hand-made trees (optional keys missing, a fleet).
 * covers: calibrator/profile/view_read.c calibrator/profile/view_sections.c
 * covers: calibrator/profile/view_fleet.c */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cal_err.h"
#include "fleet_json.h"
#include "profile.h"
#include "test_util.h"
#include "view.h"

/* A string field against the tree: NULL exactly when not a string. */
static void check_str(const char *got, const json_t *o, const char *k) {
  const char *want = json_string_value(json_object_get(o, k));
  if (!want)
    assert_null(got);
  else
    assert_string_equal(got, want);
}

/* A number against the tree: absent reads NAN, integers kept. */
static void check_num(const cal_vnum_t *n, const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  assert_int_equal(n->has, json_is_number(v));
  assert_int_equal(n->is_int, json_is_integer(v));
  if (json_is_number(v))
    assert_double_equal(n->v, json_number_value(v), 0);
  else
    assert_true(isnan(n->v));
  if (json_is_integer(v))
    assert_true(n->i == (int64_t)json_integer_value(v));
}

static void check_stats(const cal_vstats_t *s, const json_t *o) {
  const json_t *st = json_object_get(o, "stats");
  assert_int_equal(s->has, json_is_object(st));
  check_num(&s->n, st, "n");
  check_num(&s->median, st, "median");
  check_num(&s->ci_low, st, "ci_low");
  check_num(&s->ci_high, st, "ci_high");
  check_num(&s->ci_level, st, "ci_level");
  check_num(&s->cv, st, "cv");
  const json_t *u = json_object_get(st, "unstable");
  assert_int_equal(s->unstable, json_is_boolean(u) ? json_is_true(u) : CAL_VABSENT);
}

/* Every point of the view against the object cal_profile_each_point
 * visits at the same place. */
typedef struct walk {
  const cal_profile_view_t *v;
  size_t i;
} walk_t;

static int check_point(const char *section, json_t *pt, void *arg) {
  walk_t *w = arg;
  assert_true(w->i < w->v->npoints);
  const cal_vpoint_t *p = &w->v->points[w->i++];
  assert_string_equal(p->section, section);
  check_str(p->id, pt, "id");
  check_str(p->status, pt, "status");
  check_str(p->reason, pt, "reason");
  check_str(p->metric, pt, "metric");
  check_str(p->kernel, pt, "kernel");
  check_str(p->dtype, pt, "dtype");
  check_str(p->level, pt, "level");
  check_num(&p->threads, pt, "threads");
  check_num(&p->batch_size, pt, "batch_size");
  check_num(&p->working_set_bytes, pt, "working_set_bytes");
  check_num(&p->time_ms, pt, "time_ms");
  check_stats(&p->stats, pt);
  if (p->metric) {
    char key[128];
    check_num(&p->value, pt, p->metric);
    snprintf(key, sizeof key, "samples_%s", p->metric);
    const json_t *s = json_object_get(pt, key);
    assert_int_equal(p->samples.has, json_is_array(s));
    assert_int_equal(p->samples.n, json_array_size(s));
    for (size_t j = 0; j < p->samples.n; j++)
      assert_double_equal(p->samples.v[j],
                          json_number_value(json_array_get(s, j)), 0);
  }
  assert_int_equal(p->params.n, json_object_size(pt));
  const json_t *h = json_object_get(pt, "higher_is_better");
  assert_int_equal(p->higher_is_better,
                   json_is_boolean(h) ? json_is_true(h) : CAL_VABSENT);
  return 0;
}

/* A walk of the whole tree, stopping at points: they come in
 * doc_points' order. */
static void doc_walk(walk_t *w, const json_t *o) {
  const char *k;
  json_t *x;
  size_t i;
  if (json_is_array(o))
    json_array_foreach(o, i, x) doc_walk(w, x);
  if (!json_is_object(o))
    return;
  if (json_object_get(o, "id") && json_object_get(o, "status")) {
    assert_true(w->i < w->v->npoints);
    check_str(w->v->doc_points[w->i++]->id, o, "id");
    return;
  }
  json_object_foreach((json_t *)o, k, x) doc_walk(w, x);
}

/* A section's list: the points of its "points" array, in order. */
static void check_list(const cal_vpoints_t *l, const json_t *sec) {
  const json_t *arr = json_object_get(sec, "points");
  assert_int_equal(l->n, json_array_size(arr));
  for (size_t i = 0; i < l->n; i++)
    check_str(l->p[i]->id, json_array_get(arr, i), "id");
}

static void check_machine(const cal_vmachine_t *m, const json_t *r) {
  const json_t *mj = json_object_get(r, "machine");
  const json_t *cpu = json_object_get(mj, "cpu");
  assert_int_equal(m->has, json_is_object(mj));
  check_str(m->hostname, mj, "hostname");
  check_str(m->cpu.brand, cpu, "brand");
  check_str(m->cpu.vendor, cpu, "vendor");
  check_num(&m->cpu.family, cpu, "family");
  check_num(&m->usable_cores, mj, "usable_cores");
  check_num(&m->topology.cores,
            json_object_get(mj, "topology"), "cores");
  check_num(&m->memory.available_bytes, json_object_get(mj, "memory"),
            "available_bytes");
  const json_t *isa = json_object_get(cpu, "isa");
  assert_int_equal(m->cpu.isa.n, json_array_size(isa));
  for (size_t i = 0; i < m->cpu.isa.n; i++)
    assert_string_equal(m->cpu.isa.s[i],
                        json_string_value(json_array_get(isa, i)));
  const json_t *caches = json_object_get(mj, "caches");
  assert_int_equal(m->ncaches, json_array_size(caches));
  for (size_t i = 0; i < m->ncaches; i++)
    check_num(&m->caches[i].size_bytes, json_array_get(caches, i),
              "size_bytes");
}

static void check_batch(const cal_vbatch_sweep_t *b, const json_t *r) {
  const json_t *bs = json_object_get(r, "batch_sweep");
  const json_t *modes = json_object_get(bs, "modes"), *m;
  const char *k;
  size_t i = 0;
  assert_int_equal(b->has, json_is_object(bs));
  check_str(b->top_level_mode, bs, "top_level_mode");
  check_num(&b->tolerance_pct, bs, "tolerance_pct");
  check_num(&b->model.hidden, json_object_get(bs, "model"), "hidden");
  assert_int_equal(b->nmodes, json_object_size(modes));
  json_object_foreach((json_t *)modes, k, m) {
    const cal_vbatch_mode_t *x = &b->modes[i++];
    assert_string_equal(x->name, k);
    assert_ptr_equal(cal_vbatch_mode(b, k), x);
    check_num(&x->peak_batch_size, m, "peak_batch_size");
    check_num(&x->knee_batch_size, m, "knee_batch_size");
    check_num(&x->optimal_batch_size, m, "optimal_batch_size");
    check_num(&x->latency_ms_batch_1, m, "latency_ms_batch_1");
    check_list(&x->points, m);
    check_num(&x->recommendation.batch_size,
              json_object_get(m, "recommendation"), "batch_size");
  }
  assert_null(cal_vbatch_mode(b, "no such mode"));
  assert_null(cal_vbatch_mode(b, NULL));
}

static void check_gemm(const cal_vgemm_t *g, const json_t *r) {
  const json_t *gj = json_object_get(r, "gemm");
  const json_t *dts = json_object_get(gj, "dtypes"), *d;
  const char *k;
  size_t i = 0;
  assert_int_equal(g->ndtypes, json_object_size(dts));
  json_object_foreach((json_t *)dts, k, d) {
    const cal_vgemm_dtype_t *x = &g->dtypes[i++];
    assert_string_equal(x->dtype, k);
    assert_ptr_equal(cal_vgemm_dtype(g, k), x);
    check_str(x->status, d, "status");
    check_num(&x->best_gflops_1_thread, d, "best_gflops_1_thread");
    check_num(&x->best_gflops_all_threads, d, "best_gflops_all_threads");
  }
  assert_int_equal(g->nsweeps, json_array_size(json_object_get(gj, "sweeps")));
  check_list(&g->points, gj);
}

static void check_profile(const char *path) {
  cal_profile_t *p = NULL;
  char err[512];
  int rc = cal_profile_load(path, &p, err, sizeof err);
  if (rc < 0)
    fail_msg("%s: %s", path, err);
  const cal_profile_view_t *v = cal_profile_view(p);
  assert_non_null(v);
  assert_ptr_equal(cal_profile_view(p), v); /* built once */
  const json_t *r = p->root;
  walk_t w = {v, 0};
  cal_profile_each_point(r, check_point, &w);
  assert_int_equal(w.i, v->npoints);
  /* the points in the file's order, as a walk of the whole tree meets
   * them */
  walk_t d = {v, 0};
  doc_walk(&d, r);
  assert_int_equal(d.i, v->npoints);
  check_str(v->schema, r, "schema");
  check_str(v->device_name, r, "device_name");
  check_str(v->tool.version, json_object_get(r, "tool"), "version");
  for (size_t i = 0; i < CAL_NTOP_FIGURES; i++)
    check_num(cal_profile_view_figure(v, cal_top_figures[i].key), r,
              cal_top_figures[i].key);
  check_num(&v->gflops_per_core, r, "gflops_per_core");
  check_num(&v->memory_gb, r, "memory_gb");
  check_num(&v->latency_ms, r, "latency_ms");
  assert_null(cal_profile_view_figure(v, "nothing"));
  check_machine(&v->machine, r);
  check_gemm(&v->gemm, r);
  check_batch(&v->batch_sweep, r);
  check_list(&v->scaling.points, json_object_get(r, "scaling"));
  check_list(&v->peak.points, json_object_get(r, "peak"));
  check_list(&v->bandwidth.points, json_object_get(r, "bandwidth"));
  check_list(&v->attention.points, json_object_get(r, "attention"));
  const json_t *roof = json_object_get(r, "roofline");
  assert_int_equal(v->roofline.bandwidth_gbps.n,
                   json_object_size(json_object_get(roof, "bandwidth_gbps")));
  assert_int_equal(v->roofline.nkernels,
                   json_array_size(json_object_get(roof, "kernels")));
  const json_t *q = json_object_get(r, "quality");
  check_num(&v->quality.failed_points, q, "failed_points");
  assert_int_equal(v->quality.warnings.n,
                   json_array_size(json_object_get(q, "warnings")));
  cal_profile_free(p);
}

static void reference_profile(void **state) {
  (void)state;
  check_profile(CAL_TEST_REFERENCE_DIR "/kvm-epyc-zen4-2core.json");
  /* an older profile of an AMX machine, as readers still meet them */
  check_profile(CAL_TEST_SOURCE_DIR "/tests/data/kvm-xeon-2core-avx512.json");
}

static void test_profiles(void **state) {
  (void)state;
  check_profile(CAL_TEST_SOURCE_DIR "/tests/data/profile_a.json");
  check_profile(CAL_TEST_SOURCE_DIR "/tests/data/profile_b.json");
}

/* The least a tree can hold: everything optional reads as absent. */
static void missing_keys(void **state) {
  (void)state;
  json_t *r = json_loads(
      "{\"schema\": \"calibrate-profile/1\", \"gflops\": null,"
      " \"optimal_batch_size\": 8, \"throughput\": 12.5,"
      " \"gemm\": {\"points\": [{\"id\": \"a\", \"status\": \"failed\","
      "  \"reason\": \"why\"}, {\"id\": \"b\", \"status\": \"ok\","
      "  \"metric\": \"time_ms\", \"time_ms\": 2}]},"
      " \"batch_sweep\": {\"modes\": {\"train\": {\"points\": []},"
      "  \"decode\": {\"points\": [{\"batch_size\": 4,"
      "   \"samples_examples_per_s\": [1, 2.5]}, {\"id\": \"c\","
      "   \"status\": \"ok\", \"batch_size\": 8}]}}}}",
      0, NULL);
  assert_non_null(r);
  cal_profile_t prof = {r, NULL, NULL};
  const cal_profile_view_t *v = cal_profile_view(&prof); /* built on use */
  assert_non_null(v);
  assert_false(v->gflops.has);
  assert_true(isnan(v->gflops.v));
  assert_true(v->optimal_batch_size.is_int);
  assert_true(v->optimal_batch_size.i == 8);
  assert_false(v->throughput.is_int);
  assert_false(v->latency_ms.has);
  assert_null(v->device_name);
  assert_null(v->tool.version);
  assert_false(v->machine.has);
  assert_int_equal(v->machine.ncaches, 0);
  assert_int_equal(v->machine.cpu.isa.n, 0);
  assert_false(v->machine.cpu.isa.has);
  assert_false(v->quality.has);
  assert_int_equal(v->quality.noisy, CAL_VABSENT);
  assert_false(v->batch_source.has);
  assert_null(v->batch_source.mode);
  assert_false(v->peak.has);
  assert_int_equal(v->peak.points.n, 0);
  assert_int_equal(v->npoints, 3);
  const cal_vpoint_t *a = &v->points[0], *b = &v->points[1];
  assert_ptr_equal(v->gemm.points.p[0], a);
  assert_string_equal(a->reason, "why");
  assert_null(a->metric);
  assert_false(a->value.has);
  assert_false(a->stats.has);
  assert_true(isnan(a->stats.ci_low.v));
  assert_false(a->samples.has);
  assert_int_equal(a->higher_is_better, CAL_VABSENT);
  assert_int_equal(a->higher_better, 1);
  assert_int_equal(b->higher_better, 0); /* a time: lower is better */
  assert_true(b->value.is_int);
  assert_double_equal(b->value.v, 2, 0);
  const cal_vbatch_mode_t *t = cal_vbatch_mode(&v->batch_sweep, "train");
  assert_non_null(t);
  assert_int_equal(t->points.n, 0);
  assert_false(t->peak_batch_size.has);
  assert_false(t->recommendation.has);
  /* a point without an id is in its mode's list, not the profile's */
  const cal_vbatch_mode_t *d = cal_vbatch_mode(&v->batch_sweep, "decode");
  assert_int_equal(d->points.n, 2);
  assert_null(d->points.p[0]->id);
  assert_string_equal(d->points.p[0]->section, "batch_sweep");
  assert_true(d->points.p[0]->batch_size.i == 4);
  const cal_vsamples_t *s = cal_vpoint_samples(d->points.p[0], "examples_per_s");
  assert_non_null(s);
  assert_int_equal(s->n, 2);
  assert_double_equal(s->v[1], 2.5, 0);
  assert_false(d->points.p[0]->samples.has); /* no metric */
  assert_null(cal_vpoint_samples(d->points.p[0], "gflops"));
  assert_ptr_equal(d->points.p[1], &v->points[2]);
  /* written back as read */
  json_t *j = cal_vnum_json(&v->optimal_batch_size);
  assert_true(json_is_integer(j) && json_integer_value(j) == 8);
  json_decref(j);
  j = cal_vnum_json(&v->throughput);
  assert_true(json_is_real(j) && json_real_value(j) == 12.5);
  json_decref(j);
  j = cal_vnum_json(&v->gflops);
  assert_true(json_is_null(j));
  json_decref(j);
  const cal_vfield_t *f = cal_vfields_get(&a->params, "reason");
  assert_non_null(f);
  assert_string_equal(f->str, "why");
  assert_null(cal_vfields_get(&a->params, "nothing"));
  cal_profile_view_free(prof.view);
  json_decref(r);
}

static void fleet(void **state) {
  (void)state;
  json_t *r = json_loads(
      "{\"schema\": \"calibrate-fleet/1\", \"ranks\": 2, \"host_count\": 2,"
      " \"hosts\": [{\"host\": \"a\", \"hostname\": \"n1\","
      "   \"id_source\": \"CALIBRATE_HOST_ID\", \"ranks\": [0], \"measuring_rank\": 0,"
      "   \"exit_code\": 0, \"profile\": {\"schema\": \"x\"},"
      "   \"waiting_ranks\": [{\"rank\": 1, \"wait_s\": 1.5, \"cpu_s\": 0.1}]},"
      "  {\"host\": \"b\", \"ranks\": [1], \"profile\": null}],"
      " \"links\": {\"intra_host\": false, \"pairs\": [{\"from_rank\": 0,"
      "   \"to_rank\": 1, \"from_host\": \"a\", \"to_host\": \"b\","
      "   \"same_host\": false, \"transport\": {\"kind\": \"tcp\","
      "   \"interface\": \"veth0\", \"payload_bytes\": 1e6,"
      "   \"mpi_same_node\": false, \"basis\": \"why\"},"
      "   \"points\": [{\"bytes\": 8, \"time_us\": 2.5,"
      "   \"bandwidth_gbps\": 0.0032, \"samples_us\": [2.5, 2.6]}]}]},"
      " \"allreduce\": {\"verified\": true, \"points\": [{\"bytes\": 4,"
      "   \"time_us\": 3, \"algbw_gbps\": 1.5, \"busbw_gbps\": 1.5,"
      "   \"busbw_stats\": {\"ci_low\": 1.4}}]},"
      " \"mpi\": {\"library\": \"Open MPI v4.1.4\", \"btl\": \"tcp,self\","
      "   \"pml\": \"\"}}",
      0, NULL);
  assert_non_null(r);
  cal_fleet_view_t *v = NULL;
  assert_int_equal(cal_fleet_view_build(r, &v), 0);
  assert_string_equal(v->schema, CAL_FLEET_SCHEMA);
  assert_double_equal(v->ranks.v, 2, 0);
  assert_int_equal(v->nhosts, 2);
  assert_string_equal(v->hosts[0].host, "a");
  assert_ptr_equal(v->hosts[0].profile,
                   json_object_get(json_array_get(json_object_get(r, "hosts"), 0),
                                   "profile"));
  assert_null(v->hosts[1].profile);
  assert_false(v->hosts[1].measuring_rank.has);
  assert_int_equal(v->hosts[0].nwaiting, 1);
  assert_double_equal(v->hosts[0].waiting[0].wait_s.v, 1.5, 0);
  assert_int_equal(v->hosts[1].nranks, 1);
  assert_true(v->hosts[1].ranks[0].i == 1);
  assert_true(v->links.has);
  assert_int_equal(v->links.intra_host, 0);
  assert_int_equal(v->links.npairs, 1);
  assert_string_equal(v->links.pairs[0].to_host, "b");
  assert_string_equal(v->hosts[0].hostname, "n1");
  assert_string_equal(v->hosts[0].id_source, "CALIBRATE_HOST_ID");
  assert_null(v->hosts[1].id_source); /* written before the key */
  assert_int_equal(v->links.pairs[0].same_host, 0);
  assert_true(v->links.pairs[0].transport.has);
  assert_string_equal(v->links.pairs[0].transport.kind, "tcp");
  assert_string_equal(v->links.pairs[0].transport.interface, "veth0");
  assert_double_equal(v->links.pairs[0].transport.payload_bytes.v, 1e6, 0);
  assert_int_equal(v->links.pairs[0].transport.mpi_same_node, 0);
  assert_true(v->mpi.has);
  assert_string_equal(v->mpi.btl, "tcp,self");
  assert_string_equal(v->mpi.pml, "");
  assert_null(v->mpi.mtl);
  assert_int_equal(v->links.pairs[0].npoints, 1);
  assert_int_equal(v->links.pairs[0].points[0].samples_us.n, 2);
  assert_true(v->allreduce.has_points);
  assert_int_equal(v->allreduce.verified, 1);
  assert_int_equal(v->allreduce.npoints, 1);
  assert_double_equal(v->allreduce.points[0].time_us.v, 3, 0);
  assert_double_equal(v->allreduce.points[0].busbw_stats.ci_low.v, 1.4, 0);
  assert_false(v->allreduce.points[0].busbw_stats.ci_high.has);
  assert_int_equal(v->nplain, 0);
  assert_false(v->elapsed_s.has);
  cal_fleet_view_free(v);
  cal_fleet_view_free(NULL);
  cal_profile_view_free(NULL);
  json_decref(r);
}

CAL_TEST_MAIN(
    cmocka_unit_test(reference_profile), cmocka_unit_test(test_profiles),
    cmocka_unit_test(missing_keys), cmocka_unit_test(fleet))
