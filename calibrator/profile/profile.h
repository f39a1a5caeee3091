/* The calibrated profile: schema "calibrate-profile/1".
 *
 * In memory a profile is a validated jansson tree; readers use jansson's
 * accessors (json_object_get, json_unpack) on `root`.  Layout, documented
 * in results/schema/calibrate-profile-1.schema.json:
 *
 *   top level (read by existing planners): device_name, device, gflops,
 *     gflops_per_core, optimal_batch_size, throughput, memory_gb,
 *     latency_ms (null until measured, never invented)
 *   schema, tool{name,version,git}, created, machine{...}, blas{...},
 *   settings{...}, quality{noisy,warnings[]}, and one object per section
 *   (gemm, scaling, peak, bandwidth, attention, batch_sweep, roofline).
 *
 * A measured point anywhere in a section is an object with
 *   "id":      stable identity, e.g. "gemm/fp32/1024x1024x1024/t1"
 *   "status":  "ok" | "skipped" | "failed"  (+ "reason" unless ok)
 *   "metric":  name of its primary figure, e.g. "gflops", "gbps",
 *              "examples_per_s"; the point then has
 *   "<metric>": the median, "samples_<metric>": every sample,
 *   "higher_is_better": true/false,
 *   "stats": {n, median, mean, min, max, stddev, mad, cv, ci_low, ci_high,
 *             ci_level, unstable} of samples_<metric>,
 *   "samples_ms": time per run of every sample, "time_ms": their median,
 *   and section-specific parameters.
 * compare walks the tree for such points and matches them by id. */
#ifndef CAL_PROFILE_H
#define CAL_PROFILE_H

#include <jansson.h>
#include <stddef.h>

#include "stats.h"

#define CAL_PROFILE_SCHEMA "calibrate-profile/1"

/* The top-level figures planners read, with their direction; they have no
 * samples (compare reports their ratio only).  The table belongs to the
 * library. */
typedef struct cal_top_figure {
  const char *key;
  int higher_is_better;
} cal_top_figure_t;
#define CAL_NTOP_FIGURES 4
extern const cal_top_figure_t cal_top_figures[CAL_NTOP_FIGURES];

struct cal_profile_view;

typedef struct cal_profile {
  json_t *root; /* owned by the profile */
  char *path;   /* where it was read from; owned */
  /* the typed view of root (view.h: cal_profile_view), built at load;
   * owned */
  struct cal_profile_view *view;
} cal_profile_t;

/* Largest profile file read (a million samples fit in a tenth of it). */
#define CAL_PROFILE_MAX_BYTES ((size_t)256 << 20)

/* Read and validate a profile: path "-" is standard input, anything else
 * must be a regular file (cal_file_open).  On failure returns CAL_EIO
 * (unreadable, not a regular file, larger than CAL_PROFILE_MAX_BYTES),
 * CAL_EPARSE (not JSON / truncated) or CAL_ESCHEMA (wrong schema, wrong
 * types or ranges, a point id twice, stats that disagree with their
 * samples) and writes one line naming the problem into err.
 * Free with cal_profile_free(). */
int cal_profile_load(const char *path, cal_profile_t **out, char *err,
                     size_t errlen);
/* Read a profile-sized file (at most CAL_PROFILE_MAX_BYTES) whole into
 * *buf (owned by the caller, free()): 0, or CAL_EIO ("cannot open WHATPATH:
 * why", what e.g. "profile " or "") or CAL_ENOMEM with one line in err and
 * *buf NULL. */
int cal_profile_read_text(const char *path, const char *what, char **buf,
                          size_t *len, char *err, size_t errlen);
/* The same from len bytes of text already read (path names it in
 * messages and in the profile): what load does after reading the file. */
int cal_profile_parse(const char *buf, size_t len, const char *path,
                      cal_profile_t **out, char *err, size_t errlen);
/* Validate an in-memory tree the same way (used by load and by tests). */
int cal_profile_validate(const json_t *root, char *err, size_t errlen);
/* Accepts NULL. */
void cal_profile_free(cal_profile_t *p);

/* Write len bytes of buf through the one writer (cal_out.h): regular files
 * replaced atomically, special files written through, "-" is stdout.
 * Nothing is left behind on failure.  CAL_EIO (or CAL_ENOMEM) with err
 * filled. */
int cal_write_atomic(const char *path, const char *buf, size_t len,
                     char *err, size_t errlen);

/* Write JSON (two-space indent, a final newline) as cal_write_atomic
 * does.  CAL_EIO with err filled on failure. */
int cal_json_write_atomic(const json_t *root, const char *path, char *err,
                          size_t errlen);

/* The "stats" object of a point: n, median, mean, min, max, stddev, mad,
 * cv, ci_low, ci_high, ci_level, unstable.  New reference, NULL on
 * allocation failure. */
json_t *cal_stats_json(const cal_summary_t *s, int unstable);

/* Walk every measured point (an object with "id" and "metric") in the
 * profile's sections, in document order. */
typedef int (*cal_point_visit_fn)(const char *section, json_t *point,
                                  void *arg);
int cal_profile_each_point(const json_t *root, cal_point_visit_fn fn,
                           void *arg);

/* Reading a loaded tree: the number under key k of o, or dflt when it is
 * absent or not a number; the string, or "" when absent. */
double cal_json_num(const json_t *o, const char *k, double dflt);
const char *cal_json_str(const json_t *o, const char *k);

#endif
