#include "measure.h"

#include <stdio.h>
#include <string.h>

#include "cal_exit.h"
#include "cli.h"

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
  if ((rc = cal_ctx_open(&ctx)) != 0 || (rc = cal_opts_resolve(&o, &ctx.hw)) != 0 ||
      (rc = mc->prepare(&o, arg)) != 0 || (rc = cal_ctx_lock(&ctx, o.no_wait)) != 0 ||
      (rc = cal_ctx_start_threads(&ctx)) != 0)
    goto out;
  ctx.progress = o.progress;
  ctx.verbose = o.verbose;
  ctx.table = strcmp(o.out_path, "-") == 0 ? stderr : stdout;
  rc = cal_run_main(&o, &ctx);
out:
  cal_ctx_close(&ctx);
  cal_opts_free(&o);
  return rc;
}
