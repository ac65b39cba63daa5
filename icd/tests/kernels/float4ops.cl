// float4 builtins. out has 10 float4 per element:
// fabs, floor, fmin, fmax, clamp, mad, fma, sqrt, rsqrt, (dot, 0, 0, 0).
__kernel void float4ops(__global const float4 *a, __global const float4 *b,
                        __global const float4 *c, __global float4 *out)
{
    size_t i = get_global_id(0);
    float4 x = a[i];
    float4 y = b[i];
    float4 z = c[i];
    __global float4 *o = out + 10 * i;
    o[0] = fabs(x);
    o[1] = floor(x);
    o[2] = fmin(x, y);
    o[3] = fmax(x, y);
    o[4] = clamp(x, -0.5f, 0.75f);
    o[5] = mad(x, y, z);
    o[6] = fma(x, y, z);
    o[7] = sqrt(fabs(x));
    o[8] = rsqrt(fabs(x) + 1.0f);
    o[9] = (float4)(dot(x, y), 0.0f, 0.0f, 0.0f);
}
