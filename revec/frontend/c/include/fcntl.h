/* revec's <fcntl.h>: open(2), for code revec does not read (main) */
#ifndef __REVEC_FCNTL_H
#define __REVEC_FCNTL_H
#include <sys/types.h>
#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2
#define O_CREAT 64
#define O_TRUNC 512
int open(const char *, int, ...);
#endif
