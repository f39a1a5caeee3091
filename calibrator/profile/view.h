/* Typed views of a loaded profile: the reading half of the JSON contract.
 *
 * profile/ writes profiles (profile_run.c and the *_json.c modules) and
 * reads them back here; code outside profile/ reads the views below
 * instead of looking keys up by name.  A view is built once from a
 * validated tree (cal_profile_view) and lives as long as the profile.
 * The views read; they judge nothing: what a reader did with a missing
 * or odd value (a default, a guess from the metric's name) it still does,
 * from the absent marks below.
 *
 * Conventions, the same in every view:
 *   - strings point into the profile's tree (valid while it lives); NULL
 *     when the key is absent or not a string (JSON null included);
 *   - numbers are cal_vnum_t: `v` is NAN when the key is absent or not a
 *     number, `has` says it was a number, `is_int`/`i` keep a JSON integer
 *     exactly (so a figure can be written back as it was read);
 *   - booleans are int: 1 true, 0 false, CAL_VABSENT (-1) when absent or
 *     not a boolean;
 *   - arrays are a pointer and a count, owned by the view; count 0 (and
 *     possibly a NULL pointer) when the key is absent;
 *   - key/value objects whose keys are data (dtype, cache level, mode
 *     name) are arrays of entries in document order, each with its key.
 *
 * Layout of the document: results/schema/calibrate-profile-1.schema.json
 * and profile.h; the fleet profile: calibrate-fleet-1.schema.json. */
#ifndef CAL_PROFILE_VIEW_H
#define CAL_PROFILE_VIEW_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define CAL_VABSENT (-1)

/* A number as read: v (NAN unless has), and the integer when is_int. */
typedef struct cal_vnum {
  double v;
  int64_t i;  /* the value when is_int, else 0 */
  int has;    /* the key was present and a number */
  int is_int; /* written as a JSON integer */
} cal_vnum_t;

/* The number as a new JSON value of the type it was read with (integer or
 * real); JSON null when !has.  NULL on allocation failure. */
json_t *cal_vnum_json(const cal_vnum_t *n);

/* An array of numbers (samples); elements that are not numbers are NAN
 * (a validated profile's samples of ok points are all numbers).
 * has: the key was present and an array (possibly empty). */
typedef struct cal_vsamples {
  double *v; /* n values, owned by the view */
  size_t n;
  int has;
} cal_vsamples_t;

/* One scalar under a key whose name is data (or a point's parameter):
 * exactly one of num.has, str, boolean != CAL_VABSENT, is_null holds,
 * or none of them for an array/object value (then only key is set). */
typedef struct cal_vfield {
  const char *key;
  cal_vnum_t num;
  const char *str;
  int boolean;
  int is_null;
} cal_vfield_t;

/* The list of such fields (an object's members in document order). */
typedef struct cal_vfields {
  cal_vfield_t *f; /* owned */
  size_t n;
} cal_vfields_t;

/* The field named key, NULL when there is none. */
const cal_vfield_t *cal_vfields_get(const cal_vfields_t *fs, const char *key);

/* A list of strings (ISA extensions, warnings). */
typedef struct cal_vstrings {
  const char **s; /* owned array; the strings point into the tree */
  size_t n;
  int has;        /* the key was present and an array */
} cal_vstrings_t;

/* A point's "stats" object (profile.h); has: it was an object. */
typedef struct cal_vstats {
  int has;
  cal_vnum_t n, median, mean, min, max, stddev, mad, cv;
  cal_vnum_t ci_low, ci_high, ci_level;
  int unstable; /* boolean */
} cal_vstats_t;

/* ------------------------------------------------------- measured point */

/* A measured point: an object with "id" and "status" anywhere in a
 * section (the objects cal_profile_each_point visits).  The named fields
 * below are the ones sections write; every member, named or not, is also
 * in params. */
typedef struct cal_vpoint {
  const char *section; /* "gemm", "scaling", "peak", ... (static string) */
  const char *id, *status, *reason, *metric;
  int higher_is_better; /* boolean as written */
  /* As compare decides it: higher_is_better when written, else lower for
   * a metric "ms" or ending in "_ms", higher otherwise (1 when no metric). */
  int higher_better;
  cal_vnum_t value;       /* the figure under the key named by metric */
  cal_vsamples_t samples; /* samples_<metric> */
  cal_vstats_t stats;
  cal_vnum_t time_ms;
  cal_vsamples_t samples_ms;
  int contaminated, remeasured, throttled, pinned; /* booleans */
  const char *threads_not_parallel; /* why its threads did not run side by
                                       side; NULL when they did */
  /* what was measured */
  const char *kernel, *variant, *dtype, *engine, *impl, *confirms, *role_of;
  const char *level; /* bandwidth: "L1", "L2", "L3", "memory" as a string */
  cal_vnum_t threads, iterations_per_sample, iters;
  cal_vnum_t m, n, k;                      /* gemm, scaling (n) */
  cal_vnum_t batch_size;                   /* batch_sweep */
  cal_vnum_t working_set_bytes;            /* bandwidth */
  cal_vnum_t heads, kv_heads, head_dim, nq, nk, batch; /* attention */
  int causal;                              /* attention, boolean */
  /* figures (each also under its own key when it is the metric) */
  cal_vnum_t gflops, gops, gbps, examples_per_s, tokens_per_s, latency_ms;
  cal_vnum_t efficiency, speedup, gflops_per_thread, ratio_to_gemm;
  cal_vnum_t speedup_vs_reference, bytes_per_run, flops_per_run;
  cal_vnum_t memory_bytes;
  /* batch sweep: the process's memory while the point ran (memuse.h),
   * beside the estimate memory_bytes; swapped a boolean */
  cal_vnum_t rss_before_bytes, peak_rss_bytes, swap_bytes, major_faults;
  int swapped;
  /* every member, in document order (named ones included; an array or
   * object member has only its key set) */
  cal_vfields_t params;
  /* every "samples_<figure>" array, in document order */
  struct cal_vfigure_samples *figure_samples; /* owned */
  size_t nfigure_samples;
} cal_vpoint_t;

/* One "samples_<figure>" array of a point. */
typedef struct cal_vfigure_samples {
  const char *figure; /* <figure>: the key without "samples_" */
  cal_vsamples_t s;
} cal_vfigure_samples_t;

/* The samples of figure ("examples_per_s" for "samples_examples_per_s"),
 * NULL when the point has no such array. */
const cal_vsamples_t *cal_vpoint_samples(const cal_vpoint_t *p,
                                         const char *figure);

/* The points of one section or mode: one per element of its "points"
 * array, in order.  An element with "id" and "status" is the profile's
 * own entry (a pointer into cal_profile_view_t.points); any other is read
 * the same way and lives only here. */
typedef struct cal_vpoints {
  const cal_vpoint_t **p; /* owned array */
  size_t n;
} cal_vpoints_t;

/* ------------------------------------------------------------- machine */

typedef struct cal_vcache {
  cal_vnum_t level, size_bytes, line_bytes, instances, cores_sharing;
  const char *type;
} cal_vcache_t;

typedef struct cal_vmachine {
  int has; /* "machine" was an object */
  const char *hostname, *os, *affinity;
  struct {
    const char *arch, *vendor, *brand;
    cal_vnum_t family, model, stepping;
    cal_vstrings_t isa;
  } cpu;
  struct {
    cal_vnum_t packages, cores, hardware_threads, numa_nodes;
  } topology;
  cal_vnum_t usable_cores, allowed_cores, allowed_hardware_threads;
  cal_vnum_t cgroup_cpu_quota;
  struct {
    cal_vnum_t total_bytes, available_bytes, cgroup_limit_bytes;
  } memory;
  struct {
    cal_vnum_t base_mhz, max_mhz;
    const char *governor;
  } clocks;
  cal_vcache_t *caches; /* owned */
  size_t ncaches;
  int has_caches; /* "caches" was an array */
} cal_vmachine_t;

/* tool{name, version, git} */
typedef struct cal_vtool {
  const char *name, *version, *git;
} cal_vtool_t;

/* blas{...} */
typedef struct cal_vblas {
  int has;
  const char *library, *version, *config, *coretype, *coretype_source;
  const char *coretype_library_choice, *parallel;
  cal_vnum_t threads;
} cal_vblas_t;

/* settings{...}; every member also in fields */
typedef struct cal_vsettings {
  int has;
  int quick, ci; /* booleans */
  cal_vnum_t threads, samples, rounds, seed, min_sample_s, warmup_s;
  cal_vnum_t cv_threshold, ci_level, timer_resolution_s, budget_scale;
  const char *gemm_engine;
  cal_vfields_t fields;
} cal_vsettings_t;

/* quality{...} */
typedef struct cal_vquality {
  int has;
  int noisy, allow_busy; /* booleans */
  cal_vnum_t unstable_points, failed_points, contaminated_points;
  cal_vnum_t remeasured_points, elapsed_s, remeasure_s, watch_s;
  cal_vstrings_t warnings;
  cal_vfields_t section_times_s; /* section -> seconds */
} cal_vquality_t;

/* batch_source{...}: which batch-sweep curve the top-level figures come
 * from. */
typedef struct cal_vbatch_source {
  int has;
  const char *mode, *dtype, *engine, *preset, *workload;
  cal_vnum_t hidden, seq;
  int optimal_is_lower_bound; /* 1 true, 0 false, CAL_VABSENT where absent
                                 (profiles before it) */
} cal_vbatch_source_t;

/* ---------------------------------------------------------------- gemm */

/* gemm.dtypes.<dtype>.engines.<engine> */
typedef struct cal_vgemm_engine {
  const char *engine; /* the key */
  const char *kernel, *status, *reason;
} cal_vgemm_engine_t;

/* gemm.dtypes.<dtype>: the best figures of one element type. */
typedef struct cal_vgemm_dtype {
  const char *dtype; /* the key */
  const char *kernel, *status, *reason, *metric;
  cal_vnum_t best_gflops_1_thread, best_gflops_all_threads;
  cal_vnum_t best_gops_1_thread, best_gops_all_threads;
  cal_vgemm_engine_t *engines; /* owned */
  size_t nengines;
} cal_vgemm_dtype_t;

/* gemm.sweeps[]: one size sweep of one kernel and thread count. */
typedef struct cal_vgemm_sweep {
  const char *kernel, *engine, *dtype, *stop_reason, *best_id, *impl;
  cal_vnum_t threads, best_n, best_gflops, best_gops;
  cal_vnum_t best_gflops_in_sweep, best_gops_in_sweep, budget_s, time_s;
} cal_vgemm_sweep_t;

typedef struct cal_vgemm {
  int has;
  const char *operation, *engine_choice;
  struct {
    const char *version, *threading, *max_isa;
  } onednn;
  cal_vgemm_dtype_t *dtypes; /* owned */
  size_t ndtypes;
  cal_vgemm_sweep_t *sweeps; /* owned */
  size_t nsweeps;
  cal_vpoints_t points;
} cal_vgemm_t;

/* The dtype entry of gemm, NULL when none. */
const cal_vgemm_dtype_t *cal_vgemm_dtype(const cal_vgemm_t *g,
                                         const char *dtype);

/* ------------------------------------------------- scaling, peak, bw */

typedef struct cal_vscaling {
  int has;
  cal_vnum_t n;
  cal_vpoints_t points;
} cal_vscaling_t;

/* peak.theoretical.<dtype> */
typedef struct cal_vtheoretical {
  const char *dtype; /* the key */
  cal_vnum_t gflops, gflops_per_core, gops, gops_per_core;
} cal_vtheoretical_t;

typedef struct cal_vpeak {
  int has;
  struct {
    cal_vnum_t ghz;
    const char *method, *variant;
  } clock;
  struct {
    cal_vnum_t vector_bits, usable_cores, ghz;
    const char *assumption;
    cal_vfields_t ipc; /* dtype -> instructions per cycle */
  } model;
  cal_vtheoretical_t *theoretical; /* owned */
  size_t ntheoretical;
  cal_vpoints_t points;
} cal_vpeak_t;

/* bandwidth.caches[]: the cache levels the working sets were sized by. */
typedef struct cal_vbw_level {
  cal_vnum_t level, size_bytes, cores_sharing;
  const char *level_str; /* the level when written as a string */
} cal_vbw_level_t;

typedef struct cal_vbandwidth {
  int has;
  const char *convention, *working_sets;
  cal_vbw_level_t *caches; /* owned */
  size_t ncaches;
  cal_vpoints_t points;
} cal_vbandwidth_t;

/* attention.gemm_reference.<key> */
typedef struct cal_vattn_ref {
  const char *key; /* "t1", "t2", ... */
  cal_vnum_t gflops;
  const char *source;
} cal_vattn_ref_t;

typedef struct cal_vattention {
  int has;
  const char *flops_note;
  cal_vattn_ref_t *refs; /* owned */
  size_t nrefs;
  cal_vattn_ref_t *refs_bf16; /* attention.gemm_reference_bf16; owned */
  size_t nrefs_bf16;
  cal_vpoints_t points;
} cal_vattention_t;

/* ------------------------------------------------------------ roofline */

/* roofline.kernels[]: one kernel placed on the roofline. */
typedef struct cal_vroof_kernel {
  const char *kernel, *dtype, *variant, *level, *bound;
  cal_vnum_t threads, intensity_flop_per_byte, gflops, attainable_gflops;
  cal_vnum_t ceiling_gbps, ceiling_gflops, efficiency;
} cal_vroof_kernel_t;

/* roofline.ridge_flop_per_byte.<dtype> */
typedef struct cal_vridge {
  const char *dtype;   /* the key */
  cal_vfields_t level; /* level -> flop per byte */
} cal_vridge_t;

typedef struct cal_vroofline {
  int has;
  cal_vnum_t threads;
  cal_vfields_t compute_gflops, compute_kernel;   /* dtype -> */
  cal_vfields_t theoretical_gflops;               /* dtype -> */
  cal_vfields_t matrix_gflops, matrix_kernel, theoretical_matrix_gflops;
  cal_vfields_t bandwidth_gbps, bandwidth_kernel; /* level -> */
  cal_vfields_t efficiencies;                     /* name -> ratio */
  cal_vridge_t *ridge; /* owned */
  size_t nridge;
  cal_vroof_kernel_t *kernels; /* owned */
  size_t nkernels;
} cal_vroofline_t;

/* --------------------------------------------------------- batch sweep */

/* A mode's recommendation{...} */
typedef struct cal_vrecommend {
  int has;
  cal_vnum_t batch_size, accumulation_steps, effective_batch;
  cal_vnum_t target_effective_batch;
  int exact; /* boolean */
  const char *note;
} cal_vrecommend_t;

/* batch_sweep.modes.<name>: one curve (inference, decode, train...). */
typedef struct cal_vbatch_mode {
  const char *name; /* the key */
  const char *status, *stop_reason, *shape, *workload, *optimizer;
  cal_vnum_t peak_batch_size, peak_examples_per_s, knee_batch_size;
  cal_vnum_t optimal_batch_size, latency_ms_batch_1, degradation_pct;
  cal_vnum_t rise_pct, worst_batch_size, worst_drop_pct, time_s;
  cal_vnum_t layers, layers_measured, scaled_from_layers, vocab;
  cal_vnum_t model_params, model_state_bytes, memory_read_gbps;
  cal_vnum_t activation_bytes_per_example;
  cal_vnum_t activation_bytes_per_example_checkpointed;
  cal_vnum_t *tied_batch_sizes; /* owned */
  size_t ntied;
  cal_vrecommend_t recommendation;
  cal_vpoints_t points;
  cal_vfields_t fields; /* every scalar member, in document order */
} cal_vbatch_mode_t;

/* batch_sweep.model{...}: the layer shape swept. */
typedef struct cal_vbatch_model {
  int has;
  const char *preset;
  cal_vnum_t hidden, heads, kv_heads, head_dim, ffn, seq, weights_bytes;
} cal_vbatch_model_t;

typedef struct cal_vbatch_sweep {
  int has;
  const char *dtype, *engine, *optimize, *top_level_mode, *flops_note;
  cal_vnum_t tolerance_pct, target_effective_batch, time_budget_s;
  cal_vnum_t memory_budget_bytes;
  cal_vbatch_model_t model;
  cal_vbatch_mode_t *modes; /* owned, document order */
  size_t nmodes;
} cal_vbatch_sweep_t;

/* The mode named name, NULL when none (or name NULL). */
const cal_vbatch_mode_t *cal_vbatch_mode(const cal_vbatch_sweep_t *b,
                                         const char *name);

/* ------------------------------------------------------------- profile */

/* The whole profile. */
typedef struct cal_profile_view {
  const char *schema, *device_name, *device, *created, *headline_status;
  cal_vtool_t tool;
  cal_vmachine_t machine;
  cal_vblas_t blas;
  cal_vsettings_t settings;
  cal_vquality_t quality;
  /* top-level figures, null until measured (profile.h) */
  cal_vnum_t gflops, gflops_per_core, optimal_batch_size, throughput;
  cal_vnum_t memory_gb, latency_ms;
  cal_vbatch_source_t batch_source;
  cal_vfields_t headline_null_reasons; /* figure -> why it is null */
  cal_vgemm_t gemm;
  cal_vscaling_t scaling;
  cal_vpeak_t peak;
  cal_vbandwidth_t bandwidth;
  cal_vattention_t attention;
  cal_vroofline_t roofline;
  cal_vbatch_sweep_t batch_sweep;
  /* every measured point in cal_profile_each_point's order (section by
   * section in its fixed order, each section in document order) */
  cal_vpoint_t *points; /* owned */
  size_t npoints;
  /* the same points in the order the file holds them (its sections in the
   * order they appear in it): what a walk of the whole tree meets */
  const cal_vpoint_t **doc_points; /* owned, npoints of them */
  struct cal_varena *arena; /* private: what the view owns */
} cal_profile_view_t;

/* The view of a loaded profile: built at load (cal_profile_load/parse)
 * or on first use for a profile built otherwise; freed with the profile.
 * NULL only when memory ran out building it. */
const cal_profile_view_t *cal_profile_view(const cal_profile_t *p);

/* Build a view of any profile tree (validated or not: what is missing or
 * of another type reads as absent).  root must outlive the view.
 * 0, or CAL_ENOMEM. */
int cal_profile_view_build(const json_t *root, cal_profile_view_t **out);
/* Accepts NULL. */
void cal_profile_view_free(cal_profile_view_t *v);

/* The top-level figure named key (one of cal_top_figures or another
 * top-level figure above), NULL for an unknown key. */
const cal_vnum_t *cal_profile_view_figure(const cal_profile_view_t *v,
                                          const char *key);

/* --------------------------------------------------------------- fleet */

/* One message size of a link or of the all-reduce curve. */
typedef struct cal_vfleet_point {
  cal_vnum_t bytes, iters_per_sample, time_us;
  cal_vstats_t time_stats;
  cal_vsamples_t samples_us;
  cal_vnum_t bandwidth_gbps;          /* links */
  cal_vstats_t bandwidth_stats;
  cal_vnum_t algbw_gbps, busbw_gbps;  /* all-reduce */
  cal_vstats_t algbw_stats, busbw_stats;
} cal_vfleet_point_t;

/* hosts[].waiting_ranks[] */
typedef struct cal_vfleet_wait {
  cal_vnum_t rank, wait_s, cpu_s;
} cal_vfleet_wait_t;

/* hosts[]: one node and the profile it measured. */
typedef struct cal_vfleet_host {
  const char *host, *boot_id;
  const char *hostname, *id_source; /* absent in files written before them */
  cal_vnum_t *ranks; /* owned */
  size_t nranks;
  cal_vnum_t measuring_rank, exit_code;
  cal_vfleet_wait_t *waiting; /* owned */
  size_t nwaiting;
  /* the node's embedded profile, a tree inside the fleet document; NULL
   * when absent or JSON null (the node wrote none) */
  const json_t *profile;
  int malformed; /* the element is no object, or its profile is neither an
                    object nor null: readers refuse the fleet profile */
} cal_vfleet_host_t;

/* links.pairs[]: one direction between two ranks. */
typedef struct cal_vfleet_link {
  cal_vnum_t from_rank, to_rank;
  const char *from_host, *to_host; /* host names */
  int same_host; /* boolean (absent: -1, as cal_vbool_of) */
  struct {       /* what carried it; absent in files written before it */
    int has;
    const char *kind, *interface, *basis;
    cal_vnum_t interface_sent_bytes, interface_received_bytes, payload_bytes;
    int mpi_same_node; /* boolean */
  } transport;
  cal_vfleet_point_t *points; /* owned */
  size_t npoints;
} cal_vfleet_link_t;

/* compare_plain[] */
typedef struct cal_vfleet_plain {
  const char *what, *unit;
  cal_vnum_t bytes, ours, plain, ours_over_plain;
} cal_vfleet_plain_t;

typedef struct cal_fleet_view {
  const char *schema, *created;
  cal_vtool_t tool;
  cal_vnum_t ranks, host_count, links_elapsed_s, elapsed_s;
  cal_vfleet_host_t *hosts; /* owned */
  size_t nhosts;
  int has_hosts; /* "hosts" was an array */
  struct {
    int has;
    int intra_host; /* boolean */
    const char *note, *convention;
    cal_vfleet_link_t *pairs; /* owned */
    size_t npairs;
  } links;
  struct {
    int has;
    const char *op, *dtype, *placement, *busbw_convention;
    cal_vnum_t ranks, checked_values;
    int verified; /* boolean */
    cal_vfleet_point_t *points; /* owned */
    size_t npoints;
    int has_points; /* "points" was an array */
  } allreduce;
  cal_vfleet_plain_t *plain; /* owned */
  size_t nplain;
  struct { /* the MPI library and its component selection */
    int has;
    const char *library, *pml, *btl, *mtl, *btl_tcp_if_include;
  } mpi;
  struct cal_varena *arena; /* private: what the view owns */
} cal_fleet_view_t;

/* Build the view of a fleet document (schema CAL_FLEET_SCHEMA; what is
 * missing reads as absent).  root must outlive the view.  0 or
 * CAL_ENOMEM. */
int cal_fleet_view_build(const json_t *root, cal_fleet_view_t **out);
/* Accepts NULL. */
void cal_fleet_view_free(cal_fleet_view_t *v);

#endif
