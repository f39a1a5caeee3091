/* Stream loops compiled for AVX2 (8 accumulators of 4 doubles). */
#define CAL_STREAM_SFX avx2
#define CAL_STREAM_ACC 32
#include "stream_body.h"
