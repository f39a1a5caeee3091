#include "measure.h"

#include <stdio.h>
#include <string.h>

#include "cal_err.h"
#include "cal_esc.h"
#include "cal_exit.h"
#include "cli.h"
#include "plot.h"
#include "profile.h"
#include "profile_run.h"
#include "table.h"

/* Open the machine for a run of o: read it, resolve the options against
 * it, let the command choose its sections, take the lock, start the
 * threads.  0 or an exit code after one line. */
static int open_machine(cal_opts_t *o, cal_ctx_t *ctx,
                        int (*prepare)(cal_opts_t *o, void *arg), void *arg) {
  int rc;
  if ((rc = cal_ctx_open(ctx)) != 0 || (rc = cal_opts_resolve(o, &ctx->hw)) != 0 ||
      (rc = prepare(o, arg)) != 0 || (rc = cal_ctx_lock(ctx, o->no_wait)) != 0 ||
      (rc = cal_ctx_start_threads(ctx, o->threads)) != 0)
    return rc;
  ctx->progress = o->progress;
  ctx->verbose = o->verbose;
  ctx->table = strcmp(o->out_path, "-") == 0 ? stderr : stdout;
  return 0;
}

/* An internal error of a run: one line, exit 4. */
static int internal(int rc) {
  fprintf(stderr, "calibrate: %s\n", cal_strerror(rc));
  return CAL_EXIT_INTERNAL;
}

/* The charts of the profile just written, from the tree in memory. */
static void draw_charts(const cal_opts_t *o, FILE *table, const json_t *root) {
  /* the profile is safe on disk; a missing gnuplot only costs the charts */
  char err[512];
  if (cal_plot_tree(root, o->out_path, o->plots_dir, "png", err, sizeof err) < 0)
    cal_esc_line(stderr, "calibrate: no charts: %s", err);
  else
    cal_esc_line(table, "Charts written to %s", o->plots_dir);
}

/* --partial: a signal caught after the measuring ended (the profile is
 * whole) still ends the run with 128 + the signal. */
static int late_signal(void) {
  fprintf(stderr, "calibrate: interrupted by %s after every section "
                  "finished: the profile is complete\n",
          strsignal(cal_run_stop));
  return 128 + cal_run_stop;
}

/* The exit code of a run whose profile is root, with its line on stderr:
 * failed verification, an interruption (--partial), figures withheld. */
static int exit_code(const cal_run_result_t *run, const json_t *root) {
  const cal_quality_t *q = &run->res.quality;
  if (q->failed) {
    fprintf(stderr, "calibrate: %d measurement%s failed verification\n",
            q->failed, q->failed == 1 ? "" : "s");
    return CAL_EXIT_VERIFY;
  }
  if (q->interrupted) {
    fprintf(stderr, "calibrate: interrupted by %s: the profile holds the "
                    "sections that finished, marked incomplete\n",
            strsignal(q->interrupted));
    return 128 + q->interrupted;
  }
  if (cal_run_stop)
    return late_signal();
  if (cal_profile_withheld(root)) {
    fprintf(stderr, "calibrate: the machine was busy: %s; headline figures "
                    "withheld (--allow-busy keeps them)\n",
            cal_profile_withheld(root));
    return CAL_EXIT_BUSY;
  }
  return CAL_EXIT_OK;
}

/* After the profile root of run is kept: the table, where the profile
 * went (NULL: not said), the charts.  Returns the exit code. */
static int report_run(const cal_run_result_t *run, const json_t *root,
                      FILE *table, const char *written_to) {
  cal_table_print(run, table);
  if (written_to) {
    fputc('\n', table);
    cal_esc_line(table, "Profile written to %s", written_to);
  }
  if (run->opt->plots_dir)
    draw_charts(run->opt, table, root);
  return exit_code(run, root);
}

/* What a measuring command writes of a run: the profile (o->out_path),
 * the table and the charts.  Returns the exit code. */
static int write_run(const cal_run_result_t *run, FILE *table) {
  const cal_opts_t *o = run->opt;
  char err[512];
  json_t *root = cal_profile_of_run(run);
  if (!root)
    return internal(CAL_ENOMEM);
  int rc = cal_json_write_atomic(root, o->out_path, err, sizeof err) < 0
               ? cal_usage(o->cmd, "%s", err)
               : report_run(run, root, table,
                            strcmp(o->out_path, "-") != 0 ? o->out_path : NULL);
  json_decref(root);
  return rc;
}

int cal_measure_main(const cal_measure_cmd_t *mc, int argc, char **argv,
                     void *arg) {
  cal_opts_t o;
  cal_ctx_t ctx;
  cal_opts_action_t action;
  memset(&ctx, 0, sizeof ctx);
  int rc = cal_opts_parse(&o, argc, argv, mc->opts, &action);
  if (rc != 0 || action == CAL_OPTS_DONE)
    goto out;
  if (action == CAL_OPTS_LIST_PRESETS) {
    if (mc->list_presets)
      cal_presets_print(stdout);
    else
      rc = cal_usage(mc->opts->cmd, "--preset belongs to the batch sweep");
    goto out;
  }
  if ((rc = open_machine(&o, &ctx, mc->prepare, arg)) != 0)
    goto out;
  cal_run_result_t run;
  int mrc = cal_run_measure(&o, &ctx, &run);
  rc = mrc < 0 ? internal(mrc) : write_run(&run, ctx.table);
  cal_results_free(&run.res);
out:
  cal_ctx_close(&ctx);
  cal_opts_free(&o);
  fflush(NULL); /* a table blocked on a full pipe is written before the
                   last look at the signal, not at exit */
  return rc == CAL_EXIT_OK && cal_run_stop ? late_signal() : rc;
}

int cal_measure_node(cal_opts_t *o, FILE *table, json_t **profile) {
  cal_ctx_t ctx;
  memset(&ctx, 0, sizeof ctx);
  *profile = NULL;
  /* the node's profile goes into the fleet profile, never to a file of
   * its own: no profile path to resolve ("-"); its charts are named so */
  const char *plots = o->plots_dir;
  o->plots_dir = NULL;
  o->out_asked = "-";
  int rc = open_machine(o, &ctx, cal_measure_default_sections, NULL);
  o->plots_dir = plots;
  if (rc != 0)
    goto out;
  snprintf(o->out_path, sizeof o->out_path, "node");
  cal_run_result_t run;
  int mrc = cal_run_measure(o, &ctx, &run);
  if (mrc < 0) {
    rc = internal(mrc);
  } else if (!(*profile = cal_profile_of_run(&run))) {
    rc = internal(CAL_ENOMEM);
  } else {
    rc = report_run(&run, *profile, table, "the fleet profile");
  }
  cal_results_free(&run.res);
out:
  cal_ctx_close(&ctx);
  return rc;
}
