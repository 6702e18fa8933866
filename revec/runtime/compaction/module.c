/* The cffi-facing wrapper around compaction.h (revec.runtime.compaction.c_impl). */

int revec_cmp_features(void) { return revec_cpu_features(); }

int revec_cmp_best(int bits) { return revec_best_variant(bits); }

int revec_cmp_usable(int bits, int variant) { return revec_variant_ok(bits, variant); }

int64_t revec_cmp_compact(int bits, int variant, const void *x, const uint8_t *m, int64_t n,
                          void *out) {
    revec_compact_fn f = revec_get_compact(bits, variant);
    return f ? f(x, m, n, out) : -1;
}

int64_t revec_cmp_split(int bits, int variant, const void *x, const uint8_t *m, int64_t n,
                        void *t, void *fl) {
    revec_split_fn f = revec_get_split(bits, variant);
    return f ? f(x, m, n, t, fl) : -1;
}

static int64_t revec_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

volatile int64_t revec_cmp_sink;

#if REVEC_X86
REVEC_T_AVX2 static void revec_copy_avx2(void *dv, const void *sv, size_t bytes) {
    uint8_t *d = (uint8_t *)dv; const uint8_t *s = (const uint8_t *)sv; size_t i = 0;
    for (; i + 128 <= bytes; i += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 96));
        _mm256_storeu_si256((__m256i *)(d + i), a);
        _mm256_storeu_si256((__m256i *)(d + i + 32), b);
        _mm256_storeu_si256((__m256i *)(d + i + 64), c);
        _mm256_storeu_si256((__m256i *)(d + i + 96), e);
    }
    memcpy(d + i, s + i, bytes - i);
}
#endif

/* a plain copy loop of 32-byte vector moves (the ceiling), or memcpy without AVX2 */
static void revec_copy_vec(void *d, const void *s, size_t bytes) {
#if REVEC_X86
    if (revec_cpu_features() & REVEC_F_AVX2) { revec_copy_avx2(d, s, bytes); return; }
#endif
    memcpy(d, s, bytes);
}

/* Run an operation reps times back to back; returns the elapsed nanoseconds (-1: unusable).
 * op 0: compaction x -> o1; op 1: split x -> o1, o2; op 2: copy of the n elements x -> o1
 * (32-byte vector loop); op 3: the same copy by the C library's memcpy. */
int64_t revec_cmp_bench(int op, int bits, int variant, const void *x, const uint8_t *m,
                        int64_t n, void *o1, void *o2, int64_t reps) {
    int64_t acc = 0, t0, t1;
    if (op == 0) {
        revec_compact_fn f = revec_get_compact(bits, variant);
        if (!f) return -1;
        t0 = revec_now_ns();
        for (int64_t r = 0; r < reps; r++) acc += f(x, m, n, o1);
        t1 = revec_now_ns();
    } else if (op == 1) {
        revec_split_fn f = revec_get_split(bits, variant);
        if (!f) return -1;
        t0 = revec_now_ns();
        for (int64_t r = 0; r < reps; r++) acc += f(x, m, n, o1, o2);
        t1 = revec_now_ns();
    } else if (op == 2 || op == 3) {
        size_t bytes = (size_t)n * (size_t)(bits / 8);
        t0 = revec_now_ns();
        for (int64_t r = 0; r < reps; r++) {
            if (op == 2) revec_copy_vec(o1, x, bytes); else memcpy(o1, x, bytes);
            __asm__ __volatile__("" : : "r"(o1) : "memory");
            if (bytes) acc += ((const uint8_t *)o1)[(size_t)r % bytes];
        }
        t1 = revec_now_ns();
    } else {
        return -1;
    }
    revec_cmp_sink = acc;
    return t1 - t0;
}
