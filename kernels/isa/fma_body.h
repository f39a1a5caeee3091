/* The register-resident loop of every SIMD peak kernel (fma_*.c), written
 * once.  A per-ISA file, compiled with its own flags, instantiates it:
 *
 *   CAL_FMA_LOOP(fn, REP, ARG, OUT, VEC, OPND, LANES, SETARG, INIT, OP, STORE)
 *
 * defines  void fn(int64_t iters, ARG a, ARG b, OUT *out)  which runs
 * REP (CAL_REP12 or CAL_REP16) independent chains of type VEC, chain i
 * starting at INIT((OUT)i) in every lane; each step sets x = OP(x, va, vb)
 * for every chain, with va = SETARG(a) and vb = SETARG(b) of type OPND;
 * at the end chain i is stored by STORE(out + i * LANES, x).  See
 * compute_peak.h for the arithmetic of each instance.
 *
 * CAL_CLOCK_CHAIN(fn, VEC, REG, ZERO, SET1, ADD, HSUM) defines the clock's
 * dependent integer chain with independent vector FMAs interleaved:
 * uint64_t fn(int64_t iters, uint64_t x), eight accumulators of VEC held
 * in registers of asm constraint class REG ("x" or "v"), folded with ADD
 * and HSUM at the end so the FMAs stay live. */
#ifndef CAL_FMA_BODY_H
#define CAL_FMA_BODY_H

#include <stdint.h>

#include "compute_peak.h"
#include "fma_rep.h"

#define CAL_FMA_DECL_(i, VEC, INIT, OUT) VEC x##i = INIT((OUT)(i));
#define CAL_FMA_STEP_(i, OP) x##i = OP(x##i, va, vb);
#define CAL_FMA_STORE_(i, STORE, LANES) STORE(out + (i) * (LANES), x##i);

#define CAL_FMA_LOOP(fn, REP, ARG, OUT, VEC, OPND, LANES, SETARG, INIT, OP,   \
                     STORE)                                                  \
  void fn(int64_t iters, ARG a, ARG b, OUT *out) {                           \
    const OPND va = SETARG(a), vb = SETARG(b);                               \
    REP(CAL_FMA_DECL_, VEC, INIT, OUT)                                       \
    int64_t i = 0;                                                           \
    for (; i + CAL_FMA_UNROLL <= iters; i += CAL_FMA_UNROLL) {               \
      REP(CAL_FMA_STEP_, OP) REP(CAL_FMA_STEP_, OP) REP(CAL_FMA_STEP_, OP)   \
      REP(CAL_FMA_STEP_, OP)                                                 \
    }                                                                        \
    for (; i < iters; i++) {                                                 \
      REP(CAL_FMA_STEP_, OP)                                                 \
    }                                                                        \
    REP(CAL_FMA_STORE_, STORE, LANES)                                        \
  }

#if defined(__x86_64__)
/* One add of the dependent chain, then one independent FMA on accumulator
 * k mod 8: 64 adds (64 cycles) against 64 FMAs (32 cycles of 2 ports). */
#define CAL_CLOCK_PAIR_(k)                                                   \
  "add %[inc], %[x]\n\tvfmadd231pd %[b], %[a], %[z" #k "]\n\t"
#define CAL_CLOCK_PAIR8_                                                     \
  CAL_CLOCK_PAIR_(0) CAL_CLOCK_PAIR_(1) CAL_CLOCK_PAIR_(2)                   \
  CAL_CLOCK_PAIR_(3) CAL_CLOCK_PAIR_(4) CAL_CLOCK_PAIR_(5)                   \
  CAL_CLOCK_PAIR_(6) CAL_CLOCK_PAIR_(7)

#define CAL_CLOCK_CHAIN(fn, VEC, REG, ZERO, SET1, ADD, HSUM)                 \
  uint64_t fn(int64_t iters, uint64_t x) {                                   \
    VEC z0 = ZERO(), z1 = z0, z2 = z0, z3 = z0, z4 = z0, z5 = z0, z6 = z0,   \
        z7 = z0;                                                             \
    const VEC a = SET1(1.0), b = SET1(0.0);                                  \
    const uint64_t inc = 1;                                                  \
    for (int64_t i = 0; i < iters; i++) {                                    \
      __asm__ volatile(CAL_CLOCK_PAIR8_ CAL_CLOCK_PAIR8_ CAL_CLOCK_PAIR8_     \
                           CAL_CLOCK_PAIR8_ CAL_CLOCK_PAIR8_ CAL_CLOCK_PAIR8_ \
                               CAL_CLOCK_PAIR8_ CAL_CLOCK_PAIR8_             \
                       : [x] "+r"(x), [z0] "+" REG(z0), [z1] "+" REG(z1),    \
                         [z2] "+" REG(z2), [z3] "+" REG(z3),                 \
                         [z4] "+" REG(z4), [z5] "+" REG(z5),                 \
                         [z6] "+" REG(z6), [z7] "+" REG(z7)                  \
                       : [inc] "r"(inc), [a] REG(a), [b] REG(b)              \
                       : "cc");                                              \
    }                                                                        \
    VEC s = ADD(ADD(ADD(z0, z1), ADD(z2, z3)), ADD(ADD(z4, z5), ADD(z6, z7))); \
    return x + (uint64_t)HSUM(s);                                            \
  }
#else
#define CAL_CLOCK_CHAIN(fn, VEC, REG, ZERO, SET1, ADD, HSUM)                 \
  uint64_t fn(int64_t iters, uint64_t x) {                                   \
    return cal_clock_chain_scalar(iters, x);                                 \
  }
#endif

#endif
