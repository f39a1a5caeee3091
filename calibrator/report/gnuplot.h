/* gnuplot I/O for the charts: rows of numbers grouped into series, the
 * data file NAME.dat (one block per series), the script NAME.gp (a
 * generated header of variables followed by the template NAME.gp), the
 * output directory, and running gnuplot there (fork + execvp, no shell).
 * It knows no profile keys.  A series set owns its rows: free it with
 * cal_gp_set_free().  Functions return 0 or a negative CAL_E* code and
 * then write one line into err. */
#ifndef CAL_GNUPLOT_H
#define CAL_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

#define CAL_GP_NCOL 8 /* numeric columns after x */
/* Legend entries longer than this are cut with "..." so the key fits
 * (the profile's part first; never past CAL_GP_LABEL_MAX + 8). */
#define CAL_GP_LABEL_MAX 44

/* How a series' marker is chosen: the row's own point type, or one
 * given out per (mark, profile) by cal_chart_style, open or filled. */
enum { CAL_GP_OWN_PT = 0, CAL_GP_OPEN, CAL_GP_FILLED };

typedef struct cal_gp_row {
  double x;
  double v[CAL_GP_NCOL];
  char text[96]; /* a string column (roofline point names) */
  /* the style of the series the row starts (0: none): linetype (the
   * colour), point type, dash, a chart's own mark (which panel) */
  int lt, pt, dt, tag;
  int marker;    /* CAL_GP_OWN_PT, CAL_GP_OPEN or CAL_GP_FILLED */
  char mark[32]; /* what the marker tells (an engine, a kernel family) */
} cal_gp_row_t;

typedef struct cal_gp_series {
  char key[96];   /* legend after the profile label ("" for none) */
  size_t profile; /* index of the profile it came from */
  int lt, pt, dt, tag; /* series_lt[], series_pt[], series_dt[],
                          series_tag[] of the script: linetype (palette
                          entry: the colour), point type, dash type, a
                          chart's own mark (which panel); 0: the
                          template's default */
  int marker;          /* as the first row's */
  char mark[32];
  cal_gp_row_t *rows;
  size_t n, cap;
} cal_gp_series_t;

/* Series in order of first appearance; zero-initialise. */
typedef struct cal_gp_set {
  cal_gp_series_t *s;
  size_t n, cap;
} cal_gp_set_t;

/* Append r to the series (profile, key), creating it at the end. */
int cal_gp_set_add(cal_gp_set_t *set, size_t profile, const char *key,
                   const cal_gp_row_t *r);
/* Sort every series' rows by x. */
void cal_gp_set_sort(cal_gp_set_t *set);
/* Free the rows and series and zero the set; accepts NULL. */
void cal_gp_set_free(cal_gp_set_t *set);

/* Writes extra variables into a script's generated header. */
typedef void (*cal_gp_header_fn)(FILE *f, const void *arg);

/* One chart to write; every pointer is borrowed. */
typedef struct cal_gp_chart {
  const char *dir;       /* output directory */
  const char *name;      /* NAME.dat, NAME.gp and the template NAME.gp */
  const char *format;    /* "png" or "svg" */
  const char *templates; /* template directory */
  const char *title;         /* lines split at '\n' */
  size_t n;                  /* profiles */
  const char *const *paths;  /* n paths, named in comments of the script */
  const char *const *labels; /* n labels, starting each series' legend */
  const char *const *cols;   /* ncols column names of the .dat file */
  int ncols;
  int with_text;             /* the last column is rows[].text */
  cal_gp_header_fn header;   /* NULL: none */
  const void *header_arg;
  const char *extra;         /* more header lines; NULL: none */
  const char *template_name; /* the template; NULL: name */
  int width, height;         /* image size; 0: 1000 x 640 */
} cal_gp_chart_t;

/* Chart files (NAME.dat, NAME.gp, the image) are rendered whole, then
 * written through cal_out with CAL_OUT_NOFOLLOW: a temporary file created
 * O_EXCL in dir and renamed over the name, so a symlink or FIFO planted
 * there is replaced, never followed, and a failure leaves the old file.
 *
 * dir/NAME.dat: the series of set, each sorted by x. */
int cal_gp_write_dat(const cal_gp_chart_t *c, cal_gp_set_t *set, char *err,
                     size_t errlen);
/* dir/NAME.gp: the generated header, then the template copied. */
int cal_gp_write_script(const cal_gp_chart_t *c, const cal_gp_set_t *set,
                        char *err, size_t errlen);
/* Run gnuplot NAME.gp in dir ($CALIBRATE_GNUPLOT, else gnuplot from PATH)
 * with the image on its standard output, written to dir/NAME.FORMAT as
 * every chart file is (below).  CAL_ENOTFOUND when it cannot be executed
 * (err says how to install it), CAL_ESYS when it fails (no image left). */
int cal_gp_run(const char *dir, const char *name, const char *format,
               char *err, size_t errlen);
/* Whether templates/NAME.gp can be read: 0, or CAL_EIO with err. */
int cal_gp_check_template(const char *templates, const char *name, char *err,
                          size_t errlen);

/* mkdir -p dir; CAL_EIO when it cannot be made or is not a directory. */
int cal_gp_make_dirs(const char *dir, char *err, size_t errlen);
/* The template directory: templates when set, else $CALIBRATE_PLOTS_DIR,
 * else plots/ of the data directory (cal_data_path).  Not to be freed. */
const char *cal_gp_template_dir(const char *templates);

/* Write s as a gnuplot double-quoted string: letters, digits, space and
 * plain punctuation as they are, control characters as spaces, every
 * other byte (quotes, backslash, backquote, @, UTF-8) as an octal escape
 * \ooo, which gnuplot turns back into that byte. */
void cal_gp_quote(FILE *f, const char *s);

/* Write s as the text of a comment line: control characters as spaces,
 * and a space after a final backslash (gnuplot would join the next line
 * to the comment). */
void cal_gp_comment(FILE *f, const char *s);

#endif
