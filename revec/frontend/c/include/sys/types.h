/* revec's <sys/types.h>: POSIX types for code revec does not read */
#ifndef __REVEC_SYS_TYPES_H
#define __REVEC_SYS_TYPES_H
#include <stddef.h>
typedef int pid_t;
typedef long ssize_t;
typedef long off_t;
typedef unsigned mode_t;
typedef unsigned uid_t;
typedef unsigned gid_t;
typedef unsigned char u_int8_t;
typedef unsigned short u_int16_t;
typedef unsigned int u_int32_t;
typedef unsigned long u_int64_t;
typedef unsigned char u_char;
typedef unsigned int u_int;
typedef unsigned long u_long;
#endif
