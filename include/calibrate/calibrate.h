/* libcalibrate: what a planner needs from calibrate's profiles.
 *
 *   - load and validate a profile (schema "calibrate-profile/1") in one
 *     call, with a one-line error;
 *   - read the figures planners use: best GFLOPS per dtype and per core,
 *     optimal batch size and throughput, memory, and the batch curve with
 *     its peak and knee;
 *   - analyse a throughput-versus-batch-size curve (the code behind
 *     `calibrate peak`);
 *   - split work across machines in proportion to their throughput (the
 *     code behind `calibrate plan`).
 *
 * Build with `pkg-config --cflags --libs calibrate`.
 *
 * Conventions:
 *   - Every name starts with cal_ (CAL_/CALIBRATE_ for macros).
 *   - Functions returning int return CAL_SUCCESS (0) or a negative
 *     CAL_FAIL_* status; cal_status_message() describes a status.
 *     Functions returning a pointer or a count never fail.
 *   - Handles are opaque.  A handle made by cal_X_load/analyze/compute is
 *     owned by the caller and freed with cal_X_free(), which accepts NULL.
 *     Strings returned by accessors belong to the handle and live as long
 *     as it does; do not free them.
 *   - Inputs are never modified and are not kept: arrays passed in may be
 *     freed as soon as the call returns.
 *   - Handles hold no global state: different handles may be used from
 *     different threads at once; one handle is safe to read from several
 *     threads.
 *   - Figures a profile does not have (not measured, null, or an
 *     unsupported dtype) are CAL_FAIL_NOTFOUND, never invented. */
#ifndef CALIBRATE_H
#define CALIBRATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; cal_version_number() gives the library's.
 * The shared library's SONAME carries the major version. */
#define CALIBRATE_VERSION_MAJOR 0
#define CALIBRATE_VERSION_MINOR 1
#define CALIBRATE_VERSION_PATCH 0
#define CALIBRATE_VERSION_NUMBER                                           \
  (CALIBRATE_VERSION_MAJOR * 10000 + CALIBRATE_VERSION_MINOR * 100 +       \
   CALIBRATE_VERSION_PATCH)

#if defined(CALIBRATE_BUILDING) && defined(__GNUC__)
#define CALIBRATE_API __attribute__((visibility("default")))
#else
#define CALIBRATE_API
#endif

/* ---- status and version ----------------------------------------------- */

enum {
  CAL_SUCCESS = 0,
  CAL_FAIL_NOMEM = -1,    /* out of memory */
  CAL_FAIL_INVAL = -2,    /* an argument is out of range */
  CAL_FAIL_IO = -4,       /* a file cannot be opened or read */
  CAL_FAIL_PARSE = -5,    /* not JSON, or truncated */
  CAL_FAIL_SCHEMA = -6,   /* not a valid calibrate profile */
  CAL_FAIL_NOTFOUND = -11 /* the profile does not have that figure */
};

/* A short sentence for a status ("profile does not match the schema");
 * static storage, never NULL. */
CALIBRATE_API const char *cal_status_message(int status);

/* The library's version, as CALIBRATE_VERSION_NUMBER (major * 10000 +
 * minor * 100 + patch) and as "MAJOR.MINOR.PATCH" (static storage). */
CALIBRATE_API int cal_version_number(void);
CALIBRATE_API const char *cal_version_string(void);

/* ---- a profile: one machine ------------------------------------------- */

typedef struct cal_machine cal_machine_t;

/* Read and validate the profile at path ("-" is standard input; anything
 * else must be a regular file of at most 256 MiB): JSON, schema
 * "calibrate-profile/1", types and ranges of every figure, every point's
 * statistics consistent with its samples.  On success *out is a new
 * handle (free with cal_machine_free).  On failure *out is NULL, the
 * status is CAL_FAIL_IO, _PARSE, _SCHEMA, _NOMEM or _INVAL (path or out
 * NULL), and when err is not NULL it receives one line naming the file
 * and the problem (truncated to errlen bytes, always terminated). */
CALIBRATE_API int cal_machine_load(const char *path, cal_machine_t **out,
                                   char *err, size_t errlen);
/* The same from len bytes of text in memory; name stands for the file in
 * messages and in cal_machine_path(). */
CALIBRATE_API int cal_machine_parse(const char *text, size_t len,
                                    const char *name, cal_machine_t **out,
                                    char *err, size_t errlen);
/* Accepts NULL. */
CALIBRATE_API void cal_machine_free(cal_machine_t *m);

/* The machine's name (the profile's device_name, else its path) and the
 * path it was read from; they belong to m. */
CALIBRATE_API const char *cal_machine_name(const cal_machine_t *m);
CALIBRATE_API const char *cal_machine_path(const cal_machine_t *m);

/* Best verified GEMM figure of a dtype ("fp32", "fp64", "bf16", "int8";
 * int8 is in GOPS) with all usable cores (*all_cores) and with one pinned
 * thread (*per_core); dtype NULL gives the profile's headline (its
 * top-level gflops and gflops_per_core).  Either pointer may be NULL; a
 * figure the profile lacks is NaN.  CAL_FAIL_NOTFOUND when it has
 * neither (dtype not measured or unsupported), CAL_FAIL_INVAL when m is
 * NULL. */
CALIBRATE_API int cal_machine_gflops(const cal_machine_t *m,
                                     const char *dtype, double *all_cores,
                                     double *per_core);

/* The batch size a planner should use and the throughput there
 * (examples/s), the profile's top-level optimal_batch_size and
 * throughput: what `calibrate plan` splits by.  Either pointer may be
 * NULL.  CAL_FAIL_NOTFOUND when the profile has no batch sweep figures
 * (then *batch is 0 and *examples_per_s NaN). */
CALIBRATE_API int cal_machine_throughput(const cal_machine_t *m,
                                         int64_t *batch,
                                         double *examples_per_s);

/* Memory the machine offers, in bytes: machine.memory.available_bytes,
 * else memory_gb x 1e9 (the rule `calibrate plan` uses).
 * CAL_FAIL_NOTFOUND when neither is recorded. */
CALIBRATE_API int cal_machine_memory(const cal_machine_t *m, double *bytes);

/* ---- the memory a model needs ------------------------------------------ */

/* The parts of a model's memory, in bytes. */
typedef struct cal_memory_need {
  double weights_bytes;     /* params x the dtype's bytes (LoRA: and the
                               adapters', fp32) */
  double master_bytes;      /* fp32 masters of trained 16-bit params */
  double gradients_bytes;   /* fp32, of the trained params */
  double optimizer_bytes;   /* AdamW's two fp32 moments */
  double activations_bytes; /* batch x activation_bytes_per_example */
  double total_bytes;
} cal_memory_need_t;

/* The memory a model of `params` parameters needs to train ("full",
 * "lora") or serve ("inference") in dtype ("fp32", "bf16", "fp16",
 * "int8") at a micro-batch, by the one memory model the batch sweep's
 * `fits` and `calibrate plan` use: a trained parameter holds 18 bytes in
 * a 16-bit dtype (the copy 2, fp32 master 4, gradient 4, moments 8) and
 * 16 in fp32; a frozen one its dtype's bytes; LoRA trains lora_params
 * fp32 adapters (0: 1% of params, plan's assumption) beside the frozen
 * weights.  Activations are batch x activation_bytes_per_example (a
 * profile's train points record activation_bytes at their batch_size;
 * 0 leaves them out).  CAL_FAIL_INVAL when params is not a positive
 * finite number, batch < 1, a name is unknown, a figure is negative or
 * not finite, or out is NULL. */
CALIBRATE_API int cal_memory_need(double params, const char *dtype,
                                  const char *training, int64_t batch,
                                  double activation_bytes_per_example,
                                  double lora_params, cal_memory_need_t *out);

/* ---- a batch curve ---------------------------------------------------- */

typedef struct cal_batchcurve cal_batchcurve_t;

/* Which batch size a curve calls optimal. */
enum {
  CAL_PICK_PEAK = 0, /* the highest median throughput */
  CAL_PICK_KNEE = 1  /* the smallest batch within the tolerance of it */
};

/* Analyse a throughput-versus-batch-size curve, as `calibrate peak` does:
 * n rows of (batch_sizes[i], examples_per_s[i]); rows repeating a batch
 * size are samples of one point (its median and a distribution-free
 * confidence interval of it are computed).  tolerance_pct: the knee is
 * the smallest batch whose median is within it of the peak, and drops or
 * rises of it or less count as flat (e.g. 3; negative = the default 3);
 * pick: CAL_PICK_PEAK or CAL_PICK_KNEE.  CAL_FAIL_INVAL when n is 0, a
 * batch size is outside 1 .. 2^30, a throughput is negative or not
 * finite, tolerance_pct >= 100 or pick unknown.  Free *out with
 * cal_batchcurve_free. */
CALIBRATE_API int cal_batchcurve_analyze(const int64_t *batch_sizes,
                                         const double *examples_per_s,
                                         size_t n, double tolerance_pct,
                                         int pick, cal_batchcurve_t **out);

/* The batch curve a profile measured, analysed the same way with the
 * tolerance and pick the sweep recorded: mode "prefill" or "decode", or
 * NULL for the mode behind the top-level figures (the sweep's
 * top_level_mode, else prefill, else decode).  Points that were skipped,
 * failed or measured on a busy machine take no part, nor, as in the
 * sweep's own curve, points that swapped or whose threads did not run
 * side by side (threads_not_parallel).  CAL_FAIL_NOTFOUND
 * when the profile has no such curve or no measured point on it. */
CALIBRATE_API int cal_machine_curve(const cal_machine_t *m, const char *mode,
                                    cal_batchcurve_t **out);
/* Accepts NULL. */
CALIBRATE_API void cal_batchcurve_free(cal_batchcurve_t *c);

/* The peak: its batch size and median throughput (examples/s).  Either
 * pointer may be NULL.  CAL_FAIL_NOTFOUND when no point was measured. */
CALIBRATE_API int cal_batchcurve_peak(const cal_batchcurve_t *c,
                                      int64_t *batch, double *examples_per_s);
/* The knee and the optimal batch size (peak or knee, as picked); 0 when
 * no point was measured. */
CALIBRATE_API int64_t cal_batchcurve_knee(const cal_batchcurve_t *c);
CALIBRATE_API int64_t cal_batchcurve_optimal(const cal_batchcurve_t *c);
/* "rising" (still rising at the largest batch), "plateau", "peaked",
 * "single" (one point) or "empty"; static storage. */
CALIBRATE_API const char *cal_batchcurve_shape(const cal_batchcurve_t *c);
/* Points (batch sizes, ascending, skipped ones included) and point i:
 * its batch size, median and confidence interval of the median
 * (examples/s); any pointer may be NULL.  CAL_FAIL_INVAL when i is out
 * of range, CAL_FAIL_NOTFOUND when point i was not measured (its batch
 * size is still given). */
CALIBRATE_API size_t cal_batchcurve_size(const cal_batchcurve_t *c);
CALIBRATE_API int cal_batchcurve_point(const cal_batchcurve_t *c, size_t i,
                                       int64_t *batch, double *median,
                                       double *ci_low, double *ci_high);

/* ---- a split of work -------------------------------------------------- */

typedef struct cal_worksplit cal_worksplit_t;

/* Split `examples` over n machines in proportion to throughput[i]
 * (examples/s; zero, negative or NaN: the machine is left out), as
 * `calibrate plan` does: integer counts summing exactly to examples
 * (largest remainder; ties to the faster machine, then the lower index).
 * ci_low / ci_high (either may be NULL; an entry NaN means none) give
 * each throughput's confidence interval: the heterogeneity and straggler
 * flags count only differences the intervals can tell apart.  With
 * examples 0 only the shares and flags are computed.  CAL_FAIL_INVAL when
 * n is 0, examples > 2^53 or no machine has a throughput.  Free *out
 * with cal_worksplit_free. */
CALIBRATE_API int cal_worksplit_compute(const double *throughput,
                                        const double *ci_low,
                                        const double *ci_high, size_t n,
                                        uint64_t examples,
                                        cal_worksplit_t **out);
/* Accepts NULL. */
CALIBRATE_API void cal_worksplit_free(cal_worksplit_t *s);

/* Machine i (0 .. n-1, as given): whether it takes part, its share of
 * the work (0 .. 1), its examples, its finish time in seconds
 * (examples / throughput), and whether it is a straggler (its interval
 * lies wholly below 0.8 x the mean throughput).  Any pointer may be
 * NULL.  CAL_FAIL_INVAL when i is out of range. */
CALIBRATE_API int cal_worksplit_machine(const cal_worksplit_t *s, size_t i,
                                        int *in_split, double *share,
                                        uint64_t *examples, double *finish_s,
                                        int *straggler);
/* The split's wall-clock time (its slowest machine) and an even split's,
 * in seconds (per example when examples was 0), and the speedup of the
 * proportional split over the even one (>= 1). */
CALIBRATE_API double cal_worksplit_makespan_s(const cal_worksplit_t *s);
CALIBRATE_API double cal_worksplit_even_makespan_s(const cal_worksplit_t *s);
CALIBRATE_API double cal_worksplit_speedup(const cal_worksplit_t *s);
/* 1 when two machines differ by more than 10% and their intervals do not
 * overlap, else 0. */
CALIBRATE_API int cal_worksplit_heterogeneous(const cal_worksplit_t *s);

#ifdef __cplusplus
}
#endif

#endif
