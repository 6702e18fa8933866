#include <stdint.h>

int64_t parentheses(int n, int opened, int closed)
{
    if (closed == n)
        return 1;
    int64_t total = 0;
    if (opened < n)
        total += parentheses(n, opened + 1, closed);
    if (closed < opened)
        total += parentheses(n, opened, closed + 1);
    return total;
}
