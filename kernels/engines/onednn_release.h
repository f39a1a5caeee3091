/* Release of the oneDNN objects one matmul holds.  Header-only, so that
 * bench/gemm_loop.c, which uses nothing else of calibrate, shares it. */
#ifndef CAL_ONEDNN_RELEASE_H
#define CAL_ONEDNN_RELEASE_H

#include <oneapi/dnnl/dnnl.h>

/* Destroys the n memories, the primitive, the stream and the engine; any
 * of them may be NULL. */
static inline void cal_onednn_release(dnnl_memory_t *mem, int n,
                                      dnnl_primitive_t prim,
                                      dnnl_stream_t strm, dnnl_engine_t eng) {
  for (int i = 0; i < n; i++)
    if (mem[i])
      dnnl_memory_destroy(mem[i]);
  if (prim)
    dnnl_primitive_destroy(prim);
  if (strm)
    dnnl_stream_destroy(strm);
  if (eng)
    dnnl_engine_destroy(eng);
}

#endif
