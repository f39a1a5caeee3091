/* Reporters: every output people or tools read (the run's table and
 * profile, markdown, HTML, gnuplot charts, BMF, gab) is one row of a
 * command's reporter table.  A row names a --format value and a render
 * function that takes the command's typed data (a run's results, loaded
 * profiles, a comparison, a plan) and writes it.
 *
 * A command keeps one table per kind of typed data and picks a row by its
 * --format value with cal_reporter_find(); cal_reporter_list() gives the
 * valid names for its error message ("table, md or json").
 *
 *   static const cal_reporter_t plan_reporters[] = {
 *       {"table", "a terminal table", render_plan, 0},
 *       {"md", "GitHub markdown", render_plan, 1},
 *       {"json", "the plan document", render_plan_json, 0},
 *   };
 *   const cal_reporter_t *r = cal_reporter_find(
 *       plan_reporters, CAL_NREPORTERS(plan_reporters), "md");
 *   rc = r->render(&plan, r->variant, out, err, sizeof err); */
#ifndef CAL_REPORTER_H
#define CAL_REPORTER_H

#include <stddef.h>
#include <stdio.h>

/* Write the typed data `in` (the table's kind, borrowed, never modified)
 * to out.  variant is the row's own (several formats may share one
 * function: table and markdown).  A reporter whose output is a set of
 * files (charts) finds where to write them in its input and writes its
 * notes to out (NULL: none).  Returns 0, or a negative CAL_E* code with
 * one line in err. */
typedef int (*cal_render_fn)(const void *in, int variant, FILE *out,
                             char *err, size_t errlen);

typedef struct cal_reporter {
  const char *format;   /* the --format value */
  const char *what;     /* one line saying what it writes */
  cal_render_fn render;
  int variant;          /* passed to render */
} cal_reporter_t;

/* The number of rows of a reporter table (an array, not a pointer). */
#define CAL_NREPORTERS(table) (sizeof(table) / sizeof((table)[0]))

/* The row of tab[0..n-1] whose format is `format`; NULL when none (or
 * format is NULL). */
const cal_reporter_t *cal_reporter_find(const cal_reporter_t *tab, size_t n,
                                        const char *format);

/* The formats of tab[0..n-1] as words for a message, "a, b or c" ("a" for
 * one, "" for none), into buf (always NUL-terminated, cut short when
 * full).  Returns buf. */
const char *cal_reporter_list(const cal_reporter_t *tab, size_t n, char *buf,
                              size_t len);

/* Render r into a malloc'd buffer *buf of *len bytes (open_memstream),
 * for outputs written whole and atomically; control characters and bidi
 * overrides in it (from a profile's strings) are escaped (cal_esc.h, lines
 * and tabs kept: JSON and HTML read the same).  Returns render's code (on
 * failure *buf is NULL), or CAL_ENOMEM with err. */
int cal_reporter_render_mem(const cal_reporter_t *r, const void *in,
                            char **buf, size_t *len, char *err,
                            size_t errlen);

#endif
