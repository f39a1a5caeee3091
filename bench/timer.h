/* Monotonic wall-clock timer. */
#ifndef CAL_TIMER_H
#define CAL_TIMER_H

/* Seconds from CLOCK_MONOTONIC. */
double cal_now(void);
/* Sleep for `seconds`, the rest of it again after a signal. */
void cal_sleep(double seconds);
/* Smallest observable positive step of cal_now(), measured once (like
 * STREAM's checktick) and cached. */
double cal_timer_resolution(void);

#endif
