/* What the oneDNN library under the onednn_* GEMM kernels is (the kernels
 * themselves are rows of the kernel table, gemm_onednn.c). */
#ifndef CAL_GEMM_ONEDNN_H
#define CAL_GEMM_ONEDNN_H

typedef struct cal_onednn_info {
  char version[32];         /* "2.6.3" */
  const char *threading;    /* "OpenMP", "TBB", "sequential", "threadpool",
                               "other"; static */
  const char *max_isa;      /* the widest ISA it may dispatch to on this CPU
                               (its effective ISA, after DNNL_MAX_CPU_ISA),
                               e.g. "avx512_core_amx"; static */
} cal_onednn_info_t;

void cal_onednn_info(cal_onednn_info_t *info);

#endif
