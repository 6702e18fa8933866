/* revec's <omp.h>: the OpenMP runtime's queries, for code revec does not read */
#ifndef __REVEC_OMP_H
#define __REVEC_OMP_H
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_get_thread_num(void);
void omp_set_num_threads(int);
double omp_get_wtime(void);
#endif
