/* parentheses: count the well-formed strings of n pairs of parentheses.
 *
 * A task is a prefix with `opened` "(" and `closed` ")"; it may add "(" while fewer
 * than n are open and ")" while closed < opened.  The count is the Catalan number
 * C(2n, n) / (n + 1). */
#include <cilk/cilk.h>
#include <stdint.h>

int64_t parentheses(int8_t n, int8_t opened, int8_t closed) {
    if (closed == n)
        return 1;
    int64_t a = 0, b = 0;
    if (opened < n)
        a = cilk_spawn parentheses(n, opened + 1, closed);
    if (closed < opened)
        b = cilk_spawn parentheses(n, opened, closed + 1);
    cilk_sync;
    return a + b;
}

#ifndef __REVEC__
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 12;
    printf("%ld\n", (long)parentheses(n, 0, 0));
    return 0;
}
#endif
