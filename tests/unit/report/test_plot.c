/* calibrate plot end to end on tests/data/profile_{a,b}.json: the generated
 * scripts and data, quoting of awkward names, skipped sections, a missing
 * gnuplot, and (when gnuplot is installed) valid PNG and SVG images; the
 * chart table and the rows it collects from typed views.
 * covers: calibrator/commands/plot.c calibrator/report/charts_rows.c
 * covers: calibrator/report/charts_marks.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cal_err.h"
#include "cal_exit.h"
#include "subcommands.h"
#include "charts.h"
#include "gnuplot.h"
#include "plot.h"
#include "test_fs.h"
#include "test_util.h"

#define PROFILE_A CAL_TEST_DATA "/profile_a.json"
#define PROFILE_B CAL_TEST_DATA "/profile_b.json"
#define REFERENCE CAL_TEST_DATA "/kvm-xeon-2core-avx512.json"

typedef struct fixture {
  char *dir;     /* scratch, with a space in its name */
  char *quoted;  /* profile_b renamed Bob's "box" */
  char *bare;    /* profile_a without any section */
  char *plots;   /* dir/"my plots" */
} fixture_t;

static void rename_b(json_t *root, void *arg) {
  (void)arg;
  json_object_set_new(root, "device_name", json_string("Bob's \"box\""));
}

static void strip_sections(json_t *root, void *arg) {
  (void)arg;
  const char *const s[] = {"gemm", "scaling", "bandwidth", "batch_sweep",
                           "roofline"};
  for (size_t i = 0; i < 5; i++)
    json_object_del(root, s[i]);
}

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  if (!f || !(f->dir = test_scratch_dir()))
    return -1;
  f->quoted = test_profile_variant(PROFILE_B, f->dir, "bob's profile.json",
                                   rename_b, NULL);
  f->bare = test_profile_variant(PROFILE_A, f->dir, "bare.json",
                                 strip_sections, NULL);
  f->plots = test_path(f->dir, "my plots");
  *state = f;
  return f->quoted && f->bare && f->plots ? 0 : -1;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  unsetenv("CALIBRATE_GNUPLOT");
  test_rm_rf(f->dir);
  test_free_each(f->dir, f->quoted, f->bare, f->plots, f);
  return 0;
}

static char *read_out(const fixture_t *f, const char *name) {
  char *p = test_path(f->plots, name);
  char *text = p ? test_read_file(p, NULL) : NULL;
  free(p);
  return text;
}

static void assert_contains(const char *text, const char *want) {
  if (!text || !strstr(text, want))
    fail_msg("expected to find \"%s\"", want);
}

/* The file `name` of the plots holds `want`. */
static void expect_out(const fixture_t *f, const char *name, const char *want) {
  char *text = read_out(f, name);
  assert_contains(text, want);
  free(text);
}

static int run_plot(char **args, int n) {
  char *argv[16];
  argv[0] = "plot";
  for (int i = 0; i < n; i++)
    argv[i + 1] = args[i];
  argv[n + 1] = NULL;
  return cal_cmd_plot(n + 1, argv);
}

static void quote_for_gnuplot(void **state) {
  (void)state;
  char buf[64] = "";
  FILE *m = fmemopen(buf, sizeof buf, "w");
  assert_non_null(m);
  cal_gp_quote(m, "Bob's \"box\"\n1");
  fclose(m);
  assert_string_equal(buf, "\"Bob\\047s \\042box\\042 1\"");
}

/* plot --script-only of profile A and `second` into the fixture's plots. */
static void scripts_only(const fixture_t *f, char *second) {
  char *args[] = {"--script-only", "-o", f->plots, PROFILE_A, second};
  assert_int_equal(run_plot(args, 5), CAL_EXIT_OK);
}

static void scripts_and_data(void **state) {
  fixture_t *f = *state;
  scripts_only(f, f->quoted);
  char *gp = read_out(f, "batch_sweep.gp");
  assert_contains(gp, "datafile = 'batch_sweep.dat'\n");
  assert_contains(gp, "outfile = 'batch_sweep.png'\n");
  /* what each measured differs: a line each */
  assert_contains(gp, "title = \"Batch sweep\" . \"\\n\" . \"machine_a "
                      "(2025-01-15): prefill, decode (one layer)\" . "
                      "\"\\n\" . \"Bob\\047s \\042box\\042 (2025-01-16): "
                      "decode (one layer)\"\n");
  assert_contains(gp, "nseries = 3\n");
  assert_contains(gp, "label[1] = \"machine_a prefill\"\n");
  assert_contains(gp, "label[3] = \"Bob\\047s \\042box\\042 decode\"\n");
  assert_contains(gp, "set logscale x 2"); /* from the template */
  free(gp);
  char *dat = read_out(f, "batch_sweep.dat");
  /* prefill: peak 32 and knee 16 flagged; ci from stats; the latency's
   * interval is the rate's inverted (batch / rate) */
  assert_contains(dat, "\n16 620 607.6 626.2 0 1 25.806452 25.55094257 "
                       "26.33311429\n"
                       "32 776 760.48 783.76 1 0 41.237113 40.82882475 "
                       "42.07868673\n");
  assert_contains(dat, "# series 3: Bob's \"box\" decode\n1 180");
  assert_contains(dat, "\n4 278 272.44 280.78 1 1 14.388489 14.24602871 "
                       "14.68213163\n");
  free(dat);

  dat = read_out(f, "gemm.dat");
  /* the median's interval after the rate */
  assert_contains(dat, "\n1024 1024 1024 1024 120 117.6 121.2\n");
  assert_contains(dat, "# series 2: machine_a bf16\n256 256 256 256 80 78.4 80.8\n");
  free(dat);
  expect_out(f, "scaling.dat",
             "1 68 68 1 66.64 68.68\n2 130 136 0.956 127.4 131.3\n");
  gp = read_out(f, "bandwidth.gp");
  assert_contains(gp, "title = \"Memory bandwidth vs working set per core - "
                      "machine_a (2025-01-15)\"\n");
  assert_contains(gp, "ncaches = 3\n");
  assert_contains(gp, "cache_bytes[2] = 2097152; cache_dt[2] = 11; "
                      "cache_row[2] = 0\ncache_tag[2] = \"L2 2 MiB\"\n");
  assert_contains(gp, "markkey[1] = \"machine_a cache sizes per core "
                      "(reported)\"\n");
  free(gp);
  /* per core: the 2-thread staircase point of 16 KiB in all */
  expect_out(f, "bandwidth.dat",
             "# series 3: machine_a triad staircase\n8192 144 141.12 145.44\n");
  gp = read_out(f, "roofline.gp");
  assert_contains(gp, "nmemory = 2\n");
  assert_contains(gp, "memory_gbps[2] = 12; memory_peak[2] = 260; "
                      "memory_grey[2] = 2; memory_dt[2] = 1\n");
  /* two profiles overlaid: the colour is the dtype's, the dash the
   * profile's */
  assert_contains(gp, "compute_gflops[1] = 130; compute_lt[1] = 2; "
                      "compute_dt[1] = 1; compute_dram[1] = 12\n");
  free(gp);
  dat = read_out(f, "roofline.dat");
  /* one series per kernel family, dtype and threads: no labels */
  assert_contains(dat, "# series 1: machine_a GEMM fp32, 1 thread\n85.3 120 \"sgemm\"\n");
  assert_contains(dat, "# series 2: machine_a stream fp32, 1 thread\n0.083 0.8 \"stream_triad\"\n");
  free(dat);
  /* script-only draws nothing */
  char *png = test_path(f->plots, "gemm.png");
  assert_int_not_equal(access(png, F_OK), 0);
  free(png);
}

/* Same device name twice: labels fall back to the file names. */
static void clashing_names(void **state) {
  fixture_t *f = *state;
  scripts_only(f, f->bare);
  char *gp = read_out(f, "gemm.gp");
  assert_contains(gp, "label[1] = \"profile_a fp32\"\n");
  assert_contains(gp, "title = \"GEMM GFLOPS vs size - profile_a "
                      "(2025-01-15)\"\n");
  free(gp);
}

static void absent_sections_skipped(void **state) {
  fixture_t *f = *state;
  char *args[] = {"--script-only", "-o", f->plots, f->bare};
  assert_int_equal(run_plot(args, 4), CAL_EXIT_OK);
  char *gp = test_path(f->plots, "batch_sweep.gp");
  assert_int_not_equal(access(gp, F_OK), 0);
  free(gp);
  /* profile_b has no scaling: scaling is skipped, gemm is not */
  char *args2[] = {"--script-only", "-o", f->plots, PROFILE_B};
  assert_int_equal(run_plot(args2, 4), CAL_EXIT_OK);
  char *s = test_path(f->plots, "scaling.gp"), *g = test_path(f->plots, "gemm.gp");
  assert_int_not_equal(access(s, F_OK), 0);
  assert_int_equal(access(g, F_OK), 0);
  free(s);
  free(g);
}

static void missing_gnuplot_keeps_profile(void **state) {
  fixture_t *f = *state;
  size_t before_len, after_len;
  char *before = test_read_file(f->quoted, &before_len);
  setenv("CALIBRATE_GNUPLOT", "calibrate-test-no-such-gnuplot", 1);
  char err[512] = "";
  const char *paths[] = {f->quoted};
  assert_int_equal(cal_plot_profiles(paths, 1, f->plots, "png", err, sizeof err),
                   CAL_ENOTFOUND);
  assert_contains(err, "apt-get install gnuplot-nox");
  /* the command: exit 2 (the user installs it), not an internal error */
  char *draw[] = {"-o", f->plots, f->quoted};
  assert_int_equal(run_plot(draw, 3), CAL_EXIT_USAGE);
  char *gp = read_out(f, "batch_sweep.gp");
  assert_non_null(gp); /* scripts still written */
  free(gp);
  char *after = test_read_file(f->quoted, &after_len);
  assert_int_equal(before_len, after_len);
  assert_memory_equal(before, after, before_len);
  free(before);
  free(after);
  char *args[] = {"-o", f->plots, f->quoted};
  int rc = run_plot(args, 3);
  assert_int_not_equal(rc, CAL_EXIT_OK);
  unsetenv("CALIBRATE_GNUPLOT");
}

static void bad_arguments(void **state) {
  fixture_t *f = *state;
  char *fmt[] = {"--format", "jpeg", PROFILE_A};
  assert_int_equal(run_plot(fmt, 3), CAL_EXIT_USAGE);
  char *none[] = {"-o", f->plots};
  assert_int_equal(run_plot(none, 2), CAL_EXIT_USAGE);
  char *flag[] = {"--colour", PROFILE_A};
  assert_int_equal(run_plot(flag, 2), CAL_EXIT_USAGE);
  char *missing[] = {"/nonexistent/p.json"};
  assert_int_equal(run_plot(missing, 1), CAL_EXIT_USAGE);
  char err[256];
  const cal_profile_t *no[1] = {NULL};
  cal_plot_opts_t o = {.dir = f->plots, .format = "gif"};
  assert_int_equal(cal_plot_run(no, 0, &o, err, sizeof err), CAL_EINVAL);
}

static int gnuplot_available(void) {
  return system("gnuplot -e 'exit' >/dev/null 2>&1") == 0;
}

static void check_image(const fixture_t *f, const char *name, int png) {
  size_t len = 0;
  char *p = test_path(f->plots, name);
  char *data = test_read_file(p, &len);
  free(p);
  if (!data)
    fail_msg("%s was not drawn", name);
  if (len < 2000)
    fail_msg("%s is only %zu bytes", name, len);
  if (png)
    assert_memory_equal(data, "\x89PNG\r\n\x1a\n", 8);
  else if (strncmp(data, "<?xml", 5) != 0 && strncmp(data, "<svg", 4) != 0)
    fail_msg("%s does not start like SVG", name);
  free(data);
}

/* Whether any of the n profiles at paths has the section. */
static int any_has_section(const char *const *paths, size_t n,
                           const char *section) {
  int has = 0;
  for (size_t i = 0; i < n && !has; i++) {
    json_error_t e;
    json_t *root = json_load_file(paths[i], 0, &e);
    assert_non_null(root);
    has = json_is_object(json_object_get(root, section));
    json_decref(root);
  }
  return has;
}

/* Every chart of the table: drawn when a profile has its section, else
 * skipped (no image). */
static void check_charts(const fixture_t *f, const char *const *paths,
                         size_t n, const char *ext) {
  char name[64];
  for (size_t i = 0; i < cal_ncharts; i++) {
    snprintf(name, sizeof name, "%s.%s", cal_charts[i].name, ext);
    if (any_has_section(paths, n, cal_charts[i].section)) {
      check_image(f, name, strcmp(ext, "png") == 0);
    } else {
      char *p = test_path(f->plots, name);
      if (access(p, F_OK) == 0)
        fail_msg("%s drawn without a %s section", name, cal_charts[i].section);
      free(p);
    }
  }
}

static void images(void **state) {
  fixture_t *f = *state;
  if (!gnuplot_available()) {
    cal_test_skip("gnuplot not installed: images not checked");
  }
  char err[512] = "";
  const char *paths[] = {PROFILE_A, f->quoted};
  int rc = cal_plot_profiles(paths, 2, f->plots, "png", err, sizeof err);
  if (rc != 0)
    fail_msg("plot failed: %s", err);
  check_charts(f, paths, 2, "png");
  char *args[] = {"--format", "svg", "-o", f->plots, PROFILE_A, f->quoted};
  assert_int_equal(run_plot(args, 6), CAL_EXIT_OK);
  check_charts(f, paths, 2, "svg");
}


/* Issue 14: a name starting with a quote, holding two doubled quotes, a
 * backquote, an @ or ending in a backslash broke the script.  Each goes
 * through gnuplot itself, after a comment ending in a backslash, and
 * comes back as it was. */
static void quote_survives_gnuplot(void **state) {
  (void)state;
  if (!gnuplot_available()) {
    cal_test_skip("gnuplot not installed: quoting not run through it");
  }
  static const char *const names[] = {
      "'abc", "a''''b", "ends in \\", "`echo hi`", "@macro \"x\"",
      "caf\xc3\xa9 'q' \\\\ $HOME ;exit", "''"};
  char *dir = test_scratch_dir();
  assert_non_null(dir);
  char *script = test_path(dir, "q.gp"), *out = test_path(dir, "q.out");
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fputs("set print '-'\n# ", f);
    cal_gp_comment(f, "profile: /a/path\\");
    fputs("\nlabel = ", f); /* not joined to the comment */
    cal_gp_quote(f, names[i]);
    fputs("\nprint label\n", f);
    fclose(f);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "gnuplot '%s' >'%s' 2>&1", script, out);
    assert_int_equal(system(cmd), 0);
    char *got = test_read_file(out, NULL), want[256];
    assert_non_null(got);
    snprintf(want, sizeof want, "%s\n", names[i]);
    if (strcmp(got, want) != 0)
      fail_msg("gnuplot printed \"%s\" for \"%s\"", got, names[i]);
    free(got);
  }
  test_rm_rf(dir);
  free(dir);
  free(script);
  free(out);
}

/* Issue 14: links planted in the output directory (a shared one) were
 * followed and their targets overwritten. */
static void planted_links_not_followed(void **state) {
  fixture_t *f = *state;
  static const char *const names[] = {"gemm.dat", "gemm.gp", "scaling.gp",
                                      "gemm.png"};
  char *victim = test_path(f->dir, "victim");
  assert_int_equal(mkdir(f->plots, 0755), 0);
  FILE *v = fopen(victim, "w");
  assert_non_null(v);
  fputs("precious", v);
  fclose(v);
  for (size_t i = 0; i < 4; i++) {
    char *l = test_path(f->plots, names[i]);
    assert_int_equal(symlink(victim, l), 0);
    free(l);
  }
  char *args[] = {"--script-only", "-o", f->plots, PROFILE_A};
  assert_int_equal(run_plot(args, 4), CAL_EXIT_OK);
  char *text = test_read_file(victim, NULL);
  assert_string_equal(text, "precious");
  free(text);
  for (size_t i = 0; i < 3; i++) { /* replaced by regular files */
    char *l = test_path(f->plots, names[i]);
    struct stat st;
    assert_int_equal(lstat(l, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    free(l);
  }
  if (gnuplot_available()) { /* the image too */
    char *args2[] = {"-o", f->plots, PROFILE_A};
    assert_int_equal(run_plot(args2, 3), CAL_EXIT_OK);
    text = test_read_file(victim, NULL);
    assert_string_equal(text, "precious");
    free(text);
    check_image(f, "gemm.png", 1);
  }
  free(victim);
}

/* Names hostile to gnuplot and to the charts' layout. */
static void hostile(json_t *root, void *arg) {
  (void)arg;
  char longname[400];
  memset(longname, 'W', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  char name[600];
  snprintf(name, sizeof name, "<script>\"x\"</script> & 'q' \\ `id` @x\n%s",
           longname);
  json_object_set_new(root, "device_name", json_string(name));
  json_t *bs = json_object_get(json_object_get(root, "batch_sweep"), "model");
  json_object_set_new(bs, "preset", json_string("pre\"set' `x` \\"));
  /* a matrix-engine peak point, as a CPU with AMX writes one */
  json_t *pts = json_object_get(json_object_get(root, "peak"), "points");
  json_t *amx = json_deep_copy(json_array_get(pts, 2));
  json_object_set_new(amx, "id", json_string("peak/amx_bf16/amx/t1"));
  json_object_set_new(amx, "kernel", json_string("amx_bf16"));
  json_object_set_new(amx, "variant", json_string("amx"));
  json_object_set_new(amx, "efficiency", json_real(0.6));
  json_array_append_new(pts, amx);
}

/* Issue 18: every chart of the reference profile, and of a copy with
 * hostile names overlaid on it, drawn as PNG and SVG. */
static void reference_charts(void **state) {
  fixture_t *f = *state;
  if (!gnuplot_available()) {
    cal_test_skip("gnuplot not installed: images not checked");
  }
  char *evil = test_profile_variant(REFERENCE, f->dir, "evil.json", hostile,
                                    NULL);
  assert_non_null(evil);
  char *one[] = {"-o", f->plots, REFERENCE};
  assert_int_equal(run_plot(one, 3), CAL_EXIT_OK);
  char name[64];
  /* the reference profile has every section: every chart is drawn */
  for (size_t i = 0; i < cal_ncharts; i++) {
    snprintf(name, sizeof name, "%s.png", cal_charts[i].name);
    check_image(f, name, 1);
  }
  /* the batch sweep names what was measured */
  expect_out(f, "batch_sweep.gp",
             "Batch sweep: qwen2-0.5b, seq 128, fp32: prefill, decode (one "
             "layer)");
  char *two[] = {"--format", "svg", "-o", f->plots, REFERENCE, evil};
  assert_int_equal(run_plot(two, 6), CAL_EXIT_OK);
  for (size_t i = 0; i < cal_ncharts; i++) {
    snprintf(name, sizeof name, "%s.svg", cal_charts[i].name);
    check_image(f, name, 0);
    char *svg = read_out(f, name);
    /* gnuplot escapes text in SVG: no markup from a name gets through */
    if (strstr(svg, "<script"))
      fail_msg("%s carries <script", name);
    free(svg);
  }
  /* the matrix engine is measured against its own theoretical peak */
  char *dat = read_out(f, "peak.dat");
  /* the error bar: the median's interval on the same scale (its stats
   * are those of the point it was copied from) */
  /* four bars (two machines, two thread counts) in a kernel's place */
  assert_contains(dat, " 60 85.51409588 142.5234931 57.33247652 60.59700629 "
                       "0.18 \"bf16 amx_bf16 amx\"\n");
  free(dat);
  /* titles and keys are cut to fit: no 400-character name in them */
  char *gp = read_out(f, "gemm.gp");
  if (strstr(gp, "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW"))
    fail_msg("a long name was not cut in gemm.gp");
  free(gp);
  free(evil);
}

/* Issue 14: --templates /nonexistent exited 2 but left .dat and .gp
 * files. */
static void missing_templates_write_nothing(void **state) {
  fixture_t *f = *state;
  char *args[] = {"--script-only", "--templates", "/nonexistent", "-o",
                  f->plots, PROFILE_A};
  assert_int_equal(run_plot(args, 6), CAL_EXIT_USAGE);
  assert_int_not_equal(access(f->plots, F_OK), 0);
}

/* The rows a chart collects from typed views: a confirmation left out,
 * series by thread count when the threads vary, roofline kernels drawn
 * though they have no status. */
static void chart_rows_from_views(void **state) {
  (void)state;
  static const char j[] =
      "{\"gemm\": {\"points\": ["
      " {\"id\": \"g1\", \"status\": \"ok\", \"dtype\": \"fp32\","
      "  \"m\": 64, \"n\": 64, \"k\": 64, \"gflops\": 10, \"threads\": 1},"
      " {\"id\": \"g2\", \"status\": \"ok\", \"dtype\": \"fp32\","
      "  \"m\": 64, \"n\": 64, \"k\": 64, \"gflops\": 18, \"threads\": 2},"
      " {\"id\": \"g3\", \"status\": \"ok\", \"dtype\": \"fp32\","
      "  \"confirms\": \"g1\", \"m\": 64, \"n\": 64, \"k\": 64,"
      "  \"gflops\": 11, \"threads\": 1},"
      " {\"id\": \"g4\", \"status\": \"failed\", \"dtype\": \"fp32\","
      "  \"m\": 8, \"n\": 8, \"k\": 8, \"gflops\": 1, \"threads\": 1}]},"
      " \"roofline\": {\"kernels\": [{\"kernel\": \"gemm_fp32\","
      "  \"dtype\": \"fp32\", \"threads\": 2,"
      "  \"intensity_flop_per_byte\": 4, \"gflops\": 20}]}}";
  json_error_t e;
  json_t *root = json_loads(j, 0, &e);
  cal_profile_view_t *v = NULL;
  assert_non_null(root);
  assert_int_equal(cal_profile_view_build(root, &v), 0);
  const cal_profile_view_t *views[1] = {v};
  const char *labels[1] = {"box"};
  cal_chart_in_t in = {.views = views, .labels = labels, .n = 1};
  const cal_chart_t *gemm = NULL, *roof = NULL;
  for (size_t i = 0; i < cal_ncharts; i++) {
    if (strcmp(cal_charts[i].name, "gemm") == 0)
      gemm = &cal_charts[i];
    if (strcmp(cal_charts[i].name, "roofline") == 0)
      roof = &cal_charts[i];
  }
  assert_non_null(gemm);
  assert_non_null(roof);
  assert_true(cal_chart_has_section(gemm, v));
  assert_false(cal_chart_has_section(&cal_charts[0], v));
  cal_gp_set_t set = {0};
  assert_int_equal(cal_chart_collect(gemm, &in, &set, NULL), 0);
  assert_int_equal(set.n, 2);
  assert_string_equal(set.s[0].key, "fp32, 1 thread");
  assert_string_equal(set.s[1].key, "fp32, 2 threads");
  assert_int_equal(set.s[0].n, 1);
  assert_double_equal(set.s[0].rows[0].v[3], 10, 0);
  assert_double_equal(set.s[0].rows[0].x, 64, 1e-9);
  cal_gp_set_free(&set);
  assert_int_equal(cal_chart_collect(roof, &in, &set, NULL), 0);
  assert_int_equal(set.n, 1);
  assert_string_equal(set.s[0].key, "GEMM fp32, 2 threads");
  assert_string_equal(set.s[0].rows[0].text, "gemm_fp32");
  cal_gp_set_free(&set);
  cal_profile_view_free(v);
  json_decref(root);
}

/* Every row of the chart table is whole, and the report page places
 * each chart once. */
static void chart_table_whole(void **state) {
  (void)state;
  assert_true(cal_ncharts > 0);
  int *seen = calloc(cal_ncharts, sizeof *seen);
  assert_non_null(seen);
  for (size_t i = 0; i < cal_ncharts; i++) {
    const cal_chart_t *ch = &cal_charts[i];
    if (!ch->name || !ch->section || !ch->what || !ch->row || !ch->caption)
      fail_msg("chart row %zu (%s) has an empty slot", i,
               ch->name ? ch->name : "no name");
    assert_true(ch->ncols > 0 && ch->ncols <= CAL_GP_NCOL + 1);
    for (int c = 0; c < ch->ncols; c++)
      assert_non_null(ch->cols[c]);
    assert_true(ch->page >= 1 && (size_t)ch->page <= cal_ncharts);
    seen[ch->page - 1]++;
  }
  for (size_t i = 0; i < cal_ncharts; i++) {
    assert_int_equal(seen[i], 1);
    assert_non_null(cal_chart_on_page(i));
    assert_int_equal(cal_chart_on_page(i)->page, (int)i + 1);
  }
  assert_null(cal_chart_on_page(cal_ncharts));
  free(seen);
}

CAL_TEST_MAIN(
    cmocka_unit_test(chart_table_whole),
    cmocka_unit_test(chart_rows_from_views),
    cmocka_unit_test(quote_for_gnuplot),
    cmocka_unit_test_setup_teardown(scripts_and_data, setup, teardown),
    cmocka_unit_test_setup_teardown(clashing_names, setup, teardown),
    cmocka_unit_test_setup_teardown(absent_sections_skipped, setup, teardown),
    cmocka_unit_test_setup_teardown(missing_gnuplot_keeps_profile, setup,
    teardown), cmocka_unit_test_setup_teardown(bad_arguments, setup, teardown),
    cmocka_unit_test_setup_teardown(images, setup, teardown),
    cmocka_unit_test(quote_survives_gnuplot),
    cmocka_unit_test_setup_teardown(planted_links_not_followed, setup,
    teardown),
    cmocka_unit_test_setup_teardown(missing_templates_write_nothing, setup,
    teardown),
    cmocka_unit_test_setup_teardown(reference_charts, setup, teardown))
