/* revec's <cilk/cilk_api.h>: the runtime's queries, for code revec does not read */
#ifndef __REVEC_CILK_API_H
#define __REVEC_CILK_API_H
unsigned __cilkrts_get_nworkers(void);
unsigned __cilkrts_get_worker_number(void);
int __cilkrts_set_param(const char *, const char *);
#endif
