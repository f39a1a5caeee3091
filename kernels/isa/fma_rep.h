/* Repetition macros for the register-resident loops (fma_*.c): M(i, ...) is
 * pasted once per accumulator, with any further arguments passed along, so
 * the compiler keeps each accumulator in a register. */
#ifndef CAL_FMA_REP_H
#define CAL_FMA_REP_H

#define CAL_REP12(M, ...)                                                    \
  M(0, __VA_ARGS__) M(1, __VA_ARGS__) M(2, __VA_ARGS__) M(3, __VA_ARGS__)    \
  M(4, __VA_ARGS__) M(5, __VA_ARGS__) M(6, __VA_ARGS__) M(7, __VA_ARGS__)    \
  M(8, __VA_ARGS__) M(9, __VA_ARGS__) M(10, __VA_ARGS__) M(11, __VA_ARGS__)
#define CAL_REP16(M, ...)                                                    \
  CAL_REP12(M, __VA_ARGS__) M(12, __VA_ARGS__) M(13, __VA_ARGS__)            \
  M(14, __VA_ARGS__) M(15, __VA_ARGS__)

/* Steps per loop iteration: with 12-16 accumulators this makes 48-64
 * vector operations per taken branch, so loop overhead is negligible. */
#define CAL_FMA_UNROLL 4

#endif
