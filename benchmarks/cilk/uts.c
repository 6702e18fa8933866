/* uts: the Unbalanced Tree Search benchmark, UTS 2.1 semantics (Olivier et al., LCPC
 * 2006), returning the tree's number of nodes.
 *
 * Every node has a 20-byte SHA-1 state h0 .. h4; child i's state is sha1_spawn(state, i)
 * (uts_sha1.h) and a node's random number is h4 & 0x7FFFFFFF over 2^31.  The number of
 * children follows UTS's uts_numChildren: tree_type 0 binomial, 1 geometric (shape 0
 * linear, 1 exponential decrease, 2 cyclic, 3 fixed), 2 hybrid, 3 balanced; at most 100
 * children per node (a binomial root: ceil(b0)).  The children's counts are collected in
 * a local array (at most MAX_KIDS children: enough for the sample trees T1 .. T5, whose
 * widest node is T3's root with 2000) and summed after cilk_sync.
 *
 * Arguments: tree_type b0 gen_mx shape q m shift_depth height h0 h1 h2 h3 h4, e.g. the
 * default tree (1732 nodes): 1 4.0 6 0 0.234375 4 0.5 0 0x6768033E 0x21646824
 * 0x7BD031A0 0xA2D9876D 0x79818F8F. */
#include <cilk/cilk.h>
#include <math.h>
#include <stdint.h>

#include "uts_sha1.h"

#define BIN 0
#define GEO 1
#define HYBRID 2
#define BALANCED 3
#define EXPDEC 1
#define CYCLIC 2
#define FIXED 3
#define MAX_CHILDREN 100
#define MAX_KIDS 2048

static int32_t binomial_children(int32_t r, double q, int32_t m) {
    double u = (double)r / 2147483648.0;
    return u < q ? m : 0;
}

static int32_t geometric_children(int32_t r, int32_t height, double b0, int32_t gen_mx,
                                  int32_t shape) {
    double b_i = b0;
    if (height > 0) {
        double h = height;
        double g = gen_mx;
        if (shape == EXPDEC) {
            b_i = b0 * pow(h, -log(b0) / log(g));
        } else if (shape == CYCLIC) {
            if (height > 5 * gen_mx)
                b_i = 0.0;
            else
                b_i = pow(b0, sin(2.0 * 3.141592653589793 * h / g));
        } else if (shape == FIXED) {
            b_i = height < gen_mx ? b0 : 0.0;
        } else {
            b_i = b0 * (1.0 - h / g);
        }
    }
    double p = 1.0 / (1.0 + b_i);
    double u = (double)r / 2147483648.0;
    return (int32_t)floor(log(1.0 - u) / log(1.0 - p));
}

static int32_t num_children(int32_t tree_type, double b0, int32_t gen_mx, int32_t shape,
                            double q, int32_t m, double shift_depth, int32_t height,
                            uint32_t h4) {
    int32_t r = (int32_t)(h4 & 0x7FFFFFFF);
    int32_t n = 0;
    if (tree_type == BIN) {
        if (height == 0)
            n = (int32_t)floor(b0);
        else
            n = binomial_children(r, q, m);
    } else if (tree_type == GEO) {
        n = geometric_children(r, height, b0, gen_mx, shape);
    } else if (tree_type == HYBRID) {
        if ((double)height < shift_depth * (double)gen_mx)
            n = geometric_children(r, height, b0, gen_mx, shape);
        else
            n = binomial_children(r, q, m);
    } else if (height < gen_mx) {
        n = (int32_t)b0;
    }
    if (tree_type == BIN && height == 0) {
        int32_t most = (int32_t)ceil(b0);
        n = n < most ? n : most;
    } else if (tree_type != BALANCED) {
        n = n < MAX_CHILDREN ? n : MAX_CHILDREN;
    }
    return n;
}

int64_t uts(int32_t tree_type, double b0, int32_t gen_mx, int32_t shape, double q,
            int32_t m, double shift_depth, int32_t height, uint32_t h0, uint32_t h1,
            uint32_t h2, uint32_t h3, uint32_t h4) {
    int32_t kids = num_children(tree_type, b0, gen_mx, shape, q, m, shift_depth, height,
                                h4);
    if (kids <= 0)
        return 1;
    int64_t counts[MAX_KIDS];
    int k = 0;
    int64_t nodes = 1;
    for (int32_t i = 0; i < kids; i++) {
        uint32_t c0, c1, c2, c3, c4;
        sha1_spawn(h0, h1, h2, h3, h4, i, &c0, &c1, &c2, &c3, &c4);
        counts[k++] = cilk_spawn uts(tree_type, b0, gen_mx, shape, q, m, shift_depth,
                                     height + 1, c0, c1, c2, c3, c4);
    }
    cilk_sync;
    for (int i = 0; i < k; i++)
        nodes += counts[i];
    return nodes;
}

#ifndef __REVEC__
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* The serial elision recurses as deep as the tree (thousands of levels for the suite's
 * binomial tree) with a 16 KB counts array per frame: more than the usual 8 MB main
 * stack, so it runs on a thread with a 1 GB stack (reserved, touched only as deep as
 * the recursion goes). */
struct job {
    char **argv;
    long nodes;
};

static void *run(void *arg) {
    struct job *job = arg;
    char **argv = job->argv;
    uint32_t h[5];
    for (int j = 0; j < 5; j++)
        h[j] = (uint32_t)strtoul(argv[9 + j], NULL, 0);
    job->nodes = (long)uts(atoi(argv[1]), atof(argv[2]), atoi(argv[3]), atoi(argv[4]),
                           atof(argv[5]), atoi(argv[6]), atof(argv[7]), atoi(argv[8]),
                           h[0], h[1], h[2], h[3], h[4]);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 14) {
        fprintf(stderr, "usage: uts tree_type b0 gen_mx shape q m shift_depth height "
                        "h0 h1 h2 h3 h4\n");
        return 2;
    }
    struct job job = {argv, 0};
    pthread_attr_t attr;
    pthread_t thread;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)1 << 30);
    if (pthread_create(&thread, &attr, run, &job) != 0 || pthread_join(thread, NULL) != 0) {
        fprintf(stderr, "uts: cannot start the thread\n");
        return 1;
    }
    printf("%ld\n", job.nodes);
    return 0;
}
#endif
