/* fib: the Fibonacci numbers by doubly recursive spawns (fib(0) = 0, fib(1) = 1),
 * written as OpenCilk's own example: one spawned call, one plain call, cilk_sync. */
#include <cilk/cilk.h>
#include <stdint.h>

int64_t fib(int8_t n) {
    if (n < 2)
        return n;
    int64_t x = cilk_spawn fib(n - 1);
    int64_t y = fib(n - 2);
    cilk_sync;
    return x + y;
}

#ifndef __REVEC__
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 25;
    printf("%ld\n", (long)fib((int8_t)n));
    return 0;
}
#endif
