/* The measurement sections, one row each, in the order the table prints
 * them.  Adding a section: one file under sections/ (measure, drop), its
 * writer under profile/ and its reader in a profile/view*.c file (built
 * into libcalibrate), its table part under report/, and one row here.
 *
 *   ID         the section's name in code: CAL_SEC_<ID> is its bit in
 *              cal_opts_t.sections, CAL_SEC_ID_<ID> its index
 *   key        its object in the profile and its name in quality
 *   full, quick  time budget in seconds (scaled by --budget-scale)
 *   derived    1: computed from other sections' results, so it runs after
 *              every measured section
 *   measure    int (cal_run_t *): measures, leaves a typed result
 *   drop       void (void *): frees that result (accepts NULL)
 *   write      json_t *(const cal_run_result_t *, const void *): the
 *              profile object (profile/); NULL when out of memory
 *   print      void (const cal_run_result_t *, const void *, FILE *): its
 *              part of the readable table (report/)
 *   read       void (struct cal_vbuild *, const json_t *): the profile
 *              object back into the section's typed view (profile/,
 *              section_view.h)
 *   charts     "name,name": the charts (report/charts.c cal_charts[].name)
 *              drawn from its profile object; "" for none
 *
 * The row's functions are declared from this table (results/run_result.h);
 * a reader's declaration comes from profile/section_view.h.
 *
 * CAL_SECTION(ID, key, full, quick, derived, measure, drop, write, print,
 *             read, charts) */
CAL_SECTION(GEMM, "gemm", 50.0, 7.0, 0, cal_gemm_measure, cal_gemm_drop,
            cal_gemm_write, cal_gemm_print, cal_gemm_read, "gemm")
CAL_SECTION(SCALING, "scaling", 6.0, 1.5, 0, cal_scaling_measure,
            cal_scaling_drop, cal_scaling_write, cal_scaling_print,
            cal_scaling_read, "scaling")
CAL_SECTION(ATTENTION, "attention", 12.0, 3.0, 0, cal_attention_measure,
            cal_attention_drop, cal_attention_write, cal_attention_print,
            cal_attention_read, "attention")
CAL_SECTION(PEAK, "peak", 4.0, 1.0, 0, cal_compute_peak_measure,
            cal_compute_peak_drop, cal_compute_peak_write,
            cal_compute_peak_print, cal_compute_peak_read, "peak")
CAL_SECTION(BANDWIDTH, "bandwidth", 12.0, 3.0, 0, cal_bandwidth_measure,
            cal_bandwidth_drop, cal_bandwidth_write, cal_bandwidth_print,
            cal_bandwidth_read, "bandwidth")
CAL_SECTION(ROOFLINE, "roofline", 0.0, 0.0, 1, cal_roofline_measure,
            cal_roofline_drop, cal_roofline_write, cal_roofline_print,
            cal_roofline_read, "roofline")
CAL_SECTION(BATCH, "batch_sweep", 140.0, 20.0, 0, cal_batch_measure,
            cal_batch_drop, cal_batch_write, cal_batch_print, cal_batch_read,
            "batch_sweep")
