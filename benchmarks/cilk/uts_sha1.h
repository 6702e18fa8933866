/* UTS's splittable random-number generator for the Cilk C uts: child i of a node with
 * SHA-1 state h0 .. h4 (five big-endian words) gets the SHA-1 digest of the parent's 20
 * bytes followed by i as a 4-byte big-endian integer (UTS 2.1, Olivier et al., LCPC 2006).
 *
 * For revec (which defines __REVEC__) this only declares the function: it is revec's
 * runtime-library function sha1_spawn (revec/lib/uts.py), and revec passes the five
 * results through the &local arguments.  For a C compiler (the serial elision, or
 * OpenCilk) it is defined here, as a plain SHA-1 of one 64-byte block (FIPS 180-4). */
#ifndef UTS_SHA1_H
#define UTS_SHA1_H

#include <stdint.h>

#ifdef __REVEC__
void sha1_spawn(uint32_t h0, uint32_t h1, uint32_t h2, uint32_t h3, uint32_t h4, int32_t i,
                uint32_t *c0, uint32_t *c1, uint32_t *c2, uint32_t *c3, uint32_t *c4);
#else
static uint32_t uts_rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1_spawn(uint32_t h0, uint32_t h1, uint32_t h2, uint32_t h3, uint32_t h4,
                       int32_t i, uint32_t *c0, uint32_t *c1, uint32_t *c2, uint32_t *c3,
                       uint32_t *c4) {
    uint32_t w[80] = {h0, h1, h2, h3, h4, (uint32_t)i, 0x80000000u};
    w[15] = 24 * 8;  /* the message length in bits */
    for (int t = 16; t < 80; t++)
        w[t] = uts_rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    uint32_t a = 0x67452301u, b = 0xEFCDAB89u, c = 0x98BADCFEu, d = 0x10325476u,
             e = 0xC3D2E1F0u;
    for (int t = 0; t < 80; t++) {
        uint32_t f, k;
        if (t < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999u;
        } else if (t < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1u;
        } else if (t < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDCu;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6u;
        }
        uint32_t next = uts_rotl(a, 5) + f + e + k + w[t];
        e = d;
        d = c;
        c = uts_rotl(b, 30);
        b = a;
        a = next;
    }
    *c0 = 0x67452301u + a;
    *c1 = 0xEFCDAB89u + b;
    *c2 = 0x98BADCFEu + c;
    *c3 = 0x10325476u + d;
    *c4 = 0xC3D2E1F0u + e;
}
#endif
#endif
