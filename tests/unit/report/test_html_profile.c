/* report/html_profile.c and the escaping of report/html.c: the report
 * page's tables of profiles, written from typed views of small profiles
 * built here (no gnuplot needed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "html.h"
#include "html_profile.h"
#include "view.h"
#include "test_util.h"

/* A view of the JSON text j, with its tree in *root (decref it). */
static cal_profile_view_t *view_of(const char *j, json_t **root) {
  json_error_t e;
  cal_profile_view_t *v = NULL;
  *root = json_loads(j, 0, &e);
  assert_non_null(*root);
  assert_int_equal(cal_profile_view_build(*root, &v), 0);
  return v;
}

/* What fn writes, as a malloc'd string. */
typedef struct out {
  char *s;
  size_t len;
  FILE *f;
} out_t;

static void out_open(out_t *o) {
  o->s = NULL;
  o->len = 0;
  o->f = open_memstream(&o->s, &o->len);
  assert_non_null(o->f);
}

static char *out_close(out_t *o) {
  assert_int_equal(fclose(o->f), 0);
  return o->s;
}

/* Free what a test wrote and read. */
static void done(char *s, cal_profile_view_t *v, json_t *root) {
  free(s);
  cal_profile_view_free(v);
  json_decref(root);
}

static const char machine_json[] =
    "{\"device_name\": \"a<b\", \"created\": \"2024-05-01T00:00:00Z\","
    " \"machine\": {\"cpu\": {\"brand\": \"Xeon\"}, \"topology\":"
    " {\"cores\": 8}, \"memory\": {\"total_bytes\": 17179869184},"
    " \"usable_cores\": 7.5},"
    " \"tool\": {\"version\": \"1.0\"}, \"gflops\": 123.456,"
    " \"throughput\": 56.6, \"optimal_batch_size\": 32,"
    " \"batch_source\": {\"mode\": \"train\", \"dtype\": \"bf16\","
    "  \"preset\": \"tiny<m>\", \"seq\": 128},"
    " \"headline_status\": \"partial\"}";

static void escape(void **state) {
  (void)state;
  out_t o;
  out_open(&o);
  cal_html_escape(o.f, "<a href='x'>&\"\x01\xff\xc3\xa9");
  cal_html_escape(o.f, NULL);
  char *s = out_close(&o);
  assert_string_equal(s, "&lt;a href=&#39;x&#39;&gt;&amp;&quot; &#xfffd;"
                         "\xc3\xa9");
  free(s);
}

static void machine_and_headline(void **state) {
  (void)state;
  json_t *root;
  cal_profile_view_t *v = view_of(machine_json, &root);
  const cal_profile_view_t *views[1] = {v};
  const char *names[1] = {"box & co"};
  out_t o;
  out_open(&o);
  cal_html_machine_table(o.f, views, names, 1);
  cal_html_headline_table(o.f, views, names, 1);
  char *s = out_close(&o);
  cal_assert_contains(s, "<tr><th></th><th>box &amp; co</th></tr>",
                      "<tr><th>device</th><td>a&lt;b</td></tr>",
                      "<tr><th>cores</th><td class=\"n\">8</td>");
  /* an integer of bytes as GiB, another number as %.4g */
  assert_non_null(
      strstr(s, "<tr><th>memory (GiB)</th><td class=\"n\">16</td>"));
  assert_non_null(
      strstr(s, "<tr><th>usable cores</th><td class=\"n\">7.5</td>"));
  /* absent: a dash */
  cal_assert_contains(s, "<tr><th>OS</th><td>&mdash;</td>",
                      "<td class=\"n\">123.5 GFLOPS</td>",
                      "<tr><th>memory</th><td class=\"n\">&mdash;",
                      "<tr><th>headline status</th><td>partial</td>");
  /* a batch figure names what it measured: mode, dtype, model */
  cal_assert_contains(s, "<td class=\"n\">56.6 examples/s<br><span "
                         "class=\"what\">train, bf16, tiny&lt;m&gt;, seq "
                         "128</span></td>",
                      "<td class=\"n\">32<br><span class=\"what\">train, "
                      "bf16");
  done(s, v, root);
}

/* Sections in another order than the fixed one: the quality notes list
 * points as the file holds them. */
static const char sections_json[] =
    "{\"quality\": {\"noisy\": true, \"unstable_points\": 1,"
    "  \"failed_points\": 1, \"elapsed_s\": 2.5,"
    "  \"warnings\": [\"hot <cpu>\"]},"
    " \"peak\": {\"points\": [{\"id\": \"peak/fma\", \"status\": \"ok\","
    "  \"kernel\": \"fma\", \"dtype\": \"int8\", \"metric\": \"gops\","
    "  \"gops\": 50, \"efficiency\": 0.5, \"threads\": 2},"
    "  {\"id\": \"peak/amx\", \"status\": \"skipped\"}]},"
    " \"gemm\": {\"dtypes\": {\"int8\": {\"kernel\": \"k8\","
    "  \"status\": \"measured\", \"best_gops_1_thread\": 10,"
    "  \"best_gops_all_threads\": 20}},"
    "  \"points\": [{\"id\": \"gemm/a\", \"status\": \"failed\","
    "  \"reason\": \"out of memory\"},"
    "  {\"id\": \"gemm/b\", \"status\": \"ok\","
    "  \"stats\": {\"unstable\": true, \"cv\": 0.123}},"
    "  {\"id\": \"gemm/c\", \"status\": \"ok\", \"contaminated\": true}]},"
    " \"roofline\": {\"bandwidth_gbps\": {\"L1\": 100, \"memory\": 10},"
    "  \"bandwidth_kernel\": {\"memory\": \"stream_read\"}},"
    " \"batch_sweep\": {\"model\": {\"preset\": \"tiny\", \"seq\": 128,"
    "  \"hidden\": 256}, \"modes\": {\"decode\": {\"status\": \"measured\","
    "  \"peak_batch_size\": 8, \"peak_examples_per_s\": 1000}}}}";

static void section_tables(void **state) {
  (void)state;
  json_t *root;
  cal_profile_view_t *v = view_of(sections_json, &root);
  out_t o;
  out_open(&o);
  cal_html_profile_tables(o.f, v);
  char *s = out_close(&o);
  assert_non_null(strstr(s, "<td>int8</td><td>k8</td><td>measured</td>"
                            "<td class=\"n\">10 GOPS</td>"
                            "<td class=\"n\">20 GOPS</td><td></td>"));
  assert_non_null(strstr(s, "<td class=\"n\">50 GOPS</td>"
                            "<td class=\"n\">100 GOPS</td>"
                            "<td class=\"n\">50 %</td>"));
  assert_non_null(strstr(s, "<tr><td>L1</td><td class=\"n\">100 GB/s</td>"
                            "<td></td></tr>"));
  assert_non_null(strstr(s, "<td>memory</td><td class=\"n\">10 GB/s</td>"
                            "<td>stream_read</td>"));
  assert_non_null(strstr(s, "<h3>Batch sweep: tiny, seq 128, hidden 256"));
  assert_non_null(strstr(s, "<td class=\"n\">1000 tokens/s</td>"));
  assert_non_null(strstr(s, "<p>noisy: yes; unstable points: 1; failed "
                            "points: 1; elapsed 2.5 s</p>"));
  assert_non_null(strstr(s, "<li class=\"warn\">hot &lt;cpu&gt;</li>"));
  /* the file's order: peak before gemm; unstable, failed, contaminated */
  const char *p = strstr(s, "<li class=\"warn\">peak/amx: skipped</li>");
  const char *a = strstr(s, "gemm/a: failed (out of memory)");
  const char *b = strstr(s, "<li>gemm/b: unstable (cv 12.3%)</li>");
  const char *c = strstr(s, "gemm/c: contaminated</li>");
  assert_non_null(p);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  assert_true(p < a && a < b && b < c);
  assert_null(strstr(s, "<li>none</li>"));
  done(s, v, root);
}

static void empty_profile(void **state) {
  (void)state;
  json_t *root;
  cal_profile_view_t *v = view_of("{}", &root);
  out_t o;
  out_open(&o);
  cal_html_profile_tables(o.f, v);
  char *s = out_close(&o);
  /* no section tables, the notes with nothing to list */
  assert_null(strstr(s, "<table>"));
  assert_non_null(strstr(s, "<p>noisy: no; unstable points: nan;"));
  assert_non_null(strstr(s, "<li>none</li>"));
  done(s, v, root);
}

CAL_TEST_MAIN(
    cmocka_unit_test(escape), cmocka_unit_test(machine_and_headline),
    cmocka_unit_test(section_tables), cmocka_unit_test(empty_profile))
