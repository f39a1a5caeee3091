/* Repetition macros for the register-resident loops (fma_*.c): M(i) is
 * pasted once per accumulator, so the compiler keeps each in a register. */
#ifndef CAL_FMA_REP_H
#define CAL_FMA_REP_H

#define CAL_REP12(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) \
  M(10) M(11)
#define CAL_REP16(M) CAL_REP12(M) M(12) M(13) M(14) M(15)

/* Steps per loop iteration: with 12-16 accumulators this makes 48-64
 * vector operations per taken branch, so loop overhead is negligible. */
#define CAL_FMA_UNROLL 4

#endif
