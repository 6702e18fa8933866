/* revec's <unistd.h>: POSIX declarations for code revec does not read (main, timing) */
#ifndef __REVEC_UNISTD_H
#define __REVEC_UNISTD_H
#include <stddef.h>
#include <sys/types.h>
#define _SC_NPROCESSORS_ONLN 84
#define _SC_PAGESIZE 30
extern char *optarg;
extern int optind, opterr, optopt;
int getopt(int, char *const[], const char *);
long sysconf(int);
unsigned sleep(unsigned);
int usleep(unsigned);
pid_t getpid(void);
int close(int);
ssize_t read(int, void *, size_t);
ssize_t write(int, const void *, size_t);
int access(const char *, int);
#endif
