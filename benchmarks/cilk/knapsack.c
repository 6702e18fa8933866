/* knapsack: 0/1 knapsack by exhaustive "don't take / take" recursion (no pruning).
 *
 * The inputs are the Cilk-5 knapsack examples (benchmarks/data/cilk5-example*.input:
 * value and weight per item), here as const tables; `example` picks one (1, 2 or 3) and
 * `n` its first n items.  A task has decided items 0 .. i-1 (total weight and value);
 * it spawns "without item i", calls "with item i", and returns the better of the two,
 * as Cilk-5's knapsack does.  A leaf returns its value if it fits the capacity, else 0
 * (taking nothing always fits, so 0 never wins wrongly).  Capacity is checked at the
 * leaves only, so the tree is complete: 2^(n+1) - 1 tasks. */
#include <cilk/cilk.h>
#include <stdint.h>

#define MAX_ITEMS 30

static const int32_t CAPACITY[3] = {90, 1120, 900};
static const int32_t VALUE[3][MAX_ITEMS] = {
    {100, 80, 80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {500, 491, 522, 510, 500, 480, 489, 524, 513, 513, 516, 506, 493, 500, 505, 521, 518, 512, 495, 486, 496, 523, 486, 511, 514, 522, 491, 488, 0, 0},
    {15, 22, 17, 1, 32, 65, 23, 4, 4, 32, 51, 22, 17, 12, 23, 56, 23, 6, 4, 32, 22, 59, 23, 12, 12, 23, 39, 22, 6, 4}};
static const int32_t WEIGHT[3][MAX_ITEMS] = {
    {80, 45, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {96, 100, 96, 96, 95, 99, 99, 100, 102, 104, 95, 98, 106, 99, 104, 105, 102, 101, 98, 104, 100, 95, 106, 99, 103, 93, 103, 101, 0, 0},
    {23, 12, 42, 13, 21, 43, 56, 7, 8, 42, 32, 12, 24, 13, 21, 47, 65, 7, 7, 42, 42, 32, 12, 24, 13, 21, 48, 65, 7, 7}};

int64_t knapsack(int32_t example, int32_t n, int8_t i, int32_t weight, int32_t value) {
    if (i == n)
        return weight <= CAPACITY[example - 1] ? value : 0;
    int64_t without = cilk_spawn knapsack(example, n, i + 1, weight, value);
    int64_t with = knapsack(example, n, i + 1, weight + WEIGHT[example - 1][i],
                            value + VALUE[example - 1][i]);
    cilk_sync;
    return without > with ? without : with;
}

#ifndef __REVEC__
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int example = argc > 1 ? atoi(argv[1]) : 3;
    int n = argc > 2 ? atoi(argv[2]) : 16;
    printf("%ld\n", (long)knapsack(example, n, 0, 0, 0));
    return 0;
}
#endif
