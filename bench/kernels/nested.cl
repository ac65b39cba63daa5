// A nested loop whose inner trip count differs from work-item to work-item (0 to 12, varying
// with the id and the outer step): divergent control flow in integer arithmetic (an LCG).
__kernel void nested(__global const uint* in, __global uint* out) {
    uint gid = get_global_id(0);
    uint acc = in[gid];
    for (uint i = 0; i < 16; i++) {
        uint n = (gid * 7u + i * 3u) % 13u;
        for (uint j = 0; j < n; j++) {
            acc = acc * 1664525u + 1013904223u + j;
        }
    }
    out[gid] = acc;
}
