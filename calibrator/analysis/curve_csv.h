/* Throughput-versus-batch-size curves read from CSV.
 *
 * The first line that is neither blank nor a '#' comment is the header;
 * column names are matched case-insensitively, extra columns are ignored:
 *   batch size  (required) batch_size, batch, batchsize, bs
 *   throughput  (required) throughput, throughput_ex_per_s, examples_per_s,
 *               ex_per_s, throughput_examples_per_s, samples_per_s
 *   machine     (optional) machine, device, device_name, host: one curve
 *               per distinct value, in order of first appearance
 *   status      (optional) ok | skipped | failed; a non-ok row's throughput
 *               is ignored and may be empty
 * Rows with the same (machine, batch size) are samples of one point; a
 * point with no ok row is CAL_POINT_SKIPPED.  Fields may be double-quoted
 * ("" inside quotes is a quote); CRLF line ends and a UTF-8 BOM are fine,
 * a carriage return anywhere else is refused.  Limits: CAL_CSV_MAX_LINE
 * bytes a line, CAL_CSV_MAX_ROWS rows; a read error is an error, never
 * the end of the file. */
#ifndef CAL_CURVE_CSV_H
#define CAL_CURVE_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "curve.h"

#define CAL_CSV_MAX_LINE 65536
#define CAL_CSV_MAX_ROWS 1000000

typedef struct cal_curve {
  char *machine;             /* NULL when the file has no machine column */
  cal_curve_point_t *points; /* ascending batch size; samples owned here */
  size_t n;
} cal_curve_t;

typedef struct cal_curve_set {
  cal_curve_t *curves; /* >= 1 curve, each with >= 1 point */
  size_t n;
} cal_curve_set_t;

/* Read curves from f; `name` labels messages.  On failure returns
 * CAL_EPARSE (malformed: empty file, no data rows, missing or repeated
 * column, wrong field count, a value that is not a number, negative, not
 * finite, or a batch size that is not a positive integer, a line too
 * long, a stray carriage return, too many rows), CAL_EIO or
 * CAL_ENOMEM, and writes one line "NAME:LINE: problem" into err.
 * Free *out with cal_curve_set_free(). */
int cal_curves_read(FILE *f, const char *name, cal_curve_set_t **out,
                    char *err, size_t errlen);

/* Open `path` ("-" is standard input, named "<stdin>"; anything else must
 * be a regular file, cal_file_open) and read it as above; CAL_EIO "PATH:
 * cannot open: reason" when it cannot be opened. */
int cal_curves_load(const char *path, cal_curve_set_t **out, char *err,
                    size_t errlen);

/* Accepts NULL. */
void cal_curve_set_free(cal_curve_set_t *set);

#endif
