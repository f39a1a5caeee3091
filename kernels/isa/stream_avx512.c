/* Stream loops compiled for AVX-512 (8 accumulators of 8 doubles). */
#define CAL_STREAM_SFX avx512
#define CAL_STREAM_ACC 64
#include "stream_body.h"
