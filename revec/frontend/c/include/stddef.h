/* revec's <stddef.h> (x86-64 LP64) */
#ifndef __REVEC_STDDEF_H
#define __REVEC_STDDEF_H
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef int wchar_t;
#define NULL ((void *)0)
#endif
