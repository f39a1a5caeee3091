/* What build this is (generated from build_info.c.in). */
#ifndef CAL_BUILD_INFO_H
#define CAL_BUILD_INFO_H

/* The program's version string, e.g. "0.1.0". */
extern const char cal_version[];
/* git describe of the build, "unknown" outside a checkout. */
extern const char cal_git[];
/* Where the default run writes profiles, and the chart templates. */
extern const char cal_results_dir[];
extern const char cal_plots_dir[];

#endif
