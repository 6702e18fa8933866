/* revec's <math.h>: the functions revec computes (sqrt exp log sin cos floor ceil fabs
 * pow and their float forms) and the constants of glibc's; the other functions are
 * declared for code revec does not read (main, printing). */
#ifndef __REVEC_MATH_H
#define __REVEC_MATH_H
double sqrt(double);
double exp(double);
double log(double);
double sin(double);
double cos(double);
double floor(double);
double ceil(double);
double fabs(double);
double pow(double, double);
float sqrtf(float);
float expf(float);
float logf(float);
float sinf(float);
float cosf(float);
float floorf(float);
float ceilf(float);
float fabsf(float);
float powf(float, float);
double tan(double);
double atan(double);
double atan2(double, double);
double log2(double);
double log10(double);
double fmod(double, double);
double fmin(double, double);
double fmax(double, double);
double round(double);
double trunc(double);
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#define HUGE_VAL (__builtin_huge_val())
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#endif
