// One MD5 compression per work-item over a private 16-word block, with the 64 steps kept as a
// loop: the message index g comes from the step (i, 5i+1, 3i+5, 7i mod 16), so `w[g]` is a
// private-array access whose index is the same for every work-item but changes each step.
// `k` holds MD5's 64 additive constants, then the 16 rotate amounts (4 per round).
__kernel void md5_private(__global const uint* in, __constant uint* k, __global uint* out) {
    uint gid = get_global_id(0);
    uint x = in[gid];
    uint w[16];
    for (int j = 0; j < 16; j++) {
        w[j] = rotate(x, (uint)j) ^ (gid + (uint)j * 0x9E3779B9u);
    }
    uint a = 0x67452301u, b = 0xEFCDAB89u, c = 0x98BADCFEu, d = 0x10325476u;
    for (int i = 0; i < 64; i++) {
        uint f;
        int g;
        if (i < 16) {
            f = (b & c) | (~b & d);
            g = i;
        } else if (i < 32) {
            f = (b & d) | (c & ~d);
            g = (5 * i + 1) & 15;
        } else if (i < 48) {
            f = b ^ c ^ d;
            g = (3 * i + 5) & 15;
        } else {
            f = c ^ (b | ~d);
            g = (7 * i) & 15;
        }
        uint t = rotate(a + f + k[i] + w[g], k[64 + (i >> 4) * 4 + (i & 3)]);
        a = d;
        d = c;
        c = b;
        b = b + t;
    }
    out[4 * gid + 0] = a + 0x67452301u;
    out[4 * gid + 1] = b + 0xEFCDAB89u;
    out[4 * gid + 2] = c + 0x98BADCFEu;
    out[4 * gid + 3] = d + 0x10325476u;
}
