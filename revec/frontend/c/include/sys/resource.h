/* revec's <sys/resource.h>: getrusage, for code revec does not read (timing in main) */
#ifndef __REVEC_SYS_RESOURCE_H
#define __REVEC_SYS_RESOURCE_H
#include <sys/time.h>
#define RUSAGE_SELF 0
struct rusage { struct timeval ru_utime; struct timeval ru_stime; long ru_maxrss; };
int getrusage(int, struct rusage *);
#endif
