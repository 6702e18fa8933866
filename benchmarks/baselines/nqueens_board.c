/* nqueens_board: the serial elision of Cilk-5's nqueens (board copied per child with
   alloca + memcpy, the whole board checked by ok()), written for revec's benchmarks. */
#include <alloca.h>
#include <stdint.h>
#include <string.h>

static int ok(int n, const char *a)
{
    for (int i = 0; i < n; i++) {
        char p = a[i];
        for (int j = i + 1; j < n; j++) {
            char q = a[j];
            if (q == p || q == p - (j - i) || q == p + (j - i))
                return 0;
        }
    }
    return 1;
}

int64_t nqueens_board(int n, int j, const char *a)
{
    if (n == j)
        return 1;
    int64_t total = 0;
    for (int col = 0; col < n; col++) {
        char *b = alloca((j + 1) * sizeof(char));
        memcpy(b, a, j * sizeof(char));
        b[j] = (char) col;
        if (ok(j + 1, b))
            total += nqueens_board(n, j + 1, b);
    }
    return total;
}
