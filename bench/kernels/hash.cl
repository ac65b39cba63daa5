// Integer bit mixing with rotate, popcount and clz: 16 rounds per element.
__kernel void hash(__global const uint* in, __global uint* out) {
    size_t i = get_global_id(0);
    uint x = in[i];
    uint h = 0x811C9DC5u ^ (uint)i;
    for (uint r = 0; r < 16; r++) {
        x ^= x >> 15;
        x *= 0x2C1B3C6Du;
        x = rotate(x, (uint)(r + 7));
        h = (h ^ x) * 0x01000193u;
        h += popcount(x) + clz(h | 1u);
    }
    out[i] = h ^ x;
}
