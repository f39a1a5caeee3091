#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cal_err.h"
#include "commands.h"

/* Template directory configured at build time (build_info.c). */
extern const char cal_plots_dir[];

/* ---- series: rows of numbers grouped under a key, per profile ---- */

#define NCOL 6
typedef struct row {
  double x;
  double v[NCOL];
  char text[96]; /* a string column (roofline point names) */
} row_t;

typedef struct series {
  char key[96];
  size_t profile; /* index of the profile it came from */
  row_t *rows;
  size_t n, cap;
} series_t;

typedef struct series_set {
  series_t *s;
  size_t n, cap;
} series_set_t;

static void set_free(series_set_t *set) {
  for (size_t i = 0; i < set->n; i++)
    free(set->s[i].rows);
  free(set->s);
  memset(set, 0, sizeof *set);
}

static series_t *set_get(series_set_t *set, size_t profile, const char *key) {
  for (size_t i = 0; i < set->n; i++)
    if (set->s[i].profile == profile && strcmp(set->s[i].key, key) == 0)
      return &set->s[i];
  if (set->n == set->cap) {
    size_t cap = set->cap ? 2 * set->cap : 8;
    series_t *s = realloc(set->s, cap * sizeof *s);
    if (!s)
      return NULL;
    set->s = s;
    set->cap = cap;
  }
  series_t *s = &set->s[set->n++];
  memset(s, 0, sizeof *s);
  snprintf(s->key, sizeof s->key, "%s", key);
  s->profile = profile;
  return s;
}

static int series_add(series_t *s, const row_t *r) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    row_t *rows = realloc(s->rows, cap * sizeof *rows);
    if (!rows)
      return CAL_ENOMEM;
    s->rows = rows;
    s->cap = cap;
  }
  s->rows[s->n++] = *r;
  return 0;
}

static int row_cmp(const void *a, const void *b) {
  double x = ((const row_t *)a)->x, y = ((const row_t *)b)->x;
  return (x > y) - (x < y);
}

/* ---- small helpers ---- */

static double num(const json_t *o, const char *k, double dflt) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : dflt;
}

static int point_ok(const json_t *pt) {
  const char *s = json_string_value(json_object_get(pt, "status"));
  return s && strcmp(s, "ok") == 0;
}

void cal_gp_quote(FILE *f, const char *s) {
  fputc('\'', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\'')
      fputs("''", f);
    else if (c < 0x20 || c == 0x7f)
      fputc(' ', f);
    else
      fputc(c, f);
  }
  fputc('\'', f);
}

/* A comment line in a .dat or .gp file: no newlines. */
static void comment(FILE *f, const char *s) {
  for (; s && *s; s++)
    fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
}

/* gnuplot data-file string: double quotes, which cannot be escaped there. */
static void dat_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++)
    fputc(*s == '"' ? '\'' : (unsigned char)*s < 0x20 ? ' ' : *s, f);
  fputc('"', f);
}

static char *path_join(const char *dir, const char *name) {
  size_t len = strlen(dir) + strlen(name) + 2;
  char *p = malloc(len);
  if (p)
    snprintf(p, len, "%s/%s", dir, name);
  return p;
}

/* mkdir -p */
static int make_dirs(const char *dir, char *err, size_t errlen) {
  char *p = strdup(dir);
  int rc = 0;
  if (!p) {
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  for (char *q = p + 1;; q++) {
    if (*q == '/' || *q == '\0') {
      char c = *q;
      *q = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create directory %s: %s", p,
                 strerror(errno));
        rc = CAL_EIO;
        break;
      }
      *q = c;
      if (c == '\0')
        break;
    }
  }
  free(p);
  struct stat st;
  if (rc == 0 && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
    snprintf(err, errlen, "%s is not a directory", dir);
    rc = CAL_EIO;
  }
  return rc;
}

/* ---- labels and titles ---- */

typedef struct ctx {
  const cal_profile_t *const *p;
  size_t n;
  const cal_plot_opts_t *o;
  const char *tdir;
  char **label; /* per profile, owned */
  FILE *notes;
} ctx_t;

static const char *dev_name(const cal_profile_t *p) {
  const char *s = json_string_value(json_object_get(p->root, "device_name"));
  return s ? s : "?";
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* device_name, or the file name when two profiles share a device name, or
 * the path when the file names clash too */
static int make_labels(ctx_t *c) {
  c->label = calloc(c->n, sizeof *c->label);
  if (!c->label)
    return CAL_ENOMEM;
  for (size_t i = 0; i < c->n; i++) {
    int clash = 0, base_clash = 0;
    for (size_t j = 0; j < c->n; j++) {
      if (j == i)
        continue;
      clash |= strcmp(dev_name(c->p[i]), dev_name(c->p[j])) == 0;
      base_clash |= strcmp(base_name(c->p[i]->path),
                           base_name(c->p[j]->path)) == 0;
    }
    const char *l = !clash ? dev_name(c->p[i])
                    : !base_clash ? base_name(c->p[i]->path)
                                  : c->p[i]->path;
    if (!(c->label[i] = strdup(l)))
      return CAL_ENOMEM;
  }
  return 0;
}

/* "WHAT - A (2024-05-01) vs B (2024-05-02)" naming the profiles that have
 * the section; malloc'd, NULL when out of memory */
static char *make_title(const ctx_t *c, const char *what, const char *section) {
  size_t len = strlen(what) + 4;
  for (size_t i = 0; i < c->n; i++)
    len += strlen(c->label[i]) + 24;
  char *t = malloc(len);
  if (!t)
    return NULL;
  size_t at = (size_t)snprintf(t, len, "%s", what);
  int first = 1;
  for (size_t i = 0; i < c->n; i++) {
    if (!json_is_object(json_object_get(c->p[i]->root, section)))
      continue;
    const char *cr = json_string_value(json_object_get(c->p[i]->root, "created"));
    char date[11] = "";
    if (cr)
      snprintf(date, sizeof date, "%s", cr);
    at += (size_t)snprintf(t + at, len - at, "%s%s (%s)", first ? " - " : " vs ",
                           c->label[i], date);
    first = 0;
  }
  return t;
}

/* ---- writing one chart ---- */

/* Per-chart extras written into the generated header. */
typedef void (*header_fn)(FILE *f, void *arg);

static int write_dat(ctx_t *c, const char *name, series_set_t *set, int ncols,
                     const char *const *colnames, int with_text, char *err,
                     size_t errlen) {
  char file[64];
  snprintf(file, sizeof file, "%s.dat", name);
  char *path = path_join(c->o->dir, file);
  FILE *f = path ? fopen(path, "w") : NULL;
  if (!f) {
    snprintf(err, errlen, "cannot write %s: %s", path ? path : file,
             strerror(errno));
    free(path);
    return CAL_EIO;
  }
  fprintf(f, "# calibrate plot: %s; one block per series (gnuplot index "
             "0, 1, ...)\n# columns:", name);
  for (int j = 0; j < ncols; j++)
    fprintf(f, " %s", colnames[j]);
  fputc('\n', f);
  for (size_t i = 0; i < set->n; i++) {
    series_t *s = &set->s[i];
    qsort(s->rows, s->n, sizeof *s->rows, row_cmp);
    if (i)
      fputs("\n\n", f);
    fprintf(f, "# series %zu: ", i + 1);
    comment(f, c->label[s->profile]);
    fputc(' ', f);
    comment(f, s->key);
    fputc('\n', f);
    for (size_t r = 0; r < s->n; r++) {
      fprintf(f, "%.10g", s->rows[r].x);
      for (int j = 1; j < ncols - with_text; j++)
        fprintf(f, " %.10g", s->rows[r].v[j - 1]);
      if (with_text) {
        fputc(' ', f);
        dat_string(f, s->rows[r].text);
      }
      fputc('\n', f);
    }
  }
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    snprintf(err, errlen, "cannot write %s", path);
    free(path);
    return CAL_EIO;
  }
  free(path);
  return 0;
}

static int copy_template(FILE *out, const char *tdir, const char *name,
                         char *err, size_t errlen) {
  char file[64];
  snprintf(file, sizeof file, "%s.gp", name);
  char *path = path_join(tdir, file);
  FILE *in = path ? fopen(path, "r") : NULL;
  if (!in) {
    snprintf(err, errlen, "cannot read gnuplot template %s: %s",
             path ? path : file, strerror(errno));
    free(path);
    return CAL_EIO;
  }
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, in)) > 0)
    fwrite(buf, 1, k, out);
  int bad = ferror(in);
  fclose(in);
  free(path);
  if (bad) {
    snprintf(err, errlen, "cannot read gnuplot template %s.gp", name);
    return CAL_EIO;
  }
  return 0;
}

/* name.gp = generated header (variables) + the template */
static int write_script(ctx_t *c, const char *name, const char *title,
                        const series_set_t *set, header_fn extra, void *arg,
                        char *err, size_t errlen) {
  char file[64];
  snprintf(file, sizeof file, "%s.gp", name);
  char *path = path_join(c->o->dir, file);
  FILE *f = path ? fopen(path, "w") : NULL;
  if (!f) {
    snprintf(err, errlen, "cannot write %s: %s", path ? path : file,
             strerror(errno));
    free(path);
    return CAL_EIO;
  }
  fprintf(f, "# Generated by calibrate plot from the template %s.gp.\n"
             "# Re-run from this directory: gnuplot %s.gp\n", name, name);
  for (size_t i = 0; i < c->n; i++) {
    fputs("# profile: ", f);
    comment(f, c->p[i]->path);
    fputc('\n', f);
  }
  fprintf(f, "fmt = '%s'\n", c->o->format);
  fprintf(f, "datafile = '%s.dat'\n", name);
  fprintf(f, "outfile = '%s.%s'\n", name, c->o->format);
  fputs("title = ", f);
  cal_gp_quote(f, title);
  fprintf(f, "\nnseries = %zu\n", set->n);
  if (set->n) {
    fprintf(f, "array label[%zu]\n", set->n);
    for (size_t i = 0; i < set->n; i++) {
      size_t ll = strlen(c->label[set->s[i].profile]) + strlen(set->s[i].key) + 2;
      char *l = malloc(ll);
      if (!l)
        continue;
      snprintf(l, ll, "%s%s%s", c->label[set->s[i].profile],
               set->s[i].key[0] ? " " : "", set->s[i].key);
      fprintf(f, "label[%zu] = ", i + 1);
      cal_gp_quote(f, l);
      fputc('\n', f);
      free(l);
    }
  }
  if (extra)
    extra(f, arg);
  /* the terminal: pngcairo where built in, else libgd png; or svg */
  fputs("if (fmt eq 'svg') {\n"
        "  set terminal svg noenhanced size 1000,640 dynamic\n"
        "} else {\n"
        "  if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
        "    set terminal pngcairo noenhanced size 1000,640\n"
        "  } else {\n"
        "    set terminal png noenhanced size 1000,640\n"
        "  }\n"
        "}\n"
        "set output outfile\n",
        f);
  fprintf(f, "# ---- template %s.gp ----\n", name);
  int rc = copy_template(f, c->tdir, name, err, errlen);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    if (rc == 0)
      snprintf(err, errlen, "cannot write %s", path);
    rc = rc ? rc : CAL_EIO;
  }
  free(path);
  return rc;
}

/* Run gnuplot on dir/name.gp in dir.  CAL_ENOTFOUND when it cannot be
 * executed at all. */
static int run_gnuplot(ctx_t *c, const char *name, char *err, size_t errlen) {
  const char *prog = getenv("CALIBRATE_GNUPLOT");
  if (!prog || !*prog)
    prog = "gnuplot";
  char script[64];
  snprintf(script, sizeof script, "%s.gp", name);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    snprintf(err, errlen, "cannot start gnuplot: %s", strerror(errno));
    return CAL_ESYS;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    snprintf(err, errlen, "cannot start gnuplot: %s", strerror(errno));
    return CAL_ESYS;
  }
  if (pid == 0) {
    int e = 0;
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0)
      dup2(nul, STDIN_FILENO);
    if (chdir(c->o->dir) != 0)
      e = errno;
    else {
      char *const args[] = {(char *)prog, script, NULL};
      execvp(prog, args);
      e = errno;
    }
    if (write(fds[1], &e, sizeof e) < 0)
      _exit(126);
    _exit(127);
  }
  close(fds[1]);
  int child_errno = 0;
  ssize_t got;
  do
    got = read(fds[0], &child_errno, sizeof child_errno);
  while (got < 0 && errno == EINTR);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (got == (ssize_t)sizeof child_errno) {
    if (child_errno == ENOENT || child_errno == EACCES ||
        child_errno == ENOTDIR) {
      snprintf(err, errlen,
               "gnuplot not found (%s): install it with "
               "`apt-get install gnuplot-nox`; scripts and data are in %s",
               prog, c->o->dir);
      return CAL_ENOTFOUND;
    }
    snprintf(err, errlen, "cannot run %s in %s: %s", prog, c->o->dir,
             strerror(child_errno));
    return CAL_ESYS;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(err, errlen, "gnuplot failed on %s/%s (%s %d)", c->o->dir, script,
             WIFEXITED(status) ? "exit status" : "signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return CAL_ESYS;
  }
  return 0;
}

/* ---- the charts ---- */

static int add(series_set_t *set, size_t prof, const char *key,
               const row_t *r) {
  series_t *s = set_get(set, prof, key);
  return s ? series_add(s, r) : CAL_ENOMEM;
}

/* Distinct values of an integer key among ok points: more than one? */
static int varies(const json_t *points, const char *k) {
  size_t i;
  const json_t *pt;
  double first = NAN;
  json_array_foreach(points, i, pt) {
    if (!point_ok(pt))
      continue;
    double v = num(pt, k, NAN);
    if (isnan(first))
      first = v;
    else if (v != first)
      return 1;
  }
  return 0;
}

static int collect_batch(ctx_t *c, series_set_t *set) {
  for (size_t p = 0; p < c->n; p++) {
    const json_t *modes =
        json_object_get(json_object_get(c->p[p]->root, "batch_sweep"), "modes");
    const char *mode;
    json_t *m;
    json_object_foreach((json_t *)modes, mode, m) {
      double peak = num(m, "peak_batch_size", NAN);
      double knee = num(m, "knee_batch_size", NAN);
      size_t i;
      json_t *pt;
      json_array_foreach(json_object_get(m, "points"), i, pt) {
        if (!point_ok(pt))
          continue;
        row_t r = {0};
        r.x = num(pt, "batch_size", NAN);
        double y = num(pt, "examples_per_s", NAN);
        if (!(r.x > 0) || !isfinite(y))
          continue;
        const json_t *st = json_object_get(pt, "stats");
        r.v[0] = y;
        r.v[1] = num(st, "ci_low", y);
        r.v[2] = num(st, "ci_high", y);
        r.v[3] = r.x == peak;
        r.v[4] = r.x == knee;
        if (add(set, p, mode, &r) < 0)
          return CAL_ENOMEM;
      }
    }
  }
  return 0;
}

static int collect_gemm(ctx_t *c, series_set_t *set) {
  for (size_t p = 0; p < c->n; p++) {
    const json_t *pts =
        json_object_get(json_object_get(c->p[p]->root, "gemm"), "points");
    int by_threads = varies(pts, "threads");
    size_t i;
    json_t *pt;
    json_array_foreach(pts, i, pt) {
      /* a confirmation re-measures a size already on the curve */
      if (!point_ok(pt) || json_object_get(pt, "confirms"))
        continue;
      double m = num(pt, "m", NAN), n = num(pt, "n", NAN), k = num(pt, "k", NAN);
      double g = num(pt, "gflops", NAN);
      if (!(m > 0 && n > 0 && k > 0) || !isfinite(g))
        continue;
      const char *dt = json_string_value(json_object_get(pt, "dtype"));
      char key[96];
      if (by_threads)
        snprintf(key, sizeof key, "%s %g threads", dt ? dt : "?",
                 num(pt, "threads", 0));
      else
        snprintf(key, sizeof key, "%s", dt ? dt : "?");
      row_t r = {0};
      r.x = cbrt(m * n * k);
      r.v[0] = m;
      r.v[1] = n;
      r.v[2] = k;
      r.v[3] = g;
      if (add(set, p, key, &r) < 0)
        return CAL_ENOMEM;
    }
  }
  return 0;
}

static int collect_scaling(ctx_t *c, series_set_t *set) {
  for (size_t p = 0; p < c->n; p++) {
    const json_t *pts =
        json_object_get(json_object_get(c->p[p]->root, "scaling"), "points");
    size_t i;
    json_t *pt;
    json_array_foreach(pts, i, pt) {
      if (!point_ok(pt))
        continue;
      row_t r = {0};
      r.x = num(pt, "threads", NAN);
      r.v[0] = num(pt, "gflops", NAN);
      r.v[2] = num(pt, "efficiency", NAN);
      if (!(r.x >= 1) || !isfinite(r.v[0]))
        continue;
      const char *dt = json_string_value(json_object_get(pt, "dtype"));
      if (add(set, p, dt ? dt : "", &r) < 0)
        return CAL_ENOMEM;
    }
  }
  /* ideal: the fewest-threads point scaled linearly */
  for (size_t i = 0; i < set->n; i++) {
    series_t *s = &set->s[i];
    qsort(s->rows, s->n, sizeof *s->rows, row_cmp);
    for (size_t r = 0; r < s->n; r++)
      s->rows[r].v[1] = s->rows[0].v[0] * s->rows[r].x / s->rows[0].x;
  }
  return 0;
}

static int collect_bandwidth(ctx_t *c, series_set_t *set) {
  for (size_t p = 0; p < c->n; p++) {
    const json_t *pts =
        json_object_get(json_object_get(c->p[p]->root, "bandwidth"), "points");
    int by_threads = varies(pts, "threads");
    size_t i;
    json_t *pt;
    json_array_foreach(pts, i, pt) {
      if (!point_ok(pt))
        continue;
      row_t r = {0};
      r.x = num(pt, "working_set_bytes", NAN);
      r.v[0] = num(pt, "gbps", NAN);
      if (!(r.x > 0) || !isfinite(r.v[0]))
        continue;
      const char *kn = json_string_value(json_object_get(pt, "kernel"));
      if (kn && strncmp(kn, "stream_", 7) == 0)
        kn += 7;
      /* cache-level points and the working-set staircase are separate
       * series: joining them would zigzag */
      const char *kind = json_is_string(json_object_get(pt, "level"))
                             ? "per level" : "staircase";
      char key[96];
      if (by_threads)
        snprintf(key, sizeof key, "%s %s, %g thread%s", kn ? kn : "?", kind,
                 num(pt, "threads", 0), num(pt, "threads", 0) == 1 ? "" : "s");
      else
        snprintf(key, sizeof key, "%s %s", kn ? kn : "?", kind);
      if (add(set, p, key, &r) < 0)
        return CAL_ENOMEM;
    }
  }
  return 0;
}

static void human_bytes(double b, char *buf, size_t len) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    u++;
  }
  snprintf(buf, len, "%g %s", b, unit[u]);
}

static void level_name(const json_t *lv, char *buf, size_t len) {
  if (json_is_integer(lv))
    snprintf(buf, len, "L%" JSON_INTEGER_FORMAT, json_integer_value(lv));
  else if (json_is_string(lv))
    snprintf(buf, len, "%s", json_string_value(lv));
  else
    snprintf(buf, len, "?");
}

static void bandwidth_header(FILE *f, void *arg) {
  ctx_t *c = arg;
  /* distinct (level, size) cache marks over all profiles */
  size_t cap = 0, n = 0;
  for (size_t p = 0; p < c->n; p++)
    cap += json_array_size(json_object_get(
        json_object_get(c->p[p]->root, "bandwidth"), "caches"));
  double *size = calloc(cap ? cap : 1, sizeof *size);
  char (*name)[160] = calloc(cap ? cap : 1, sizeof *name);
  if (!size || !name) {
    fputs("ncaches = 0\n", f);
    free(size);
    free(name);
    return;
  }
  for (size_t p = 0; p < c->n; p++) {
    size_t i;
    json_t *cc;
    json_array_foreach(json_object_get(
                           json_object_get(c->p[p]->root, "bandwidth"),
                           "caches"),
                       i, cc) {
      double sz = num(cc, "size_bytes", NAN);
      if (!(sz > 0))
        continue;
      char lv[32], hb[32], nm[160];
      level_name(json_object_get(cc, "level"), lv, sizeof lv);
      human_bytes(sz, hb, sizeof hb);
      if (c->n > 1)
        snprintf(nm, sizeof nm, "%s %s (%s)", lv, hb, c->label[p]);
      else
        snprintf(nm, sizeof nm, "%s %s", lv, hb);
      int dup = 0;
      for (size_t j = 0; j < n; j++)
        dup |= size[j] == sz && strncmp(name[j], lv, strlen(lv)) == 0;
      if (dup)
        continue;
      size[n] = sz;
      snprintf(name[n], sizeof name[n], "%s", nm);
      n++;
    }
  }
  fprintf(f, "ncaches = %zu\n", n);
  if (n) {
    fprintf(f, "array cache_bytes[%zu]\narray cache_label[%zu]\n", n, n);
    for (size_t j = 0; j < n; j++) {
      fprintf(f, "cache_bytes[%zu] = %.10g\ncache_label[%zu] = ", j + 1,
              size[j], j + 1);
      cal_gp_quote(f, name[j]);
      fputc('\n', f);
    }
  }
  free(size);
  free(name);
}

static int collect_roofline(ctx_t *c, series_set_t *set) {
  for (size_t p = 0; p < c->n; p++) {
    const json_t *pts =
        json_object_get(json_object_get(c->p[p]->root, "roofline"), "kernels");
    size_t i;
    json_t *pt;
    json_array_foreach(pts, i, pt) {
      row_t r = {0};
      r.x = num(pt, "intensity_flop_per_byte", NAN);
      r.v[0] = num(pt, "gflops", NAN);
      if (!(r.x > 0) || !(r.v[0] > 0))
        continue;
      const char *nm = json_string_value(json_object_get(pt, "kernel"));
      snprintf(r.text, sizeof r.text, "%s", nm ? nm : "");
      if (add(set, p, "", &r) < 0)
        return CAL_ENOMEM;
    }
  }
  return 0;
}

/* Ceilings as arrays; the x range covers every ridge and point. */
static void roofline_header(FILE *f, void *arg) {
  ctx_t *c = arg;
  size_t ncomp = 0, nmem = 0;
  double xmin = INFINITY, xmax = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      fprintf(f, "ncompute = %zu\nnmemory = %zu\n", ncomp, nmem);
      if (ncomp)
        fprintf(f, "array compute_gflops[%zu]\narray compute_label[%zu]\n",
                ncomp, ncomp);
      if (nmem)
        fprintf(f,
                "array memory_gbps[%zu]\narray memory_peak[%zu]\n"
                "array memory_label[%zu]\n", nmem, nmem, nmem);
    }
    size_t ic = 0, im = 0;
    for (size_t p = 0; p < c->n; p++) {
      const json_t *roof = json_object_get(c->p[p]->root, "roofline");
      double peak = 0;
      const char *key;
      json_t *x;
      json_object_foreach(json_object_get(roof, "compute_gflops"), key, x) {
        double g = json_is_number(x) ? json_number_value(x) : NAN;
        if (!(g > 0) || strcmp(key, "int8") == 0) /* int8 is GOPS */
          continue;
        peak = g > peak ? g : peak;
        if (pass == 1) {
          const char *dt = key;
          char l[200];
          snprintf(l, sizeof l, "%s%s%s peak %.4g GFLOPS",
                   c->n > 1 ? c->label[p] : "", c->n > 1 ? " " : "",
                   dt ? dt : "?", g);
          fprintf(f, "compute_gflops[%zu] = %.10g\ncompute_label[%zu] = ",
                  ic + 1, g, ic + 1);
          cal_gp_quote(f, l);
          fputc('\n', f);
        }
        ic++;
      }
      json_object_foreach(json_object_get(roof, "bandwidth_gbps"), key, x) {
        double b = json_is_number(x) ? json_number_value(x) : NAN;
        if (!(b > 0))
          continue;
        if (pass == 0 && peak > 0) {
          double ridge = peak / b;
          xmin = ridge < xmin ? ridge : xmin;
          xmax = ridge > xmax ? ridge : xmax;
        }
        if (pass == 1) {
          char l[200];
          snprintf(l, sizeof l, "%s%s%s %.4g GB/s", c->n > 1 ? c->label[p] : "",
                   c->n > 1 ? " " : "", key, b);
          fprintf(f,
                  "memory_gbps[%zu] = %.10g\nmemory_peak[%zu] = %.10g\n"
                  "memory_label[%zu] = ",
                  im + 1, b, im + 1, peak > 0 ? peak : 1e30, im + 1);
          cal_gp_quote(f, l);
          fputc('\n', f);
        }
        im++;
      }
    }
    ncomp = ic;
    nmem = im;
  }
  for (size_t p = 0; p < c->n; p++) {
    size_t i;
    json_t *pt;
    json_array_foreach(json_object_get(
                           json_object_get(c->p[p]->root, "roofline"),
                           "kernels"),
                       i, pt) {
      double x = num(pt, "intensity_flop_per_byte", NAN);
      if (x > 0) {
        xmin = x < xmin ? x : xmin;
        xmax = x > xmax ? x : xmax;
      }
    }
  }
  if (!(xmax > 0)) {
    xmin = 1.0 / 16;
    xmax = 64;
  }
  fprintf(f, "xmin = %.10g\nxmax = %.10g\n", xmin / 8, xmax * 8);
}

static int roofline_has_ceilings(const ctx_t *c) {
  for (size_t p = 0; p < c->n; p++) {
    const json_t *roof = json_object_get(c->p[p]->root, "roofline");
    if (json_object_size(json_object_get(roof, "compute_gflops")) ||
        json_object_size(json_object_get(roof, "bandwidth_gbps")))
      return 1;
  }
  return 0;
}

typedef struct chart {
  const char *name;    /* file and template name */
  const char *section; /* profile section it reads */
  const char *what;    /* title */
  int (*collect)(ctx_t *, series_set_t *);
  header_fn header;
  int ncols, with_text;
  const char *cols[NCOL + 1];
} chart_t;

static const chart_t charts[] = {
    {"batch_sweep", "batch_sweep", "Throughput vs batch size", collect_batch,
     NULL, 6, 0,
     {"batch_size", "examples_per_s", "ci_low", "ci_high", "is_peak",
      "is_knee"}},
    {"gemm", "gemm", "GEMM GFLOPS vs size", collect_gemm, NULL, 5, 0,
     {"cbrt(m*n*k)", "m", "n", "k", "gflops"}},
    {"scaling", "scaling", "Scaling with threads", collect_scaling, NULL, 4, 0,
     {"threads", "gflops", "ideal_gflops", "efficiency"}},
    {"bandwidth", "bandwidth", "Memory bandwidth vs working set",
     collect_bandwidth, bandwidth_header, 2, 0, {"bytes", "gbps"}},
    {"roofline", "roofline", "Roofline", collect_roofline, roofline_header, 3,
     1, {"intensity_flop_per_byte", "gflops", "name"}},
};

static int do_chart(ctx_t *c, const chart_t *ch, int *drawn, char *err,
                    size_t errlen) {
  series_set_t set = {0};
  char *title = NULL;
  int rc = ch->collect(c, &set);
  if (rc < 0) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  for (size_t p = 0; p < c->n && c->notes; p++)
    if (!json_is_object(json_object_get(c->p[p]->root, ch->section)))
      fprintf(c->notes, "note: %s has no %s section\n", c->label[p],
              ch->section);
  int ceilings = strcmp(ch->name, "roofline") == 0 && roofline_has_ceilings(c);
  if (set.n == 0 && !ceilings) {
    if (c->notes)
      fprintf(c->notes, "note: no %s data in any profile: %s plot skipped\n",
              ch->section, ch->name);
    goto out;
  }
  if ((rc = write_dat(c, ch->name, &set, ch->ncols, ch->cols, ch->with_text,
                      err, errlen)) < 0)
    goto out;
  title = make_title(c, ch->what, ch->section);
  if (!title) {
    snprintf(err, errlen, "out of memory");
    rc = CAL_ENOMEM;
    goto out;
  }
  if ((rc = write_script(c, ch->name, title, &set, ch->header, c, err,
                         errlen)) < 0)
    goto out;
  *drawn = 1;
out:
  free(title);
  set_free(&set);
  return rc;
}

int cal_plot_run(const cal_profile_t *const *profiles, size_t n,
                 const cal_plot_opts_t *o, char *err, size_t errlen) {
  ctx_t c = {.p = profiles, .n = n, .o = o, .notes = o->notes};
  int rc = 0;
  if (n == 0 || !o->dir || !o->format ||
      (strcmp(o->format, "png") && strcmp(o->format, "svg"))) {
    snprintf(err, errlen, "plot: need profiles, a directory and png or svg");
    return CAL_EINVAL;
  }
  c.tdir = o->templates;
  if (!c.tdir || !*c.tdir)
    c.tdir = getenv("CALIBRATE_PLOTS_DIR");
  if (!c.tdir || !*c.tdir)
    c.tdir = cal_plots_dir;
  if ((rc = make_labels(&c)) < 0) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  if ((rc = make_dirs(o->dir, err, errlen)) < 0)
    goto out;
  int drawn[sizeof charts / sizeof charts[0]] = {0};
  for (size_t i = 0; i < sizeof charts / sizeof charts[0]; i++)
    if ((rc = do_chart(&c, &charts[i], &drawn[i], err, errlen)) < 0)
      goto out;
  for (size_t i = 0; i < sizeof charts / sizeof charts[0]; i++) {
    if (!drawn[i])
      continue;
    if (!o->script_only && (rc = run_gnuplot(&c, charts[i].name, err,
                                             errlen)) < 0)
      goto out;
    if (c.notes)
      fprintf(c.notes, "wrote %s/%s.%s\n", o->dir, charts[i].name,
              o->script_only ? "gp" : o->format);
  }
out:
  for (size_t i = 0; c.label && i < n; i++)
    free(c.label[i]);
  free(c.label);
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

static const char usage[] =
    "usage: calibrate plot PROFILE... [-o DIR] [--format png|svg]\n"
    "                      [--script-only] [--templates DIR]\n"
    "\n"
    "Draw gnuplot charts of one or more profiles (several overlay):\n"
    "throughput vs batch size, GEMM GFLOPS vs size, thread scaling,\n"
    "bandwidth vs working set, roofline.  Scripts (.gp) and data (.dat)\n"
    "are kept in DIR beside the images so they can be edited and re-run.\n"
    "\n"
    "  -o, --output DIR   where to write (default " CAL_PLOT_DEFAULT_DIR ")\n"
    "  --format png|svg   image format (default png)\n"
    "  --script-only      write scripts and data, do not run gnuplot\n"
    "  --templates DIR    gnuplot templates (default $CALIBRATE_PLOTS_DIR or\n"
    "                     the plots/ directory of the build)\n"
    "  -h, --help         this text\n";

enum { OPT_FORMAT = 256, OPT_SCRIPT_ONLY, OPT_TEMPLATES };

static const struct option long_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"script-only", no_argument, NULL, OPT_SCRIPT_ONLY},
    {"templates", required_argument, NULL, OPT_TEMPLATES},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int cal_cmd_plot(int argc, char **argv) {
  cal_plot_opts_t o = {.dir = CAL_PLOT_DEFAULT_DIR, .format = "png",
                       .notes = stderr};
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":o:h", long_opts, NULL)) != -1) {
    switch (c) {
    case 'o':
      if (!*optarg) {
        fprintf(stderr, "calibrate plot: -o needs a directory\n");
        return CAL_EXIT_USAGE;
      }
      o.dir = optarg;
      break;
    case OPT_FORMAT:
      if (strcmp(optarg, "png") && strcmp(optarg, "svg")) {
        fprintf(stderr, "calibrate plot: --format must be png or svg: %s\n",
                optarg);
        return CAL_EXIT_USAGE;
      }
      o.format = optarg;
      break;
    case OPT_SCRIPT_ONLY: o.script_only = 1; break;
    case OPT_TEMPLATES: o.templates = optarg; break;
    case 'h': fputs(usage, stdout); return CAL_EXIT_OK;
    case ':':
      fprintf(stderr, "calibrate plot: option needs a value: %s\n",
              argv[optind - 1]);
      return CAL_EXIT_USAGE;
    default:
      fprintf(stderr, "calibrate plot: unknown option: %s\n",
              argv[optind - 1]);
      return CAL_EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, "calibrate plot: give at least one profile "
                    "(calibrate plot --help)\n");
    return CAL_EXIT_USAGE;
  }
  size_t n = (size_t)(argc - optind);
  cal_profile_t **p = calloc(n, sizeof *p);
  char err[512];
  int rc = CAL_EXIT_OK;
  if (!p) {
    fprintf(stderr, "calibrate plot: out of memory\n");
    return CAL_EXIT_INTERNAL;
  }
  for (size_t i = 0; i < n; i++)
    if (cal_profile_load(argv[optind + (int)i], &p[i], err, sizeof err) < 0) {
      fprintf(stderr, "calibrate plot: %s\n", err);
      rc = CAL_EXIT_USAGE;
      goto out;
    }
  int r = cal_plot_run((const cal_profile_t *const *)p, n, &o, err,
                       sizeof err);
  if (r < 0) {
    fprintf(stderr, "calibrate plot: %s\n", err);
    rc = r == CAL_EIO || r == CAL_EINVAL ? CAL_EXIT_USAGE : CAL_EXIT_INTERNAL;
  }
out:
  for (size_t i = 0; i < n; i++)
    cal_profile_free(p[i]);
  free(p);
  return rc;
}
