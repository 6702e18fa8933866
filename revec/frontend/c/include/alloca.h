/* revec's <alloca.h>: alloca (task-private boards) */
#ifndef __REVEC_ALLOCA_H
#define __REVEC_ALLOCA_H
#include <stddef.h>
void *alloca(size_t);
#endif
