static int64_t kernel(int64_t off, int64_t n, int64_t out_base, int64_t *kused_out) {
    /* PROTOTYPE (timing only, statistics of the skipped level not counted): two levels
       per call, leaves of both levels reduced in the lane, four grandchild streams */
    int64_t kused = 4, nb = 0, t = 0;
    int64_t la_count = acc_count;
    int8_t * restrict p_n = c_n;
    const int8_t *in = p_n + off;
    int64_t *kc = kcnt;
    int64_t *klf = kleaf;
    if (out_base < off + n) { memcpy(q_n, in, n); in = q_n; }
    {
        int64_t j = 0;
        for (; j + 32 <= n; j += 32) {
            uint8_t mb[32];
            for (int u = 0; u < 32; u++) mb[u] = in[j + u] < 2;
            nb += __builtin_popcount(rv_bits32(mb));
        }
        for (; j < n; j++) nb += in[j] < 2;
    }
    const int64_t ni = n - nb;
    const int64_t ns = ni + RV_SLACK;
    int8_t *restrict o0 = p_n + out_base + 0 * ns;
    int8_t *restrict o1 = p_n + out_base + 1 * ns;
    int8_t *restrict o2 = p_n + out_base + 2 * ns;
    int8_t *restrict o3 = p_n + out_base + 3 * ns;
    int64_t k0 = 0, k1 = 0, k2 = 0, k3 = 0, ic0 = 0, ic1 = 0;
    rv_sad_t sa = RV_SAD_ZERO;
    int64_t part = 0;
    for (; t + 32 <= n; t += 32) {
        uint8_t m0[32], m1[32], m2[32], m3[32], q0[32], q1[32];
        int8_t a0[32], a1[32], a2[32], a3[32], lv[32];
#pragma GCC ivdep
        for (int u = 0; u < 32; u++) {
            int8_t x = in[t + u];
            int8_t isb = x < 2;
            int8_t c0 = (int8_t)(x - 1), c1 = (int8_t)(x - 2);
            int8_t i0 = !isb & (c0 >= 2), i1 = !isb & (c1 >= 2);
            int8_t l0 = !isb & !i0, l1 = !isb & !i1;
            int8_t g0 = (int8_t)(c0 - 1), g1 = (int8_t)(c0 - 2), g2 = (int8_t)(c1 - 1), g3 = (int8_t)(c1 - 2);
            int8_t s0 = i0 & (g0 >= 2), s1 = i0 & (g1 >= 2), s2 = i1 & (g2 >= 2), s3 = i1 & (g3 >= 2);
            int8_t f0 = i0 & !s0, f1 = i0 & !s1, f2 = i1 & !s2, f3 = i1 & !s3;
            lv[u] = (int8_t)((x & (int8_t)-isb) + (c0 & (int8_t)-l0) + (c1 & (int8_t)-l1)
                             + (g0 & (int8_t)-f0) + (g1 & (int8_t)-f1) + (g2 & (int8_t)-f2) + (g3 & (int8_t)-f3));
            m0[u] = s0; m1[u] = s1; m2[u] = s2; m3[u] = s3; q0[u] = i0; q1[u] = i1;
            a0[u] = g0; a1[u] = g1; a2[u] = g2; a3[u] = g3;
        }
        sa = RV_SAD_ADDU(sa, lv);
        uint32_t b0 = rv_bits32(m0), b1 = rv_bits32(m1), b2 = rv_bits32(m2), b3 = rv_bits32(m3);
        RV_LSTEP8((const uint8_t *)a0, (uint8_t *)o0, k0, b0);
        RV_LSTEP8((const uint8_t *)a1, (uint8_t *)o1, k1, b1);
        RV_LSTEP8((const uint8_t *)a2, (uint8_t *)o2, k2, b2);
        RV_LSTEP8((const uint8_t *)a3, (uint8_t *)o3, k3, b3);
        k0 += __builtin_popcount(b0); k1 += __builtin_popcount(b1);
        k2 += __builtin_popcount(b2); k3 += __builtin_popcount(b3);
        ic0 += __builtin_popcount(rv_bits32(q0)); ic1 += __builtin_popcount(rv_bits32(q1));
    }
    for (; t < n; t++) {
        int8_t x = in[t];
        if (x < 2) { part += x; continue; }
        int8_t c[2] = {(int8_t)(x - 1), (int8_t)(x - 2)};
        for (int s = 0; s < 2; s++) {
            if (c[s] < 2) { part += c[s]; continue; }
            if (s == 0) ic0++; else ic1++;
            int8_t g0 = (int8_t)(c[s] - 1), g1 = (int8_t)(c[s] - 2);
            if (g0 < 2) part += g0; else { if (s == 0) o0[k0++] = g0; else o2[k2++] = g0; }
            if (g1 < 2) part += g1; else { if (s == 0) o1[k1++] = g1; else o3[k3++] = g1; }
        }
    }
    la_count = (int64_t)((uint64_t)la_count + (uint64_t)(RV_SAD_SUM(sa) + part));
    kc[0] = k0; kc[1] = k1; kc[2] = k2; kc[3] = k3;
    klf[0] = ic0 - k0; klf[1] = ic0 - k1; klf[2] = ic1 - k2; klf[3] = ic1 - k3;
    acc_count = la_count;
    *kused_out = kused;
    return nb;
}
