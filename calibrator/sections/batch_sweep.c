/* The batch sweep: throughput versus batch size of the model-shaped layer,
 * prefill and decode, with noise-aware peak detection. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "layer.h"
#include "curve.h"
#include "curve_cmd.h"
#include "run.h"
#include "timer.h"

/* the default list: powers of two from 1 to this, then extended while the
 * throughput still rises */
#define SWEEP_DEFAULT_MAX 32

typedef struct {
  int64_t batch;
  int status;        /* cal_point_status_t */
  double *samples;   /* examples/s, owned */
  size_t n;
  double step_s;     /* median time of one step */
} sweep_pt_t;

/* The curve as the analysis reads it (samples borrowed); free() it.
 * Anything but a measured point counts as skipped. */
static cal_curve_point_t *curve_of(const sweep_pt_t *pts, size_t n) {
  cal_curve_point_t *cp = calloc(n ? n : 1, sizeof *cp);
  for (size_t j = 0; cp && j < n; j++) {
    cp[j].batch_size = pts[j].batch;
    cp[j].status = pts[j].status == CAL_POINT_OK ? CAL_POINT_OK : CAL_POINT_SKIPPED;
    cp[j].samples = pts[j].samples;
    cp[j].n = pts[j].n;
  }
  return cp;
}

static void peak_opts(const cal_run_t *r, cal_curve_opts_t *po) {
  cal_curve_opts_default(po);
  po->tolerance = r->sweep.tolerance;
  po->policy = (cal_curve_policy_t)r->sweep.policy;
  po->ci_level = r->hcfg.ci_level;
}

static double point_cost(const cal_harness_cfg_t *h, double run_s) {
  double per_sample = run_s > h->min_sample_s ? run_s : h->min_sample_s;
  return h->warmup_s + 3 * run_s + (h->samples + 2) * per_sample;
}

static void shape_for(const cal_run_t *r, int decode, int64_t batch,
                      cal_params_t *p) {
  const cal_sweep_opts_t *o = &r->sweep;
  memset(p, 0, sizeof *p);
  p->hidden = o->hidden;
  p->heads = o->heads;
  p->kv_heads = o->kv_heads;
  p->ffn = o->ffn;
  p->seq = o->seq;
  p->batch = batch;
  p->decode = decode;
  p->threads = r->threads;
  p->seed = r->seed + 1000;
  p->variant = -1;
}

static json_t *skipped_point(const char *id, int64_t batch, const char *why,
                             double mem) {
  return json_pack("{s:s, s:s, s:s, s:I, s:f}", "id", id, "status", "skipped",
                   "reason", why, "batch_size", (json_int_t)batch,
                   "memory_bytes", mem);
}

/* The JSON of a measured sweep point; fills sp (status, samples of
 * examples/s, step time).  NULL when out of memory. */
static json_t *point_json(const cal_run_t *r, int decode, const char *id,
                          int64_t b, const cal_point_t *pt, sweep_pt_t *sp) {
  json_t *jp;
  sp->status = pt->status;
  if (pt->status != CAL_POINT_OK) {
    jp = json_pack("{s:s, s:s, s:s}", "id", id, "status",
                   pt->status == CAL_POINT_FAILED ? "failed" : "skipped",
                   "reason", pt->reason);
  } else {
    double lq = decode ? 1.0 : (double)r->sweep.seq;
    sp->n = pt->m.n;
    sp->samples = malloc(sp->n * sizeof *sp->samples);
    double *tok = malloc(sp->n * sizeof *tok);
    if (!sp->samples || !tok) {
      free(tok);
      return NULL;
    }
    for (size_t j = 0; j < sp->n; j++) {
      sp->samples[j] = (double)b / pt->m.samples_s[j];
      tok[j] = (double)b * lq / pt->m.samples_s[j];
    }
    cal_summary_t es, ts;
    cal_summarize(sp->samples, sp->n, r->hcfg.ci_level, &es);
    cal_summarize(tok, sp->n, r->hcfg.ci_level, &ts);
    free(tok);
    sp->step_s = pt->m.time.median;
    jp = cal_metric_json(id, "examples_per_s", 1, sp->samples, &es,
                         pt->m.unstable, &pt->m);
    if (jp) {
      json_object_set_new(jp, "tokens_per_s", json_real(ts.median));
      json_object_set_new(jp, "latency_ms", json_real(pt->m.time.median * 1e3));
      json_object_set_new(jp, "gflops", json_real(pt->gflops_sum.median));
      json_object_set_new(jp, "variant", json_string(pt->variant));
      json_object_set_new(jp, "threads", json_integer(r->threads));
      json_object_set_new(jp, "kernel", json_string(pt->kernel->name));
      json_object_set_new(jp, "dtype", json_string(pt->kernel->dtype));
      json_object_set_new(jp, "flops_per_run", json_real(pt->flops));
      json_object_set_new(jp, "bytes_per_run", json_real(pt->bytes));
    }
  }
  return jp;
}

/* Check the layer once at batch 1 before anything is timed. */
static int verify_shape(cal_run_t *r, const cal_kernel_t *k, int decode,
                        char *why, size_t len) {
  cal_params_t p;
  shape_for(r, decode, 1, &p);
  if (r->thr)
    cal_threads_use(r->thr, r->threads);
  void *st = NULL;
  int rc = k->setup(&p, &st);
  if (rc == 0)
    rc = k->run(st);
  if (rc == 0)
    rc = k->verify(st);
  k->teardown(st);
  if (rc < 0)
    snprintf(why, len, "%s at batch 1: %s", k->name, cal_strerror(rc));
  return rc;
}

static int sweep_mode(cal_run_t *r, int decode, double budget, json_t *modes) {
  const cal_sweep_opts_t *o = &r->sweep;
  const cal_kernel_t *k =
      cal_kernel_find(decode ? "layer_decode" : "layer_prefill");
  const char *mode = decode ? "decode" : "prefill";
  int64_t *list = NULL;
  size_t nlist = 0, cap = 0, npts = 0;
  sweep_pt_t *pts = NULL;
  json_t *jm = NULL, *jpts = NULL;
  cal_curve_result_t *res = NULL;
  int rc = 0;
  const char *stop = "end of the batch list";
  double t0 = cal_now();

  jm = json_object();
  jpts = json_array();
  if (!jm || !jpts) {
    rc = CAL_ENOMEM;
    goto out;
  }
  json_object_set_new(modes, mode, jm);
  json_object_set_new(jm, "points", jpts);
  if (o->batches) {
    cap = o->nbatches + 64;
    list = malloc(cap * sizeof *list);
    if (!list) {
      rc = CAL_ENOMEM;
      goto out;
    }
    memcpy(list, o->batches, o->nbatches * sizeof *list);
    nlist = o->nbatches;
  } else {
    int64_t *d = NULL;
    if ((rc = cal_batches_default(SWEEP_DEFAULT_MAX, &d, &nlist)) < 0)
      goto out;
    cap = nlist + 64;
    list = realloc(d, cap * sizeof *list);
    if (!list) {
      free(d);
      rc = CAL_ENOMEM;
      goto out;
    }
  }
  pts = calloc(cap, sizeof *pts);
  if (!pts) {
    rc = CAL_ENOMEM;
    goto out;
  }

  char why[256];
  cal_progress(r, "batch sweep %s: verifying the layer", mode);
  rc = verify_shape(r, k, decode, why, sizeof why);
  if (rc == CAL_EVERIFY) {
    r->failed++;
    cal_progress_done(r);
    fprintf(stderr, "calibrate: %s failed verification\n", why);
    json_object_set_new(jm, "status", json_string("failed"));
    json_object_set_new(jm, "reason", json_string(why));
    rc = 0;
    goto out;
  }
  if (rc == CAL_ENOMEM || rc == CAL_EUNSUPP) {
    json_object_set_new(jm, "status", json_string("skipped"));
    json_object_set_new(jm, "reason", json_string(why));
    rc = 0;
    goto out;
  }
  if (rc < 0)
    goto out;
  json_object_set_new(jm, "status", json_string("measured"));

  double mem_budget = o->memory_budget > 0 ? o->memory_budget
                                           : r->hcfg.mem_avail_bytes;
  if (r->rounds > 1) {
    /* --ci: a fixed list measured in interleaved rounds */
    const cal_kernel_t **ks = calloc(nlist, sizeof *ks);
    cal_params_t *ps = calloc(nlist, sizeof *ps);
    cal_point_t *cps = calloc(nlist, sizeof *cps);
    size_t *at = calloc(nlist, sizeof *at);
    size_t nj = 0;
    if (!ks || !ps || !cps || !at)
      rc = CAL_ENOMEM;
    for (size_t i = 0; rc == 0 && i < nlist; i++) {
      shape_for(r, decode, list[i], &ps[nj]);
      cal_layer_shape_t s;
      cal_layer_shape_from_params(&ps[nj], &s);
      if (cal_layer_mem_bytes(&s) <= mem_budget) {
        ks[nj] = k;
        at[nj++] = i;
      }
    }
    if (rc == 0)
      rc = cal_run_points(r, ks, ps, nj, cps, mode);
    for (size_t i = 0, j = 0; rc == 0 && i < nlist; i++) {
      char id[160];
      snprintf(id, sizeof id, "batch_sweep/%s/%s/h%lld/s%lld/b%lld", mode,
               o->preset, (long long)o->hidden, (long long)o->seq,
               (long long)list[i]);
      cal_params_t p;
      shape_for(r, decode, list[i], &p);
      cal_layer_shape_t s;
      cal_layer_shape_from_params(&p, &s);
      double mem = cal_layer_mem_bytes(&s);
      sweep_pt_t *sp = &pts[npts++];
      sp->batch = list[i];
      sp->status = CAL_POINT_SKIPPED;
      json_t *jp;
      if (j < nj && at[j] == i) {
        jp = point_json(r, decode, id, list[i], &cps[j++], sp);
      } else {
        snprintf(why, sizeof why, "needs %.0f MiB, more than the %.0f MiB memory budget",
                 mem / 1048576.0, mem_budget / 1048576.0);
        jp = skipped_point(id, list[i], why, mem);
        stop = "memory limit";
      }
      if (!jp) {
        rc = CAL_ENOMEM;
        break;
      }
      json_object_set_new(jp, "batch_size", json_integer(list[i]));
      json_object_set_new(jp, "memory_bytes", json_real(mem));
      json_array_append_new(jpts, jp);
    }
    if (cps)
      for (size_t j = 0; j < nlist; j++)
        cal_point_free(&cps[j]);
    free(ks);
    free(ps);
    free(cps);
    free(at);
    if (rc < 0)
      goto out;
    if (strcmp(stop, "memory limit") != 0)
      stop = "fixed batch list (--ci)";
    nlist = 0; /* the sequential loop below has nothing left to do */
  }

  int blocked = 0; /* memory or time ran out: the rest is skipped */
  double last_step = 0;
  int64_t last_batch = 0;
  for (size_t i = 0; i < nlist; i++) {
    int64_t b = list[i];
    cal_params_t p;
    shape_for(r, decode, b, &p);
    cal_layer_shape_t s;
    cal_layer_shape_from_params(&p, &s);
    double mem = cal_layer_mem_bytes(&s);
    char id[160];
    snprintf(id, sizeof id, "batch_sweep/%s/%s/h%lld/s%lld/b%lld", mode,
             o->preset, (long long)o->hidden, (long long)o->seq, (long long)b);
    sweep_pt_t *sp = &pts[npts++];
    sp->batch = b;
    sp->status = CAL_POINT_SKIPPED;
    if (blocked) {
      json_array_append_new(jpts, skipped_point(id, b, stop, mem));
      continue;
    }
    if (mem > mem_budget) {
      snprintf(why, sizeof why,
               "needs %.0f MiB, more than the %.0f MiB memory budget", mem / 1048576.0,
               mem_budget / 1048576.0);
      json_array_append_new(jpts, skipped_point(id, b, why, mem));
      stop = "memory limit";
      blocked = 1;
      continue;
    }
    if (last_batch) {
      double est = point_cost(&r->hcfg, last_step * (double)b / (double)last_batch);
      if (cal_now() - t0 + est > budget) {
        stop = "time budget";
        json_array_append_new(jpts, skipped_point(id, b, stop, mem));
        blocked = 1;
        continue;
      }
    }
    cal_progress(r, "batch sweep %s: batch %lld", mode, (long long)b);
    cal_point_t pt;
    if ((rc = cal_run_point(r, k, &p, &pt)) < 0)
      goto out;
    json_t *jp = point_json(r, decode, id, b, &pt, sp);
    cal_point_free(&pt);
    if (!jp) {
      rc = CAL_ENOMEM;
      goto out;
    }
    if (sp->status == CAL_POINT_FAILED) {
      stop = "verification failed";
      blocked = 1;
    } else if (sp->status == CAL_POINT_OK) {
      last_step = sp->step_s;
      last_batch = b;
    }
    json_object_set_new(jp, "batch_size", json_integer(b));
    json_object_set_new(jp, "memory_bytes", json_real(mem));
    json_array_append(jpts, jp);
    json_decref(jp);

    /* at the end of the list, extend while the curve still rises */
    if (i + 1 == nlist && !blocked && o->extend) {
      cal_curve_point_t *cp = curve_of(pts, npts);
      if (!cp) {
        rc = CAL_ENOMEM;
        goto out;
      }
      cal_curve_opts_t po;
      peak_opts(r, &po);
      int more = cal_sweep_should_extend(cp, npts, &po);
      free(cp);
      if (more > 0 && b * 2 <= o->max_batch && nlist < cap) {
        list[nlist++] = b * 2;
        stop = "still rising: extended";
      } else if (more > 0) {
        stop = b * 2 > o->max_batch ? "largest batch allowed (--max-batch)"
                                    : "extension limit";
      } else if (o->batches == NULL || nlist > o->nbatches) {
        stop = "stopped rising";
      }
    }
  }

  /* analysis */
  cal_curve_point_t *cp = curve_of(pts, npts);
  if (!cp) {
    rc = CAL_ENOMEM;
    goto out;
  }
  cal_curve_opts_t po;
  peak_opts(r, &po);
  rc = cal_curve_analyze(cp, npts, &po, &res);
  free(cp);
  if (rc < 0)
    goto out;
  cal_curve_rec_t rec, *recp = NULL;
  if (o->target_effective_batch > 0 &&
      cal_curve_recommend(res, o->target_effective_batch, &rec) == 0)
    recp = &rec;
  json_t *an = cal_curve_json(NULL, res, recp);
  if (!an) {
    rc = CAL_ENOMEM;
    goto out;
  }
  json_object_set_new(jm, "stop_reason", json_string(stop));
#define COPY_KEY(key) json_object_set(jm, key, json_object_get(an, key))
  COPY_KEY("peak_batch_size");
  COPY_KEY("knee_batch_size");
  COPY_KEY("optimal_batch_size");
  COPY_KEY("peak_examples_per_s");
  COPY_KEY("shape");
  COPY_KEY("degradation_pct");
  COPY_KEY("tied_batch_sizes");
  COPY_KEY("recommendation");
#undef COPY_KEY
  /* the analysis's own copy of the points would repeat the samples */
  json_object_del(an, "points");
  json_object_set_new(jm, "analysis", an);
  /* batch-1 step time and the optimal point's throughput for the top level */
  double lat = NAN;
  for (size_t j = 0; j < npts; j++)
    if (pts[j].batch == 1 && pts[j].status == CAL_POINT_OK)
      lat = pts[j].step_s * 1e3;
  json_object_set_new(jm, "latency_ms_batch_1", isnan(lat) ? json_null() : json_real(lat));
  json_object_set_new(jm, "time_s", json_real(cal_now() - t0));
out:
  cal_curve_result_free(res);
  for (size_t j = 0; j < npts; j++)
    free(pts[j].samples);
  free(pts);
  free(list);
  return rc;
}

int cal_section_batch(cal_run_t *r) {
  cal_progress_section(r, CAL_SEC_BATCH);
  const cal_sweep_opts_t *o = &r->sweep;
  cal_layer_shape_t s = {o->hidden, o->heads, o->kv_heads, o->ffn, o->seq, 1, 0};
  json_t *sec = json_pack(
      "{s:{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f}, s:s, s:f, s:f, s:o, s:f, s:o}",
      "model", "preset", o->preset, "hidden", (json_int_t)o->hidden, "heads",
      (json_int_t)o->heads, "kv_heads", (json_int_t)o->kv_heads, "head_dim",
      (json_int_t)(o->hidden / o->heads), "ffn", (json_int_t)o->ffn, "seq",
      (json_int_t)o->seq, "weights_bytes", cal_layer_weight_bytes(&s),
      "optimize", cal_curve_policy_name((cal_curve_policy_t)o->policy),
      "tolerance_pct", 100.0 * o->tolerance, "memory_budget_bytes",
      o->memory_budget > 0 ? o->memory_budget : r->hcfg.mem_avail_bytes,
      "target_effective_batch",
      o->target_effective_batch > 0 ? json_integer(o->target_effective_batch)
                                    : json_null(),
      "time_budget_s", cal_run_budget(r, CAL_SEC_BATCH), "modes", json_object());
  if (!sec)
    return CAL_ENOMEM;
  json_object_set_new(sec, "flops_note",
                      json_string("matrix products and attention; elementwise "
                                  "work (norms, SiLU, residuals) not counted"));
  json_object_set_new(r->root, "batch_sweep", sec);
  json_t *modes = json_object_get(sec, "modes");
  int nmodes = (o->modes & 1) + ((o->modes >> 1) & 1);
  double budget = cal_run_budget(r, CAL_SEC_BATCH);
  for (int m = 0; m < 2; m++) {
    if (!(o->modes & (1 << m)))
      continue;
    /* prefill gets its share; decode what is left */
    double b = m == 0 && nmodes == 2 ? budget * 0.5 : budget;
    if (m == 1 && nmodes == 2)
      b = budget - (cal_now() - r->sec_start);
    int rc = sweep_mode(r, m, b > 1.0 ? b : 1.0, modes);
    if (rc < 0)
      return rc;
  }
  /* top level: the training-like mode (prefill) when measured, else decode */
  json_t *top = NULL;
  for (int m = 0; m < 2 && !top; m++) {
    json_t *jm = json_object_get(modes, m == 0 ? "prefill" : "decode");
    if (jm && json_is_integer(json_object_get(jm, "optimal_batch_size")))
      top = jm;
  }
  if (top) {
    json_int_t ob = json_integer_value(json_object_get(top, "optimal_batch_size"));
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(top, "points"), i, p) {
      if (json_integer_value(json_object_get(p, "batch_size")) == ob &&
          json_is_number(json_object_get(p, "examples_per_s")))
        json_object_set_new(r->root, "throughput",
                            json_real(json_number_value(json_object_get(p, "examples_per_s"))));
    }
    json_object_set_new(r->root, "optimal_batch_size", json_integer(ob));
    json_t *lat = json_object_get(top, "latency_ms_batch_1");
    if (json_is_number(lat))
      json_object_set(r->root, "latency_ms", lat);
    json_object_set_new(sec, "top_level_mode",
                        json_string(top == json_object_get(modes, "prefill")
                                        ? "prefill" : "decode"));
  }
  return 0;
}
