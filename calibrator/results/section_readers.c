/* The section readers the profile loader walks, from the `read` of each
 * row of sections/section_list.h (profile/section_view.h). */
#include "section_view.h"

const cal_section_reader_t cal_section_readers[] = {
#define CAL_SECTION(ID, key, full, quick, derived, m, d, w, p, rd, ch) \
  {key, rd},
#include "section_list.h"
#undef CAL_SECTION
};

const size_t cal_nsection_readers =
    sizeof cal_section_readers / sizeof cal_section_readers[0];
