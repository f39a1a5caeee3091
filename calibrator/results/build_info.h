/* What build this is (generated from build_info.c.in). */
#ifndef CAL_BUILD_INFO_H
#define CAL_BUILD_INFO_H

/* The program's version string, e.g. "0.1.0". */
extern const char cal_version[];
/* git describe of the build, "unknown" outside a checkout. */
extern const char cal_git[];
/* The C compiler that built the program ("GNU 12.2.0") and its flags
 * for the build type ("-O3 -DNDEBUG"). */
extern const char cal_compiler[];
extern const char cal_cflags[];
/* The licence's SPDX identifier (the text is the LICENSE file). */
extern const char cal_license[];
/* Where data and default profiles live: common/cal_paths.h. */

#endif
