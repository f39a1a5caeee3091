/* Drawing the charts of profiles: labels, titles, notes, and for each
 * chart of the table its data, script and image. */
#include "plot.h"

#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_esc.h"
#include "charts.h"
#include "gnuplot.h"
#include "machine_names.h"

typedef struct plot_ctx {
  cal_chart_in_t in;         /* views and labels */
  const char *const *paths;  /* in.n, where each profile came from */
  const cal_plot_opts_t *o;
  const char *tdir;          /* template directory */
  char **label;              /* in.n, owned */
} plot_ctx_t;

/* ---- labels and titles ---- */

/* The profiles' names (machine_names.h): device_name unless two share
 * it, then the file */
static int make_labels(plot_ctx_t *c) {
  size_t n = c->in.n;
  const char **own = calloc(n ? n : 1, sizeof *own);
  int rc = CAL_ENOMEM;
  if (own) {
    for (size_t i = 0; i < n; i++)
      own[i] = c->in.views[i]->device_name;
    rc = cal_machine_names(own, c->paths, n, &c->label);
  }
  free(own);
  c->in.labels = (const char *const *)c->label;
  return rc;
}

/* "WHAT - A (2024-05-01) vs B (2024-05-02)" naming the profiles that have
 * the section; malloc'd, NULL when out of memory */
static char *make_title(const plot_ctx_t *c, const char *what,
                        const cal_chart_t *ch) {
  size_t len = strlen(what) + 4;
  for (size_t i = 0; i < c->in.n; i++)
    len += strlen(c->label[i]) + 24;
  char *t = malloc(len);
  if (!t)
    return NULL;
  size_t at = (size_t)snprintf(t, len, "%s", what);
  int first = 1;
  for (size_t i = 0; i < c->in.n; i++) {
    if (!cal_chart_has_section(ch, c->in.views[i]))
      continue;
    const char *cr = c->in.views[i]->created;
    char date[11] = "";
    if (cr)
      snprintf(date, sizeof date, "%s", cr);
    if (at > 140) { /* the title fits the chart: the rest are in the key */
      at += (size_t)snprintf(t + at, len - at, " and others");
      break;
    }
    const char *l = c->label[i];
    at += (size_t)snprintf(t + at, len - at, "%s%.40s%s (%s)",
                           first ? " - " : " vs ", l,
                           strlen(l) > 40 ? "..." : "", date);
    first = 0;
  }
  return t;
}

/* ---- one chart ---- */

/* Notes on the profiles without the section; whether there is anything
 * to draw (a note when not). */
static int chart_wanted(const plot_ctx_t *c, const cal_chart_t *ch,
                        const cal_gp_set_t *set) {
  FILE *notes = c->o->notes;
  for (size_t p = 0; p < c->in.n && notes; p++)
    if (!cal_chart_has_section(ch, c->in.views[p]))
      cal_esc_line(notes, "note: %s has no %s section", c->label[p],
                   ch->section); /* a profile's name, escaped */
  if (set->n || (ch->has_extra && ch->has_extra(&c->in)))
    return 1;
  if (notes)
    fprintf(notes, "note: no %s data in any profile: %s plot skipped\n",
            ch->section, ch->name);
  return 0;
}

/* NAME.dat and NAME.gp of one chart; *drawn when there was anything. */
static int do_chart(const plot_ctx_t *c, const cal_chart_t *ch, int *drawn,
                    char *err, size_t errlen) {
  cal_gp_set_t set = {0};
  cal_gp_chart_t gc = {
      .dir = c->o->dir, .name = ch->name, .format = c->o->format,
      .templates = c->tdir, .n = c->in.n, .paths = c->paths,
      .labels = c->in.labels, .cols = ch->cols, .ncols = ch->ncols,
      .with_text = ch->with_text, .header = ch->header, .header_arg = &c->in,
      .width = ch->width, .height = ch->height};
  char *title = NULL;
  int rc = cal_chart_collect(ch, &c->in, &set);
  if (rc < 0) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  if (!chart_wanted(c, ch, &set))
    goto out;
  if ((rc = cal_gp_write_dat(&gc, &set, err, errlen)) < 0)
    goto out;
  char what[200];
  if (ch->what_fn)
    ch->what_fn(&c->in, what, sizeof what);
  else
    snprintf(what, sizeof what, "%s", ch->what);
  if (!(title = make_title(c, what, ch))) {
    snprintf(err, errlen, "out of memory");
    rc = CAL_ENOMEM;
    goto out;
  }
  gc.title = title;
  /* a long key (overlays) gets room below the chart, not from it */
  if (set.n > 6) {
    int h = ch->height ? ch->height : 640;
    gc.height = h + 24 * (int)(set.n - 6) * (ch->header ? 2 : 1);
  }
  if ((rc = cal_gp_write_script(&gc, &set, err, errlen)) < 0)
    goto out;
  *drawn = 1;
out:
  free(title);
  cal_gp_set_free(&set);
  return rc;
}

/* ---- all charts ---- */

int cal_plot_views(const cal_profile_view_t *const *views,
                   const char *const *paths, size_t n,
                   const cal_plot_opts_t *o, char *err, size_t errlen) {
  plot_ctx_t c = {.in = {.views = views, .n = n}, .paths = paths, .o = o};
  int *drawn = NULL;
  int rc = 0;
  if (n == 0 || !o->dir || !o->format ||
      (strcmp(o->format, "png") && strcmp(o->format, "svg"))) {
    snprintf(err, errlen, "plot: need profiles, a directory and png or svg");
    return CAL_EINVAL;
  }
  c.tdir = cal_gp_template_dir(o->templates);
  drawn = calloc(cal_ncharts, sizeof *drawn);
  if (!drawn || (rc = make_labels(&c)) < 0) {
    rc = CAL_ENOMEM;
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  /* every template readable before any file is written */
  for (size_t i = 0; i < cal_ncharts; i++)
    if ((rc = cal_gp_check_template(c.tdir, cal_charts[i].name, err,
                                    errlen)) < 0)
      goto out;
  if ((rc = cal_gp_make_dirs(o->dir, err, errlen)) < 0)
    goto out;
  for (size_t i = 0; i < cal_ncharts; i++)
    if ((rc = do_chart(&c, &cal_charts[i], &drawn[i], err, errlen)) < 0)
      goto out;
  for (size_t i = 0; i < cal_ncharts; i++) {
    if (!drawn[i])
      continue;
    if (!o->script_only &&
        (rc = cal_gp_run(o->dir, cal_charts[i].name, o->format, err,
                         errlen)) < 0)
      goto out;
    if (o->notes)
      cal_esc_line(o->notes, "wrote %s/%s.%s", o->dir, cal_charts[i].name,
                   o->script_only ? "gp" : o->format);
  }
out:
  cal_machine_names_free(c.label, n);
  free(drawn);
  return rc;
}

int cal_plot_run(const cal_profile_t *const *profiles, size_t n,
                 const cal_plot_opts_t *o, char *err, size_t errlen) {
  const cal_profile_view_t **views = calloc(n ? n : 1, sizeof *views);
  const char **paths = calloc(n ? n : 1, sizeof *paths);
  int rc = CAL_ENOMEM;
  for (size_t i = 0; views && paths && i < n; i++) {
    if (!(views[i] = cal_profile_view(profiles[i])))
      goto out;
    paths[i] = profiles[i]->path;
  }
  if (views && paths)
    rc = cal_plot_views(views, paths, n, o, err, errlen);
out:
  if (!views || !paths || rc == CAL_ENOMEM)
    snprintf(err, errlen, "out of memory");
  free(views);
  free(paths);
  return rc;
}

int cal_plot_tree(const json_t *root, const char *name, const char *dir,
                  const char *format, char *err, size_t errlen) {
  const char *paths[1] = {name ? name : ""};
  cal_plot_opts_t o = {.dir = dir ? dir : CAL_PLOT_DEFAULT_DIR,
                       .format = format ? format : "png",
                       .notes = stderr};
  cal_profile_view_t *v = NULL;
  if (!root) {
    snprintf(err, errlen, "plot: no profile to draw");
    return CAL_EINVAL;
  }
  if (cal_profile_view_build(root, &v) < 0) {
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  const cal_profile_view_t *views[1] = {v};
  int rc = cal_plot_views(views, paths, 1, &o, err, errlen);
  cal_profile_view_free(v);
  return rc;
}

int cal_plot_profiles(const char *const *paths, size_t n, const char *dir,
                      const char *format, char *err, size_t errlen) {
  cal_profile_t **p = calloc(n ? n : 1, sizeof *p);
  int rc = 0;
  if (!p) {
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  for (size_t i = 0; i < n; i++)
    if ((rc = cal_profile_load(paths[i], &p[i], err, errlen)) < 0)
      goto out;
  cal_plot_opts_t o = {.dir = dir ? dir : CAL_PLOT_DEFAULT_DIR,
                       .format = format ? format : "png",
                       .notes = stderr};
  rc = cal_plot_run((const cal_profile_t *const *)p, n, &o, err, errlen);
out:
  for (size_t i = 0; i < n; i++)
    cal_profile_free(p[i]);
  free(p);
  return rc;
}

/* ---- the chart reporters ---- */

/* The charts of a cal_plot_in_t in the format of the variant (0: png,
 * 1: svg), notes to out. */
static int render_charts(const void *data, int variant, FILE *out, char *err,
                         size_t errlen) {
  const cal_plot_in_t *in = data;
  cal_plot_opts_t o = *in->opts;
  o.format = variant ? "svg" : "png";
  o.notes = out;
  return cal_plot_run(in->profiles, in->n, &o, err, errlen);
}

const cal_reporter_t cal_plot_reporters[] = {
    {"png", "gnuplot charts drawn as PNG images", render_charts, 0},
    {"svg", "gnuplot charts drawn as SVG images", render_charts, 1},
};
const size_t cal_plot_nreporters =
    sizeof cal_plot_reporters / sizeof cal_plot_reporters[0];
