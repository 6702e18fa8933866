/* nqueens: count the placements of n non-attacking queens on an n x n board.
 *
 * One task per partial placement of the first `row` rows; the attacked columns and
 * diagonals are bitmasks (`cols`; `d1` shifts left, `d2` right each row).  As in
 * Cilk-5's nqueens, every child's count goes into a local array and the counts are
 * summed after cilk_sync.  Masks are 16-bit: boards up to 16 x 16. */
#include <cilk/cilk.h>
#include <stdint.h>

#define MAX_N 16

int64_t nqueens(int32_t n, int8_t row, uint16_t cols, uint16_t d1, uint16_t d2) {
    if (row == n)
        return 1;
    int64_t counts[MAX_N];
    int k = 0;
    int64_t total = 0;
    uint16_t free = ~(cols | d1 | d2) & ((1 << n) - 1);
    while (free != 0) {
        uint16_t bit = free & -free;          /* lowest free square */
        free ^= bit;
        counts[k++] = cilk_spawn nqueens(n, row + 1, cols | bit, (d1 | bit) << 1,
                                         (d2 | bit) >> 1);
    }
    cilk_sync;
    for (int i = 0; i < k; i++)
        total += counts[i];
    return total;
}

#ifndef __REVEC__
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 8;
    printf("%ld\n", (long)nqueens(n, 0, 0, 0, 0));
    return 0;
}
#endif
