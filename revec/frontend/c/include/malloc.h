/* revec's <malloc.h>: the allocator, for code revec does not read (main) */
#ifndef __REVEC_MALLOC_H
#define __REVEC_MALLOC_H
#include <stdlib.h>
#include <alloca.h>
void *memalign(size_t, size_t);
#endif
