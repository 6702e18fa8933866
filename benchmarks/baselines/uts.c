/* UTS 2.1 tree walk; revec_lib_sha1_spawn (the SHA-1 of a 20-byte state and a 4-byte
   big-endian child index, as five words) is pasted before this file. */
#include <math.h>
#include <stdint.h>

static int tree_type, gen_mx, shape, nonleaf_m;
static double b_0, nonleaf_q, shift;
static int64_t nodes, leaves, max_height;

void uts_setup(int t, double b0, int d, int a, double q, int m, double shift_depth)
{
    tree_type = t; b_0 = b0; gen_mx = d; shape = a; nonleaf_q = q; nonleaf_m = m;
    shift = shift_depth;
    nodes = leaves = max_height = 0;
}

int64_t uts_count(int which)
{
    return which == 0 ? nodes : which == 1 ? leaves : max_height;
}

static int num_children(int height, uint32_t h4)
{
    double u = (double)(h4 & 0x7FFFFFFFu) / 2147483648.0;
    if (tree_type == 0 && height == 0)
        return (int)floor(b_0);            /* floor <= ceil: no truncation needed */
    if (tree_type == 3)
        return height < gen_mx ? (int)b_0 : 0;
    if (tree_type == 0 || (tree_type == 2 && height >= shift * gen_mx))
        return u < nonleaf_q ? nonleaf_m : 0;
    double b_i = b_0;
    if (height > 0) {
        if (shape == 1)
            b_i = b_0 * pow((double)height, -log(b_0) / log((double)gen_mx));
        else if (shape == 2)
            b_i = height > 5 * gen_mx ? 0.0
                : pow(b_0, sin(2.0 * 3.141592653589793 * (double)height / (double)gen_mx));
        else if (shape == 3)
            b_i = height < gen_mx ? b_0 : 0.0;
        else
            b_i = b_0 * (1.0 - (double)height / (double)gen_mx);
    }
    if (b_i <= 0.0)
        return 0;
    double p = 1.0 / (1.0 + b_i);
    int n = (int)floor(log(1.0 - u) / log(1.0 - p));
    return n > 100 ? 100 : n;
}

void uts(int height, uint32_t h0, uint32_t h1, uint32_t h2, uint32_t h3, uint32_t h4)
{
    nodes++;
    int kids = num_children(height, h4);
    if (kids <= 0) {
        leaves++;
        if (height > max_height)
            max_height = height;
        return;
    }
    for (int i = 0; i < kids; i++) {
        uint32_t c0, c1, c2, c3, c4;
        revec_lib_sha1_spawn(h0, h1, h2, h3, h4, i, &c0, &c1, &c2, &c3, &c4);
        uts(height + 1, c0, c1, c2, c3, c4);
    }
}
