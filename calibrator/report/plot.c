/* Drawing the charts of profiles: labels, titles, notes, and for each
 * chart of the table its data, script and image. */
#include "plot.h"

#include <math.h>
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

/* s appended to t at *at, at most max bytes of it (cut with "..."),
 * control characters as spaces: a title's lines are the title's own. */
static void append(char *t, size_t len, size_t *at, const char *s,
                   size_t max) {
  size_t n = strlen(s), i;
  for (i = 0; i < n && i < max && *at + 1 < len; i++)
    t[(*at)++] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
  if (i < n)
    append(t, len, at, "...", 3);
  t[*at] = '\0';
}

/* A new line of the title. */
static void new_line(char *t, size_t len, size_t *at, int *lines) {
  if (*at + 1 < len) {
    t[(*at)++] = '\n';
    t[*at] = '\0';
    ++*lines;
  }
}

/* "LABEL (2024-05-01)" of profile p appended. */
static void append_profile(const plot_ctx_t *c, size_t p, char *t,
                           size_t len, size_t *at) {
  const char *cr = c->in.views[p]->created;
  char date[16] = "";
  if (cr)
    snprintf(date, sizeof date, " (%.10s)", cr);
  append(t, len, at, c->label[p], 40);
  append(t, len, at, date, sizeof date);
}

/* The chart's title: "WHAT[: MEASURED] - A (2024-05-01) vs B (...)" when
 * every profile measured the same, else "WHAT" and a line per profile,
 * "A (2024-05-01): MEASURED"; then a line saying how many points were
 * left out.  malloc'd (*lines: how many lines), NULL when out of memory. */
static char *make_title(const plot_ctx_t *c, const cal_chart_t *ch,
                        size_t left_out, int *lines) {
  size_t n = c->in.n, len = strlen(ch->what) + 128 + n * 320;
  char *t = malloc(len), (*desc)[240] = calloc(n ? n : 1, sizeof *desc);
  size_t at = 0, first = n;
  int same = 1;
  if (!t || !desc) {
    free(t);
    free(desc);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (!cal_chart_has_section(ch, c->in.views[i]))
      continue;
    if (ch->what_fn)
      ch->what_fn(&c->in, i, desc[i], sizeof desc[i]);
    if (first == n)
      first = i;
    else if (strcmp(desc[i], desc[first]) != 0)
      same = 0;
  }
  *lines = 1;
  t[0] = '\0';
  append(t, len, &at, ch->what, 200);
  if (same && first < n && desc[first][0]) {
    append(t, len, &at, ": ", 2);
    append(t, len, &at, desc[first], sizeof desc[first]);
  }
  /* a line as wide as the plot (about 7.5 pixels a character) */
  size_t width = (size_t)(c->in.plot_px > 300 ? c->in.plot_px : 300) * 2 / 15;
  size_t line = 0; /* where the last line starts */
  for (size_t i = first, k = 0; i < n; i++) {
    if (!cal_chart_has_section(ch, c->in.views[i]))
      continue;
    if (!same) { /* a line each */
      new_line(t, len, &at, lines);
      append_profile(c, i, t, len, &at);
      append(t, len, &at, ": ", 2);
      append(t, len, &at, desc[i], sizeof desc[i]);
      continue;
    }
    char who[80];
    size_t wl = 0;
    who[0] = '\0';
    append_profile(c, i, who, sizeof who, &wl);
    if (at - line + wl + 4 > width) {
      if (*lines == 4) { /* the rest are in the key */
        append(t, len, &at, " and others", 11);
        break;
      }
      new_line(t, len, &at, lines);
      line = at;
      append(t, len, &at, k++ ? "vs " : "", 3);
    } else {
      append(t, len, &at, k++ ? " vs " : " - ", 4);
    }
    append(t, len, &at, who, sizeof who);
  }
  if (left_out) {
    char l[120];
    snprintf(l, sizeof l, "%zu %s left out: %s cannot be drawn (0, or "
             "beyond 1e300)", left_out, left_out == 1 ? "figure" : "figures",
             left_out == 1 ? "it" : "they");
    new_line(t, len, &at, lines);
    append(t, len, &at, l, sizeof l);
  }
  free(desc);
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

/* The key's width in characters: its longest series label (as gnuplot.c
 * cuts them) or mark (a profile's name in them only with several). */
static size_t key_chars(const plot_ctx_t *c, const cal_chart_t *ch,
                        const cal_gp_set_t *set) {
  size_t w = (size_t)ch->key_mark_chars;
  if (c->in.n == 1 && w > 31)
    w -= 31;
  for (size_t i = 0; i < set->n; i++) {
    const cal_gp_series_t *s = &set->s[i];
    size_t len = strlen(s->key);
    if (c->in.n > 1 || !s->key[0])
      len += strlen(c->label[s->profile]) + 1;
    if (len > CAL_GP_LABEL_MAX + 8)
      len = CAL_GP_LABEL_MAX + 8;
    if (ch->key_per_series > 1) /* its second entry: "... ideal" */
      len += 6;
    w = len > w ? len : w;
  }
  return w;
}

/* The image's size: the chart's, wider where its bars need room (each
 * at least bar_px pixels) and where a wide key beside the plot would
 * leave it under about 760 pixels, taller for more lines of title and a
 * longer key (room beside or below the plot, not taken from it); the
 * plot's width into c->in.plot_px. */
static void chart_size(plot_ctx_t *c, const cal_chart_t *ch,
                       const cal_gp_set_t *set, int title_lines,
                       cal_gp_chart_t *gc) {
  int w = ch->width ? ch->width : 1000, h = ch->height ? ch->height : 640;
  /* about 7 pixels a character at the key's font, its line sample and
   * box about 100 */
  int key = ch->key_below ? 0 : 7 * (int)key_chars(c, ch, set) + 100;
  if (w < 860 + key)
    w = 860 + key;
  if (ch->bar_px) {
    double places = 0;
    for (size_t i = 0; i < set->n; i++)
      for (size_t r = 0; r < set->s[i].n; r++)
        places = fmax(places, floor(set->s[i].rows[r].x + 0.5));
    double want = 100 + key + places * (double)set->n * ch->bar_px;
    w = want > w ? (want < 4000 ? (int)want : 4000) : w;
  }
  h += 18 * (title_lines - 1);
  /* the key beside the plot in one column: a line per series and mark */
  size_t entries = set->n * (size_t)(ch->key_per_series ? ch->key_per_series
                                                        : 1) +
                   (size_t)ch->key_marks * c->in.n;
  size_t fits = (size_t)(ch->key_rows ? ch->key_rows : 28);
  if (!ch->key_below && entries > fits)
    h += (ch->key_px ? ch->key_px : 16) * (int)(entries - fits);
  if (ch->key_below) /* a band of three columns, the peak and knee too */
    h += 17 * (int)((set->n + 2 + 2) / 3);
  gc->width = w;
  gc->height = h < 3000 ? h : 3000;
  c->in.plot_px = w - 100 - key;
}

/* NAME.dat and NAME.gp of one chart; *drawn when there was anything. */
static int do_chart(plot_ctx_t *c, const cal_chart_t *ch, int *drawn,
                    char *err, size_t errlen) {
  cal_gp_set_t set = {0};
  cal_gp_chart_t gc = {
      .dir = c->o->dir, .name = ch->name, .format = c->o->format,
      .templates = c->tdir, .n = c->in.n, .paths = c->paths,
      .labels = c->in.labels, .cols = ch->cols, .ncols = ch->ncols,
      .with_text = ch->with_text, .header = ch->header, .header_arg = &c->in};
  char *title = NULL;
  size_t left_out = 0;
  int rc = cal_chart_collect(ch, &c->in, &set, &left_out), lines = 1;
  if (rc < 0) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  if (ch->left_out)
    left_out += ch->left_out(&c->in);
  if (left_out && c->o->notes)
    fprintf(c->o->notes, "note: %s chart: %zu %s left out: %s cannot be "
                         "drawn (0, or beyond 1e300)\n", ch->name, left_out,
            left_out == 1 ? "figure" : "figures",
            left_out == 1 ? "it" : "they");
  if (!chart_wanted(c, ch, &set))
    goto out;
  if ((rc = cal_gp_write_dat(&gc, &set, err, errlen)) < 0)
    goto out;
  /* the size first: the title is wrapped to the plot's width */
  chart_size(c, ch, &set, 1, &gc);
  if (!(title = make_title(c, ch, left_out, &lines))) {
    snprintf(err, errlen, "out of memory");
    rc = CAL_ENOMEM;
    goto out;
  }
  gc.title = title;
  chart_size(c, ch, &set, lines, &gc);
  /* where the plot ends on the canvas (its key beside it) and the share
   * of the height the title takes: for templates that lay out panels */
  char extra[128];
  snprintf(extra, sizeof extra, "plot_right = %.4f\ntitle_frac = %.4f\n"
           "canvas_h = %d\n", (double)(100 + c->in.plot_px) / gc.width,
           (double)(18 * lines + 16) / gc.height, gc.height);
  gc.extra = extra;
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
