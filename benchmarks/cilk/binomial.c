/* binomial: C(n, k) by Pascal's rule C(n, k) = C(n-1, k-1) + C(n-1, k).
 *
 * The leaves C(n, 0) and C(n, n) are 1; the tree has 2 C(n, k) - 1 tasks. */
#include <cilk/cilk.h>
#include <stdint.h>

int64_t binomial(int8_t n, int8_t k) {
    if (k == 0 || k == n)
        return 1;
    int64_t x = cilk_spawn binomial(n - 1, k - 1);
    int64_t y = binomial(n - 1, k);
    cilk_sync;
    return x + y;
}

#ifndef __REVEC__
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 22;
    int k = argc > 2 ? atoi(argv[2]) : 9;
    printf("%ld\n", (long)binomial(n, k));
    return 0;
}
#endif
