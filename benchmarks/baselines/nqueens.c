#include <stdint.h>

int64_t nqueens(int n, int row, uint32_t cols, uint32_t d1, uint32_t d2)
{
    if (row == n)
        return 1;
    int64_t total = 0;
    uint32_t free = ~(cols | d1 | d2) & ((1u << n) - 1);
    while (free) {
        uint32_t bit = free & -free;
        free ^= bit;
        total += nqueens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
    }
    return total;
}
