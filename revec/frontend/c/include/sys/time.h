/* revec's <sys/time.h>: gettimeofday, for code revec does not read (timing in main) */
#ifndef __REVEC_SYS_TIME_H
#define __REVEC_SYS_TIME_H
#include <time.h>
struct timeval { long tv_sec; long tv_usec; };
struct timezone { int tz_minuteswest; int tz_dsttime; };
int gettimeofday(struct timeval *, void *);
#endif
