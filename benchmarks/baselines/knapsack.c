#include <stdint.h>

#define MAX_ITEMS 256

static int capacity;
static int value_of[MAX_ITEMS], weight_of[MAX_ITEMS];

void knapsack_setup(int cap, const int *values, const int *weights, int count)
{
    capacity = cap;
    for (int i = 0; i < count && i < MAX_ITEMS; i++) {
        value_of[i] = values[i];
        weight_of[i] = weights[i];
    }
}

/* best value of the leaves below: items 0..i-1 decided, total weight and value so far */
int64_t knapsack(int n, int i, int weight, int value)
{
    if (i == n)
        return weight <= capacity ? value : -1;
    int64_t without = knapsack(n, i + 1, weight, value);
    int64_t with = knapsack(n, i + 1, weight + weight_of[i], value + value_of[i]);
    return with > without ? with : without;
}
