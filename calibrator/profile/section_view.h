/* Each section's reader: its object of a profile into its part of the
 * typed view (view.h).  A reader is the `read` of its section's row in
 * sections/section_list.h, as the writer is its `write`; the view builder
 * walks the readers it is given, in their order, so profile/ knows no
 * section list of its own.
 *
 * The direction: sections/section_list.h names the reader (a profile/
 * function); results/ turns the rows into tables (cal_sections[].read,
 * and cal_section_readers[] for the loader); profile/ includes neither
 * sections/ nor the section loop. */
#ifndef CAL_SECTION_VIEW_H
#define CAL_SECTION_VIEW_H

#include <jansson.h>
#include <stddef.h>

#include "view.h"

struct cal_vbuild; /* a view being built (profile/view_read.h) */

/* Reads obj, the section's object (NULL when the profile has none), into
 * the view being built. */
typedef void (*cal_section_read_fn)(struct cal_vbuild *b, const json_t *obj);

typedef struct cal_section_reader {
  const char *key; /* the section's object in the profile */
  cal_section_read_fn read;
} cal_section_reader_t;

/* One reader per row of the section table, in its order
 * (results/section_readers.c); cal_profile_view_build uses them. */
extern const cal_section_reader_t cal_section_readers[];
extern const size_t cal_nsection_readers;

/* cal_profile_view_build with the section readers given: each reader gets
 * the top-level member named by its key.  0, or CAL_ENOMEM. */
int cal_profile_view_build_with(const json_t *root,
                                const cal_section_reader_t *readers,
                                size_t nreaders, cal_profile_view_t **out);

/* The readers (view_sections.c). */
void cal_gemm_read(struct cal_vbuild *b, const json_t *obj);
void cal_scaling_read(struct cal_vbuild *b, const json_t *obj);
void cal_attention_read(struct cal_vbuild *b, const json_t *obj);
void cal_compute_peak_read(struct cal_vbuild *b, const json_t *obj);
void cal_bandwidth_read(struct cal_vbuild *b, const json_t *obj);
void cal_roofline_read(struct cal_vbuild *b, const json_t *obj);
void cal_batch_read(struct cal_vbuild *b, const json_t *obj);

#endif
