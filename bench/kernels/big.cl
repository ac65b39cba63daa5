// Build time of a large kernel: 2048 unrolled integer mixing steps in four functions.
#define MIX(k) \
    x = rotate(x ^ ((uint)(k) * 0x9E3779B9u), (uint)((k) % 31 + 1)) * 0x85EBCA6Bu + (y >> ((k) % 13)); \
    y = y + (x ^ (x >> 7)) + (uint)(k);
#define R4(k) MIX(k) MIX((k) + 1) MIX((k) + 2) MIX((k) + 3)
#define R16(k) R4(k) R4((k) + 4) R4((k) + 8) R4((k) + 12)
#define R64(k) R16(k) R16((k) + 16) R16((k) + 32) R16((k) + 48)
#define R256(k) R64(k) R64((k) + 64) R64((k) + 128) R64((k) + 192)
#define R512(k) R256(k) R256((k) + 256)

uint2 part0(uint x, uint y) { R512(0) return (uint2)(x, y); }
uint2 part1(uint x, uint y) { R512(512) return (uint2)(x, y); }
uint2 part2(uint x, uint y) { R512(1024) return (uint2)(x, y); }
uint2 part3(uint x, uint y) { R512(1536) return (uint2)(x, y); }

__kernel void big(__global const uint* in, __global uint* out) {
    size_t i = get_global_id(0);
    uint2 v = part0(in[i], (uint)i);
    v = part1(v.x, v.y);
    v = part2(v.x, v.y);
    v = part3(v.x, v.y);
    out[i] = v.x ^ v.y;
}
