/* A recursion that never reaches its base case: cyc(3) and cyc(4) spawn each other
 * forever, each with a leaf cyc(-n) beside it (two frames a level, one more level each
 * time).  tests/test_memory_depth.py runs it against the memory budget. */
#include <cilk/cilk.h>
#include <stdint.h>

int64_t cyc(int64_t n) {
    if (n <= 0)
        return 1;
    int64_t x = cilk_spawn cyc(n == 3 ? 4 : 3);
    int64_t y = cilk_spawn cyc(-n);
    cilk_sync;
    return x + y;
}
