/* revec's <time.h>: declarations for code revec does not read (timing in main) */
#ifndef __REVEC_TIME_H
#define __REVEC_TIME_H
#include <stddef.h>
typedef long time_t;
typedef long clock_t;
struct timespec { time_t tv_sec; long tv_nsec; };
#define CLOCKS_PER_SEC 1000000L
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
clock_t clock(void);
time_t time(time_t *);
int clock_gettime(int, struct timespec *);
#endif
