/* revec's <errno.h>, for code revec does not read (main) */
#ifndef __REVEC_ERRNO_H
#define __REVEC_ERRNO_H
extern int errno;
#define EINVAL 22
#define ENOMEM 12
#define ERANGE 34
#endif
