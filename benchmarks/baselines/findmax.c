/* findmax: the largest element of a[lo, hi) by recursive halving (plain recursive C). */
#include <stdint.h>

int64_t findmax(const int32_t *a, int64_t lo, int64_t hi)
{
    if (hi - lo == 1)
        return a[lo];
    int64_t mid = lo + (hi - lo) / 2;
    int64_t left = findmax(a, lo, mid);
    int64_t right = findmax(a, mid, hi);
    return left > right ? left : right;
}
