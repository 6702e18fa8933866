/* revec's <stdlib.h>: declarations for code revec does not read (main, printing) */
#ifndef __REVEC_STDLIB_H
#define __REVEC_STDLIB_H
#include <stddef.h>
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
void *malloc(size_t);
void *calloc(size_t, size_t);
void *realloc(void *, size_t);
void free(void *);
void exit(int);
void abort(void);
int atoi(const char *);
long atol(const char *);
long long atoll(const char *);
double atof(const char *);
long strtol(const char *, char **, int);
unsigned long strtoul(const char *, char **, int);
double strtod(const char *, char **);
int rand(void);
void srand(unsigned);
int abs(int);
long labs(long);
char *getenv(const char *);
void qsort(void *, size_t, size_t, int (*)(const void *, const void *));
#endif
