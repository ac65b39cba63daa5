// Integer mixing with rotate/clz/popcount on uint and ulong. Rotate counts are taken
// modulo the bit width (spec 6.15.3), and clz(0) is the bit width.
__kernel void hash32(__global const uint *in, __global uint *out)
{
    size_t i = get_global_id(0);
    uint x = in[i];
    uint h = x ^ rotate(x, (uint)13);
    h *= 0x9E3779B1u;
    h += clz(x) + popcount(x) * 7u;
    h = rotate(h, x);              /* count = x mod 32, x may be >= 32 */
    h ^= rotate(h, (uint)37);      /* same as rotate by 5 */
    h += clz(h) * 0x01000193u + popcount(h ^ x);
    out[i] = h;
}

__kernel void hash64(__global const ulong *in, __global ulong *out)
{
    size_t i = get_global_id(0);
    ulong x = in[i];
    ulong h = x ^ rotate(x, (ulong)29);
    h *= 0x9E3779B97F4A7C15ul;
    h += clz(x) + popcount(x) * 11ul;
    h = rotate(h, x);              /* count = x mod 64 */
    h ^= rotate(h, (ulong)71);     /* same as rotate by 7 */
    h += clz(h) * 0x100000001B3ul + popcount(h ^ x);
    out[i] = h;
}
