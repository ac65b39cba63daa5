// float4 math with rsqrt and dot: all-pairs gravitational acceleration (w = mass).
__kernel void nbody(__global const float4* pos, __global float4* acc, uint n, float eps2) {
    uint i = get_global_id(0);
    float4 p = pos[i];
    float4 a = (float4)(0.0f);
    for (uint j = 0; j < n; j++) {
        float4 q = pos[j];
        float4 d = (float4)(q.xyz - p.xyz, 0.0f);
        float r2 = dot(d, d) + eps2;
        float inv = rsqrt(r2);
        float s = q.w * inv * inv * inv;
        a += s * d;
    }
    acc[i] = a;
}
