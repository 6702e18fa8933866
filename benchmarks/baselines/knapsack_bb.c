/* knapsack_bb: the serial elision of Cilk-5's branch-and-bound knapsack (items sorted by
   value per unit of weight; the best value so far raised at the leaves), written for
   revec's benchmarks. */
#include <stdint.h>

static const int *value_of, *weight_of;
static int count;
static int64_t best_so_far;

static void search(int c, int i, int v)
{
    if (c < 0 || c == 0 || i == count) {
        if (c >= 0 && v > best_so_far)
            best_so_far = v;
        return;
    }
    double ub = v + c * (double) value_of[i] / weight_of[i];
    if (ub < best_so_far)
        return;
    search(c, i + 1, v);
    search(c - weight_of[i], i + 1, v + value_of[i]);
}

int64_t knapsack_bb(const int *values, const int *weights, int n, int c)
{
    value_of = values;
    weight_of = weights;
    count = n;
    best_so_far = INT64_MIN;
    search(c, 0, 0);
    return best_so_far;
}
