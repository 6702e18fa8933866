#include <stdint.h>

static uint64_t earlier_nb[64];   /* lower-numbered neighbours of each vertex */

void graphcol_setup(const uint64_t *earlier, int count)
{
    for (int v = 0; v < count && v < 64; v++)
        earlier_nb[v] = earlier[v];
}

int64_t graphcol(int n, int v, uint64_t red, uint64_t green, uint64_t blue)
{
    if (v == n)
        return 1;
    uint64_t nb = earlier_nb[v], bit = (uint64_t)1 << v;
    int64_t total = 0;
    if (!(red & nb))
        total += graphcol(n, v + 1, red | bit, green, blue);
    if (!(green & nb))
        total += graphcol(n, v + 1, red, green | bit, blue);
    if (!(blue & nb))
        total += graphcol(n, v + 1, red, green, blue | bit);
    return total;
}
