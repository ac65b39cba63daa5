// MD5 compression of 4 independent two-block messages per work-item, one per uint4 lane (a
// cracker's vector width): the 64 steps unrolled in each of the two blocks, so the module is
// large (~1,700 SPIR-V instructions) and integer-bound.
#define F(x, y, z) (((x) & (y)) | (~(x) & (z)))
#define G(x, y, z) (((x) & (z)) | ((y) & ~(z)))
#define H(x, y, z) ((x) ^ (y) ^ (z))
#define I(x, y, z) ((y) ^ ((x) | ~(z)))
#define STEP(f, a, b, c, d, m, k, s) \
    a += f(b, c, d) + (m) + (uint4)(k); \
    a = rotate(a, (uint4)(s)); \
    a += b;
#define COMPRESS \
    { \
        uint4 a = s0, b = s1, c = s2, d = s3; \
        STEP(F, a, b, c, d, m0, 0xD76AA478u, 7) \
        STEP(F, d, a, b, c, m1, 0xE8C7B756u, 12) \
        STEP(F, c, d, a, b, m2, 0x242070DBu, 17) \
        STEP(F, b, c, d, a, m3, 0xC1BDCEEEu, 22) \
        STEP(F, a, b, c, d, m4, 0xF57C0FAFu, 7) \
        STEP(F, d, a, b, c, m5, 0x4787C62Au, 12) \
        STEP(F, c, d, a, b, m6, 0xA8304613u, 17) \
        STEP(F, b, c, d, a, m7, 0xFD469501u, 22) \
        STEP(F, a, b, c, d, m8, 0x698098D8u, 7) \
        STEP(F, d, a, b, c, m9, 0x8B44F7AFu, 12) \
        STEP(F, c, d, a, b, m10, 0xFFFF5BB1u, 17) \
        STEP(F, b, c, d, a, m11, 0x895CD7BEu, 22) \
        STEP(F, a, b, c, d, m12, 0x6B901122u, 7) \
        STEP(F, d, a, b, c, m13, 0xFD987193u, 12) \
        STEP(F, c, d, a, b, m14, 0xA679438Eu, 17) \
        STEP(F, b, c, d, a, m15, 0x49B40821u, 22) \
        STEP(G, a, b, c, d, m1, 0xF61E2562u, 5) \
        STEP(G, d, a, b, c, m6, 0xC040B340u, 9) \
        STEP(G, c, d, a, b, m11, 0x265E5A51u, 14) \
        STEP(G, b, c, d, a, m0, 0xE9B6C7AAu, 20) \
        STEP(G, a, b, c, d, m5, 0xD62F105Du, 5) \
        STEP(G, d, a, b, c, m10, 0x02441453u, 9) \
        STEP(G, c, d, a, b, m15, 0xD8A1E681u, 14) \
        STEP(G, b, c, d, a, m4, 0xE7D3FBC8u, 20) \
        STEP(G, a, b, c, d, m9, 0x21E1CDE6u, 5) \
        STEP(G, d, a, b, c, m14, 0xC33707D6u, 9) \
        STEP(G, c, d, a, b, m3, 0xF4D50D87u, 14) \
        STEP(G, b, c, d, a, m8, 0x455A14EDu, 20) \
        STEP(G, a, b, c, d, m13, 0xA9E3E905u, 5) \
        STEP(G, d, a, b, c, m2, 0xFCEFA3F8u, 9) \
        STEP(G, c, d, a, b, m7, 0x676F02D9u, 14) \
        STEP(G, b, c, d, a, m12, 0x8D2A4C8Au, 20) \
        STEP(H, a, b, c, d, m5, 0xFFFA3942u, 4) \
        STEP(H, d, a, b, c, m8, 0x8771F681u, 11) \
        STEP(H, c, d, a, b, m11, 0x6D9D6122u, 16) \
        STEP(H, b, c, d, a, m14, 0xFDE5380Cu, 23) \
        STEP(H, a, b, c, d, m1, 0xA4BEEA44u, 4) \
        STEP(H, d, a, b, c, m4, 0x4BDECFA9u, 11) \
        STEP(H, c, d, a, b, m7, 0xF6BB4B60u, 16) \
        STEP(H, b, c, d, a, m10, 0xBEBFBC70u, 23) \
        STEP(H, a, b, c, d, m13, 0x289B7EC6u, 4) \
        STEP(H, d, a, b, c, m0, 0xEAA127FAu, 11) \
        STEP(H, c, d, a, b, m3, 0xD4EF3085u, 16) \
        STEP(H, b, c, d, a, m6, 0x04881D05u, 23) \
        STEP(H, a, b, c, d, m9, 0xD9D4D039u, 4) \
        STEP(H, d, a, b, c, m12, 0xE6DB99E5u, 11) \
        STEP(H, c, d, a, b, m15, 0x1FA27CF8u, 16) \
        STEP(H, b, c, d, a, m2, 0xC4AC5665u, 23) \
        STEP(I, a, b, c, d, m0, 0xF4292244u, 6) \
        STEP(I, d, a, b, c, m7, 0x432AFF97u, 10) \
        STEP(I, c, d, a, b, m14, 0xAB9423A7u, 15) \
        STEP(I, b, c, d, a, m5, 0xFC93A039u, 21) \
        STEP(I, a, b, c, d, m12, 0x655B59C3u, 6) \
        STEP(I, d, a, b, c, m3, 0x8F0CCC92u, 10) \
        STEP(I, c, d, a, b, m10, 0xFFEFF47Du, 15) \
        STEP(I, b, c, d, a, m1, 0x85845DD1u, 21) \
        STEP(I, a, b, c, d, m8, 0x6FA87E4Fu, 6) \
        STEP(I, d, a, b, c, m15, 0xFE2CE6E0u, 10) \
        STEP(I, c, d, a, b, m6, 0xA3014314u, 15) \
        STEP(I, b, c, d, a, m13, 0x4E0811A1u, 21) \
        STEP(I, a, b, c, d, m4, 0xF7537E82u, 6) \
        STEP(I, d, a, b, c, m11, 0xBD3AF235u, 10) \
        STEP(I, c, d, a, b, m2, 0x2AD7D2BBu, 15) \
        STEP(I, b, c, d, a, m9, 0xEB86D391u, 21) \
        s0 += a; s1 += b; s2 += c; s3 += d; \
    }

__kernel void md5x4(__global uint4* out, uint salt) {
    uint g = (uint)get_global_id(0);
    uint4 id = (uint4)(4 * g) + (uint4)(0, 1, 2, 3);
    uint4 s0 = (uint4)(0x67452301u), s1 = (uint4)(0xEFCDAB89u);
    uint4 s2 = (uint4)(0x98BADCFEu), s3 = (uint4)(0x10325476u);
    // a two-block message per lane, every word derived from the candidate and the salt
#define W(j) (rotate(id, (uint4)(j)) ^ (uint4)(salt + (j) * 0x9E3779B9u))
    uint4 m0 = W(0), m1 = W(1), m2 = W(2), m3 = W(3), m4 = W(4), m5 = W(5), m6 = W(6), m7 = W(7);
    uint4 m8 = W(8), m9 = W(9), m10 = W(10), m11 = W(11), m12 = W(12), m13 = W(13), m14 = W(14);
    uint4 m15 = W(15);
    COMPRESS
    m0 = W(16); m1 = W(17); m2 = W(18); m3 = W(19); m4 = W(20); m5 = W(21); m6 = W(22); m7 = W(23);
    m8 = W(24); m9 = W(25); m10 = W(26); m11 = W(27); m12 = W(28); m13 = W(29); m14 = W(30);
    m15 = W(31);
    COMPRESS

    __global uint4* o = out + 4 * (size_t)g;
    o[0] = s0;
    o[1] = s1;
    o[2] = s2;
    o[3] = s3;
}
