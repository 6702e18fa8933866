/* revec stream compaction kernels (paper Sec. 5): table-driven, with run-time ISA dispatch.
 *
 * Needs the tables of revec.runtime.compaction.tables.c_tables() above it (the Python side
 * concatenates them: revec.runtime.compaction.c_source()).  Everything is static, so a
 * generated program can paste this text and call the kernels directly.
 *
 * Every kernel:   int64_t f(const void *x, const uint8_t *m, int64_t n, void *out)
 *   copies x[i] for every i < n with m[i] != 0 to out[0..count), in order, and returns count.
 *   out needs room for n elements (no more: a vector store at out + j, j <= i, never passes
 *   out + n); out may equal x (in-place compaction).  Any lanes of out past count are garbage.
 * Every split:    int64_t f(const void *x, const uint8_t *m, int64_t n, void *t, void *f)
 *   one pass: selected elements to t, the others to f (both in order), returns the count
 *   of selected; t and f need room for n elements each and must not overlap x.
 *
 * Variants (REVEC_V_*): branchy scalar, branchless scalar, prefix-table scalar (every lane
 * stored at its prefix-sum position), SSSE3 (pshufb; 16 x 8-bit lanes from two 8-wide
 * entries combined in a register, 8 x 16-bit, 4 x 32-bit from the 4-wide table, 2 x 64-bit),
 * AVX2 (32-bit lanes: vpermd from the 8-wide table, packed 3 bits per lane; 64-bit lanes: vpermd on dword pairs from
 * the 4-wide table; 8/16-bit: the pshufb kernels fed by one 32-byte movemask), AVX-512
 * (vpcompress: F+VL+BW for 32/64-bit lanes, VBMI2 for 8/16-bit lanes).
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#define REVEC_X86 1
#include <immintrin.h>
#define REVEC_T_SSSE3 __attribute__((target("ssse3,popcnt")))
#define REVEC_T_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt")))
#define REVEC_T_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,bmi2,popcnt")))
#define REVEC_T_VBMI2 __attribute__((target("avx512f,avx512vl,avx512bw,avx512vbmi2,bmi2,popcnt")))
#else
#define REVEC_X86 0
#endif

enum {
    REVEC_V_BEST = -1, REVEC_V_BRANCHY = 0, REVEC_V_SCALAR = 1, REVEC_V_PREFIX = 2,
    REVEC_V_SSSE3 = 3, REVEC_V_AVX2 = 4, REVEC_V_AVX512 = 5, REVEC_V_COUNT = 6
};
enum { REVEC_F_SSSE3 = 1, REVEC_F_AVX2 = 2, REVEC_F_AVX512 = 4, REVEC_F_VBMI2 = 8 };

typedef int64_t (*revec_compact_fn)(const void *, const uint8_t *, int64_t, void *);
typedef int64_t (*revec_split_fn)(const void *, const uint8_t *, int64_t, void *, void *);

/* ---------------------------------------------------------------- CPU features */
#ifndef REVEC_STEPS_ONLY  /* (the dispatch's: generated programs pick steps at compile time) */
static int revec_cpu_features(void) {
    static int feats = -1;
    if (feats < 0) {
        int f = 0;
#if REVEC_X86
        __builtin_cpu_init();
        if (__builtin_cpu_supports("ssse3") && __builtin_cpu_supports("popcnt"))
            f |= REVEC_F_SSSE3;
        if ((f & REVEC_F_SSSE3) && __builtin_cpu_supports("avx2") &&
            __builtin_cpu_supports("bmi2"))
            f |= REVEC_F_AVX2;
        if ((f & REVEC_F_AVX2) && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
            f |= REVEC_F_AVX512;
        if ((f & REVEC_F_AVX512) && __builtin_cpu_supports("avx512vbmi2"))
            f |= REVEC_F_VBMI2;
#endif
        feats = f;
    }
    return feats;
}
#endif

/* ---------------------------------------------------------------- scalar kernels */
#define REVEC_SCALAR_KERNELS(B, T)                                                        \
static int64_t revec_compact##B##_branchy(const void *xv, const uint8_t *m, int64_t n,     \
                                          void *ov) {                                      \
    const T *x = (const T *)xv; T *o = (T *)ov; int64_t j = 0;                             \
    for (int64_t i = 0; i < n; i++) if (m[i]) o[j++] = x[i];                               \
    return j;                                                                              \
}                                                                                          \
static int64_t revec_compact##B##_scalar(const void *xv, const uint8_t *m, int64_t n,      \
                                         void *ov) {                                       \
    const T *x = (const T *)xv; T *o = (T *)ov; int64_t j = 0;                             \
    for (int64_t i = 0; i < n; i++) { T v = x[i]; o[j] = v; j += (m[i] != 0); }           \
    return j;                                                                              \
}                                                                                          \
static int64_t revec_compact##B##_prefix(const void *xv, const uint8_t *m, int64_t n,      \
                                         void *ov) {                                       \
    const T *x = (const T *)xv; T *o = (T *)ov; int64_t i = 0, j = 0;                      \
    for (; i + 8 <= n; i += 8) {                                                           \
        unsigned b = 0;                                                                    \
        for (int k = 0; k < 8; k++) b |= (unsigned)(m[i + k] != 0) << k;                   \
        const uint8_t *p = revec_cmp_prefix8[b];                                           \
        for (int k = 0; k < 8; k++) o[j + p[k]] = x[i + k];                                \
        j += revec_cmp_adv8[b];                                                            \
    }                                                                                      \
    for (; i < n; i++) { T v = x[i]; o[j] = v; j += (m[i] != 0); }                        \
    return j;                                                                              \
}                                                                                          \
static int64_t revec_split##B##_branchy(const void *xv, const uint8_t *m, int64_t n,       \
                                        void *tv, void *fv) {                              \
    const T *x = (const T *)xv; T *t = (T *)tv, *f = (T *)fv; int64_t a = 0, c = 0;        \
    for (int64_t i = 0; i < n; i++) { if (m[i]) t[a++] = x[i]; else f[c++] = x[i]; }       \
    return a;                                                                              \
}                                                                                          \
static int64_t revec_split##B##_scalar(const void *xv, const uint8_t *m, int64_t n,        \
                                       void *tv, void *fv) {                               \
    const T *x = (const T *)xv; T *t = (T *)tv, *f = (T *)fv; int64_t a = 0, c = 0;        \
    for (int64_t i = 0; i < n; i++) {                                                      \
        T v = x[i]; int64_t s = (m[i] != 0);                                               \
        t[a] = v; f[c] = v; a += s; c += 1 - s;                                            \
    }                                                                                      \
    return a;                                                                              \
}                                                                                          \
static int64_t revec_split##B##_prefix(const void *xv, const uint8_t *m, int64_t n,        \
                                       void *tv, void *fv) {                               \
    const T *x = (const T *)xv; T *t = (T *)tv, *f = (T *)fv; int64_t i = 0, a = 0, c = 0; \
    for (; i + 8 <= n; i += 8) {                                                           \
        unsigned b = 0;                                                                    \
        for (int k = 0; k < 8; k++) b |= (unsigned)(m[i + k] != 0) << k;                   \
        const uint8_t *p = revec_cmp_prefix8[b], *q = revec_cmp_prefix8[b ^ 0xFFu];        \
        for (int k = 0; k < 8; k++) { t[a + p[k]] = x[i + k]; f[c + q[k]] = x[i + k]; }    \
        a += revec_cmp_adv8[b]; c += 8 - revec_cmp_adv8[b];                                \
    }                                                                                      \
    for (; i < n; i++) {                                                                   \
        T v = x[i]; int64_t s = (m[i] != 0);                                               \
        t[a] = v; f[c] = v; a += s; c += 1 - s;                                            \
    }                                                                                      \
    return a;                                                                              \
}

#ifndef REVEC_STEPS_ONLY
REVEC_SCALAR_KERNELS(8, uint8_t)
REVEC_SCALAR_KERNELS(16, uint16_t)
REVEC_SCALAR_KERNELS(32, uint32_t)
REVEC_SCALAR_KERNELS(64, uint64_t)
#endif

/* Finish a compaction / split from element i on, scalar (the tails of the SIMD kernels). */
#define REVEC_TAIL_COMPACT(T)                                                               \
    for (; i < n; i++) { T v_ = ((const T *)xv)[i]; ((T *)ov)[j] = v_; j += (m[i] != 0); }
#define REVEC_TAIL_SPLIT(T)                                                                 \
    for (; i < n; i++) {                                                                    \
        T v_ = ((const T *)xv)[i]; int64_t s_ = (m[i] != 0);                                \
        ((T *)tv)[a] = v_; ((T *)fv)[c] = v_; a += s_; c += 1 - s_;                         \
    }

#if REVEC_X86
/* ---------------------------------------------------------------- SSSE3 (pshufb) */
/* 16-bit mask of 16 mask bytes (bit set = byte nonzero) */
REVEC_T_SSSE3 static inline unsigned revec_bits16(const uint8_t *m) {
    __m128i v = _mm_loadu_si128((const __m128i *)m);
    return ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128())) & 0xFFFFu;
}

/* 16 byte lanes: the two 8-wide entries are joined in a register (no store forwarding) */
REVEC_T_SSSE3 static inline __m128i revec_ctrl16x8(unsigned bits) {
    unsigned lo = bits & 0xFFu, hi = bits >> 8;
    __m128i e = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)revec_cmp_shuf8[lo]),
                                   _mm_loadl_epi64((const __m128i *)revec_cmp_shuf8_hi[hi]));
    return _mm_shuffle_epi8(
        e, _mm_load_si128((const __m128i *)revec_cmp_combine[revec_cmp_adv8[lo]]));
}

/* 8 x 16-bit lanes: byte pairs (2k, 2k+1) from the 8-wide entry */
REVEC_T_SSSE3 static inline __m128i revec_ctrl8x16(unsigned b) {
    __m128i t = _mm_loadl_epi64((const __m128i *)revec_cmp_shuf8[b]);
    t = _mm_add_epi8(t, t);
    return _mm_unpacklo_epi8(t, _mm_add_epi8(t, _mm_set1_epi8(1)));
}

#define REVEC_ADV16(bits) (revec_cmp_adv8[(bits) & 0xFFu] + revec_cmp_adv8[(bits) >> 8])

REVEC_T_SSSE3 static inline int64_t revec_step8_16(const uint8_t *x, uint8_t *o, int64_t j,
                                                   unsigned bits) {
    __m128i v = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)x), revec_ctrl16x8(bits));
    _mm_storeu_si128((__m128i *)(o + j), v);
    return j + REVEC_ADV16(bits);
}

REVEC_T_SSSE3 static inline int64_t revec_step16_16(const uint16_t *x, uint16_t *o, int64_t j,
                                                    unsigned bits) {
    unsigned lo = bits & 0xFFu, hi = bits >> 8;
    __m128i a = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)x), revec_ctrl8x16(lo));
    _mm_storeu_si128((__m128i *)(o + j), a);
    j += revec_cmp_adv8[lo];
    __m128i b = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(x + 8)), revec_ctrl8x16(hi));
    _mm_storeu_si128((__m128i *)(o + j), b);
    return j + revec_cmp_adv8[hi];
}

REVEC_T_SSSE3 static inline int64_t revec_step32_16(const uint32_t *x, uint32_t *o, int64_t j,
                                                    unsigned bits) {
    for (int q = 0; q < 4; q++) {
        unsigned b = (bits >> (4 * q)) & 0xFu;
        __m128i v = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(x + 4 * q)),
                                     _mm_load_si128((const __m128i *)revec_cmp_shuf4x32[b]));
        _mm_storeu_si128((__m128i *)(o + j), v);
        j += revec_cmp_adv4[b];
    }
    return j;
}

REVEC_T_SSSE3 static inline int64_t revec_step64_16(const uint64_t *x, uint64_t *o, int64_t j,
                                                    unsigned bits) {
    for (int q = 0; q < 8; q++) {
        unsigned b = (bits >> (2 * q)) & 0x3u;
        __m128i v = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(x + 2 * q)),
                                     _mm_load_si128((const __m128i *)revec_cmp_shuf2x64[b]));
        _mm_storeu_si128((__m128i *)(o + j), v);
        j += (b & 1u) + (b >> 1);
    }
    return j;
}

/* compaction and split kernels over 16-lane groups, for each lane width */
#define REVEC_SSSE3_KERNELS(B, T)                                                          \
REVEC_T_SSSE3 static int64_t revec_compact##B##_ssse3(const void *xv, const uint8_t *m,    \
                                                      int64_t n, void *ov) {               \
    const T *x = (const T *)xv; T *o = (T *)ov; int64_t i = 0, j = 0;                      \
    for (; i + 16 <= n; i += 16) j = revec_step##B##_16(x + i, o, j, revec_bits16(m + i)); \
    REVEC_TAIL_COMPACT(T)                                                                  \
    return j;                                                                              \
}                                                                                          \
REVEC_T_SSSE3 static int64_t revec_split##B##_ssse3(const void *xv, const uint8_t *m,      \
                                                    int64_t n, void *tv, void *fv) {       \
    const T *x = (const T *)xv; T *t = (T *)tv, *f = (T *)fv; int64_t i = 0, a = 0, c = 0; \
    for (; i + 16 <= n; i += 16) {                                                         \
        unsigned bits = revec_bits16(m + i);                                               \
        a = revec_step##B##_16(x + i, t, a, bits);                                         \
        c = revec_step##B##_16(x + i, f, c, bits ^ 0xFFFFu);                               \
    }                                                                                      \
    REVEC_TAIL_SPLIT(T)                                                                    \
    return a;                                                                              \
}

#ifndef REVEC_STEPS_ONLY
REVEC_SSSE3_KERNELS(8, uint8_t)
REVEC_SSSE3_KERNELS(16, uint16_t)
REVEC_SSSE3_KERNELS(32, uint32_t)
REVEC_SSSE3_KERNELS(64, uint64_t)
#endif

/* ---------------------------------------------------------------- AVX2 */
REVEC_T_AVX2 static inline uint32_t revec_bits32(const uint8_t *m) {
    __m256i v = _mm256_loadu_si256((const __m256i *)m);
    return ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_setzero_si256()));
}

/* 8 x 32-bit lanes: vpermd; the indices are the 8-wide entry packed as 3-bit fields,
 * expanded by a broadcast and a variable shift (vpermd ignores the upper bits) */
REVEC_T_AVX2 static inline int64_t revec_avx2_step32_8(const uint32_t *x, uint32_t *o,
                                                       int64_t j, unsigned b) {
    const __m256i shifts = _mm256_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21);
    __m256i idx = _mm256_srlv_epi32(_mm256_set1_epi32((int)revec_cmp_perm8x32[b]), shifts);
    __m256i v = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)x), idx);
    _mm256_storeu_si256((__m256i *)(o + j), v);
    return j + _mm_popcnt_u32(b);   /* = revec_cmp_adv8[b]; popcnt saves a load */
}

/* 4 x 64-bit lanes: vpermd on dword pairs from the 4-wide entry */
REVEC_T_AVX2 static inline int64_t revec_avx2_step64_4(const uint64_t *x, uint64_t *o,
                                                       int64_t j, unsigned b) {
    __m256i idx = _mm256_load_si256((const __m256i *)revec_cmp_perm4x64[b]);
    __m256i v = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)x), idx);
    _mm256_storeu_si256((__m256i *)(o + j), v);
    return j + revec_cmp_adv4[b];
}

REVEC_T_AVX2 static inline int64_t revec_avx2_step8_32(const uint8_t *x, uint8_t *o, int64_t j,
                                                       uint32_t bits) {
    j = revec_step8_16(x, o, j, bits & 0xFFFFu);
    return revec_step8_16(x + 16, o, j, bits >> 16);
}
REVEC_T_AVX2 static inline int64_t revec_avx2_step16_32(const uint16_t *x, uint16_t *o,
                                                        int64_t j, uint32_t bits) {
    j = revec_step16_16(x, o, j, bits & 0xFFFFu);
    return revec_step16_16(x + 16, o, j, bits >> 16);
}
REVEC_T_AVX2 static inline int64_t revec_avx2_step32_32(const uint32_t *x, uint32_t *o,
                                                        int64_t j, uint32_t bits) {
    j = revec_avx2_step32_8(x, o, j, bits & 0xFFu);
    j = revec_avx2_step32_8(x + 8, o, j, (bits >> 8) & 0xFFu);
    j = revec_avx2_step32_8(x + 16, o, j, (bits >> 16) & 0xFFu);
    return revec_avx2_step32_8(x + 24, o, j, bits >> 24);
}
REVEC_T_AVX2 static inline int64_t revec_avx2_step64_32(const uint64_t *x, uint64_t *o,
                                                        int64_t j, uint32_t bits) {
    for (int q = 0; q < 8; q++) j = revec_avx2_step64_4(x + 4 * q, o, j, (bits >> (4 * q)) & 0xFu);
    return j;
}

#define REVEC_AVX2_KERNELS(B, T)                                                           \
REVEC_T_AVX2 static int64_t revec_compact##B##_avx2(const void *xv, const uint8_t *m,      \
                                                    int64_t n, void *ov) {                 \
    const T *x = (const T *)xv; T *o = (T *)ov; int64_t i = 0, j = 0;                      \
    for (; i + 32 <= n; i += 32) j = revec_avx2_step##B##_32(x + i, o, j, revec_bits32(m + i)); \
    REVEC_TAIL_COMPACT(T)                                                                  \
    return j;                                                                              \
}                                                                                          \
REVEC_T_AVX2 static int64_t revec_split##B##_avx2(const void *xv, const uint8_t *m,        \
                                                  int64_t n, void *tv, void *fv) {         \
    const T *x = (const T *)xv; T *t = (T *)tv, *f = (T *)fv; int64_t i = 0, a = 0, c = 0; \
    for (; i + 32 <= n; i += 32) {                                                         \
        uint32_t bits = revec_bits32(m + i);                                               \
        a = revec_avx2_step##B##_32(x + i, t, a, bits);                                    \
        c = revec_avx2_step##B##_32(x + i, f, c, ~bits);                                   \
    }                                                                                      \
    REVEC_TAIL_SPLIT(T)                                                                    \
    return a;                                                                              \
}

#ifndef REVEC_STEPS_ONLY
REVEC_AVX2_KERNELS(8, uint8_t)
REVEC_AVX2_KERNELS(16, uint16_t)
REVEC_AVX2_KERNELS(32, uint32_t)
REVEC_AVX2_KERNELS(64, uint64_t)
#endif

/* ---------------------------------------------------------------- AVX-512 (vpcompress) */
/* Dispatched to only when the CPU reports F+VL+BW (32/64-bit lanes) and VBMI2 (8/16-bit
 * lanes).  vpcompress into a register and a plain store: the memory-destination form is
 * microcoded and much slower on Intel cores. */
REVEC_T_AVX512 static inline __mmask64 revec_bits64(const uint8_t *m) {
    __m512i v = _mm512_loadu_si512((const void *)m);
    return _mm512_test_epi8_mask(v, v);
}
REVEC_T_VBMI2 static inline int64_t revec_avx512_step8_64(const uint8_t *x, uint8_t *o,
                                                           int64_t j, __mmask64 k) {
    __m512i v = _mm512_maskz_compress_epi8(k, _mm512_loadu_si512((const void *)x));
    _mm512_storeu_si512((void *)(o + j), v);
    return j + _mm_popcnt_u64((uint64_t)k);
}
REVEC_T_VBMI2 static inline int64_t revec_avx512_step16_64(const uint16_t *x, uint16_t *o,
                                                            int64_t j, __mmask64 k) {
    for (int q = 0; q < 2; q++) {
        __mmask32 kk = (__mmask32)((uint64_t)k >> (32 * q));
        __m512i v = _mm512_maskz_compress_epi16(kk, _mm512_loadu_si512((const void *)(x + 32 * q)));
        _mm512_storeu_si512((void *)(o + j), v);
        j += _mm_popcnt_u32((uint32_t)kk);
    }
    return j;
}
REVEC_T_AVX512 static inline int64_t revec_avx512_step32_64(const uint32_t *x, uint32_t *o,
                                                            int64_t j, __mmask64 k) {
    for (int q = 0; q < 4; q++) {
        __mmask16 kk = (__mmask16)((uint64_t)k >> (16 * q));
        __m512i v = _mm512_maskz_compress_epi32(kk, _mm512_loadu_si512((const void *)(x + 16 * q)));
        _mm512_storeu_si512((void *)(o + j), v);
        j += _mm_popcnt_u32((uint32_t)kk);
    }
    return j;
}
REVEC_T_AVX512 static inline int64_t revec_avx512_step64_64(const uint64_t *x, uint64_t *o,
                                                            int64_t j, __mmask64 k) {
    for (int q = 0; q < 8; q++) {
        __mmask8 kk = (__mmask8)((uint64_t)k >> (8 * q));
        __m512i v = _mm512_maskz_compress_epi64(kk, _mm512_loadu_si512((const void *)(x + 8 * q)));
        _mm512_storeu_si512((void *)(o + j), v);
        j += _mm_popcnt_u32((uint32_t)kk);
    }
    return j;
}

/* 32-lane steps for generated task programs (the 32 threads of one kernel step; compiled
 * only where the module itself targets AVX-512, see SPLIT_STEPS in c_codegen.py).  Each
 * store starts at an output index no larger than its first input index, so it never
 * writes past the input's own extent (the same bound as the AVX2 steps). */
REVEC_T_VBMI2 static inline int64_t revec_avx512_step8_32(const uint8_t *x, uint8_t *o,
                                                           int64_t j, uint32_t k) {
    __m256i v = _mm256_maskz_compress_epi8((__mmask32)k, _mm256_loadu_si256((const __m256i *)x));
    _mm256_storeu_si256((__m256i *)(o + j), v);
    return j + _mm_popcnt_u32(k);
}
REVEC_T_VBMI2 static inline int64_t revec_avx512_step16_32(const uint16_t *x, uint16_t *o,
                                                            int64_t j, uint32_t k) {
    __m512i v = _mm512_maskz_compress_epi16((__mmask32)k, _mm512_loadu_si512((const void *)x));
    _mm512_storeu_si512((void *)(o + j), v);
    return j + _mm_popcnt_u32(k);
}
REVEC_T_AVX512 static inline int64_t revec_avx512_step32_32(const uint32_t *x, uint32_t *o,
                                                            int64_t j, uint32_t k) {
    for (int q = 0; q < 2; q++) {
        __mmask16 kk = (__mmask16)(k >> (16 * q));
        __m512i v = _mm512_maskz_compress_epi32(kk, _mm512_loadu_si512((const void *)(x + 16 * q)));
        _mm512_storeu_si512((void *)(o + j), v);
        j += _mm_popcnt_u32((uint32_t)kk);
    }
    return j;
}
REVEC_T_AVX512 static inline int64_t revec_avx512_step64_32(const uint64_t *x, uint64_t *o,
                                                            int64_t j, uint32_t k) {
    for (int q = 0; q < 4; q++) {
        __mmask8 kk = (__mmask8)(k >> (8 * q));
        __m512i v = _mm512_maskz_compress_epi64(kk, _mm512_loadu_si512((const void *)(x + 8 * q)));
        _mm512_storeu_si512((void *)(o + j), v);
        j += _mm_popcnt_u32((uint32_t)kk);
    }
    return j;
}
REVEC_T_AVX512 static inline uint32_t revec_avx512_bits32(const uint8_t *m) {
    __m256i v = _mm256_loadu_si256((const __m256i *)m);
    return (uint32_t)_mm256_test_epi8_mask(v, v);
}
#define REVEC_AVX512_KERNELS(B, T, TARGET)                                                 \
TARGET static int64_t revec_compact##B##_avx512(const void *xv, const uint8_t *m,  \
                                                        int64_t n, void *ov) {             \
    const T *x = (const T *)xv; T *o = (T *)ov; int64_t i = 0, j = 0;                      \
    for (; i + 64 <= n; i += 64) j = revec_avx512_step##B##_64(x + i, o, j, revec_bits64(m + i)); \
    REVEC_TAIL_COMPACT(T)                                                                  \
    return j;                                                                              \
}                                                                                          \
TARGET static int64_t revec_split##B##_avx512(const void *xv, const uint8_t *m,    \
                                                      int64_t n, void *tv, void *fv) {     \
    const T *x = (const T *)xv; T *t = (T *)tv, *f = (T *)fv; int64_t i = 0, a = 0, c = 0; \
    for (; i + 64 <= n; i += 64) {                                                         \
        __mmask64 k = revec_bits64(m + i);                                                 \
        a = revec_avx512_step##B##_64(x + i, t, a, k);                                     \
        c = revec_avx512_step##B##_64(x + i, f, c, (__mmask64)~(uint64_t)k);               \
    }                                                                                      \
    REVEC_TAIL_SPLIT(T)                                                                    \
    return a;                                                                              \
}

#ifndef REVEC_STEPS_ONLY
REVEC_AVX512_KERNELS(8, uint8_t, REVEC_T_VBMI2)
REVEC_AVX512_KERNELS(16, uint16_t, REVEC_T_VBMI2)
REVEC_AVX512_KERNELS(32, uint32_t, REVEC_T_AVX512)
REVEC_AVX512_KERNELS(64, uint64_t, REVEC_T_AVX512)
#endif
#endif /* REVEC_X86 */

/* ---------------------------------------------------------------- dispatch */
/* REVEC_STEPS_ONLY (generated task programs): only the inline steps above, which
   the program calls directly; no whole-array kernels, no dispatch. */
#ifndef REVEC_STEPS_ONLY
static int revec_width_index(int bits) {
    switch (bits) {
    case 8: return 0;
    case 16: return 1;
    case 32: return 2;
    case 64: return 3;
    default: return -1;
    }
}

/* Is a variant usable on this CPU for this lane width?  (needs: feature bits) */
static int revec_variant_ok(int bits, int variant) {
    int f = revec_cpu_features();
    if (revec_width_index(bits) < 0) return 0;
    switch (variant) {
    case REVEC_V_BRANCHY: case REVEC_V_SCALAR: case REVEC_V_PREFIX: return 1;
    case REVEC_V_SSSE3: return (f & REVEC_F_SSSE3) != 0;
    case REVEC_V_AVX2: return (f & REVEC_F_AVX2) != 0;
    case REVEC_V_AVX512:
        return bits >= 32 ? (f & REVEC_F_AVX512) != 0 : (f & REVEC_F_VBMI2) != 0;
    default: return 0;
    }
}

/* The fastest usable variant for a lane width. */
static int revec_best_variant(int bits) {
    if (revec_variant_ok(bits, REVEC_V_AVX512)) return REVEC_V_AVX512;
    if (revec_variant_ok(bits, REVEC_V_AVX2)) return REVEC_V_AVX2;
    if (revec_variant_ok(bits, REVEC_V_SSSE3)) return REVEC_V_SSSE3;
    return REVEC_V_SCALAR;
}

#if REVEC_X86
#define REVEC_ROW(K, B) {revec_##K##B##_branchy, revec_##K##B##_scalar, revec_##K##B##_prefix, \
                         revec_##K##B##_ssse3, revec_##K##B##_avx2, revec_##K##B##_avx512}
#else
#define REVEC_ROW(K, B) {revec_##K##B##_branchy, revec_##K##B##_scalar, revec_##K##B##_prefix, \
                         0, 0, 0}
#endif
static const revec_compact_fn revec_compact_table[4][REVEC_V_COUNT] = {
    REVEC_ROW(compact, 8), REVEC_ROW(compact, 16), REVEC_ROW(compact, 32), REVEC_ROW(compact, 64)};
static const revec_split_fn revec_split_table[4][REVEC_V_COUNT] = {
    REVEC_ROW(split, 8), REVEC_ROW(split, 16), REVEC_ROW(split, 32), REVEC_ROW(split, 64)};

/* The kernel for a lane width and variant (REVEC_V_BEST: chosen from the CPU), or 0. */
static revec_compact_fn revec_get_compact(int bits, int variant) {
    if (variant == REVEC_V_BEST) variant = revec_best_variant(bits);
    if (!revec_variant_ok(bits, variant)) return 0;
    return revec_compact_table[revec_width_index(bits)][variant];
}
static revec_split_fn revec_get_split(int bits, int variant) {
    if (variant == REVEC_V_BEST) variant = revec_best_variant(bits);
    if (!revec_variant_ok(bits, variant)) return 0;
    return revec_split_table[revec_width_index(bits)][variant];
}
#endif /* REVEC_STEPS_ONLY */
