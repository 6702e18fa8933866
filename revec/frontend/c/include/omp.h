/* revec's <omp.h>: the OpenMP runtime's queries, for code revec does not read */
#ifndef __REVEC_OMP_H
#define __REVEC_OMP_H
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_get_thread_num(void);
void omp_set_num_threads(int);
double omp_get_wtime(void);
int omp_get_num_procs(void);
int omp_in_parallel(void);
int omp_in_final(void);
typedef struct __revec_omp_lock { void *__p; } omp_lock_t;
typedef struct __revec_omp_nest_lock { void *__p; } omp_nest_lock_t;
void omp_init_lock(omp_lock_t *);
void omp_destroy_lock(omp_lock_t *);
void omp_set_lock(omp_lock_t *);
void omp_unset_lock(omp_lock_t *);
int omp_test_lock(omp_lock_t *);
#endif
